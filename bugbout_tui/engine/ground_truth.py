"""The ground-truth step of a bout: each task's oracle, from the maintainers' own tests.

For every task the fix's test modules run on the base (with the fix's test files put
in) and twice on the fix, in scratch copies of pristine trees, inside the sandbox.
Tasks run side by side up to the number of cores; each oracle is stored the moment it
is known, so a stopped run resumes with the tasks it had not finished.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.events import (
    ErrorRaised,
    StageProgress,
)
from bugbout_tui.core.models import Oracle, OracleSet, Task
from bugbout_tui.engine.testing import PytestStage
from bugbout_tui.infra.pytest_run import (
    TestRun,
    expand_collection_errors,
)
from bugbout_tui.infra.trees import copy_tree, pristine_tree
from bugbout_tui.stages.examine import is_test_module
from bugbout_tui.stages.oracle import compute_oracle, unrunnable


class GroundTruth(PytestStage):
    """Runs and stores the oracles of a project's tasks."""

    stage_dir = "oracle"

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
                self.run_tests(task.id, "base", base, tests, workspace / "base-run"),
                self.run_tests(task.id, "fix", fix, tests, workspace / "fix-run-1"),
            )
            second = await self.run_tests(
                task.id, "fix (2nd run)", fix, tests, workspace / "fix-run-2"
            )
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


def _outcomes(run: TestRun) -> dict[str, str]:
    return {test: result.outcome for test, result in run.outcomes.items()}
