"""`bugbout doctor`: everything a bout needs, checked before any agent spends quota.

A bout fails late and expensively when something basic is wrong: agents have been paid to
work before the tests turn out not to collect, or the sandbox refuses to start. Each check
here runs what the bout itself would run (the same environment build, the same sandbox,
the same pytest invocation), so a clean report means the bout gets past the same points.

Checks that do not need each other run concurrently, and every query, request, build and
test run has a time limit, so a second run with the environment already built takes
seconds. Local git plumbing goes through the same `infra.git` calls a bout makes. A check whose
prerequisite failed is reported as skipped rather than run into a confusing second error.
Nothing here prints: the caller renders the `DoctorReport`.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from bugbout_tui.agents.base import CodingAgent
from bugbout_tui.agents.command import CommandAgent
from bugbout_tui.agents.registry import agent_from_config
from bugbout_tui.core.config import AgentConfig
from bugbout_tui.core.errors import BugboutError, ToolMissingError
from bugbout_tui.core.git_urls import is_git_url
from bugbout_tui.core.models import RUNGS, OracleSet
from bugbout_tui.engine.environment import environment_at, project_environment
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.testing import import_paths
from bugbout_tui.infra.detect import github_from_remote
from bugbout_tui.infra.env import Environment, find_uv
from bugbout_tui.infra.git import (
    default_branch,
    ensure_full_history,
    head_commit,
    open_repository,
    repository_paths,
)
from bugbout_tui.infra.github import (
    BadCredentials,
    Credentials,
    GitHubClient,
    GitHubError,
    RateLimit,
    api_url_from_env,
    load_issues_file,
    local_time,
    resolve_credentials,
)
from bugbout_tui.infra.proc import ProcessResult, run_process
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox, describe_sandbox, select_sandbox
from bugbout_tui.infra.submodules import MissingSubmodule, recorded_submodules
from bugbout_tui.infra.trees import copy_tree, missing_submodules, pristine_tree

__all__ = [
    "Check",
    "CheckStatus",
    "Checks",
    "DoctorReport",
    "agent_check",
    "diagnose",
    "git_check",
    "sandbox_check",
    "uv_check",
]

CheckStatus = Literal["ok", "warning", "problem"]

MIN_GIT = (2, 31)
"""Mining reads merges with `--diff-merges`, which older git does not know."""

COMMAND_TIMEOUT = 15.0
"""Seconds for a quick question to a program (its version, where a Python is)."""
GITHUB_TIMEOUT = 5.0
BUILD_TIMEOUT = 30 * 60.0
"""A first environment build downloads packages; past this something is stuck."""

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_COLLECTED = re.compile(r"\b(\d+)(?:/\d+)? tests? collected\b")
_QUIET_COUNT = re.compile(r"^\S+\.py: (\d+)$", re.MULTILINE)
_ANONYMOUS_FIX = (
    "Set GITHUB_TOKEN (any token with read access) or log in with `gh auth login` "
    "for 5,000 requests an hour instead of 60."
)

Progress = Callable[[str], None]
"""Told, in a few words, when a step that may take a while starts."""


class Check(BaseModel):
    """One line of the report: what was checked, how it went, and what to do about it."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: CheckStatus
    detail: str
    fix: str | None = None
    """A command to run or a change to bugbout.toml; None when nothing needs doing."""


class Checks(BaseModel):
    """Checks in a fixed order; `ok` unless one is a problem (warnings pass)."""

    model_config = ConfigDict(frozen=True)

    checks: list[Check]

    @property
    def problems(self) -> list[Check]:
        return [check for check in self.checks if check.status == "problem"]

    @property
    def warnings(self) -> list[Check]:
        return [check for check in self.checks if check.status == "warning"]

    @property
    def ok(self) -> bool:
        return not self.problems


class DoctorReport(Checks):
    """Every check of this machine and project."""


def _ok(name: str, detail: str) -> Check:
    return Check(name=name, status="ok", detail=detail)


def _warning(name: str, detail: str, fix: str | None) -> Check:
    return Check(name=name, status="warning", detail=detail, fix=fix)


def _problem(name: str, detail: str, fix: str | None) -> Check:
    return Check(name=name, status="problem", detail=detail, fix=fix)


def _from_error(name: str, error: BugboutError) -> Check:
    return _problem(name, error.message, error.hint)


def _skipped(name: str, *prerequisites: str) -> Check:
    """A check that cannot run because the checks it builds on failed."""
    which = " and ".join(prerequisites)
    return _warning(
        name,
        f"not checked: the {which} check did not pass",
        f"Fix the {which} problem first, then run `bugbout doctor` again.",
    )


def _version(text: str) -> tuple[int, ...] | None:
    """The first dotted version in `text`, as numbers to compare."""
    found = _VERSION.search(text)
    if found is None:
        return None
    return tuple(int(part) for part in found.groups() if part is not None)


def _what_went_wrong(result: ProcessResult) -> str:
    if result.timed_out:
        return f"no answer within {COMMAND_TIMEOUT:g} seconds"
    for text in (result.stderr_tail, result.stdout_tail):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[0]
    return f"exit status {result.returncode}"


async def _ask(argv: list[str]) -> ProcessResult:
    """Run a quick query to completion, killed with all it started after the timeout.

    It runs outside the project, so no `.python-version` or uv.toml there changes the answer.

    Raises:
        OSError: the program could not be started.
    """
    return await run_process(
        argv,
        cwd=Path(tempfile.gettempdir()),
        env=os.environ,
        timeout=COMMAND_TIMEOUT,
        kill_grace=1.0,
    )


@dataclass(frozen=True)
class _Repository:
    path: Path
    branch: str
    commit: str


_T = TypeVar("_T")


@dataclass(frozen=True)
class _Outcome(Generic[_T]):
    """A check's line in the report and what later checks may build on."""

    check: Check
    value: _T | None = None


async def git_check() -> Check:
    """Whether git is here and new enough to mine with."""
    name = "git"
    fix = "Install git 2.31 or newer, e.g. `apt-get install git` or `brew install git`."
    try:
        result = await _ask(["git", "--version"])
    except OSError:
        return _problem(name, "git is not installed or not on PATH", fix)
    version = _version(result.stdout_tail)
    if result.returncode != 0 or version is None:
        return _problem(name, f"`git --version` failed: {_what_went_wrong(result)}", fix)
    shown = ".".join(map(str, version))
    if version < MIN_GIT:
        return _problem(name, f"git {shown} is too old: mining needs 2.31 or newer", fix)
    return _ok(name, f"git {shown}")


async def uv_check(*, needed: bool) -> _Outcome[Path]:
    """uv, which builds the test environments; not `needed` when [project] interpreter
    runs the tests as it is."""
    name = "uv"
    if not needed:
        return _Outcome(_ok(name, "not needed: [project] interpreter runs the tests as it is"))
    try:
        uv = find_uv()
    except BugboutError as error:
        return _Outcome(_problem(name, error.message, "pip install uv"))
    try:
        result = await _ask([str(uv), "--version"])
    except OSError as error:
        return _Outcome(_problem(name, f"{uv} cannot be run: {error}", "pip install uv"))
    version = _version(result.stdout_tail)
    if result.returncode != 0 or version is None:
        said = _what_went_wrong(result)
        return _Outcome(_problem(name, f"`{uv} --version` failed: {said}", "pip install uv"))
    return _Outcome(_ok(name, f"uv {'.'.join(map(str, version))} at {uv}"), uv)


async def sandbox_check(kind: str) -> _Outcome[Sandbox]:
    """Whether the sandbox `kind` names starts here and confines."""
    name = "sandbox"
    report = await asyncio.to_thread(describe_sandbox, kind)
    if not report.ok:
        return _Outcome(_problem(name, report.detail, report.fix))
    sandbox = await asyncio.to_thread(select_sandbox, kind)  # probed above: no new run
    if not report.confined:
        return _Outcome(
            _warning(
                name,
                f'sandbox = "{kind}" is set. ' + report.detail,
                report.fix,
            ),
            sandbox,
        )
    return _Outcome(_ok(name, report.detail), sandbox)


async def agent_check(name: str, entry: AgentConfig) -> Check:
    """Whether the program of the agent `entry` configures is installed, and how old it is;
    the line is called `name`."""
    try:
        agent = agent_from_config(entry.model_dump())
        program = await asyncio.to_thread(agent.command)
    except BugboutError as error:
        return _problem(name, error.message, _install_fix(entry, error))
    shown = await asyncio.to_thread(agent.version)
    tested = agent.tested_version
    if shown is None:
        if tested is None:
            return _ok(name, f"{program} (its version could not be read)")
        return _warning(
            name,
            f"{program} is installed, but its version could not be read; "
            f"bugbout's adapter was tested with {tested}",
            _update_fix(agent),
        )
    found, expected = _version(shown), _version(tested) if tested else None
    if found is not None and expected is not None and found < expected:
        return _warning(
            name,
            f"{program} is version {shown}, older than {tested}, which bugbout's "
            "adapter was tested with: its command line may have changed since",
            _update_fix(agent),
        )
    return _ok(name, f"{program} {shown}")


class _Doctor:
    """One run of the checks over one project; each check is a coroutine."""

    def __init__(self, project: Project, progress: Progress | None) -> None:
        self.project = project
        self.config = project.config
        self.progress = progress

    def _say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    async def run(self) -> DoctorReport:
        cfg = self.config
        git = asyncio.ensure_future(git_check())
        repository = asyncio.ensure_future(self.repository(git))
        uv = asyncio.ensure_future(uv_check(needed=cfg.project.interpreter is None))
        python = asyncio.ensure_future(self.python(uv))
        sandbox = asyncio.ensure_future(sandbox_check(cfg.run.sandbox))
        agents = [
            asyncio.ensure_future(agent_check(f"{role} {entry.name}", entry))
            for role, entries in (("contestant", cfg.contestants), ("examiner", cfg.examiners))
            for entry in entries
        ]
        issues = asyncio.ensure_future(self.issues(repository))
        submodules = asyncio.ensure_future(self.submodules(repository))
        environment = asyncio.ensure_future(self.environment(repository, uv, python))
        collection = asyncio.ensure_future(
            self.collection(repository, submodules, environment, sandbox)
        )
        checks: list[Check] = [
            await git,
            (await repository).check,
            (await uv).check,
            (await python).check,
            (await sandbox).check,
        ]
        if not cfg.contestants:
            checks.append(
                _warning(
                    "contestants",
                    "no contestant is configured, so a bout has no agent to race",
                    'Add a [[contestants]] table to bugbout.toml, e.g. agent = "codex".',
                )
            )
        checks += [await agent for agent in agents]
        checks += await issues
        if (tip := await submodules) is not None:
            checks.append(tip.check)
        checks += [(await environment).check, await collection, self.environments()]
        return DoctorReport(checks=checks)

    def environments(self) -> Check:
        """What the tasks' environments are, from the last ground truth: how many stand on
        each rung of the ladder, how many distinct environments they share, and what the
        date limit could not govern. Nothing is built here; `bugbout run` builds them."""
        name = "task environments"
        project = self.config.project
        if project.interpreter is not None:
            return _ok(name, "[project] interpreter is set: every task uses it, nothing is dated")
        if project.environments == "tip":
            return _ok(name, 'environments = "tip": one environment, from the tip, for every task')
        store = self.project.store
        try:
            oracles = store.read(store.oracles_path, OracleSet)
        except BugboutError as error:
            return _warning(name, f"the stored ground truth cannot be read: {error.message}", None)
        records = {
            task: oracle.environment
            for task, oracle in (oracles.oracles.items() if oracles is not None else ())
            if oracle.environment is not None
        }
        if not records:
            return _ok(
                name,
                "dated: each task's environment is resolved as of its fix's date when the "
                "ground truth first needs it (none yet)",
            )
        counts = {rung: 0 for rung in RUNGS}
        for record in records.values():
            counts[record.rung] += 1
        keys = {record.key for record in records.values() if record.key is not None}
        pythons = sorted({record.python for record in records.values() if record.python})
        rungs = ", ".join(f"{count} {rung}" for rung, count in counts.items() if count)
        detail = (
            f"dated: {len(records)} tasks in {len(keys)} environments ({rungs}); "
            f"Python {', '.join(pythons) or 'of the tip'}"
        )
        later = sum(1 for record in records.values() if record.runner_later)
        if later:
            detail += f"; {later} with the test runner from a later date"
        undated = sum(1 for record in records.values() if record.unenforced)
        if undated:
            detail += f"; {undated} with requirements the date cannot limit"
        if counts["none"]:
            stranded = ", ".join(sorted(t for t, r in records.items() if r.rung == "none"))
            return _warning(
                name,
                f"{detail}; no environment for {stranded}",
                "`bugbout tasks ID` quotes uv's reason; `bugbout run --retry-failed` asks again.",
            )
        return _ok(name, detail)

    # ------------------------------------------------------------------ tools

    async def repository(self, git: Awaitable[Check]) -> _Outcome[_Repository]:
        name = "repository"
        if (await git).status == "problem":
            return _Outcome(_skipped(name, "git"))
        spec = self.config.project.repository
        if is_git_url(spec):
            self._say(f"cloning or fetching {spec}")
        try:
            found = await asyncio.to_thread(self._open_repository, spec)
        except BugboutError as error:
            return _Outcome(_from_error(name, error))
        subject = found.branch.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        return _Outcome(
            _ok(name, f"{found.path}: full history, {subject} at {found.commit[:12]}"), found
        )

    def _open_repository(self, spec: str) -> _Repository:
        path = open_repository(spec, self.project.dir)
        ensure_full_history(path)
        branch = default_branch(path)
        return _Repository(path=path, branch=branch, commit=head_commit(path, branch))

    async def python(self, uv: Awaitable[_Outcome[Path]]) -> _Outcome[Environment]:
        """The interpreter the tests will run on: the configured one, or one uv can find."""
        name = "python"
        project = self.config.project
        if project.interpreter is not None:
            return await self._configured_interpreter(name)
        wanted = project.python_version()
        found = await uv
        if found.value is None:
            return _Outcome(_skipped(name, "uv"))
        try:
            result = await _ask([str(found.value), "python", "find", wanted])
        except OSError as error:
            return _Outcome(_problem(name, f"{found.value} cannot be run: {error}", None))
        if result.returncode == 0 and result.stdout_tail.strip():
            return _Outcome(_ok(name, f"Python {wanted} at {result.stdout_tail.strip()}"))
        fix = (
            f"Install it with `uv python install {wanted}`, or set [project] python in "
            "bugbout.toml to a version you have."
        )
        if os.environ.get("UV_PYTHON_DOWNLOADS", "").strip().lower() in ("never", "manual"):
            return _Outcome(
                _problem(
                    name,
                    f"uv finds no Python {wanted}, and UV_PYTHON_DOWNLOADS forbids downloading it",
                    fix,
                )
            )
        return _Outcome(
            _warning(
                name,
                f"uv finds no Python {wanted} on this machine; it will try to download one "
                "when it builds the test environment",
                fix,
            )
        )

    async def _configured_interpreter(self, name: str) -> _Outcome[Environment]:
        repository = self.config.project.repository_dir(self.project.dir) or self.project.dir
        try:
            environment = await environment_at(repository, self.config.project)
        except BugboutError as error:
            return _Outcome(_from_error(name, error))
        query = "import sys, pytest; print(sys.version.split()[0], pytest.__version__)"
        try:
            result = await _ask([str(environment.python), "-c", query])
        except OSError as error:
            return _Outcome(_problem(name, f"{environment.python} cannot be run: {error}", None))
        words = result.stdout_tail.split()
        if result.returncode != 0 or len(words) != 2:
            return _Outcome(
                _problem(
                    name,
                    f"{environment.python} could not report its version: "
                    + _what_went_wrong(result),
                    "Set [project] interpreter to a working Python, or remove it.",
                )
            )
        detail = f"Python {words[0]} with pytest {words[1]} at {environment.python}"
        return _Outcome(_ok(name, detail), environment)

    # ------------------------------------------------------------------ issue text

    async def issues(self, repository: Awaitable[_Outcome[_Repository]]) -> list[Check]:
        """Where the agents' issue text comes from, and whether it can be read."""
        name = "issue text"
        project = self.config.project
        if project.issues_file is not None:
            path = self.config.resolve(project.issues_file)
            try:
                issues = await asyncio.to_thread(load_issues_file, path)
            except BugboutError as error:
                fix = error.hint or (
                    "Fix the file (a JSON list of objects with number, title and body), "
                    "or remove [project] issues-file to read issues from GitHub."
                )
                return [_problem(name, error.message, fix)]
            return [_ok(name, f"{len(issues)} issues from the issues file {path}")]
        repo = project.github
        where = "[project] github"
        if repo is None:
            found = await repository
            if found.value is None:
                return [_skipped(name, "repository")]
            repo = await asyncio.to_thread(github_from_remote, found.value.path)
            where = "the origin remote"
        if repo is None:
            return [
                _warning(
                    name,
                    "no GitHub repository is known (none configured, and origin is not on "
                    "GitHub), so tasks will have no issue text",
                    'Set [project] github = "owner/name" in bugbout.toml, or point '
                    "issues-file at a JSON list of issues.",
                )
            ]
        return [_ok(name, f"issues of {repo} on GitHub (from {where})"), await self.github()]

    async def github(self) -> Check:
        name = "GitHub API"
        try:
            api_url = api_url_from_env()
        except BugboutError as error:
            return _from_error(name, error)
        credentials = await asyncio.to_thread(
            resolve_credentials, api_url, gh_timeout=GITHUB_TIMEOUT
        )
        client = GitHubClient(api_url, credentials, timeout=GITHUB_TIMEOUT)
        try:
            limit = await asyncio.to_thread(client.rate_limit)
        except BadCredentials as error:
            return _from_error(name, error)
        except GitHubError as error:
            return _warning(
                name,
                f"{error.message}; tasks will have no issue text",
                "Check the network connection (and GITHUB_API_URL if set), or point "
                "[project] issues-file at a JSON list of issues.",
            )
        return _rate_limit_check(name, api_url, credentials, limit, self.config.tasks.limit)

    # ------------------------------------------------------------------ tests

    async def environment(
        self,
        repository: Awaitable[_Outcome[_Repository]],
        uv: Awaitable[_Outcome[Path]],
        python: Awaitable[_Outcome[Environment]],
    ) -> _Outcome[Environment]:
        name = "test environment"
        project = self.config.project
        if project.interpreter is not None:
            configured = await python
            if configured.value is None:
                return _Outcome(_skipped(name, "python"))
            return _Outcome(
                _ok(name, "none built: the configured interpreter is used as it is"),
                configured.value,
            )
        failed = [
            check.name
            for check in ((await repository).check, (await uv).check, (await python).check)
            if check.status == "problem"
        ]
        found = await repository
        if failed or found.value is None:
            return _Outcome(_skipped(name, *failed))
        self._say(
            f"preparing the Python {project.python_version()} test environment "
            "(the first build downloads packages and may take a few minutes)"
        )
        started = time.monotonic()
        try:
            environment = await asyncio.wait_for(
                project_environment(found.value.path, project), BUILD_TIMEOUT
            )
        except BugboutError as error:
            return _Outcome(_build_failure(name, error))
        except TimeoutError:
            return _Outcome(
                _problem(
                    name,
                    f"building the environment took more than {BUILD_TIMEOUT / 60:.0f} "
                    "minutes and was stopped",
                    "Check the network connection and the package index uv uses, then "
                    "run `bugbout doctor` again.",
                )
            )
        if environment.built:
            seconds = time.monotonic() - started
            detail = (
                f"built {environment.root} in {seconds:.0f} s (a first build takes a while; "
                "later runs reuse it)"
            )
        else:
            detail = f"reusing {environment.root}"
        return _Outcome(_ok(name, detail), environment)

    async def submodules(
        self, repository: Awaitable[_Outcome[_Repository]]
    ) -> _Outcome[Path] | None:
        """Whether the tree of the tip holds every submodule it records, got as a bout's
        trees get them (the same cache, the same fetch, the user's rewrites); with the
        tree, which the collection check then uses. None when the tip records none, or
        the repository could not be read (its own check says so)."""
        name = "submodules"
        found = (await repository).value
        if found is None:
            return None
        try:
            paths = await asyncio.to_thread(recorded_submodules, found.path, found.commit)
        except BugboutError:
            return None  # the tree cannot be read either: the collection check says why
        if not paths:
            return None
        at = found.commit[:12]
        self._say(f"getting the submodules {at} records")
        try:
            tree = await asyncio.to_thread(pristine_tree, found.path, found.commit)
        except BugboutError as error:
            return _Outcome(_from_error(name, error))
        except OSError as error:
            return _Outcome(_problem(name, f"could not extract the tree of {at}: {error}", None))
        missing = missing_submodules(tree)
        if missing:
            return _Outcome(_submodules_problem(name, missing, at), tree)
        return _Outcome(_ok(name, f"{', '.join(paths)} at {at}: each in the tree"), tree)

    async def collection(
        self,
        repository: Awaitable[_Outcome[_Repository]],
        submodules: Awaitable[_Outcome[Path] | None],
        environment: Awaitable[_Outcome[Environment]],
        sandbox: Awaitable[_Outcome[Sandbox]],
    ) -> Check:
        """Whether pytest collects the suite at the mined branch's tip, as a bout runs it."""
        name = "tests collect"
        found, env, confined = await repository, await environment, await sandbox
        if found.value is None or env.value is None or confined.value is None:
            missing = [
                outcome.check.name for outcome in (found, env, confined) if outcome.value is None
            ]
            return _skipped(name, *missing)
        tip = await submodules
        self._say(f"collecting the tests at {found.value.commit[:12]}")
        try:
            return await self._collect(
                name, found.value, tip.value if tip else None, env.value, confined.value
            )
        except BugboutError as error:
            return _from_error(name, error)
        except OSError as error:
            return _problem(
                name,
                f"could not prepare a scratch copy of the tree: {error}",
                "Check the free space and permissions of BUGBOUT_HOME and the temp directory.",
            )

    async def _collect(
        self,
        name: str,
        repository: _Repository,
        pristine: Path | None,
        environment: Environment,
        sandbox: Sandbox,
    ) -> Check:
        tests = self.config.project.tests
        commit = repository.commit
        with tempfile.TemporaryDirectory(prefix="bugbout-doctor-") as scratch:
            tree = Path(scratch) / "tree"
            if pristine is None:
                pristine = await asyncio.to_thread(pristine_tree, repository.path, commit)
            if not (pristine / tests).is_dir():
                return _problem(
                    name,
                    f"there is no directory '{tests}' at {commit[:12]}",
                    "Set [project] tests in bugbout.toml to the directory holding the tests.",
                )
            await asyncio.to_thread(copy_tree, pristine, tree)
            log = Path(scratch) / "collect.log"
            run = await run_pytest(
                PytestCommand(
                    python=environment.python,
                    tree=tree,
                    paths=[tests],
                    pythonpath=import_paths(tree, self.config.project.source),
                    pytest_args=[*self.config.project.pytest_args, "--collect-only"],
                    env=self.config.project.env,
                    timeout=self.config.run.test_timeout,
                    hidden=(*repository_paths(repository.path), self.project.dir),
                ),
                sandbox,
                workdir=Path(scratch) / "run",
                log_path=log,
            )
            output = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        check = _collection_check(name, run, output, tests, commit)
        return _blame_submodules(check, missing_submodules(pristine), run, output)


def _build_failure(name: str, error: BugboutError) -> Check:
    """A failed build; when uv's own words are the hint, they belong with the detail."""
    if error.hint is None or "Full output:" not in error.hint:
        return _from_error(name, error)
    return _problem(
        name,
        f"{error.message}\n{error.hint}",
        "Correct [project] python, test-dependencies or install-project in bugbout.toml "
        "as the log shows, then run `bugbout doctor` again.",
    )


def _install_fix(entry: AgentConfig, error: BugboutError) -> str | None:
    """How to get the missing program: the adapter's install command, or the command's own."""
    if entry.agent == "command" and isinstance(error, ToolMissingError):
        command = entry.options.get("command")
        if isinstance(command, list) and command and isinstance(command[0], str):
            return (
                f"Install `{command[0]}` or put it on PATH, or correct `command` of this "
                "agent in bugbout.toml."
            )
    return error.hint


def _update_fix(agent: CodingAgent) -> str | None:
    if isinstance(agent, CommandAgent) or not agent.install_hint:
        return None
    return f"Update it to {agent.tested_version} or newer. {agent.install_hint}"


def _rate_limit_check(
    name: str, api_url: str, credentials: Credentials, limit: RateLimit | None, wanted: int
) -> Check:
    who = credentials.describe()
    if limit is None:
        return _ok(name, f"{api_url} ({who}): no rate limit")
    left = f"{limit.remaining} of {limit.limit} requests left until {local_time(limit.reset)}"
    if limit.remaining == 0:
        fix = _ANONYMOUS_FIX if credentials.token is None else "Wait for the reset."
        return _warning(
            name,
            f"{api_url} ({who}): rate limit used up until {local_time(limit.reset)}; tasks "
            "mined before then will have no issue text",
            fix,
        )
    if credentials.token is None:
        return _warning(
            name,
            f"{api_url}, anonymous: {left}; an anonymous client may make only 60 an hour, "
            "about one per task",
            _ANONYMOUS_FIX,
        )
    if limit.remaining < wanted:
        return _warning(
            name,
            f"{api_url} ({who}): {left}, fewer than [tasks] limit ({wanted}) may need",
            "Wait for the reset, or lower [tasks] limit.",
        )
    return _ok(name, f"{api_url} ({who}): {left}")


def _collection_check(name: str, run: TestRun, output: str, tests: str, commit: str) -> Check:
    at = commit[:12]
    if run.error is not None:
        return _problem(
            name,
            f"pytest could not collect '{tests}' at {at}: {run.error.strip()}",
            "Fix [project] pytest-args or test-dependencies so that `python -m pytest "
            f"--collect-only {tests}` works.",
        )
    broken = {
        node: result
        for node, result in run.outcomes.items()
        if "::" not in node and result.outcome == "error"
    }
    if broken:
        path, result = sorted(broken.items())[0]
        reason = (result.message or "").strip() or "an error while importing it"
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return _problem(
            name,
            f"{path} fails to collect at {at}{more}: {reason}",
            f"Fix {path} (see `python -m pytest --collect-only {path}`), or add what it "
            "imports to [project] test-dependencies.",
        )
    count = _collected(output)
    if not count:
        return _warning(
            name,
            f"pytest collected no test in '{tests}' at {at}",
            "Set [project] tests in bugbout.toml to the directory holding the tests.",
        )
    noun = "test" if count == 1 else "tests"
    return _ok(name, f"{count} {noun} collected in '{tests}' at {at}")


def _submodules_problem(name: str, missing: list[MissingSubmodule], at: str) -> Check:
    """Each submodule the tip's tree lacks, with why, and how to get it."""
    gaps = "; ".join(
        f"{gap.path} ({gap.url or 'no URL'}) at {gap.commit[:12]}: {gap.problem.rstrip('.')}"
        for gap in missing
    )
    noun = "submodule" if len(missing) == 1 else "submodules"
    return _problem(
        name,
        f"the tree of {at} lacks the {noun} {gaps}. Tests that read it fail, at the tip "
        "and in every task's trees",
        _submodule_fix(missing),
    )


def _submodule_fix(missing: list[MissingSubmodule]) -> str:
    fetchable = [gap for gap in missing if gap.url]
    if not fetchable:
        return (
            "The repository's .gitmodules must name a URL for it; nothing on this machine "
            "can stand in for it."
        )
    gap = fetchable[0]
    return (
        f"Make {gap.url} reachable from this machine, or point git at a mirror holding "
        f"commit {gap.commit[:12]}: `git config --global url.<mirror>.insteadOf {gap.url}`; "
        "then run `bugbout doctor` again."
    )


def _blame_submodules(
    check: Check, missing: list[MissingSubmodule], run: TestRun, output: str
) -> Check:
    """A collection that failed in a tree lacking a submodule names it: as the cause when
    pytest's words mention its path, as a likely one otherwise."""
    if check.status != "problem" or not missing:
        return check
    said = "\n".join(
        [run.error or "", output, *(result.message or "" for result in run.outcomes.values())]
    )
    named = [gap for gap in missing if gap.path in said]
    which = ", ".join(f"{gap.path} ({gap.url or 'no URL'})" for gap in named or missing)
    noun = "submodule" if len(named or missing) == 1 else "submodules"
    if named:
        return _problem(
            check.name,
            f"{check.detail}\nThe tree lacks the {noun} {which}, which could not be had "
            "(see the submodules check): that is what fails here.",
            _submodule_fix(named),
        )
    return _problem(
        check.name,
        f"{check.detail}\nThe tree also lacks the {noun} {which}, which could not be had "
        "(see the submodules check); it may be why.",
        check.fix,
    )


def _collected(output: str) -> int:
    """The number of tests pytest reports collecting, however quiet it was told to be."""
    summary = _COLLECTED.findall(output)
    if summary:
        return int(summary[-1])
    per_file = _QUIET_COUNT.findall(output)
    if per_file:
        return sum(int(count) for count in per_file)
    return sum(1 for line in output.splitlines() if "::" in line and " " not in line.strip())


async def diagnose(project: Project, *, progress: Progress | None = None) -> DoctorReport:
    """Run every check on `project`; never raises for anything a user can fix."""
    return await _Doctor(project, progress).run()
