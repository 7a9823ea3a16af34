"""What the engine says while it works.

Every watcher (the live CLI display, the TUI, `--watch` tailing the journal, tests)
reads the same typed events, so none of them needs to know how the engine is built.
Events are small and flat: they describe what happened, the store holds the results.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from bugbout_tui.core.env_models import RepairStatus
from bugbout_tui.core.estimate import Estimate

Stage = Literal["mine", "ground-truth", "race", "examine", "judge", "score", "report"]
STAGES: tuple[Stage, ...] = ("mine", "ground-truth", "race", "examine", "judge", "score", "report")

AttemptStatus = Literal[
    "finished", "no-change", "oversized", "timeout", "crashed", "quota", "skipped", "budget"
]
"""How an attempt ended. `budget`: not started, its contestant's (or the bout's) budget
would have been passed; like `skipped`, nothing ran, and a later run tries it again."""


def _now() -> datetime:
    return datetime.now(UTC)


class BaseEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    at: datetime = Field(default_factory=_now)


class BoutStarted(BaseEvent):
    type: Literal["bout-started"] = "bout-started"
    project: str
    stages: list[Stage]
    pid: int


class BoutFinished(BaseEvent):
    type: Literal["bout-finished"] = "bout-finished"
    outcome: Literal["done", "stopped", "failed"]
    message: str | None = None


class StageStarted(BaseEvent):
    type: Literal["stage-started"] = "stage-started"
    stage: Stage
    total: int | None = None
    """How many units of work the stage has (tasks, attempts), when known."""


class StageProgress(BaseEvent):
    type: Literal["stage-progress"] = "stage-progress"
    stage: Stage
    done: int
    total: int
    detail: str | None = None


class StageFinished(BaseEvent):
    type: Literal["stage-finished"] = "stage-finished"
    stage: Stage
    summary: str


class AttemptQueued(BaseEvent):
    type: Literal["attempt-queued"] = "attempt-queued"
    attempt: str
    """`<task>/<contestant>`: unique within a bout."""
    task: str
    contestant: str
    role: Literal["contestant", "examiner"]
    quota: str


class AttemptStarted(BaseEvent):
    type: Literal["attempt-started"] = "attempt-started"
    attempt: str
    logdir: str
    worker: str | None = None
    """The cluster's worker its agent runs on; None on this machine."""


class AttemptOutput(BaseEvent):
    type: Literal["attempt-output"] = "attempt-output"
    attempt: str
    stream: Literal["stdout", "stderr"]
    line: str
    skipped: int = 0
    """Lines dropped before this one by the rate limit; the log file has them all."""


class AttemptFinished(BaseEvent):
    type: Literal["attempt-finished"] = "attempt-finished"
    attempt: str
    status: AttemptStatus
    seconds: float
    detail: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class QuotaParked(BaseEvent):
    type: Literal["quota-parked"] = "quota-parked"
    quota: str
    message: str
    resets_at: datetime | None = None
    """When the agent said its limit resets; None when it did not say."""
    resumes_at: datetime | None = None
    """When the lane tries again in this run (`[run] wait-for-quota`); None: not in
    this run, its attempts wait for a later one."""


class QuotaResumed(BaseEvent):
    """A lane that waited out its usage window starts attempts again."""

    type: Literal["quota-resumed"] = "quota-resumed"
    quota: str


class RaceEstimated(BaseEvent):
    """What the race is about to start and is expected to spend, before any attempt."""

    type: Literal["race-estimated"] = "race-estimated"
    estimate: Estimate


class BoutDecided(BaseEvent):
    """`[run] stop-when-decided`: every pair of contestants is decided, so no new bug
    starts; the attempts of tasks already under way still run, and environment tasks,
    which the comparison leaves out, still start."""

    type: Literal["bout-decided"] = "bout-decided"
    after: str
    """The task whose score decided the last pair."""
    tasks_done: int
    """How many tasks, in the race's order, the decision rests on."""
    tasks: int
    """How many the bout has."""
    level: float
    """The family-wise level: the chance, at most, that any decided pair is wrong."""
    pairs: list[str] = Field(default_factory=list)
    """Each pair as decided, e.g. `fixer ahead of never, 7 to 0, p = 0.0156`."""
    withdrawn: list[str] = Field(default_factory=list)
    """The queued attempts (`<task>/<contestant>`) that will not start."""


class TestRunStarted(BaseEvent):
    type: Literal["test-run-started"] = "test-run-started"
    task: str
    label: str
    """Which tree: `base`, `fix`, `fix (2nd run)`, a patch's contestant name, ..."""


class TestRunFinished(BaseEvent):
    type: Literal["test-run-finished"] = "test-run-finished"
    task: str
    label: str
    passed: int
    failed: int
    seconds: float
    error: str | None = None
    uncollected: int = 0
    """Test modules (or directories) that could not even be collected: not counted as
    failed tests, since which tests they hold is unknown."""
    worker: str | None = None
    """The cluster's worker that made the run; None on this machine."""


class EnvRunStarted(BaseEvent):
    """An environment task's files are installed clean and its command traced: one of its
    controls in ground truth, or an attempt's repair."""

    type: Literal["env-run-started"] = "env-run-started"
    task: str
    label: str
    """Whose files: `base`, `gold`, or the contestant whose repair it is."""


class EnvRunFinished(BaseEvent):
    type: Literal["env-run-finished"] = "env-run-finished"
    task: str
    label: str
    status: RepairStatus
    seconds: float
    detail: str | None = None
    """Why it did not resolve, in a line."""


class ClusterChanged(BaseEvent):
    """The cluster a bout runs on, as it now stands: said when it connects and whenever
    a worker joins, leaves or takes up or ends this bout's work."""

    type: Literal["cluster"] = "cluster"
    address: str
    workers: int
    busy: int
    lost: int
    """Workers that left the cluster during the bout."""


class ErrorRaised(BaseEvent):
    type: Literal["error"] = "error"
    message: str
    task: str | None = None


Event = Annotated[
    BoutStarted
    | BoutFinished
    | StageStarted
    | StageProgress
    | StageFinished
    | AttemptQueued
    | AttemptStarted
    | AttemptOutput
    | AttemptFinished
    | QuotaParked
    | RaceEstimated
    | BoutDecided
    | QuotaResumed
    | TestRunStarted
    | TestRunFinished
    | EnvRunStarted
    | EnvRunFinished
    | ClusterChanged
    | ErrorRaised,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(line: str | bytes) -> Event:
    """One journal line back into its event."""
    return EVENT_ADAPTER.validate_json(line)
