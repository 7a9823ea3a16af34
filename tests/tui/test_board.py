"""The race board as a person reads it: every attempt of the bout, stored or live; one
state per frame; a parked lane's reset time; the cursor on the row it shows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from racekit import alive, contestant, copy_project, script
from rich.text import Text
from textual.widgets import Static
from tuiapp import FIXED_NOW, calc_app, on_screen, press_and_settle, settle, until

from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutFinished,
    BoutStarted,
    QuotaParked,
    StageFinished,
    StageStarted,
)
from bugbout_tui.core.store import Store
from bugbout_tui.engine.state import LaneView
from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.screens.attempt import AttemptScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.widgets.lane import LaneBox, parked_until
from bugbout_tui.tui.widgets.tail import OutputTail

AT = FIXED_NOW - timedelta(minutes=30)
LIMIT = "You've hit your usage limit. Try again later (your limit resets at 14:05)."


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo agent words its reset time in the machine's zone: make that UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def journal(root: Path, events: Sequence[BaseEvent]) -> None:
    """`events` as the last run's journal."""
    store = Store(root)
    lines = "".join(event.model_dump_json() + "\n" for event in events)
    store.events_path.write_text(lines, encoding="utf-8")


def started(*stages: str) -> list[BaseEvent]:
    return [
        BoutStarted(at=AT, project="calc", stages=list(stages), pid=1),  # type: ignore[arg-type]
        *[StageFinished(at=AT, stage=s, summary="done") for s in stages if s != "race"],  # type: ignore[arg-type]
    ]


def queued(attempt: str, quota: str) -> AttemptQueued:
    task, contestant = attempt.split("/")
    return AttemptQueued(
        at=AT, attempt=attempt, task=task, contestant=contestant, role="contestant", quota=quota
    )


def head(box: LaneBox) -> list[str]:
    content = box.query_one(".lane-head", Static).content
    assert isinstance(content, Text)
    return content.plain.split("\n")


def summary(screen: RaceScreen) -> str:
    content = screen.query_one("#race-summary", Static).content
    assert isinstance(content, Text)
    return content.plain


def lanes(screen: RaceScreen) -> dict[str, LaneBox]:
    return {box.quota: box for box in screen.query(LaneBox)}


# --- every attempt of the bout --------------------------------------------------------


async def test_after_a_retry_the_board_shows_every_stored_attempt_beside_the_retried(
    calc: Path,
) -> None:
    journal(calc, [
        *started("mine", "ground-truth", "race"),
        StageStarted(at=AT, stage="race", total=1),
        queued("calc-1/rationed", "beta"),
        AttemptStarted(at=AT, attempt="calc-1/rationed", logdir="/logs"),
        AttemptFinished(at=AT, attempt="calc-1/rationed", status="finished", seconds=9.0),
        StageFinished(at=AT, stage="race", summary="1 attempt"),
        BoutFinished(at=AT, outcome="done"),
    ])  # fmt: skip
    async with on_screen(calc, "3", RaceScreen) as (app, _pilot, screen):
        boxes = lanes(screen)
        assert set(boxes) == {"alpha", "beta"}
        assert len(boxes["alpha"].attempts.row_ids) == 6  # careful, hasty, examiner × 2
        beta = boxes["beta"].attempts
        assert set(beta.row_ids) == {"calc-1/slow", "calc-1/rationed", "calc-2/slow",
                                     "calc-2/rationed"}  # fmt: skip
        assert app.state.attempts["calc-1/rationed"].phase == "finished"  # the retry's
        line = summary(screen)
        assert line.startswith("10 of 10 attempts done"), line
        assert "2 to retry (f)" in line  # calc-2's timeout and quota, both stored
        assert "stopped with the run" not in line and "queued" not in line


async def test_a_run_that_raced_nothing_shows_the_stored_race(calc: Path) -> None:
    journal(calc, [*started("mine", "ground-truth", "race"), BoutFinished(at=AT, outcome="done")])
    async with on_screen(calc, "3", RaceScreen) as (_app, _pilot, screen):
        assert set(lanes(screen)) == {"alpha", "beta"}
        assert summary(screen).startswith("10 of 10 attempts done")
        assert not screen.query_one("#race-empty").display


async def test_a_clean_run_says_nothing_of_attempts_stopped_with_it(calc: Path) -> None:
    async with on_screen(calc, "3", RaceScreen) as (_app, _pilot, screen):
        line = summary(screen)
        assert line.startswith("15 of 15 attempts done"), line
        assert "stopped" not in line and "0 queued" not in line


# --- one frame, one state ---------------------------------------------------------------


async def test_head_output_counts_and_cursor_come_from_the_same_moment(calc: Path) -> None:
    journal(calc, [
        *started("race"),
        StageStarted(at=AT, stage="race", total=2),
        queued("calc-3/careful", "alpha"),
        queued("calc-3/hasty", "alpha"),
    ])  # fmt: skip
    async with on_screen(calc, "3", RaceScreen) as (app, pilot, screen):
        alpha = lanes(screen)["alpha"]
        alpha.attempts.focus()
        app.feed.extend([
            AttemptStarted(at=AT, attempt="calc-3/careful", logdir="/logs/careful"),
            AttemptOutput(at=AT, attempt="calc-3/careful", stream="stdout", line="careful works"),
        ])  # fmt: skip
        app.tick()
        assert head(alpha)[1].startswith("▶ calc-3 · careful")
        # The next attempt starts within the same second: every part shows it at once.
        app.feed.extend([
            AttemptFinished(at=AT, attempt="calc-3/careful", status="finished", seconds=3.0),
            AttemptStarted(at=AT, attempt="calc-3/hasty", logdir="/logs/hasty"),
            AttemptOutput(at=AT, attempt="calc-3/hasty", stream="stdout", line="hasty works"),
        ])  # fmt: skip
        app.tick()
        assert head(alpha)[1].startswith("▶ calc-3 · hasty"), head(alpha)
        assert "1 running · 0 queued · 7 done" in head(alpha)[0]
        assert alpha.query_one(OutputTail).lines == ["── calc-3/hasty ──", "hasty works"]
        assert "1 running · 0 queued" in summary(screen)
        # The cursor, never moved, is on the row at the top: the running attempt.
        assert alpha.attempts.row_ids[0] == "calc-3/hasty"
        await press_and_settle(pilot, "enter")
        detail = app.screen
        assert isinstance(detail, AttemptScreen)
        assert detail.attempt == "calc-3/hasty"


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_a_parked_lane_shows_the_attempt_that_hit_the_limit_and_when_it_resets(
    calc: Path, size: tuple[int, int]
) -> None:
    journal(calc, [
        *started("race"),
        StageStarted(at=AT, stage="race", total=2),
        queued("calc-3/rationed", "beta"),
        queued("calc-3/slow", "beta"),
        AttemptStarted(at=AT, attempt="calc-3/rationed", logdir="/logs/rationed"),
        AttemptOutput(at=AT, attempt="calc-3/rationed", stream="stdout", line=LIMIT),
        AttemptFinished(at=AT, attempt="calc-3/rationed", status="quota", seconds=1.0,
                        detail=LIMIT),
        QuotaParked(at=AT, quota="beta", message=LIMIT),
        AttemptFinished(at=AT, attempt="calc-3/slow", status="quota", seconds=0.0,
                        detail="not started: the beta quota ran out earlier in this run"),
        BoutFinished(at=AT, outcome="done"),
    ])  # fmt: skip
    app = BugboutApp(calc / "bugbout.toml", clock=lambda: FIXED_NOW)
    async with app.run_test(size=size) as pilot:
        await press_and_settle(pilot, "3")
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        beta = lanes(screen)["beta"]
        assert beta.query_one(OutputTail).lines == ["── calc-3/rationed ──", LIMIT]
        lines = head(beta)
        assert lines[1].startswith("‖ parked on a usage limit: You've hit")
        assert lines[2].strip() == "resets at 14:05 · in 2:05:00"
        # Two lanes, across 160 columns or 80: the line of the reset time is drawn whole.
        shown = beta.query_one(".lane-head", Static).render_lines(
            beta.query_one(".lane-head").region.reset_offset
        )
        assert "resets at 14:05 · in 2:05:00" in shown[2].text
        await settle(pilot)


def test_a_message_without_a_reset_time_says_so_without_a_countdown() -> None:
    lane = LaneView(quota="beta", parked="You've hit your usage limit. Try again later.",
                    parked_at=AT)  # fmt: skip
    line = parked_until(lane, FIXED_NOW).plain
    assert line.strip() == "the agent did not say when the limit resets"
    lane.parked = "You've hit your limit · resets Jan 3 at 4pm (UTC)"
    assert parked_until(lane, FIXED_NOW).plain.strip() == "resets at Jan 03 16:00 · in 2 d 4 h"
    lane.parked = LIMIT
    assert parked_until(lane, FIXED_NOW + timedelta(hours=3)).plain.strip() == (
        "resets at 14:05 · it has reset: f retries"
    )


def test_in_a_lane_38_columns_wide_the_reset_line_keeps_its_time_and_countdown() -> None:
    """Two lanes at 80 columns leave each 38: the words around the time give way first."""
    lane = LaneView(quota="beta", parked="You've hit your limit · resets Mar 3 at 4pm (UTC)",
                    parked_at=AT)  # fmt: skip
    far = parked_until(lane, FIXED_NOW, width=38).plain
    assert far.strip() == "resets at Mar 03 16:00 · in 61 d 4 h", far
    lane.parked = "You've hit your limit · resets Jan 3 at 4pm (UTC)"
    reset = parked_until(lane, FIXED_NOW + timedelta(days=3), width=38).plain
    assert reset.strip() == "reset at Jan 03 16:00 · f retries", reset
    for line in (far, reset):
        assert len(line) <= 38, line


def test_a_lane_waiting_to_resume_counts_down_to_it_not_to_a_later_run() -> None:
    """With `wait-for-quota` the lane resumes by itself: its line says when, not that
    a retry (f) is needed; the reset time is the engine's, to the second."""
    resets = FIXED_NOW + timedelta(minutes=2, seconds=5)
    lane = LaneView(quota="beta", parked="You've hit your usage limit. Try again later.",
                    parked_at=AT, resets_at=resets, resumes_at=resets)  # fmt: skip
    assert parked_until(lane, FIXED_NOW).plain.strip() == "resumes at 12:02:05 · in 2:05"
    assert parked_until(lane, resets).plain.strip() == "resumes at 12:02:05 · resuming now"
    narrow = parked_until(lane, FIXED_NOW, width=25).plain
    assert narrow.strip() == "resumes 12:02:05 · 2:05" and len(narrow) <= 25
    # no time named: the lane probes again after a pause
    lane.resets_at, lane.resumes_at = None, FIXED_NOW + timedelta(minutes=5)
    assert parked_until(lane, FIXED_NOW).plain.strip() == "tries again at 12:05 · in 5:00"
    # parked until a later run, with the engine's reading of the reset time
    lane.resets_at, lane.resumes_at = resets, None
    assert parked_until(lane, FIXED_NOW).plain.strip() == "resets at 12:02 · in 2:05"


async def test_a_waiting_lane_says_it_waits_and_a_resumed_one_runs_again(calc: Path) -> None:
    resets = FIXED_NOW + timedelta(minutes=2)
    journal(calc, [
        *started("race"),
        StageStarted(at=AT, stage="race", total=2),
        queued("calc-3/rationed", "beta"),
        queued("calc-3/slow", "beta"),
        AttemptStarted(at=AT, attempt="calc-3/rationed", logdir="/logs/rationed"),
        AttemptFinished(at=AT, attempt="calc-3/rationed", status="quota", seconds=1.0,
                        detail=LIMIT),
        QuotaParked(at=AT, quota="beta", message=LIMIT, resets_at=resets, resumes_at=resets),
        queued("calc-3/rationed", "beta"),
    ])  # fmt: skip
    app = BugboutApp(calc / "bugbout.toml", clock=lambda: FIXED_NOW)
    async with app.run_test(size=(160, 45)) as pilot:
        await press_and_settle(pilot, "3")
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        beta = lanes(screen)["beta"]
        lines = head(beta)
        assert "0 running · 2 queued" in lines[0]
        assert lines[1].startswith("‖ waiting out a usage limit: You've hit")
        assert lines[2].strip() == "resumes at 12:02 · in 2:00"
        rows = beta.attempts.row_ids
        assert rows.index("calc-3/rationed") < rows.index("calc-3/slow"), "it runs first"
        await settle(pilot)


# --- following a run, then running again -----------------------------------------------


def offered(app: BugboutApp) -> set[str]:
    """The actions the footer offers on the visible screen."""
    return {binding.action for (_, binding, enabled, _) in app.active_bindings.values()
            if enabled and binding.show}  # fmt: skip


@pytest.mark.slow
async def test_when_the_followed_run_ends_the_app_can_start_runs_again(
    project_template: Path, tmp_path: Path, home: Path
) -> None:
    token = f"bugbout-board-hang-{os.getpid()}"
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"],
        extra=contestant("hang", script("hang", token)),
    )  # fmt: skip
    run = subprocess.Popen(
        [sys.executable, "-m", "bugbout_tui", "run", "--until", "race"],
        cwd=project,
        env={**os.environ, "BUGBOUT_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not alive(token):
            assert time.monotonic() < deadline, "the followed run never started its agent"
            assert run.poll() is None, run.stderr.read() if run.stderr else ""
            time.sleep(0.05)
        app = calc_app(project, watch=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "calc-1/hang" in app.state.attempts, "the journal", 30)
            await pilot.pause(0.3)  # not `settle`: following, the journal's reader never ends
            # Read-only: the writing keys are not offered.
            assert app.session.watching
            shown = offered(app)
            assert {"start", "retry_failed", "cancel_attempt"}.isdisjoint(shown), shown
            await pilot.press("1")
            await pilot.pause(0.3)
            writing = {"save", "add_agent('contestants')", "select_cursor"}
            assert writing.isdisjoint(offered(app)), offered(app)
            await pilot.press("3")

            run.send_signal(signal.SIGINT)  # Ctrl-C of the followed run
            await until(pilot, lambda: not app.session.watching, "read-only to end", 60)
            assert run.wait(timeout=30) != 0
            await settle(pilot)
            assert app.state.outcome == "stopped"
            assert {"start", "retry_failed"} <= offered(app), offered(app)
            assert "read-only" not in str(app.screen.query_one("StatusHeader").render())

            await pilot.press("s", "enter")  # carries on, in this app, once confirmed
            await until(pilot, lambda: app.engine is not None, "the engine", 10)
            await until(pilot, lambda: app.state.attempts.get("calc-1/hang") is not None
                        and app.state.attempts["calc-1/hang"].phase == "running",
                        "the attempt to run again", 60)  # fmt: skip
            await pilot.press("s", "enter")
            await until(pilot, lambda: app.engine is None, "the engine to stop", 30)
        await until_dead(token)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


async def until_dead(token: str) -> None:
    deadline = time.monotonic() + 20
    while alive(token):
        assert time.monotonic() < deadline, "an agent outlived its run"
        time.sleep(0.1)
