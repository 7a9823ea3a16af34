"""Ground truth of environment tasks: each task's two controls, made through the path
every repair takes (`EnvRunner.score`).

The base control is the base commit's files as written: a clean install or the traced
run must fail, and what it printed is what the agents are given. The gold control is the
fix commit's files, the known repair: both must succeed. A task whose base succeeds, or
whose gold fails, cannot tell a repair from none, so it is not scored
(`rules.env_repairs.control_problem` says why, for the funnel and `bugbout tasks`).

Both are made from the repository's commits alone, history-free (pristine trees), and
kept in `repairs.json` with the conditions they were made under: a control made under
the same conditions is not made again, one made under others is, and `--retry-failed`
makes both again for a task they kept from being scored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.env_models import EnvConditions, Repair, RepairSet
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import ErrorRaised
from bugbout_tui.core.models import BASE, Task
from bugbout_tui.engine.env_runs import EnvRunner
from bugbout_tui.infra.trees import copy_tree, pristine_tree
from bugbout_tui.infra.workcopy import commit_patch
from bugbout_tui.rules.env_files import split_repair
from bugbout_tui.rules.env_repairs import CONTROLS, control_problem, files_digest
from bugbout_tui.rules.env_score import changed_lines

_Item = tuple[Task, str, EnvConditions]


class EnvControls(EnvRunner):
    """Makes and stores the controls of a bout's environment tasks."""

    def commit_of(self, task: Task, control: str) -> str:
        """The commit whose files a control installs: the base's, or the fix's."""
        return task.base_commit if control == BASE else task.fix_commit

    def control_conditions(self, task: Task, control: str) -> EnvConditions:
        """What `control` of `task` is made under now: its files are its commit's."""
        return self.conditions(task, files_digest(control, self.commit_of(task, control)))

    def needs_run(self, stored: dict[str, Repair], control: str, current: EnvConditions) -> bool:
        """Whether `control` is to be made (again): missing, made under other conditions,
        or, asked to retry what failed, one of a task its controls left unscored."""
        known = stored.get(control)
        if known is None or known.conditions != current:
            return True
        return self.retry_failed and control_problem(stored) is not None

    async def run(self, tasks: Sequence[Task]) -> RepairSet:
        """Every environment task's controls, made where missing or stale; `repairs.json`
        is written as each one is known, so a stopped run resumes with the rest."""
        store = self.project.store
        repairs = store.read(store.repairs_path, RepairSet) or RepairSet()
        plan: list[_Item] = []
        for task in tasks:
            stored = repairs.controls.get(task.id, {})
            for control in CONTROLS:
                current = self.control_conditions(task, control)
                if self.needs_run(stored, control, current):
                    plan.append((task, control, current))

        async def settle(item: _Item) -> None:
            task, control, conditions = item
            repair = await self._control(task, control, conditions)
            if repair is not None:
                repairs.controls.setdefault(task.id, {})[control] = repair
                store.write(store.repairs_path, repairs)

        await self.side_by_side(
            "ground-truth", plan, settle, label=lambda item: f"{item[0].id} ({item[1]})"
        )
        return repairs

    async def _control(self, task: Task, control: str, conditions: EnvConditions) -> Repair | None:
        """One control, or None when the machine failed it (the next run tries again).

        A commit whose tree cannot be had is the control's answer, kept as `not-run` with
        why; a failure of the install or the run itself (uv missing, a sandbox that does
        not work here) stops the stage with its message, as it does for tests.
        """
        folder = self.workspace(task, "controls", control)
        started = Repair(task=task.id, contestant=control, status="not-run")
        try:
            tree, changed, size = await asyncio.to_thread(self._tree, task, control, folder)
        except BugboutError as exc:
            self.bus.emit(ErrorRaised(message=exc.message, task=task.id))
            return started.model_copy(update={"detail": exc.message, "conditions": conditions})
        except OSError as exc:
            self.bus.emit(
                ErrorRaised(
                    message=f"{task.id}: its {control} control could not be made: {exc}. "
                    "The next run tries again.",
                    task=task.id,
                )
            )
            return None
        index = await self.sources.index_for(task)
        return await self.score(
            task,
            tree,
            kind="controls",
            label=control,
            index=index,
            conditions=conditions,
            base=started.model_copy(update={"changed": changed, "size": size}),
        )

    def _tree(self, task: Task, control: str, folder: Path) -> tuple[Path, list[str], int]:
        """A scratch copy of the control's commit, history-free, and for the gold the
        environment files the fix changed and how many lines."""
        repo = self.sources.repo_for(task)
        tree = copy_tree(pristine_tree(repo, self.commit_of(task, control)), folder / "tree")
        if control == BASE:
            return tree, [], 0
        cfg = self.project.config.project
        patch = commit_patch(repo, task.base_commit, task.fix_commit, (cfg.source, cfg.tests))
        changed, _ = split_repair(patch)
        return tree, list(changed), changed_lines(patch, changed)
