"""Where the work runs, on the Race screen and an attempt's detail: the cluster's state
from the journal's events, the worker of a running attempt from its start, and the
worker of an ended one from its record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clusterrun import ADDRESS, write_journal
from test_screens import plain, static_text
from test_sizes import screen_lines
from textual.widgets import Static
from tuiapp import calc_app, on_screen, press_and_settle, settle

from bugbout_tui.core.store import Store
from bugbout_tui.engine.race import attempt_path
from bugbout_tui.tui.screens.attempt import AttemptScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.widgets.dialogs import Choice
from bugbout_tui.tui.widgets.lane import LaneBox


def lane(screen: RaceScreen, quota: str) -> LaneBox:
    return next(box for box in screen.query(LaneBox) if box.quota == quota)


def head(box: LaneBox) -> str:
    return plain(box.query_one(".lane-head", Static).content)


async def test_a_running_attempt_says_the_worker_it_runs_on(calc: Path) -> None:
    write_journal(calc)
    async with on_screen(calc, "3", RaceScreen) as (app, pilot, screen):
        assert static_text(screen, "#race-cluster") == (
            f"cluster {ADDRESS} · 2 workers · 1 busy · 1 lost"
        )
        assert "▶ calc-3 · examiner · 0:01 · on gpu-1" in head(lane(screen, "alpha"))
        assert " on " not in head(lane(screen, "beta"))
        app.push_screen(AttemptScreen("calc-3/examiner"))
        await settle(pilot)
        assert "runs on  gpu-1" in static_text(app.screen, "#attempt-summary")
        app.pop_screen()
        app.push_screen(AttemptScreen("calc-3/rationed"))
        await settle(pilot)
        assert "runs on" not in static_text(app.screen, "#attempt-summary")


async def test_an_ended_attempt_says_the_worker_its_record_names(calc: Path) -> None:
    path = attempt_path(Store(calc).attempts_dir, "calc-1", "careful")
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "worker": "gpu-1"}))
    (calc / ".bugbout" / "events.jsonl").unlink()  # the board shows the store's records
    async with on_screen(calc, "3", RaceScreen) as (app, pilot, screen):
        assert not screen.query_one("#race-cluster").display  # this run had no cluster
        alpha = lane(screen, "alpha")
        rows = dict(zip(alpha.attempts.row_ids, alpha.attempts.row_texts, strict=True))
        assert rows["calc-1/careful"].plain.endswith("  on gpu-1")
        assert " on " not in rows["calc-1/hasty"].plain
        alpha.attempts.focus()
        alpha.attempts.highlight("calc-1/careful")
        await press_and_settle(pilot, "enter")
        assert "ran on     gpu-1" in static_text(app.screen, "#attempt-summary")


async def test_below_80_columns_the_cluster_line_keeps_its_counts(calc: Path) -> None:
    write_journal(calc)
    app = calc_app(calc)
    async with app.run_test(size=(48, 20)) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "3")
        lines = screen_lines(app)
    assert "cluster · 2 workers · 1 busy · 1 lost" in lines[3], lines[:5]


async def test_the_start_question_says_where_the_bout_runs(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await press_and_settle(pilot, "3")
        await pilot.press("s")
        assert isinstance(app.screen, Choice) and "cluster" not in app.screen.text
        await press_and_settle(pilot, "escape")
        monkeypatch.setenv("BUGBOUT_CLUSTER", "tcp://10.0.0.5:8786")
        await pilot.press("s")
        assert isinstance(app.screen, Choice)
        assert "run on the cluster at tcp://10.0.0.5:8786" in app.screen.text
        await press_and_settle(pilot, "escape")
    assert app.engine is None
