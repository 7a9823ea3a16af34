"""Scoring the agents' repairs of environment tasks (steps 3 to 7 of
docs/environment-repair.md).

It runs in the cross-examination stage's slot, after the race and before the judge:
environment tasks have no tests to cross-examine, and the judge's choice among repairs
(`rules.env_judge`) rests on these scores, so they must be stored before it looks.

Each attempt's patch is read first (`rules.env_repairs.repair_without_run`): a change to
any file that is not an environment file rejects it, and it is never installed; no
change to an environment file is no repair; an attempt that never ran is not run. What
is left has only environment files, which are applied to a history-free copy of the
base and scored through the path the controls took (`EnvRunner.score`). Each repair is
stored the moment it is known, with the conditions it was made under and a digest of
the change, so a stopped run resumes with the rest and an attempt run again is scored
again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from bugbout_tui.core.env_models import EnvConditions, Repair, RepairSet
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import ErrorRaised
from bugbout_tui.core.models import Attempt, Task
from bugbout_tui.engine.env_runs import EnvRunner
from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.trees import copy_tree, pristine_tree
from bugbout_tui.rules.env_files import split_repair
from bugbout_tui.rules.env_repairs import files_digest, network_note, repair_without_run
from bugbout_tui.rules.env_score import changed_lines

_Item = tuple[Task, Attempt, EnvConditions]


def repair_digest(attempt: Attempt) -> str:
    """What an attempt's repair installs, as a digest: every part of its patch (a patch
    with a part other than environment files is rejected before it gets here)."""
    patch = attempt.patch
    return files_digest("repair", patch.source, patch.tests, patch.other)


class RepairScoring(EnvRunner):
    """Scores and stores every contestant's repair on every scored environment task."""

    async def run(
        self, tasks: Sequence[Task], attempts: Mapping[str, Sequence[Attempt]]
    ) -> RepairSet:
        """Score what is not scored yet under the current conditions; `tasks` are the
        environment tasks their controls make scored."""
        store = self.project.store
        repairs = store.read(store.repairs_path, RepairSet) or RepairSet()
        network = network_note(self.sandbox.name, confined=self.sandbox.name != "none")
        plan: list[_Item] = []
        changed = False
        for task in tasks:
            kept = repairs.repairs.setdefault(task.id, {})
            for attempt in attempts.get(task.id, ()):
                if attempt.role != "contestant":
                    continue
                known = kept.get(attempt.contestant)
                settled = repair_without_run(attempt, network=network)
                if settled is not None:
                    if settled != known:
                        kept[attempt.contestant] = settled
                        changed = True
                    continue
                current = self.conditions(task, repair_digest(attempt))
                if known is None or known.conditions != current:
                    plan.append((task, attempt, current))
            if not kept:
                del repairs.repairs[task.id]
        if changed:
            store.write(store.repairs_path, repairs)

        async def settle(item: _Item) -> None:
            task, attempt, conditions = item
            repair = await self._repair(task, attempt, conditions, network)
            if repair is not None:
                repairs.repairs.setdefault(task.id, {})[attempt.contestant] = repair
                store.write(store.repairs_path, repairs)

        await self.side_by_side("examine", plan, settle, label=lambda item: item[1].id)
        return repairs

    async def _repair(
        self, task: Task, attempt: Attempt, conditions: EnvConditions, network: str
    ) -> Repair | None:
        """One attempt's repair scored, or None when the machine failed it (the next run
        tries again)."""
        env_files, _ = split_repair(attempt.patch)
        started = Repair(
            task=task.id,
            contestant=attempt.contestant,
            status="not-run",
            changed=list(env_files),
            size=changed_lines(attempt.patch, env_files),
            network=network,
        )
        folder = self.workspace(task, "repairs", attempt.contestant)
        try:
            tree = await asyncio.to_thread(self._tree, task, attempt, folder)
        except BugboutError as exc:  # it does not apply to the base it was made on
            return started.model_copy(
                update={
                    "status": "install-failed",
                    "detail": exc.message.replace(str(folder / "tree"), "the base"),
                    "conditions": conditions,
                }
            )
        except OSError as exc:
            self.bus.emit(
                ErrorRaised(
                    message=f"{attempt.id}: its repair could not be prepared: {exc}. "
                    "The next run tries again.",
                    task=task.id,
                )
            )
            return None
        index = await self.sources.index_for(task)
        return await self.score(
            task,
            tree,
            kind="repairs",
            label=attempt.contestant,
            index=index,
            conditions=conditions,
            base=started,
        )

    def _tree(self, task: Task, attempt: Attempt, folder: Path) -> Path:
        """The base, history-free, with the repair's environment files applied."""
        repo = self.sources.repo_for(task)
        tree = copy_tree(pristine_tree(repo, task.base_commit), folder / "tree")
        patch = attempt.patch
        for part in (patch.source, patch.tests, patch.other):
            apply_patch(tree, part)
        return tree
