"""The view of a bout that every display renders, folded from events.

`BoutState.apply` is the only way the state changes, so the live CLI display, the TUI
and a `--watch` that replays the journal all show the same thing for the same events.
It mutates in place because a chatty race sends thousands of events a second.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bugbout_tui.core.env_models import RepairStatus
from bugbout_tui.core.estimate import Estimate
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    AttemptStatus,
    BaseEvent,
    BoutDecided,
    BoutFinished,
    BoutStarted,
    ClusterChanged,
    EnvRunFinished,
    EnvRunStarted,
    ErrorRaised,
    QuotaParked,
    QuotaResumed,
    RaceEstimated,
    Stage,
    StageFinished,
    StageProgress,
    StageStarted,
    TestRunFinished,
    TestRunStarted,
)

AttemptPhase = Literal["queued", "running"] | AttemptStatus


@dataclass
class AttemptView:
    attempt: str
    task: str
    contestant: str
    role: str
    quota: str
    phase: AttemptPhase = "queued"
    started_at: datetime | None = None
    seconds: float | None = None
    last_line: str = ""
    lines: int = 0
    detail: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    logdir: str | None = None
    worker: str | None = None
    """The cluster's worker its agent runs (or ran) on; None on this machine."""


@dataclass
class LaneView:
    quota: str
    queued: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    parked: str | None = None
    """The usage-limit message that stopped this lane, if one did."""
    parked_at: datetime | None = None
    """When it did: a message that says "try again in 3 hours" counts from then."""
    resets_at: datetime | None = None
    """When the engine read that the limit resets; None when it could not tell (or
    for a journal written before it said)."""
    resumes_at: datetime | None = None
    """When the lane tries again in this run; None: parked until a later run."""
    version: int = 0
    """Bumped on every change of the lane, so a display redraws a lane only when it
    changed."""


@dataclass
class StageView:
    stage: Stage
    state: Literal["running", "done", "failed"] = "running"
    """`failed`: the bout ended on an error while this stage was running."""
    done: int = 0
    total: int | None = None
    detail: str | None = None
    summary: str | None = None


@dataclass
class BoutState:
    project: str = ""
    pid: int | None = None
    planned: list[Stage] = field(default_factory=list)
    stages: dict[Stage, StageView] = field(default_factory=dict)
    current: Stage | None = None
    attempts: dict[str, AttemptView] = field(default_factory=dict)
    lanes: dict[str, LaneView] = field(default_factory=dict)
    test_runs_running: dict[str, str] = field(default_factory=dict)
    test_runs_done: int = 0
    env_runs_running: dict[str, str] = field(default_factory=dict)
    """Clean installs with their traced runs under way, `<task>/<label>` → label."""
    env_runs: dict[str, RepairStatus] = field(default_factory=dict)
    """How each finished one of this run ended, `<task>/<label>` → status."""
    errors: list[str] = field(default_factory=list)
    outcome: str | None = None
    message: str | None = None
    events: int = 0
    estimate: Estimate | None = None
    """What the race of this run was expected to start and spend, said before it began."""
    decided: BoutDecided | None = None
    """Under `stop-when-decided`, the decision that keeps new tasks from starting."""
    stored: set[str] = field(default_factory=set)
    """Attempts known only from the store's records: a run that resumes or retries
    races only what is missing, yet the bout is every attempt, stored or live."""
    cluster: ClusterChanged | None = None
    """The cluster this run works on, as last told; None when it runs on this machine
    alone."""

    def apply(self, event: BaseEvent) -> None:
        self.events += 1
        match event:
            case AttemptOutput():
                view = self.attempts.get(event.attempt)
                if view is not None:
                    view.last_line = event.line
                    view.lines += 1 + event.skipped
            case AttemptQueued():
                self._forget_stored(event.attempt)
                again = self._requeue(event.attempt)
                self.attempts[event.attempt] = AttemptView(
                    attempt=event.attempt,
                    task=event.task,
                    contestant=event.contestant,
                    role=event.role,
                    quota=event.quota,
                )
                lane = self._lane(event.quota)
                lane.queued.insert(0 if again else len(lane.queued), event.attempt)
                lane.version += 1
            case AttemptStarted():
                view = self.attempts[event.attempt]
                view.phase = "running"
                view.started_at = event.at
                view.logdir = event.logdir
                view.worker = event.worker
                lane = self._lane(view.quota)
                _discard(lane.queued, event.attempt)
                lane.running.append(event.attempt)
                lane.version += 1
            case AttemptFinished():
                view = self.attempts[event.attempt]
                view.phase = event.status
                view.seconds = event.seconds
                view.detail = event.detail
                view.input_tokens = event.input_tokens
                view.output_tokens = event.output_tokens
                lane = self._lane(view.quota)
                _discard(lane.queued, event.attempt)
                _discard(lane.running, event.attempt)
                lane.finished.append(event.attempt)
                lane.version += 1
            case QuotaParked():
                lane = self._lane(event.quota)
                lane.parked, lane.parked_at = event.message, event.at
                lane.resets_at, lane.resumes_at = event.resets_at, event.resumes_at
                lane.version += 1
            case QuotaResumed():
                lane = self._lane(event.quota)
                lane.parked = lane.parked_at = lane.resets_at = lane.resumes_at = None
                lane.version += 1
            case RaceEstimated():
                self.estimate = event.estimate
            case ClusterChanged():
                self.cluster = event
            case BoutDecided():
                self.decided = event
                for attempt in event.withdrawn:
                    view = self.attempts.get(attempt)
                    if view is None or view.phase != "queued":
                        continue
                    del self.attempts[attempt]
                    lane = self._lane(view.quota)
                    _discard(lane.queued, attempt)
                    lane.version += 1
            case TestRunStarted():
                self.test_runs_running[f"{event.task}/{event.label}"] = event.label
            case TestRunFinished():
                self.test_runs_running.pop(f"{event.task}/{event.label}", None)
                self.test_runs_done += 1
            case EnvRunStarted():
                self.env_runs_running[f"{event.task}/{event.label}"] = event.label
            case EnvRunFinished():
                key = f"{event.task}/{event.label}"
                self.env_runs_running.pop(key, None)
                self.env_runs[key] = event.status
            case StageStarted():
                self.current = event.stage
                self.stages[event.stage] = StageView(stage=event.stage, total=event.total)
            case StageProgress():
                view_stage = self.stages.setdefault(event.stage, StageView(stage=event.stage))
                view_stage.done = event.done
                view_stage.total = event.total
                view_stage.detail = event.detail
            case StageFinished():
                view_stage = self.stages.setdefault(event.stage, StageView(stage=event.stage))
                view_stage.state = "done"
                view_stage.summary = event.summary
                if self.current == event.stage:
                    self.current = None
            case BoutStarted():
                self.project = event.project
                self.pid = event.pid
                self.estimate = None
                self.planned = list(event.stages)
                self.outcome = None
                self.decided = None
                self.cluster = None
            case BoutFinished():
                self.outcome = event.outcome
                self.message = event.message
                if self.cluster is not None:  # an ended run keeps no worker busy
                    self.cluster = self.cluster.model_copy(update={"busy": 0})
                stopped = self.stages.get(self.current) if self.current is not None else None
                if event.outcome == "failed" and stopped is not None:
                    stopped.state = "failed"
                self.current = None
            case ErrorRaised():
                self.errors.append(
                    event.message if event.task is None else f"{event.task}: {event.message}"
                )

    def set_stored(self, views: Iterable[AttemptView]) -> None:
        """Show the stored attempts of the bout beside this run's: each one this run has
        no event of joins its lane as finished, before this run's own finished ones.
        Replaces the stored attempts set before, so a newer reading of the store wins."""
        gone = self.stored
        self.stored = set()
        touched: set[str] = set()
        for attempt in gone:
            view = self.attempts.pop(attempt, None)
            if view is not None:
                touched.add(view.quota)
        for quota in touched:
            lane = self.lanes[quota]
            lane.finished = [a for a in lane.finished if a not in gone]
        added: dict[str, list[str]] = {}
        for view in views:
            if view.attempt in self.attempts:
                continue
            self.attempts[view.attempt] = view
            self.stored.add(view.attempt)
            added.setdefault(view.quota, []).append(view.attempt)
        for quota, attempts in added.items():
            lane = self._lane(quota)
            lane.finished[:0] = attempts
            touched.add(quota)
        for quota in touched:
            lane = self.lanes[quota]
            lane.version += 1
            if not (lane.queued or lane.running or lane.finished or lane.parked):
                del self.lanes[quota]

    def _forget_stored(self, attempt: str) -> None:
        """A stored attempt this run races again (a retry) is this run's from now on."""
        if attempt not in self.stored:
            return
        self.stored.discard(attempt)
        view = self.attempts.pop(attempt)
        lane = self.lanes.get(view.quota)
        if lane is not None:
            _discard(lane.finished, attempt)
            lane.version += 1

    def _requeue(self, attempt: str) -> bool:
        """Whether this is an attempt of this run queued again: one that hit a usage
        limit waits to run first once its lane's window reopens, and leaves the
        finished ones."""
        view = self.attempts.get(attempt)
        lane = self.lanes.get(view.quota) if view is not None else None
        if lane is None:
            return False
        for attempts in (lane.finished, lane.running, lane.queued):
            _discard(attempts, attempt)
        return True

    def _lane(self, quota: str) -> LaneView:
        lane = self.lanes.get(quota)
        if lane is None:
            lane = self.lanes[quota] = LaneView(quota=quota)
        return lane

    @property
    def finished_attempts(self) -> int:
        return sum(len(lane.finished) for lane in self.lanes.values())

    @property
    def queued_attempts(self) -> int:
        return sum(len(lane.queued) for lane in self.lanes.values())


def _discard(items: list[str], item: str) -> None:
    if item in items:
        items.remove(item)
