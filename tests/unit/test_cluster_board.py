"""Where a bout's work runs, as the boards show it: the cluster's state once the bout
connects (workers, busy, lost) and the worker beside each attempt, fed the events the
engine emits. A bout without a cluster draws exactly what it drew before."""

from __future__ import annotations

import io

from rich.console import Console

from bugbout_tui.cli.live import LiveDisplay
from bugbout_tui.core import events as ev
from bugbout_tui.core import look
from bugbout_tui.core.events import (
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutStarted,
    ClusterChanged,
    StageStarted,
)
from bugbout_tui.engine.state import BoutState

ADDRESS = "tcp://10.0.0.5:8786"


def race(*, cluster: bool) -> list[BaseEvent]:
    """Two lanes, one attempt running in each: on a cluster, one on worker `gpu-1` and
    one left on this machine."""
    events: list[BaseEvent] = [
        BoutStarted(project="calc", stages=["race"], pid=1),
        StageStarted(stage="race"),
    ]
    if cluster:
        events.append(ClusterChanged(address=ADDRESS, workers=2, busy=1, lost=0))
    for attempt, quota in (("t1/a", "alpha"), ("t1/b", "beta")):
        task, contestant = attempt.split("/")
        events.append(
            AttemptQueued(
                attempt=attempt, task=task, contestant=contestant, role="contestant", quota=quota
            )
        )
    events.append(
        AttemptStarted(attempt="t1/a", logdir="/l/a", worker="gpu-1" if cluster else None)
    )
    events.append(AttemptStarted(attempt="t1/b", logdir="/l/b"))
    return events


def fed(events: list[BaseEvent]) -> tuple[LiveDisplay, list[str]]:
    """A display of `bugbout run` writing into a pipe, fed `events`: its log lines."""
    out = io.StringIO()
    display = LiveDisplay(Console(file=out, width=120, color_system=None))
    with display:
        for event in events:
            display.on_event(event)
    return display, out.getvalue().splitlines()


def board(display: LiveDisplay, width: int = 120) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(display.render())
    return out.getvalue().splitlines()


def row_of(lines: list[str], attempt: str) -> str:
    return next(line for line in lines if attempt in line)


def test_the_log_says_the_cluster_and_the_worker_an_attempt_starts_on() -> None:
    _, lines = fed(race(cluster=True))
    assert f"[cluster] {ADDRESS} · 2 workers · 1 busy · 0 lost" in lines
    assert "[race] t1/a started in lane alpha on worker gpu-1" in lines
    assert "[race] t1/b started in lane beta" in lines


def test_the_log_says_which_worker_made_a_test_run() -> None:
    made = ev.TestRunFinished(task="t1", label="base", passed=3, failed=1, seconds=2.0)
    _, lines = fed([made, made.model_copy(update={"worker": "gpu-2"})])
    assert lines == [
        "[tests] t1 on base: 3 passed, 1 failed",
        "[tests] t1 on base (worker gpu-2): 3 passed, 1 failed",
    ]


def test_the_board_shows_the_cluster_and_where_each_running_attempt_runs() -> None:
    display, _ = fed(race(cluster=True))
    shown = board(display)
    assert shown[2] == f"cluster {ADDRESS} · 2 workers · 1 busy · 0 lost"
    header = next(line for line in shown if line.startswith("lane"))
    assert header.split()[:4] == ["lane", "running", "worker", "elapsed"]
    assert row_of(shown, "t1/a").split()[:3] == ["alpha", "t1/a", "gpu-1"]
    assert "this machine" in row_of(shown, "t1/b")
    narrow = board(display, width=80)
    assert max(len(line) for line in narrow) <= 80
    assert "gpu-1" in row_of(narrow, "t1/a")


def test_a_lost_worker_turns_the_count_red_on_the_board() -> None:
    display, lines = fed(
        [*race(cluster=True), ClusterChanged(address=ADDRESS, workers=1, busy=1, lost=1)]
    )
    assert lines[-1] == f"[cluster] {ADDRESS} · 1 worker · 1 busy · 1 lost"
    assert display.state.cluster is not None
    line = look.cluster_text(display.state.cluster)
    assert line.plain == f"cluster {ADDRESS} · 1 worker · 1 busy · 1 lost"
    lost = [span for span in line.spans if line.plain[span.start : span.end] == "1 lost"]
    assert [str(span.style) for span in lost] == ["bold red"]
    narrow = look.cluster_text(display.state.cluster, address=False)
    assert narrow.plain == "cluster · 1 worker · 1 busy · 1 lost"


def test_without_a_cluster_the_board_and_log_are_as_before() -> None:
    display, lines = fed(race(cluster=False))
    assert not any("cluster" in line or "worker" in line for line in lines)
    shown = board(display)
    assert not any("cluster" in line or "worker" in line or "machine" in line for line in shown)
    header = next(line for line in shown if line.startswith("lane"))
    assert header.split()[:3] == ["lane", "running", "elapsed"]


def test_an_ended_run_keeps_no_worker_busy_and_a_new_run_forgets_its_cluster() -> None:
    state = BoutState()
    for event in race(cluster=True):
        state.apply(event)
    assert state.attempts["t1/a"].worker == "gpu-1"
    assert state.attempts["t1/b"].worker is None
    state.apply(ev.BoutFinished(outcome="stopped"))
    assert state.cluster is not None
    assert (state.cluster.workers, state.cluster.busy) == (2, 0)  # nothing of it runs now
    state.apply(BoutStarted(project="calc", stages=["race"], pid=2))
    assert state.cluster is None


def test_names_from_the_cluster_are_shown_inert() -> None:
    assert look.place("gpu\x1b[2J-1") == "gpu-1"
    assert look.place(None) == "this machine"
    told = ClusterChanged(address="tcp://\x1b[31mhost:8786", workers=1, busy=0, lost=0)
    assert look.cluster_text(told).plain == "cluster tcp://host:8786 · 1 worker · 0 busy · 0 lost"
