"""Records kept in the `.bugbout/` store.

Every record carries a `schema_version` so a newer bugbout can refuse, by name, a file it
does not understand instead of misreading it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from bugbout_tui.core.env_models import EnvSpec, TaskKind
from bugbout_tui.core.events import AttemptStatus
from bugbout_tui.core.patch import Patch
from bugbout_tui.core.record import SCHEMA_VERSION, Record

__all__ = ["SCHEMA_VERSION", "Record"]


class Reason(StrEnum):
    """Why an examined change did not become a task. The vocabulary is fixed."""

    NOT_A_FIX = "not-a-fix"
    NOT_A_BUG = "not-a-bug"
    """Its title names an issue it closes and no fix: that issue shows no bug."""
    ISSUE_UNREADABLE = "issue-unreadable"
    """Whether it is a fix rests on an issue or pull request that could not be read."""
    NO_ISSUE = "no-issue"
    TOO_MANY_SOURCE_FILES = "too-many-source-files"
    NO_SOURCE_CHANGE = "no-source-change"
    NO_TEST_ADDED = "no-test-added"
    NO_PROBLEM_TEXT = "no-problem-text"
    """The text read for it describes only the change made, nothing of the problem."""
    NOT_ENV_ONLY = "not-env-only"
    """Mining for environment tasks alone: it changes files besides the environment
    files (with `bug` mined too, such a change is judged as a fix instead)."""
    ENV_MERGE = "env-merge"
    """It changes environment files alone, but merges a branch rather than landing one
    change (a pull request's merge is one change, and is judged as one)."""
    ENV_REVERT = "env-revert"
    """It changes environment files alone to undo an earlier change."""
    ENV_VERSION_ONLY = "env-version-only"
    """It changes environment files alone, and only the project's own version in them."""
    ENV_LOCK_ONLY = "env-lock-only"
    """It changes environment files alone, and of what they install only lock files
    (`poetry.lock`, `uv.lock`, `Pipfile.lock`, `pdm.lock`). The clean install resolves
    what the tree declares and never reads a lock, so such a change cannot change its
    outcome: as a task it could only fail its ground truth, after two installs."""
    ENV_NOT_DEPENDENCIES = "env-not-dependencies"
    """It changes environment files alone, but nothing they install: tool settings in
    pyproject.toml, comments of a requirements file, install notes in a README."""
    DUPLICATE_ISSUE = "duplicate-issue"
    BEFORE_SINCE = "before-since"
    OVER_LIMIT = "over-limit"


class IssueRef(BaseModel):
    """An issue or pull request a change names.

    `repo` is `owner/name` when the reference names another repository
    (`owner/repo#45`, a URL); None means the project's own repository.
    """

    model_config = ConfigDict(frozen=True)

    number: int
    repo: str | None = None
    kind: str = "unknown"
    """`issue`, `pull` when the text says so (a URL), else `unknown`."""


class Exclusion(BaseModel):
    """One examined change that was left out, with its single reason."""

    commit: str
    title: str
    reason: Reason
    detail: str | None = None
    """The particulars of a reason decided by an issue (`the linked issue #12 is
    labelled 'enhancement'`); None for the reasons that need none."""
    retry: bool = False
    """Decided by a lookup that failed for a reason that may pass (network, rate limit,
    server error): the next mining asks again."""


class StatementSource(BaseModel):
    """Where a task's statement was read, and what was cut from it before agents see it."""

    kind: Literal["issue", "pull"]
    number: int
    repo: str | None = None
    """`owner/name` when it is not the project's own repository."""
    cut: list[str] = Field(default_factory=list)
    """What was removed, shortly: `section "Root cause"`, `2 sentences about the change`,
    `1 diff block`. Empty when the text was given as written."""

    def describe(self) -> str:
        """`pull request #550`, `issue other/repo#12`: how the CLI and the TUI name it."""
        name = "pull request" if self.kind == "pull" else "issue"
        return f"{name} {self.repo or ''}#{self.number}"


class Task(BaseModel):
    """A bug the maintainers fixed with a new test: the unit every agent races on."""

    id: str
    """`<package>-<issue number>`: readable and stable across runs; an environment task
    whose change names no issue is `<package>-env-<the fix's short sha>`."""
    issue: int
    """The issue the task is numbered after: the one the change names, or the issue its
    pull request closes. `statement_source` says whose text the agents are given. 0 for
    an environment task whose change names no issue (the failing log is its problem)."""
    reference: IssueRef
    """What the change itself named; may be the pull request rather than the issue."""
    title: str
    fix_commit: str
    base_commit: str
    """The fix's first parent: the code the agents start from."""
    date: datetime
    source_files: list[str]
    test_files: list[str]
    added_tests: list[str]
    """Names of the test functions the fix added (`test_x`, `TestY::test_z`)."""
    test_data_files: list[str] = Field(default_factory=list)
    """Non-Python files the fix changed among the tests (fixtures, sample data)."""
    statement: str | None = None
    """The issue text with fix descriptions removed; None when it could not be read."""
    statement_missing: str | None = None
    """Why `statement` is None (offline, not found, rate limited, ...)."""
    statement_note: str | None = None
    """How the text was chosen when that took a decision (a PR's own text, several issues)."""
    statement_source: StatementSource | None = None
    """Where `statement` was read and what was cut from it; None without a statement."""
    statement_retry: bool = False
    """`statement_missing` is a failure that may pass (network, rate limit, server error):
    the next mining asks again, where a definite answer (no such issue) is kept."""
    kind: TaskKind = "bug"
    env: EnvSpec | None = None
    """An environment task's command, date and failing log; None for a bug."""


class TaskSet(Record):
    """`tasks.json`: the mined tasks and the funnel of everything left out."""

    mined_at: datetime
    head: str
    """The commit at the tip of the mined branch, so a rerun can tell if history moved."""
    fingerprint: str
    """A hash of the settings that shaped the result; a change to them means mining again."""
    issue_source: str
    """Where the statements came from, in words (an API URL, an issues file)."""
    examined: int
    tasks: list[Task] = Field(default_factory=list)
    excluded: list[Exclusion] = Field(default_factory=list)
    retried: int = 0
    """Lookups this mining asked again because the one before could not read them."""

    def unread(self) -> int:
        """Lookups that failed for a reason that may pass, which the next mining retries."""
        return sum(task.statement_retry for task in self.tasks) + sum(
            item.retry for item in self.excluded
        )

    def funnel(self) -> dict[str, int]:
        """How many changes were left out for each reason, in vocabulary order."""
        counts = {reason.value: 0 for reason in Reason}
        for item in self.excluded:
            counts[item.reason.value] += 1
        return counts


class Conditions(BaseModel):
    """What a stored test result depended on besides the code under test.

    The same tests on the same code can answer otherwise under another interpreter,
    other pytest arguments or another sandbox, so each oracle, matrix and resolution
    keeps the conditions it was made under, and a stage runs again what was made under
    conditions other than the current ones. The agents taking part are not conditions:
    adding a contestant runs only what is new.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    interpreter: str
    """The test interpreter's path."""
    environment: str
    """The environment's key: it names the Python version and the digest of every
    dependency list that went into the environment."""
    test_dependencies: list[str]
    pytest_args: list[str]
    env: dict[str, str]
    source: str
    """The package directory, which decides what goes on PYTHONPATH."""
    sandbox: str
    """The sandbox backend the tests ran in (`bubblewrap`, `seatbelt`, `none`)."""
    test_timeout: int
    tests: str | None = None
    """The tests directory, where the repository's suite is taken from: kept by
    matrices, which run the suite; None for records that never run it."""


Rung = Literal["dated", "relaxed", "tip", "none"]
"""Where a task's environment stands on the ladder: resolved as of the fix's date; the
same with the date limit lifted for the packages that blocked it; the environment of the
tip; none at all (the tests cannot run)."""
RUNGS: tuple[Rung, ...] = ("dated", "relaxed", "tip", "none")
"""The ladder's rungs, top down."""


class TaskEnvironment(BaseModel):
    """The environment a task's tests ran in, and how it was found (`environments = "dated"`).

    Tasks whose resolutions are equal share one environment, so `key` repeats; everything
    else here is the task's own: the date, what had to give way, what the date could not
    govern.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rung: Rung
    key: str | None = None
    """The environment's key (its folder name); None on the rung `none`."""
    python: str | None = None
    """The interpreter's version, as uv found it (`3.11.7`)."""
    date: datetime | None = None
    """The limit: the fix's committer date; packages uploaded later were not candidates."""
    packages: list[str] = Field(default_factory=list)
    """What the environment holds, pinned (`name==version`), as uv resolved it."""
    relaxed: list[str] = Field(default_factory=list)
    """Packages whose date limit was lifted because the dated resolution needed it."""
    runner_later: list[str] = Field(default_factory=list)
    """Test-runner packages taken from a later date because the dated ones could not run
    on the interpreter."""
    unenforced: list[str] = Field(default_factory=list)
    """What the date limit could not govern: direct URLs, local paths, VCS requirements,
    files of an index that gives no upload time."""
    note: str | None = None
    """Why the task is below the rung `dated` (uv's error, quoted), or how the
    interpreter was chosen when that needs saying."""
    older_python: str | None = None
    """The newest Python the commit names (its classifiers), when none of those was at
    hand and `python` is newer: a failure may be the interpreter's, not the code's."""
    settled: bool = False
    """`python` is not the first the commit chose: on that one no test failed before the
    fix, on this one (another the commit names) the fix's tests tell. The bug is of
    this Python (a Python 2 unicode bug, say), and so are the task's later runs."""


class Oracle(BaseModel):
    """A task's ground truth from the maintainers' own tests, as SWE-bench defines it."""

    fail_to_pass: list[str] = Field(default_factory=list)
    """Fail (or error) on the base with the fix's tests installed, pass on the fix."""
    pass_to_pass: list[str] = Field(default_factory=list)
    """Pass on both sides: a correct patch must keep them passing."""
    unstable: list[str] = Field(default_factory=list)
    """Gave different outcomes in the runs on the fix, or quarantined by the flake
    ledger; set aside."""
    scored: bool
    reason: str | None = None
    """Why the task is not scored (no fail-to-pass test, tests that cannot run)."""
    logs: str | None = None
    """The store's folder, relative to the store, holding the output of each of its
    pytest runs (`base.log`, `fix-1.log`, `fix-2.log`); None when nothing ran."""
    conditions: Conditions | None = None
    """What it was made under; None in records from before conditions were kept."""
    environment: TaskEnvironment | None = None
    """The task's own environment and its rung under dated environments; None under
    `environments = "tip"`, an interpreter of the user's, and in older records."""
    may_pass: str | None = None
    """A run failed once in a way that may pass (a signal, a full disk, a sandbox that
    could not start): this is that failure, no answer yet, and the next run tries again.
    The same failure again under the same conditions is kept as the answer."""


class OracleSet(Record):
    """`oracles.json`: task id → oracle, beside the schema version."""

    model_config = ConfigDict(extra="forbid")

    oracles: dict[str, Oracle] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        """Read the flat on-disk shape `{"schema_version": 1, "<task>": {...}}`."""
        if isinstance(data, dict) and "oracles" not in data:
            rest = {k: v for k, v in data.items() if k != "schema_version"}
            return {"schema_version": data.get("schema_version", SCHEMA_VERSION), "oracles": rest}
        return data

    @model_serializer(mode="plain")
    def _flatten(self) -> dict[str, Any]:
        flat: dict[str, Any] = {"schema_version": self.schema_version}
        flat.update({task: oracle.model_dump() for task, oracle in self.oracles.items()})
        return flat


CellOutcome = Literal["passed", "failed", "error", "skipped", "xfailed", "uncollected"]
"""A test's outcome on one tree. `uncollected`: its module could not even be imported,
which says nothing about the behaviour the test checks."""

AuthorKind = Literal["contestant", "examiner", "suite"]
BASE = "base"
"""The matrix's tree of the unfixed code; every other tree is named after its contestant."""
SUITE = "suite"
"""The matrix's author name for the repository's own tests."""


class Cell(BaseModel):
    """One test of one author on one tree."""

    outcome: CellOutcome
    message: str | None = None


class Author(BaseModel):
    """Whoever wrote a set of tests: a contestant, an examiner, or the repository."""

    name: str
    kind: AuthorKind
    vendor: str | None = None
    tests: list[str] = Field(default_factory=list)
    """The author's test ids, as the author wrote them (`tests/test_x.py::test_y`)."""
    digest: str | None = None
    """A hash of the author's test changes: changed under the same name (an attempt run
    again), its cells are stale. None for the suite."""


class TreeRun(BaseModel):
    """Every author's tests on one tree (the base, or base + one patch's source)."""

    tree: str
    """`base`, or the contestant whose patch was applied."""
    error: str | None = None
    """The run as a whole failed (patch did not apply, pytest crashed, timeout)."""
    cells: dict[str, dict[str, Cell]] = Field(default_factory=dict)
    """author → test id → cell."""


class PatchFacts(BaseModel):
    """What the judge needs to know about a patch besides the matrix."""

    contestant: str
    vendor: str
    source_size: int
    """Changed lines in the source part: the judge's late tie-break favours small fixes."""
    digest: str | None = None
    """A hash of the source part: changed under the same name, the tree is stale."""


class Matrix(Record):
    """`matrices/<task>.json`: every author's tests on the base and on every patch."""

    task: str
    authors: list[Author] = Field(default_factory=list)
    patches: list[PatchFacts] = Field(default_factory=list)
    trees: dict[str, TreeRun] = Field(default_factory=dict)
    """`base` and one per patch, keyed by `TreeRun.tree`."""
    conditions: Conditions | None = None
    """What its trees ran under; None in records from before conditions were kept."""


class Tokens(BaseModel):
    """Token usage as the agent reported it; None where it reports nothing."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None


def attempt_name(task: str, agent: str) -> str:
    """How an attempt is named in events, logs and on the race board: the board matches
    a stored attempt to the run's live one by this name, so both spell it here."""
    return f"{task}/{agent}"


class Attempt(Record):
    """`attempts/<task>/<contestant>.json`: one agent on one task, written when it ends."""

    task: str
    contestant: str
    role: Literal["contestant", "examiner"] = "contestant"
    status: AttemptStatus
    detail: str | None = None
    """Why the attempt ended as it did (the usage-limit message, the skip reason, ...)."""
    started_at: datetime
    ended_at: datetime
    seconds: float
    exit_code: int | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    summary: str | None = None
    """The agent's closing message, capped; never trusted as evidence."""
    patch: Patch = Field(default_factory=Patch)
    logdir: str
    prompt_file: str | None = None
    hidden: list[str] | None = None
    """The base's files kept out of the agent's checkout (the test files the fix
    touched, under `hide-touched-tests`). None in records from before this was kept,
    when every test file the fix touched was kept out. Its tests are examined over
    exactly the files it had."""
    resets_at: datetime | None = None
    """For a `quota` attempt, when its agent said the usage limit resets (read from
    `detail`); None when it did not say, and for every other status."""
    worker: str | None = None
    """The cluster's worker its agent ran on; None on the coordinator's machine."""

    @property
    def id(self) -> str:
        """`task/contestant`, as the race's events name it."""
        return attempt_name(self.task, self.contestant)

    @property
    def scorable(self) -> bool:
        """Whether the attempt counts in scores (a spent quota, a budget reached, an
        agent never given the task do not)."""
        return self.status not in ("quota", "skipped", "budget")

    @model_validator(mode="before")
    @classmethod
    def _never_started(cls, data: Any) -> Any:
        """Read an attempt whose agent could not be started as skipped, as it is now
        recorded: earlier versions stored it as crashed, which scored it as no fix and
        ran it again only on `--retry-failed`. Their detail is all that tells it."""
        if (
            isinstance(data, dict)
            and data.get("status") == "crashed"
            and str(data.get("detail") or "").startswith("could not start")
        ):
            return {**data, "status": "skipped"}
        return data


GOLD = "gold"
"""The contestant name of a task's gold control: the maintainers' fix, scored through
the path an agent's patch takes. Kept apart from the agents' scores (`ResolutionSet.
controls`), so no agent's name can stand for it."""

ResolutionStatus = Literal["resolved", "fixed-but-broke", "wrong-fix", "no-fix", "quota"]


class Resolution(BaseModel):
    """A patch scored by the maintainers' hidden tests."""

    task: str
    contestant: str
    status: ResolutionStatus
    fail_to_pass: dict[str, CellOutcome] = Field(default_factory=dict)
    """Each fail-to-pass test's outcome on the patch."""
    broken: list[str] = Field(default_factory=list)
    """Pass-to-pass tests the patch made fail."""
    detail: str | None = None
    conditions: Conditions | None = None
    """What its run was made under; None when nothing ran, and in records from before
    conditions were kept."""


class ResolutionSet(Record):
    """`resolutions.json`: every patch's score, and every policy's pick scored."""

    patches: dict[str, dict[str, Resolution]] = Field(default_factory=dict)
    """task → contestant → resolution."""
    controls: dict[str, Resolution] = Field(default_factory=dict)
    """task → the gold control: the maintainers' own fix scored as a patch (its
    contestant is `GOLD`). A task whose control is not `resolved` has a grader that
    cannot be trusted here."""


class TreeTally(BaseModel):
    """One test's outcomes on one tree (one piece of code under one set of conditions)."""

    label: str
    """What the tree is, in words: `fix 1a2b3c4d5`, `codex's patch`, `the gold control`."""
    runs: int = 0
    passes: int = 0
    """Passed or xfailed."""
    fails: int = 0
    """Failed or errored; a skip or a module that did not import is a run, neither."""


class OutcomeTally(BaseModel):
    """Every outcome bugbout saw of one test, by the tree it ran on."""

    trees: dict[str, TreeTally] = Field(default_factory=dict)
    """tree identity (a digest of the code that ran and the conditions) → its tally."""

    @property
    def flipped(self) -> bool:
        """Whether it both passed and failed on one tree: the same code, the same
        conditions, two answers. Such a test is quarantined from then on."""
        return any(tally.passes and tally.fails for tally in self.trees.values())

    @property
    def runs(self) -> int:
        return sum(tally.runs for tally in self.trees.values())

    @property
    def passes(self) -> int:
        return sum(tally.passes for tally in self.trees.values())

    @property
    def fails(self) -> int:
        return sum(tally.fails for tally in self.trees.values())


class Ledger(Record):
    """`ledger.json`: every test outcome of the bout, by task, author, test and tree.

    The repository's tests (the ground truth's, the gold control's, scoring's and the
    cross-examination's suite) are filed under the author `suite`; an agent's tests under
    its name.
    """

    tasks: dict[str, dict[str, dict[str, OutcomeTally]]] = Field(default_factory=dict)
    """task → author → test id → tally."""

    def quarantined(self, task: str) -> dict[str, dict[str, OutcomeTally]]:
        """author → test → tally, of the task's tests that flipped on some tree."""
        found: dict[str, dict[str, OutcomeTally]] = {}
        for author, tests in self.tasks.get(task, {}).items():
            for test, tally in tests.items():
                if tally.flipped:
                    found.setdefault(author, {})[test] = tally
        return found


class LaneWindow(BaseModel):
    """A quota lane's usage window, closed until `resets_at` as its agent said."""

    model_config = ConfigDict(extra="forbid")

    message: str
    """The agent's usage-limit message."""
    resets_at: datetime
    said_at: datetime


class LaneWindows(Record):
    """`lanes.json`: each quota lane whose window a run saw close, until it reopens.

    A run started while one is still closed waits for it, or records that lane's
    attempts without starting any, instead of spending an attempt to find out again.
    """

    lanes: dict[str, LaneWindow] = Field(default_factory=dict)
