"""What the stages that run the project's tests share: where, with what, and how it is told.

Ground truth, cross-examination and scoring all run pytest in scratch trees with the
task's environment, inside the sandbox, in parallel up to the cores, and announce
every run on the bus the same way.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TypeVar

from bugbout_tui.core.events import Stage, StageProgress, TestRunFinished, TestRunStarted
from bugbout_tui.core.models import Conditions, Ledger, Task
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.cluster_runs import brought_back, make_unit
from bugbout_tui.engine.context import StageContext, StageRunner
from bugbout_tui.infra.cluster_units import unpack_log
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.git import repository_paths
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.trees import repo_key
from bugbout_tui.rules.flakes import Observation, Tree, merge, observe

T = TypeVar("T")

_TRANSIENT_TROUBLE = (
    "No space left on device",
    "Disk quota exceeded",
    "Cannot allocate memory",
    "Too many open files",
    "Resource temporarily unavailable",
)
"""What an operating system says when a run failed for want of a resource that may be
there next time."""
_PYTEST_ENDINGS = frozenset({0, 1, 2, 3, 4, 5})
"""The exit statuses by which pytest itself ends a session (tests failed, interrupted,
internal error, usage error, nothing collected)."""
_EXCEPTION_LINE = re.compile(
    r"^(?:E\s+)?((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit): .*)$"
)
"""A line naming an exception and its message (`E   ModuleNotFoundError: No module
named 'six'`), as pytest prints the error that ended an import."""


def import_paths(tree: Path, source: str) -> list[Path]:
    """What goes on PYTHONPATH so the tree's own package is the one imported."""
    parent = PurePosixPath(source).parent
    roots = [tree / parent] if str(parent) not in ("", ".") else []
    return [*roots, tree]


def tests_dir_at(tree: Path, tests: str, test_files: Iterable[str]) -> str | None:
    """Where a commit's tests live: `tests` when the tree has that directory, else the
    directory holding the given test files (a project that has moved its tests since,
    such as from `pkg/tests` to `tests`), else None."""
    if (tree / tests).is_dir():
        return tests
    parents = [PurePosixPath(path).parent for path in test_files]
    if not parents:
        return None
    common = parents[0]
    for parent in parents[1:]:
        while common != parent and common not in parent.parents:
            common = common.parent
    found = str(common)
    return found if found not in ("", ".") and (tree / found).is_dir() else None


def put_fix_tests(tree: Path, fixed: Path, task: Task) -> None:
    """Lay the fix's test files and test data over `tree`, from `fixed` (the fix's
    pristine tree); a file the fix deleted is deleted from `tree` too. A directory among
    them is a submodule the fix moved to another commit: the fix's replaces the tree's."""
    for path in [*task.test_files, *task.test_data_files]:
        target = tree / path
        source = fixed / path
        if source.is_dir() and not source.is_symlink():
            _remove(target)
            shutil.copytree(source, target, symlinks=True)
        elif source.is_file():
            _remove(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        else:
            _remove(target)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def transient_failure(run: TestRun) -> bool:
    """Whether a run failed in a way that may pass, so its result is no answer, when the
    code it ran is trusted (see `PytestRunner.machine_failed` for code that is not).

    pytest that ended a session by itself answered, whatever the status: tests that
    fail, a usage error from the project's conftest or pytest-args, an internal error
    from a plugin. So did a run stopped at the timeout (the timeout is one of the
    conditions a result is kept under). A run killed by a signal (the kernel's
    out-of-memory killer, say), one that ended without pytest reporting anything (a
    sandbox that could not start, an interpreter that could not run), and any run that
    ran short of disk, memory or files did not: it is run again next time. pytest
    that raised before its session began (a plugin named in pytest-args or a conftest
    that cannot be loaded) says so with the exception, and has answered.
    """
    if run.error is None or run.timed_out:
        return False
    if any(trouble in run.error for trouble in _TRANSIENT_TROUBLE):
        return True
    code = run.exit_code
    if code is None or code not in _PYTEST_ENDINGS:
        return True
    if code != 1 or run.outcomes:
        return False
    # No report: pytest either raised before its session began (a plugin or conftest
    # that cannot load, which is an answer) or never started at all.
    return not any(_EXCEPTION_LINE.match(line.strip()) for line in run.error.splitlines())


def first_error(text: str, *, tree: Path | None = None) -> str:
    """The first line of `text`, and the first exception it names when that is another
    line, with `tree`'s path made relative: what a person needs to see of a failed run
    before opening its log."""
    if tree is not None:
        text = text.replace(f"{tree}/", "").replace(str(tree), ".")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return text.strip()
    head = lines[0]
    exception = next((m.group(1) for line in lines[1:] if (m := _EXCEPTION_LINE.match(line))), None)
    return f"{head} {exception}" if exception and exception not in head else head


class PytestRunner(StageRunner):
    """Base of the runners of the stages that run the project's tests (ground truth,
    cross-examination, scoring); `scratch` is the stage's own work area."""

    stage_dir: str = "tests"

    def __init__(self, context: StageContext, *, parallel: int | None = None) -> None:
        super().__init__(context)
        self.parallel = parallel or os.cpu_count() or 1
        if self.cluster is not None:
            self.parallel = max(self.parallel, self.cluster.threads)
        self.scratch = bugbout_home() / "work" / repo_key(self.repo) / self.stage_dir
        self.hidden = (*repository_paths(self.repo), self.project.dir)
        """What a test interpreter's paths must not bring into view (see `PytestCommand`)."""
        self.seen: list[Observation] = []
        """Test outcomes this stage saw and has not yet put in the flake ledger."""

    def observe(self, task: str, author: str, where: Tree, outcomes: Mapping[str, str]) -> None:
        """Note the outcomes of one run on `where` for the flake ledger."""
        self.seen.extend(observe(task, author, where, outcomes))

    def save_ledger(self) -> Ledger:
        """The flake ledger with what this stage saw merged in, written in one go."""
        store = self.project.store
        ledger = store.read(store.ledger_path, Ledger) or Ledger()
        if self.seen:
            ledger = merge(ledger, self.seen)
            store.write(store.ledger_path, ledger)
            self.seen.clear()
        return ledger

    def conditions(self, environment: Environment, *, suite: bool = False) -> Conditions:
        """The conditions this stage's runs in `environment` (the task's) are made under;
        `suite` when they run the repository's suite, which then depends on where the
        tests live too."""
        cfg = self.project.config
        return Conditions(
            interpreter=str(environment.python),
            environment=environment.key,
            test_dependencies=list(cfg.project.test_dependencies),
            pytest_args=list(cfg.project.pytest_args),
            env=dict(cfg.project.env),
            source=cfg.project.source,
            sandbox=self.sandbox.name,
            test_timeout=cfg.run.test_timeout,
            tests=cfg.project.tests if suite else None,
        )

    def command(
        self,
        environment: Environment,
        tree: Path,
        paths: Sequence[str],
        pythonpath: Sequence[Path] | None = None,
    ) -> PytestCommand:
        """How this project's tests run in `tree`, with `environment`'s interpreter."""
        cfg = self.project.config
        return PytestCommand(
            python=environment.python,
            tree=tree,
            paths=paths,
            pythonpath=(
                pythonpath if pythonpath is not None else import_paths(tree, cfg.project.source)
            ),
            pytest_args=cfg.project.pytest_args,
            env=cfg.project.env,
            timeout=cfg.run.test_timeout,
            hidden=self.hidden,
        )

    async def side_by_side(
        self,
        stage: Stage | None,
        items: Sequence[T],
        work: Callable[[T], Awaitable[None]],
        *,
        label: Callable[[T], str],
        total: int,
        done: int = 0,
    ) -> None:
        """`work` on every item, `parallel` at a time; each item's end is the stage's
        progress on the bus, counted on from `done` (the items it need not run) to
        `total`, with the item's `label`; no progress is said for no `stage` (work done
        on behalf of another stage, whose progress it is not)."""
        gate = asyncio.Semaphore(self.parallel)

        async def one(item: T) -> None:
            nonlocal done
            async with gate:
                await work(item)
            done += 1
            if stage is not None:
                self.bus.emit(
                    StageProgress(stage=stage, done=done, total=total, detail=label(item))
                )

        async with asyncio.TaskGroup() as group:
            for item in items:
                group.create_task(one(item))

    async def run_tests(
        self,
        task: str,
        label: str,
        tree: Path,
        paths: Sequence[str],
        workdir: Path,
        *,
        environment: Environment,
        pythonpath: Sequence[Path] | None = None,
        log_path: Path | None = None,
        origin: str | None = None,
    ) -> TestRun:
        """One pytest process over `paths` in `tree`, announced as `label` of `task`;
        its whole output goes to `log_path` when given.

        On a cluster, a tree copied from commit `origin`'s pristine tree is run by a
        worker; any other tree is run here."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.bus.emit(TestRunStarted(task=task, label=label))
        command = self.command(environment, tree, paths, pythonpath)
        worker = None
        if self.cluster is not None and origin is not None:
            unit = await make_unit(
                self.cluster,
                command,
                environment,
                origin=origin,
                sandbox=self.sandbox.name,
                keep_log=log_path is not None,
            )
            result = await self.cluster.run(unit)
            if log_path is not None:
                await asyncio.to_thread(_write_log, log_path, unpack_log(result.log))
            run = brought_back(result, tree)[""]
            worker = result.worker
        else:
            run = await run_pytest(command, self.sandbox, workdir=workdir, log_path=log_path)
        self._announce(task, label, [run], worker)
        return run

    async def run_each(
        self,
        task: str,
        label: str,
        tree: Path,
        runs: Sequence[SeparateRun],
        workdir: Path,
        *,
        environment: Environment,
        pythonpath: Sequence[Path],
        origin: str | None = None,
    ) -> dict[str, TestRun]:
        """`runs` on `tree`, each apart from the others, announced together as `label`;
        on a cluster, by a worker when `tree` was copied from commit `origin`."""
        self.bus.emit(TestRunStarted(task=task, label=label))
        command = self.command(environment, tree, (), pythonpath)
        worker = None
        if self.cluster is not None and origin is not None:
            unit = await make_unit(
                self.cluster,
                command,
                environment,
                origin=origin,
                sandbox=self.sandbox.name,
                each=runs,
            )
            result = await self.cluster.run(unit)
            found = brought_back(result, tree)
            worker = result.worker
        else:
            found = await run_each(command, runs, self.sandbox, workdir=workdir)
        self._announce(task, label, list(found.values()), worker)
        return found

    async def machine_failed(self, run: TestRun, workdir: Path, environment: Environment) -> bool:
        """Whether `run` failed for a reason that may pass, as told by a control run.

        The runs of the cross-examination and of scoring execute an agent's code, which
        can fake any sign of a passing failure (kill itself, print "No space left on
        device") to keep a wrong patch from being scored. So a failure that looks
        passing is taken as one only when pytest also fails on a tree of one empty test,
        under the same interpreter, arguments and sandbox: then the machine (or the
        settings) failed, not the code.
        """
        if not transient_failure(run):
            return False
        tree = workdir / "control"
        try:
            tree.mkdir(parents=True, exist_ok=True)
            (tree / "test_control.py").write_text("def test_control():\n    pass\n")
            command = self.command(environment, tree, ["test_control.py"], [tree])
            if self.cluster is not None and run.worker is not None:
                # The machine in question is the worker that made the run.
                unit = await make_unit(
                    self.cluster, command, environment, origin=None, sandbox=self.sandbox.name
                )
                control = brought_back(await self.cluster.run(unit, on=run.worker), tree)[""]
            else:
                control = await run_pytest(command, self.sandbox, workdir=workdir / "control-run")
        except OSError:
            return True
        return control.error is not None or control.collected != 1

    def _announce(
        self, task: str, label: str, runs: Sequence[TestRun], worker: str | None = None
    ) -> None:
        outcomes = [
            result.outcome for run in runs for node, result in run.outcomes.items() if "::" in node
        ]
        uncollected = sum(
            1
            for run in runs
            for node, result in run.outcomes.items()
            if "::" not in node and result.outcome == "error"
        )
        errors = [run.error for run in runs if run.error is not None]
        self.bus.emit(
            TestRunFinished(
                task=task,
                label=label,
                passed=outcomes.count("passed"),
                failed=outcomes.count("failed") + outcomes.count("error"),
                uncollected=uncollected,
                seconds=sum(run.duration for run in runs),
                error=errors[0] if errors and len(errors) == len(runs) else None,
                worker=worker,
            )
        )


def _write_log(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
