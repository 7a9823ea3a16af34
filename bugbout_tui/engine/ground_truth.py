"""The ground-truth step of a bout: each task's oracle, from the maintainers' own tests.

For every task the fix's test modules run on the base (with the fix's test files put
in) and twice on the fix, in scratch copies of pristine trees, inside the sandbox.
Tasks run side by side up to the number of cores; each oracle is stored the moment it
is known, so a stopped run resumes with the tasks it had not finished.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from bugbout_tui.core.events import (
    ErrorRaised,
    StageProgress,
    TestRunFinished,
    TestRunStarted,
)
from bugbout_tui.core.models import Oracle, OracleSet, Task
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_run import (
    PytestCommand,
    TestRun,
    expand_collection_errors,
    run_pytest,
)
from bugbout_tui.infra.sandbox import Sandbox
from bugbout_tui.infra.trees import copy_tree, pristine_tree, repo_key
from bugbout_tui.stages.examine import is_test_module
from bugbout_tui.stages.oracle import compute_oracle, unrunnable


def import_paths(tree: Path, source: str) -> list[Path]:
    """What goes on PYTHONPATH so the tree's own package is the one imported."""
    parent = PurePosixPath(source).parent
    roots = [tree / parent] if str(parent) not in ("", ".") else []
    return [*roots, tree]


class GroundTruth:
    """Runs and stores the oracles of a project's tasks."""

    def __init__(
        self,
        project: Project,
        repo: Path,
        environment: Environment,
        sandbox: Sandbox,
        bus: EventBus,
        *,
        parallel: int | None = None,
    ) -> None:
        self.project = project
        self.repo = repo
        self.environment = environment
        self.sandbox = sandbox
        self.bus = bus
        self.parallel = parallel or os.cpu_count() or 1
        self.scratch = bugbout_home() / "work" / repo_key(repo) / "oracle"

    async def run(self, tasks: Sequence[Task]) -> OracleSet:
        store = self.project.store
        oracles = store.read(store.oracles_path, OracleSet) or OracleSet()
        todo = [task for task in tasks if task.id not in oracles.oracles]
        done = len(tasks) - len(todo)
        gate = asyncio.Semaphore(self.parallel)

        async def one(task: Task) -> None:
            nonlocal done
            async with gate:
                oracle = await self.oracle_for(task)
            oracles.oracles[task.id] = oracle
            store.write(store.oracles_path, oracles)
            done += 1
            self.bus.emit(
                StageProgress(stage="ground-truth", done=done, total=len(tasks), detail=task.id)
            )

        async with asyncio.TaskGroup() as group:
            for task in todo:
                group.create_task(one(task))
        return oracles

    async def oracle_for(self, task: Task) -> Oracle:
        tests = [path for path in task.test_files if is_test_module(path)]
        if not tests:
            return unrunnable("the fix changed no test module that pytest would collect")
        workspace = self.scratch / task.id
        shutil.rmtree(workspace, ignore_errors=True)
        workspace.mkdir(parents=True)
        try:
            base, fix = await asyncio.to_thread(self._prepare, task, workspace)
            tests = [path for path in tests if (fix / path).is_file()]
            if not tests:
                return unrunnable("the fix deleted the test modules it touched")
            base_run, first = await asyncio.gather(
                self._run(task, "base", base, tests, workspace / "base-run"),
                self._run(task, "fix", fix, tests, workspace / "fix-run-1"),
            )
            second = await self._run(task, "fix (2nd run)", fix, tests, workspace / "fix-run-2")
        except Exception as exc:  # a task that cannot be prepared must not sink the others
            self.bus.emit(ErrorRaised(message=str(exc), task=task.id))
            return unrunnable(f"its tests could not be set up: {exc}")
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        for run in (first, second):
            if run.error is not None:
                return unrunnable(f"the tests could not run on the fix: {run.error}")
        known = set(first.outcomes) | set(second.outcomes)
        base_run = expand_collection_errors(base_run, known)
        return compute_oracle(_outcomes(base_run), _outcomes(first), _outcomes(second))

    def _prepare(self, task: Task, workspace: Path) -> tuple[Path, Path]:
        """Scratch copies: the base with the fix's test files put in, and the fix."""
        fixed = pristine_tree(self.repo, task.fix_commit)
        base = copy_tree(pristine_tree(self.repo, task.base_commit), workspace / "base")
        for path in [*task.test_files, *task.test_data_files]:
            target = base / path
            if (fixed / path).is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(fixed / path, target)
            else:
                target.unlink(missing_ok=True)
        return base, copy_tree(fixed, workspace / "fix")

    async def _run(
        self, task: Task, label: str, tree: Path, tests: list[str], workdir: Path
    ) -> TestRun:
        cfg = self.project.config
        workdir.mkdir(parents=True, exist_ok=True)
        self.bus.emit(TestRunStarted(task=task.id, label=label))
        run = await run_pytest(
            PytestCommand(
                python=self.environment.python,
                tree=tree,
                paths=tests,
                pythonpath=import_paths(tree, cfg.project.source),
                pytest_args=cfg.project.pytest_args,
                env=cfg.project.env,
                timeout=cfg.run.test_timeout,
            ),
            self.sandbox,
            workdir=workdir,
        )
        passed = sum(1 for r in run.outcomes.values() if r.outcome == "passed")
        failed = sum(1 for r in run.outcomes.values() if r.outcome in ("failed", "error"))
        self.bus.emit(
            TestRunFinished(
                task=task.id,
                label=label,
                passed=passed,
                failed=failed,
                seconds=run.duration,
                error=run.error,
            )
        )
        return run


def _outcomes(run: TestRun) -> dict[str, str]:
    return {test: result.outcome for test, result in run.outcomes.items()}
