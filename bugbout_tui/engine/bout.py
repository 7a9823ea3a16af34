"""A bout: the whole pipeline over one project, resumable at every stage."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.events import (
    STAGES,
    BaseEvent,
    BoutFinished,
    BoutStarted,
    Stage,
    StageFinished,
    StageStarted,
)
from bugbout_tui.core.models import OracleSet, TaskSet
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.ground_truth import GroundTruth
from bugbout_tui.engine.mining import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment, ensure_environment
from bugbout_tui.infra.git import open_repository
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox

RUNNABLE_STAGES: tuple[Stage, ...] = ("mine", "ground-truth")
"""The stages this version can run; `--until` accepts these."""


class Bout:
    """One project's pipeline. Every stage reads what the last run stored and adds to it."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.bus = EventBus(project.store.events_path)
        self.taskset: TaskSet | None = None
        self.oracles: OracleSet | None = None
        self._environment: Environment | None = None
        self._sandbox: Sandbox | None = None

    @classmethod
    def load(cls, path: str | Path = ".") -> Bout:
        return cls(Project.load(path))

    def subscribe(self, subscriber: Callable[[BaseEvent], None]) -> Callable[[], None]:
        return self.bus.subscribe(subscriber)

    def run(self, *, until: Stage | None = None) -> None:
        """Run the pipeline to `until` (default: as far as this version goes)."""
        asyncio.run(self.arun(until=until))

    async def arun(self, *, until: Stage | None = None) -> None:
        stages = _stages_until(until)
        with self.project.store.lock():
            self.bus.emit(
                BoutStarted(project=str(self.project.dir), stages=list(stages), pid=os.getpid())
            )
            try:
                for stage in stages:
                    async with self._stage(stage):
                        await self._run_stage(stage)
            except asyncio.CancelledError:
                self.bus.emit(BoutFinished(outcome="stopped", message="stopped by the user"))
                raise
            except BugboutError as exc:
                self.bus.emit(BoutFinished(outcome="failed", message=exc.message))
                raise
            else:
                self.bus.emit(BoutFinished(outcome="done"))
            finally:
                self.bus.close()

    @contextlib.asynccontextmanager
    async def _stage(self, stage: Stage) -> AsyncIterator[None]:
        self.bus.emit(StageStarted(stage=stage))
        yield
        self.bus.emit(StageFinished(stage=stage, summary=self._summary(stage)))

    async def _run_stage(self, stage: Stage) -> None:
        if stage == "mine":
            self.taskset = await asyncio.to_thread(mine_tasks, self.project)
        elif stage == "ground-truth":
            assert self.taskset is not None
            tasks = [t for t in self.taskset.tasks if self.project.config.tasks.is_raceable(t.id)]
            truth = GroundTruth(
                self.project,
                open_repository(self.project.config.project.repository, self.project.dir),
                await self.environment(),
                self.sandbox(),
                self.bus,
            )
            self.oracles = await truth.run(tasks)

    async def environment(self) -> Environment:
        if self._environment is None:
            cfg = self.project.config.project
            repo = open_repository(cfg.repository, self.project.dir)
            self._environment = await ensure_environment(
                repo,
                python=cfg.python_version(),
                test_dependencies=cfg.test_dependencies,
                install_project=cfg.install_project,
                interpreter=cfg.interpreter,
            )
        return self._environment

    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = select_sandbox(self.project.config.run.sandbox)
        return self._sandbox

    def _summary(self, stage: Stage) -> str:
        if stage == "mine" and self.taskset is not None:
            return f"{len(self.taskset.tasks)} tasks from {self.taskset.examined} changes"
        if stage == "ground-truth" and self.oracles is not None:
            scored = sum(1 for o in self.oracles.oracles.values() if o.scored)
            return f"{scored} of {len(self.oracles.oracles)} tasks scored"
        return "done"


def _stages_until(until: Stage | None) -> tuple[Stage, ...]:
    if until is None:
        return RUNNABLE_STAGES
    if until not in RUNNABLE_STAGES:
        known = ", ".join(RUNNABLE_STAGES)
        raise UsageError(f"cannot run until '{until}'; choose one of: {known}")
    return RUNNABLE_STAGES[: RUNNABLE_STAGES.index(until) + 1]


__all__ = ["STAGES", "Bout"]
