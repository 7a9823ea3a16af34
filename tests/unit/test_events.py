"""Events: the journal round-trips, output is thinned per attempt, the state folds them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bugbout_tui.cli.live import plain_line
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutDecided,
    QuotaParked,
    QuotaResumed,
    StageFinished,
    StageStarted,
    parse_event,
)
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.state import BoutState


def test_journal_lines_parse_back_into_the_same_events(tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    bus = EventBus(journal)
    sent: list[BaseEvent] = [
        StageStarted(stage="race", total=2),
        AttemptQueued(
            attempt="p-1/codex", task="p-1", contestant="codex", role="contestant", quota="codex"
        ),
        AttemptFinished(attempt="p-1/codex", status="quota", seconds=1.5, detail="limit"),
    ]
    for event in sent:
        bus.emit(event)
    bus.close()
    assert [parse_event(line) for line in journal.read_text().splitlines()] == sent


def test_output_is_thinned_but_the_newest_line_survives() -> None:
    bus = EventBus(lines_per_second=1)
    got: list[BaseEvent] = []
    bus.subscribe(got.append)
    for n in range(1000):
        bus.emit(AttemptOutput(attempt="a", stream="stdout", line=f"line {n}"))
    bus.flush_output("a")
    lines = [e for e in got if isinstance(e, AttemptOutput)]
    assert len(lines) == 2
    assert lines[0].line == "line 0"
    assert lines[-1].line == "line 999"
    assert lines[-1].skipped == 998


def test_a_held_line_goes_out_in_its_slot_and_what_that_raises_stops_the_next_event() -> None:
    bus = EventBus(lines_per_second=20)
    got: list[str] = []

    def fussy(event: BaseEvent) -> None:
        if isinstance(event, AttemptOutput):
            got.append(event.line)
            if event.line == "second":
                raise RuntimeError("a subscriber failed")

    bus.subscribe(fussy)

    async def burst_then_silence() -> None:
        bus.output("a", "stdout", "first")
        bus.output("a", "stdout", "second")
        await asyncio.sleep(0.3)

    asyncio.run(burst_then_silence())
    assert got == ["first", "second"]
    with pytest.raises(RuntimeError, match="a subscriber failed"):
        bus.emit(StageFinished(stage="race", summary="done"))
    bus.emit(StageFinished(stage="race", summary="raised once"))


def test_unsubscribe_stops_delivery() -> None:
    bus = EventBus()
    got: list[BaseEvent] = []
    stop = bus.subscribe(got.append)
    bus.emit(StageStarted(stage="mine"))
    stop()
    bus.emit(StageFinished(stage="mine", summary="3 tasks"))
    assert len(got) == 1


def test_state_follows_an_attempt_through_its_lane() -> None:
    state = BoutState()
    state.apply(StageStarted(stage="race", total=1))
    state.apply(
        AttemptQueued(
            attempt="p-1/hasty", task="p-1", contestant="hasty", role="contestant", quota="demo"
        )
    )
    lane = state.lanes["demo"]
    assert lane.queued == ["p-1/hasty"]
    state.apply(AttemptStarted(attempt="p-1/hasty", logdir="/tmp/x"))
    assert lane.running == ["p-1/hasty"] and lane.queued == []
    state.apply(AttemptOutput(attempt="p-1/hasty", stream="stdout", line="editing", skipped=4))
    assert state.attempts["p-1/hasty"].last_line == "editing"
    assert state.attempts["p-1/hasty"].lines == 5
    state.apply(QuotaParked(quota="demo", message="usage limit"))
    state.apply(AttemptFinished(attempt="p-1/hasty", status="quota", seconds=2.0))
    assert lane.finished == ["p-1/hasty"] and lane.running == []
    assert lane.parked == "usage limit"
    assert state.attempts["p-1/hasty"].phase == "quota"
    state.apply(StageFinished(stage="race", summary="1 attempt"))
    assert state.stages["race"].state == "done" and state.current is None
    assert state.events == 7


def test_a_decided_bout_withdraws_its_queued_attempts_and_says_so() -> None:
    state = BoutState()
    for attempt in ("t-1/a", "t-2/a", "t-3/a"):
        task = attempt.split("/")[0]
        state.apply(
            AttemptQueued(attempt=attempt, task=task, contestant="a", role="contestant", quota="q")
        )
    state.apply(AttemptStarted(attempt="t-1/a", logdir="/tmp/x"))
    decided = BoutDecided(
        after="t-1",
        tasks_done=1,
        tasks=3,
        level=0.5,
        pairs=["a ahead of b: 1 to 0, p = 1"],
        withdrawn=["t-1/a", "t-3/a"],
    )
    state.apply(decided)
    lane = state.lanes["q"]
    # A withdrawn attempt leaves the queue; one already running is never withdrawn.
    assert (lane.queued, lane.running) == (["t-2/a"], ["t-1/a"])
    assert "t-3/a" not in state.attempts
    assert state.decided == decided
    line = plain_line(decided, state)
    assert line == (
        "[race] decided after task t-1 (1 of 3) at level 0.5: a ahead of b: 1 to 0, p = 1; "
        "no new bug starts (2 queued attempts withdrawn)"
    )
    assert parse_event(decided.model_dump_json()) == decided


def test_an_attempt_queued_again_after_a_limit_waits_first_and_a_resumed_lane_unparks() -> None:
    state = BoutState()
    for attempt in ("p-1/rationed", "p-2/rationed"):
        task, contestant = attempt.split("/")
        state.apply(AttemptQueued(attempt=attempt, task=task, contestant=contestant,
                                  role="contestant", quota="plan"))  # fmt: skip
    state.apply(AttemptStarted(attempt="p-1/rationed", logdir="/tmp/x"))
    state.apply(AttemptFinished(attempt="p-1/rationed", status="quota", seconds=1.0))
    state.apply(QuotaParked(quota="plan", message="limit", resumes_at=datetime.now(UTC)))
    state.apply(AttemptQueued(attempt="p-1/rationed", task="p-1", contestant="rationed",
                              role="contestant", quota="plan"))  # fmt: skip
    lane = state.lanes["plan"]
    assert lane.queued == ["p-1/rationed", "p-2/rationed"] and lane.finished == []
    assert state.attempts["p-1/rationed"].phase == "queued"
    assert lane.resumes_at is not None
    state.apply(QuotaResumed(quota="plan"))
    assert lane.parked is None and lane.resumes_at is None and lane.resets_at is None
