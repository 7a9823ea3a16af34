"""The live display of `bugbout run`: the same events and state as the TUI, drawn by rich.

On a terminal it redraws a compact board a few times a second; elsewhere (CI logs,
pipes) it prints one line per stage and attempt, so logs stay readable. Names, output
lines and messages come from agents and repositories: both forms show them through
`inert_line`, as `Text`, so they act on neither the terminal nor rich's markup.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from types import TracebackType

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from bugbout_tui.cli.estimate_view import estimate_lines, estimate_summary
from bugbout_tui.core import look
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptStarted,
    BaseEvent,
    BoutDecided,
    ClusterChanged,
    EnvRunFinished,
    ErrorRaised,
    QuotaParked,
    QuotaResumed,
    RaceEstimated,
    StageFinished,
    StageStarted,
    TestRunFinished,
)
from bugbout_tui.core.text import inert_line
from bugbout_tui.engine.state import AttemptView, BoutState, LaneView


class LiveDisplay:
    """Subscribe `on_event` to a bout's bus and use this as a context manager."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.state = BoutState()
        self._live: Live | None = None
        self._started = time.monotonic()

    def __enter__(self) -> LiveDisplay:
        if self.console.is_terminal:
            self._live = Live(
                get_renderable=self.render,
                console=self.console,
                refresh_per_second=4,
                transient=False,
            )
            self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)

    def on_event(self, event: BaseEvent) -> None:
        self.state.apply(event)
        if self._live is None:
            if isinstance(event, RaceEstimated):  # a few lines: per agent, lane and note
                lines: list[str | None] = [
                    f"[race] {line}" for line in estimate_lines(event.estimate)
                ]
            else:
                lines = [plain_line(event, self.state)]
            for line in lines:
                if line is not None:
                    self.console.print(Text(line), highlight=False, soft_wrap=True)

    def render(self) -> RenderableType:
        return render_state(self.state, time.monotonic() - self._started)


def plain_line(event: BaseEvent, state: BoutState) -> str | None:
    """One log line for the events a person follows in a non-interactive log."""
    line = _plain_line(event, state)
    return None if line is None else inert_line(line)


def _plain_line(event: BaseEvent, state: BoutState) -> str | None:
    match event:
        case StageStarted():
            return f"[{event.stage}] started"
        case StageFinished():
            return f"[{event.stage}] {event.summary}"
        case AttemptStarted():
            view = state.attempts.get(event.attempt)
            lane = f" in lane {view.quota}" if view else ""
            worker = f" on worker {event.worker}" if event.worker is not None else ""
            return f"[race] {event.attempt} started{lane}{worker}"
        case AttemptFinished():
            took = look.clock(event.seconds)
            detail = f": {event.detail}" if event.detail else ""
            return f"[race] {event.attempt} {event.status} after {took}{detail}"
        case QuotaParked():
            line = f"[race] lane {event.quota} parked: {event.message}"
            if event.resumes_at is not None:
                return f"{line} (waiting; resumes at {_local(event.resumes_at)})"
            if event.resets_at is not None:
                return f"{line} (until a later run; resets at {_local(event.resets_at)})"
            return line
        case QuotaResumed():
            return f"[race] lane {event.quota} resumed"
        case RaceEstimated():
            return f"[race] estimate: {estimate_summary(event.estimate)}"
        case BoutDecided():
            return f"[race] {decided_line(event)}"
        case TestRunFinished():
            outcome = event.error or f"{event.passed} passed, {event.failed} failed"
            if event.error is None and event.uncollected:
                outcome += f", {look.plural(event.uncollected, 'module')} not collected"
            worker = f" (worker {event.worker})" if event.worker is not None else ""
            return f"[tests] {event.task} on {event.label}{worker}: {outcome}"
        case EnvRunFinished():
            detail = f": {event.detail}" if event.detail else ""
            took = look.clock(event.seconds)
            files = f"{event.task} with {event.label}'s files"
            return f"[env] {files}: {event.status} after {took}{detail}"
        case ClusterChanged():
            return f"[cluster] {event.address} · {look.cluster_counts(event)}"
        case ErrorRaised():
            return f"error: {event.message}"
    return None


def decided_line(event: BoutDecided) -> str:
    """What `stop-when-decided` decided, in one line: where, each pair, and what is not
    started because of it."""
    pairs = "; ".join(event.pairs)
    withdrawn = look.plural(len(event.withdrawn), "queued attempt")
    return (
        f"decided after task {event.after} ({event.tasks_done} of {event.tasks}) at "
        f"level {event.level:g}: {pairs}; no new bug starts ({withdrawn} withdrawn)"
    )


def _local(moment: datetime) -> str:
    return moment.astimezone().isoformat(sep=" ", timespec="seconds")


def parked_words(lane: LaneView, now: datetime) -> str:
    """What a parked lane is doing: waiting, with the countdown to when it resumes, or
    parked until a later run (with the countdown to its reset when that is known)."""
    if lane.resumes_at is not None:
        left = max(0.0, (lane.resumes_at - now).total_seconds())
        return f"waiting: resumes in {look.clock(left)}"
    if lane.resets_at is not None and lane.resets_at > now:
        left = (lane.resets_at - now).total_seconds()
        return f"parked: resets in {look.clock(left)}"
    return "parked: usage limit"


def render_state(state: BoutState, elapsed: float) -> RenderableType:
    parts: list[RenderableType] = []
    header = Text()
    header.append("bugbout ", style="bold")
    header.append(inert_line(state.project), style="cyan")
    header.append(f"  {look.clock(elapsed)}", style="dim")
    parts.append(header)
    parts.append(look.stage_chips(state.planned, state.stages))
    if state.cluster is not None:
        parts.append(look.cluster_text(state.cluster))
    if state.estimate is not None:
        parts.append(Text(inert_line(f"estimate: {estimate_summary(state.estimate)}"), style="dim"))
        parts.extend(
            Text(f"note: {inert_line(note)}", style="dim") for note in state.estimate.notes
        )
    if state.test_runs_running:
        parts.append(
            Text(
                inert_line(f"tests running: {', '.join(sorted(state.test_runs_running))}"),
                style="dim",
                overflow="ellipsis",
                no_wrap=True,
            )
        )
    if state.env_runs_running:
        parts.append(
            Text(
                inert_line(f"installing: {', '.join(sorted(state.env_runs_running))}"),
                style="dim",
                overflow="ellipsis",
                no_wrap=True,
            )
        )
    if state.lanes:
        parts.append(_lanes(state))
    if state.decided is not None:
        parts.append(Text(inert_line(decided_line(state.decided)), style="green"))
    for message in state.errors[-3:]:
        parts.append(Text(f"error: {inert_line(message)}", style="red"))
    return Group(*parts)


def _lanes(state: BoutState) -> Table:
    """One row per running attempt (or a lane's one word when nothing runs in it); on a
    cluster, each says the worker its agent runs on."""
    on_cluster = state.cluster is not None
    table = Table(box=None, pad_edge=False, expand=True)
    table.add_column("lane", style="bold", no_wrap=True)
    table.add_column("running", no_wrap=True)
    if on_cluster:
        table.add_column("worker", no_wrap=True, overflow="ellipsis", max_width=24)
    table.add_column("elapsed", justify="right", no_wrap=True)
    table.add_column("last output", ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column("queued", justify="right")
    table.add_column("done", justify="right")
    now = datetime.now(UTC)

    def add(cells: list[RenderableType], worker: str = "") -> None:
        if on_cluster:
            cells.insert(2, Text(worker, style="cyan"))
        table.add_row(*cells)

    for lane in state.lanes.values():
        running: list[AttemptView] = [state.attempts[a] for a in lane.running]
        done = Text(str(len(lane.finished)))
        quota = Text(inert_line(lane.quota))
        if lane.parked:
            parked = look.phase("quota").style
            add(
                [
                    quota,
                    Text(parked_words(lane, now), style=parked),
                    "",
                    Text(inert_line(lane.parked), style=parked),
                    str(len(lane.queued)),
                    done,
                ]
            )
            continue
        if not running:
            add([quota, Text("idle", style="dim"), "", "", str(len(lane.queued)), done])
        for index, view in enumerate(running):
            elapsed = (now - view.started_at).total_seconds() if view.started_at else 0.0
            add(
                [
                    quota if index == 0 else "",
                    Text(inert_line(view.attempt)),
                    look.clock(elapsed),
                    Text(inert_line(view.last_line)),
                    str(len(lane.queued)) if index == 0 else "",
                    done if index == 0 else "",
                ],
                look.place(view.worker),
            )
    return table
