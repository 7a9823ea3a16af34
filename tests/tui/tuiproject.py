"""A finished bout to look at: a small real repository, mined for real, with records.

The repository (`calc`) has three fixed bugs and a few changes mining leaves out. Its
tasks are mined from the real history; the ground truth, the attempts, the matrices and
the scores are written directly as the store's own models, so every screen has
something true to show without running an agent. The race board's events come from
`events/race.jsonl`, recorded from a real run of this project (`record_race.py`).

The matrices are built so the policies disagree: on `calc-1` every policy picks the
right patch; on `calc-2` `majority` picks a wrong one that the stricter policies refuse.
calc declares no dependency, so every task's dated environment holds the test runner
alone and the three share it; both scored tasks' gold controls resolve; on `calc-2` the
flake ledger quarantined `tests/test_mean.py::test_empty`, which flipped between the two
runs on the fix (so its ground truth set it aside as unstable).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gitrepo import GitRepo
from projects import write_issues

from bugbout_tui.core.models import (
    GOLD,
    SUITE,
    Attempt,
    Author,
    Cell,
    Ledger,
    Matrix,
    Oracle,
    OracleSet,
    OutcomeTally,
    PatchFacts,
    Resolution,
    ResolutionSet,
    Task,
    TaskEnvironment,
    TaskSet,
    Tokens,
    TreeRun,
    TreeTally,
)
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.core.store import Store
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import attempt_path
from bugbout_tui.rules.flakes import digest

EVENTS = Path(__file__).resolve().parent / "events"

CONFIG = """\
# bugbout.toml for calc: which bugs to race, and who races them.

[project]
# The package under test.
source = "src/calc"
tests = "tests"
issues-file = "issues.json"  # issues come from this file, not GitHub

[tasks]
limit = 10

[run]
timeout = 600
quotas = { alpha = 1, beta = 1 }

[judge]
# How one patch is picked per bug.
policy = "majority"

# Two lanes: careful and hasty share the alpha plan, slow and rationed the beta plan.
[[contestants]]
agent = "command"
name = "careful"
vendor = "anthropic"
quota = "alpha"
command = ["careful-agent", "{prompt_file}"]

[[contestants]]
agent = "command"
name = "hasty"
vendor = "openai"
quota = "alpha"
command = ["hasty-agent", "{prompt_file}"]

[[contestants]]
agent = "command"
name = "slow"
vendor = "anthropic"
quota = "beta"
command = ["slow-agent", "{prompt_file}"]

[[contestants]]
agent = "command"
name = "rationed"
vendor = "mistral"
quota = "beta"
command = ["rationed-agent", "{prompt_file}"]

# The examiner only writes tests.
[[examiners]]
agent = "command"
name = "examiner"
vendor = "google"
quota = "alpha"
command = ["examiner-agent", "{prompt_file}"]
"""

OPS = """\
def mean(xs):
    return sum(xs) / len(xs)


def clamp(x, low, high):
    return max(low, x)


def percent(part, whole):
    return part / whole * 100
"""

ISSUES = {
    1: ("mean() crashes on an empty list",
        "Calling `mean([])` raises ZeroDivisionError.\n\nExpected: 0.0 for no values."),
    2: ("clamp() ignores the upper bound",
        "`clamp(15, 0, 10)` returns 15.\n\nExpected 10: the value must stay within bounds."),
    3: ("percent() of nothing crashes",
        "`percent(0, 0)` raises instead of returning 0."),
}  # fmt: skip

START = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)


def build_repository(root: Path) -> GitRepo:
    """calc: three fixes with a new test each, among changes mining leaves out."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": "from calc.ops import mean\n\n\ndef test_mean():\n"
            "    assert mean([1, 3]) == 2\n",
        },
    )
    ops = OPS.replace(
        "    return sum(xs) / len(xs)",
        "    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)",
    )
    repo.commit(
        "Fix mean() on an empty list (#1)",
        files={
            "src/calc/ops.py": ops,
            "tests/test_mean.py": "from calc.ops import mean\n\n\ndef test_empty():\n"
            "    assert mean([]) == 0.0\n",
        },
    )
    repo.commit("Add a README", files={"README.md": "calc: small numeric helpers\n"})
    ops = ops.replace("    return max(low, x)", "    return min(max(low, x), high)")
    repo.commit(
        "Fix clamp() ignoring the upper bound (#2)",
        files={
            "src/calc/ops.py": ops,
            "tests/test_clamp.py": "from calc.ops import clamp\n\n\ndef test_upper():\n"
            "    assert clamp(15, 0, 10) == 10\n",
        },
    )
    repo.commit("Fix a typo in the README", files={"README.md": "calc: small numeric helpers.\n"})
    ops = ops.replace(
        "    return part / whole * 100",
        "    if whole == 0:\n        return 0\n    return part / whole * 100",
    )
    repo.commit(
        "Fix percent() of nothing (#3)",
        files={
            "src/calc/ops.py": ops,
            "tests/test_percent.py": "from calc.ops import percent\n\n\ndef test_zero():\n"
            "    assert percent(0, 0) == 0\n",
        },
    )
    return repo


def _cells(outcomes: dict[str, str], messages: dict[str, str] | None = None) -> dict[str, Cell]:
    messages = messages or {}
    return {
        test: Cell(outcome=outcome, message=messages.get(test))  # type: ignore[arg-type]
        for test, outcome in outcomes.items()
    }


def _matrix_calc_1() -> Matrix:
    suite = ["tests/test_ops.py::test_mean", "tests/test_ops.py::test_mean_of_one"]
    authors = [
        Author(name="careful", kind="contestant", vendor="anthropic",
               tests=["tests/test_mean_careful.py::test_empty_list"]),
        Author(name="hasty", kind="contestant", vendor="openai",
               tests=["tests/test_hasty.py::test_mean_empty"]),
        Author(name="examiner", kind="examiner", vendor="google",
               tests=["tests/test_x.py::test_empty_is_zero", "tests/test_x.py::test_empty_tuple"]),
        Author(name="suite", kind="suite", tests=suite),
    ]  # fmt: skip
    crash = 'ZeroDivisionError: division by zero\n  File "src/calc/ops.py", line 2, in mean'
    base = {
        "careful": _cells({"tests/test_mean_careful.py::test_empty_list": "failed"},
                          {"tests/test_mean_careful.py::test_empty_list": crash}),
        "hasty": _cells({"tests/test_hasty.py::test_mean_empty": "failed"},
                        {"tests/test_hasty.py::test_mean_empty": crash}),
        "examiner": _cells({"tests/test_x.py::test_empty_is_zero": "failed",
                            "tests/test_x.py::test_empty_tuple": "failed"},
                           {"tests/test_x.py::test_empty_is_zero": crash,
                            "tests/test_x.py::test_empty_tuple": crash}),
        "suite": _cells(dict.fromkeys(suite, "passed")),
    }  # fmt: skip
    wrong = "assert mean([]) == 0.0\nE   assert None == 0.0"
    trees = {
        "base": TreeRun(tree="base", cells=base),
        "careful": TreeRun(tree="careful", cells={
            "careful": _cells({"tests/test_mean_careful.py::test_empty_list": "passed"}),
            "hasty": _cells({"tests/test_hasty.py::test_mean_empty": "passed"}),
            "examiner": _cells({"tests/test_x.py::test_empty_is_zero": "passed",
                                "tests/test_x.py::test_empty_tuple": "passed"}),
            "suite": _cells(dict.fromkeys(suite, "passed")),
        }),
        "hasty": TreeRun(tree="hasty", cells={
            "careful": _cells({"tests/test_mean_careful.py::test_empty_list": "failed"},
                              {"tests/test_mean_careful.py::test_empty_list": wrong}),
            "hasty": _cells({"tests/test_hasty.py::test_mean_empty": "passed"}),
            "examiner": _cells({"tests/test_x.py::test_empty_is_zero": "failed",
                                "tests/test_x.py::test_empty_tuple": "passed"},
                               {"tests/test_x.py::test_empty_is_zero": wrong}),
            "suite": _cells({suite[0]: "passed", suite[1]: "failed"},
                            {suite[1]: "assert mean([4]) == 4\nE   assert None == 4"}),
        }),
        "slow": TreeRun(tree="slow", cells={
            "careful": _cells({"tests/test_mean_careful.py::test_empty_list": "passed"}),
            "hasty": _cells({"tests/test_hasty.py::test_mean_empty": "passed"}),
            "examiner": _cells({"tests/test_x.py::test_empty_is_zero": "passed",
                                "tests/test_x.py::test_empty_tuple": "failed"},
                               {"tests/test_x.py::test_empty_tuple": "TypeError: tuple"}),
            "suite": _cells(dict.fromkeys(suite, "passed")),
        }),
    }  # fmt: skip
    patches = [
        PatchFacts(contestant="careful", vendor="anthropic", source_size=3),
        PatchFacts(contestant="hasty", vendor="openai", source_size=2),
        PatchFacts(contestant="slow", vendor="anthropic", source_size=4),
    ]
    return Matrix(task="calc-1", authors=authors, patches=patches, trees=trees)


def _matrix_calc_2() -> Matrix:
    suite = ["tests/test_ops.py::test_mean"]
    authors = [
        Author(name="careful", kind="contestant", vendor="anthropic",
               tests=["tests/test_clamp_careful.py::test_upper_bound"]),
        Author(name="hasty", kind="contestant", vendor="openai",
               tests=["tests/test_clamp_hasty.py::test_fifteen"]),
        Author(name="examiner", kind="examiner", vendor="google",
               tests=["tests/test_y.py::test_upper", "tests/test_y.py::test_within"]),
        Author(name="suite", kind="suite", tests=suite),
    ]  # fmt: skip
    above = "assert clamp(15, 0, 10) == 10\nE   assert 15 == 10"
    base = {
        "careful": _cells({"tests/test_clamp_careful.py::test_upper_bound": "failed"},
                          {"tests/test_clamp_careful.py::test_upper_bound": above}),
        "hasty": _cells({"tests/test_clamp_hasty.py::test_fifteen": "failed"},
                        {"tests/test_clamp_hasty.py::test_fifteen": above}),
        "examiner": _cells({"tests/test_y.py::test_upper": "failed",
                            "tests/test_y.py::test_within": "failed"},
                           {"tests/test_y.py::test_upper": above,
                            "tests/test_y.py::test_within": "assert clamp(12, 0, 11) == 11"}),
        "suite": _cells(dict.fromkeys(suite, "passed")),
    }  # fmt: skip
    trees = {
        "base": TreeRun(tree="base", cells=base),
        "careful": TreeRun(tree="careful", cells={
            "careful": _cells({"tests/test_clamp_careful.py::test_upper_bound": "passed"}),
            "hasty": _cells({"tests/test_clamp_hasty.py::test_fifteen": "failed"},
                            {"tests/test_clamp_hasty.py::test_fifteen": "assert 10 == 15"}),
            "examiner": _cells({"tests/test_y.py::test_upper": "passed",
                                "tests/test_y.py::test_within": "failed"},
                               {"tests/test_y.py::test_within": "assert 10 == 11"}),
            "suite": _cells(dict.fromkeys(suite, "passed")),
        }),
        "hasty": TreeRun(tree="hasty", cells={
            "careful": _cells({"tests/test_clamp_careful.py::test_upper_bound": "failed"},
                              {"tests/test_clamp_careful.py::test_upper_bound": "assert 15 == 10"}),
            "hasty": _cells({"tests/test_clamp_hasty.py::test_fifteen": "passed"}),
            "examiner": _cells({"tests/test_y.py::test_upper": "passed",
                                "tests/test_y.py::test_within": "passed"}),
            "suite": _cells(dict.fromkeys(suite, "passed")),
        }),
    }  # fmt: skip
    patches = [
        PatchFacts(contestant="careful", vendor="anthropic", source_size=1),
        PatchFacts(contestant="hasty", vendor="openai", source_size=1),
    ]
    return Matrix(task="calc-2", authors=authors, patches=patches, trees=trees)


def _diff(path: str, removed: list[str], added: list[str]) -> str:
    """A one-hunk unified diff; no removed lines means a new file."""
    old = f"a/{path}" if removed else "/dev/null"
    start = 1 if removed else 0
    lines = [f"diff --git a/{path} b/{path}", f"--- {old}", f"+++ b/{path}",
             f"@@ -{start},{len(removed)} +1,{len(added)} @@"]  # fmt: skip
    lines += [f"-{line}" for line in removed] + [f"+{line}" for line in added]
    return "\n".join(lines) + "\n"


def _attempt(
    task: str,
    contestant: str,
    status: str,
    minute: int,
    seconds: float,
    *,
    source: tuple[list[str], list[str]] | None = None,
    test: str | None = None,
    detail: str | None = None,
    role: str = "contestant",
    tokens: Tokens | None = None,
    cost: float | None = None,
) -> Attempt:
    files: list[FileChange] = []
    source_diff = tests_diff = ""
    if source is not None:
        removed, added = source
        source_diff = _diff("src/calc/ops.py", removed, added)
        files.append(FileChange(path="src/calc/ops.py", status="modified", part="source",
                                added_lines=len(added), removed_lines=len(removed)))  # fmt: skip
    if test is not None:
        body = ["from calc.ops import mean", "", "", "def test_empty_list():",
                "    assert mean([]) == 0.0"]  # fmt: skip
        tests_diff = _diff(test, [], body)
        files.append(FileChange(path=test, status="added", part="tests", added_lines=len(body)))
    started = START + timedelta(minutes=minute)
    return Attempt(
        task=task,
        contestant=contestant,
        role=role,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        detail=detail,
        started_at=started,
        ended_at=started + timedelta(seconds=seconds),
        seconds=seconds,
        exit_code=0 if status in ("finished", "no-change") else 1,
        tokens=tokens or Tokens(),
        cost_usd=cost,
        summary=f"{contestant}: I looked at src/calc/ops.py and changed what the issue describes."
        if status == "finished"
        else None,
        patch=Patch(source=source_diff, tests=tests_diff, files=files),
        logdir="",
    )


def attempts() -> list[Attempt]:
    empty = (["    return sum(xs) / len(xs)"],
             ["    if not xs:", "        return 0.0", "    return sum(xs) / len(xs)"])  # fmt: skip
    upper = (["    return max(low, x)"], ["    return min(max(low, x), high)"])
    limit = "You've hit your usage limit. Try again in 3 hours."
    return [
        _attempt("calc-1", "careful", "finished", 0, 64.0, source=empty,
                 test="tests/test_mean_careful.py", tokens=Tokens(input=18_400, output=2_100),
                 cost=0.0412),
        _attempt("calc-1", "hasty", "finished", 2, 21.0,
                 source=(["    return sum(xs) / len(xs)"], ["    return None"])),
        _attempt("calc-1", "slow", "finished", 0, 181.0, source=empty),
        _attempt("calc-1", "rationed", "quota", 4, 3.0, detail=limit),
        _attempt("calc-1", "examiner", "finished", 3, 40.0, role="examiner",
                 test="tests/test_x.py"),
        _attempt("calc-2", "careful", "finished", 5, 48.0, source=upper),
        _attempt("calc-2", "hasty", "finished", 6, 15.0,
                 source=(["    return max(low, x)"], ["    return low if x < low else high"])),
        _attempt("calc-2", "slow", "timeout", 4, 600.0, detail="stopped after 600s"),
        _attempt("calc-2", "rationed", "quota", 10, 0.0,
                 detail="not started: the beta quota ran out earlier in this run"),
        _attempt("calc-2", "examiner", "no-change", 7, 30.0, role="examiner"),
    ]  # fmt: skip


def resolutions() -> ResolutionSet:
    def scored(task: str, contestant: str, status: str) -> Resolution:
        return Resolution(task=task, contestant=contestant, status=status)  # type: ignore[arg-type]

    return ResolutionSet(
        patches={
            "calc-1": {
                "careful": scored("calc-1", "careful", "resolved"),
                "hasty": scored("calc-1", "hasty", "wrong-fix"),
                "slow": scored("calc-1", "slow", "resolved"),
                "rationed": scored("calc-1", "rationed", "quota"),
            },
            "calc-2": {
                "careful": scored("calc-2", "careful", "resolved"),
                "hasty": scored("calc-2", "hasty", "wrong-fix"),
                "slow": scored("calc-2", "slow", "no-fix"),
                "rationed": scored("calc-2", "rationed", "quota"),
            },
        },
        controls={
            "calc-1": gold("calc-1", "tests/test_mean.py::test_empty"),
            "calc-2": gold("calc-2", "tests/test_clamp.py::test_upper"),
        },
    )


def gold(task: str, fail_to_pass: str) -> Resolution:
    """A gold control that resolved: the fix passes its own fail-to-pass test."""
    return Resolution(
        task=task, contestant=GOLD, status="resolved", fail_to_pass={fail_to_pass: "passed"}
    )


ENVIRONMENT = "dated-py3.12.1-5e0c41b7a9d2"
"""The one dated environment the calc tasks share."""


def environment(task: Task) -> TaskEnvironment:
    """What calc's dated resolution holds as of `task`'s fix (January 2024): the test
    runner alone, since calc declares no dependency."""
    return TaskEnvironment(
        rung="dated",
        key=ENVIRONMENT,
        python="3.12.1",
        date=task.date,
        packages=["iniconfig==2.0.0", "packaging==23.2", "pluggy==1.3.0", "pytest==7.4.4"],
    )


def oracles(taskset: TaskSet) -> OracleSet:
    env = {task.id: environment(task) for task in taskset.tasks}
    return OracleSet(
        oracles={
            "calc-1": Oracle(fail_to_pass=["tests/test_mean.py::test_empty"],
                             pass_to_pass=["tests/test_ops.py::test_mean"], scored=True,
                             environment=env["calc-1"]),
            "calc-2": Oracle(fail_to_pass=["tests/test_clamp.py::test_upper"],
                             pass_to_pass=["tests/test_ops.py::test_mean"],
                             unstable=["tests/test_mean.py::test_empty"], scored=True,
                             environment=env["calc-2"]),
            "calc-3": Oracle(scored=False,
                             reason="no fail-to-pass test: the new test also passes unfixed",
                             environment=env["calc-3"]),
        }
    )  # fmt: skip


def ledger(taskset: TaskSet) -> Ledger:
    """`calc-2`'s `tests/test_mean.py::test_empty` passed on the base and once of the two
    runs on the fix: the same code, two answers, so it is quarantined."""
    task = next(task for task in taskset.tasks if task.id == "calc-2")
    base = f"base {task.base_commit[:9]} with the fix's tests"
    fix = f"fix {task.fix_commit[:9]}"
    flaky = OutcomeTally(trees={
        digest(base): TreeTally(label=base, runs=1, passes=1),
        digest(fix): TreeTally(label=fix, runs=2, passes=1, fails=1),
    })  # fmt: skip
    steady = OutcomeTally(trees={
        digest(base): TreeTally(label=base, runs=1, fails=1),
        digest(fix): TreeTally(label=fix, runs=2, passes=2),
    })  # fmt: skip
    tests = {"tests/test_mean.py::test_empty": flaky, "tests/test_clamp.py::test_upper": steady}
    return Ledger(tasks={"calc-2": {SUITE: tests}})


def build_project(root: Path, *, records: bool = True, events: str | None = "race.jsonl") -> Path:
    """The calc project in `root`, mined; with `records`, a finished bout's records; with
    `events`, that recorded journal as the last run's."""
    build_repository(root)
    (root / "bugbout.toml").write_text(CONFIG, encoding="utf-8")
    write_issues(root, ISSUES)
    project = Project.load(root)
    taskset = mine_tasks(project)
    store = Store(root)
    if records:
        store.write(store.oracles_path, oracles(taskset))
        store.write(store.ledger_path, ledger(taskset))
        for attempt in attempts():
            store.write(attempt_path(store.attempts_dir, attempt.task, attempt.contestant),
                        attempt)  # fmt: skip
        for matrix in (_matrix_calc_1(), _matrix_calc_2()):
            store.write(store.matrices_dir / f"{matrix.task}.json", matrix)
        store.write(store.root / "resolutions.json", resolutions())
    if events is not None:
        store.ensure()
        shutil.copyfile(EVENTS / events, store.events_path)
    return root
