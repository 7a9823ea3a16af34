"""`[run] stop-when-decided`: scoring tasks during the race, and saying when it is decided.

Each task is scored the moment its contestants' first-trial attempts are all recorded,
through the scoring stage's own runner and store (`Scoring`), so the score stage later
finds those scores made under the same conditions and runs nothing again. After each,
every pair of contestants is tested again on the tasks done so far (`rules.sequential`).
The decision is never stored: it is recomputed from the stored attempts and scores, so
a restarted run, and the report, reach the same one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from fractions import Fraction

from bugbout_tui.core.models import Attempt, OracleSet, ResolutionSet, Task
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.score import Scoring
from bugbout_tui.rules.sequential import Decision, decide, outcomes_so_far


class DecisionWatch:
    """The sequential comparison of `contestants` (first trials) over the race's `tasks`,
    in their order, at the family-wise `level`."""

    def __init__(
        self,
        context: StageContext,
        tasks: Sequence[Task],
        oracles: OracleSet,
        contestants: Sequence[str],
        level: float,
    ) -> None:
        self.project = context.project
        self.scoring = Scoring(context, announce=False)
        self.tasks = list(tasks)
        self.oracles = oracles
        self.contestants = list(contestants)
        self.level = Fraction(str(level))
        self.decision: Decision | None = None
        self._recorded: set[str] = set()
        """Tasks whose contestants' attempts are all stored."""
        self._lock = asyncio.Lock()
        """Scoring writes the whole of `resolutions.json`: one task at a time, so no
        write carries an older copy over another's."""

    @property
    def decided(self) -> bool:
        return self.decision is not None and self.decision.decided_after is not None

    async def catch_up(self, recorded: dict[str, list[Attempt]]) -> Decision:
        """Score every task already `recorded` (task id → its contestants' attempts)
        that is not scored yet, as after a run stopped between an attempt and its score,
        then decide: a restarted run starts where the stored records leave it."""
        return await self._score([t for t in self.tasks if t.id in recorded], recorded)

    async def task_recorded(self, task: Task, attempts: list[Attempt]) -> Decision:
        """Score `task`, whose contestants' `attempts` are all recorded, and decide again."""
        return await self._score([task], {task.id: attempts})

    async def _score(self, tasks: list[Task], attempts: dict[str, list[Attempt]]) -> Decision:
        async with self._lock:
            self._recorded.update(t.id for t in tasks)
            if tasks:
                scores = await self.scoring.run(tasks, self.oracles, attempts)
            else:
                store = self.project.store
                scores = store.read(store.resolutions_path, ResolutionSet) or ResolutionSet()
            order = [t.id for t in self.tasks]
            looks = outcomes_so_far(order, self._recorded, self.contestants, scores)
            self.decision = decide(
                self.contestants, looks, level=self.level, horizon=len(self.tasks)
            )
            return self.decision
