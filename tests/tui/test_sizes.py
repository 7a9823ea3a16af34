"""The app at the smallest size it is made for (80 × 24) and below it, read as text.

Snapshots show each screen; these tests name what must not be cut at 80 × 24 and what
the Race screen does when the window is narrower than that.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from tuiapp import calc_app, press_and_settle, settle
from tuiproject import EVENTS

from bugbout_tui.core import look
from bugbout_tui.core.events import STAGES, Stage
from bugbout_tui.engine.state import StageView
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.widgets.lane import LaneBox
from bugbout_tui.tui.widgets.status import EngineStatus, StatusHeader
from bugbout_tui.tui.widgets.tail import OutputTail

SMALLEST = (80, 24)


def screen_lines(app: App[object]) -> list[str]:
    """The screen as a person reads it: one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def lines_once_shown(pilot: Pilot[int], start: str) -> list[str]:
    """The screen's rows once one starts with `start`: a table's rows can come a frame
    after its header on a loaded machine. Gives up after five seconds, returning the
    screen as it is."""
    for _ in range(50):
        lines = screen_lines(pilot.app)
        if any(line.lstrip().startswith(start) for line in lines):
            return lines
        await pilot.pause(0.1)
    return screen_lines(pilot.app)


@pytest.mark.parametrize("screen", ["1", "2", "3", "4", "5", "6"])
async def test_at_80_columns_the_footer_keeps_start_keys_quit_and_the_palette(
    calc: Path, screen: str
) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, screen)
        footer = screen_lines(app)[-1]
    for key in ("s Start", "? Keys", "q Quit"):
        assert key in footer, footer
    assert footer.rstrip().endswith("^p palette") or footer.rstrip().endswith("^p"), footer


async def test_at_80_columns_the_header_keeps_every_stage() -> None:
    """Seven stages and a long engine word do not fit at 80 columns as chips with names:
    the header shows every stage as its symbol, and the running one by name."""

    class Header(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusHeader()

    stages: dict[Stage, StageView] = {
        "mine": StageView("mine", "done"),
        "ground-truth": StageView("ground-truth", "done"),
        "race": StageView("race", "done"),
        "examine": StageView("examine", "running", done=3, total=8),
    }
    app = Header()
    async with app.run_test(size=SMALLEST) as pilot:
        header = app.query_one(StatusHeader)
        header.show(
            "invoicekit",
            EngineStatus("last run did not finish · s carries on", "yellow"),
            look.stage_chips(STAGES, stages),
            "race",
            compact_chips=look.stage_chips(STAGES, stages, compact=True),
        )
        await pilot.pause()
        first = screen_lines(app)[0].rstrip()
    assert "…" not in first, first
    assert first.endswith("✓✓✓◐ examine 3/8 ···"), first


async def test_a_cut_output_line_ends_with_an_ellipsis() -> None:
    class Tail(App[None]):
        CSS = "OutputTail { width: 20; }"

        def compose(self) -> ComposeResult:
            yield OutputTail()

    app = Tail()
    async with app.run_test(size=(40, 5)) as pilot:
        tail = app.query_one(OutputTail)
        tail.write_lines(["short line", "running the tests before changing anything"])
        await pilot.pause()
        lines = [line[:20] for line in screen_lines(app)[:2]]
    assert lines == ["short line".ljust(20), "running the tests b…"]


async def test_at_80_columns_the_config_note_column_is_on_screen(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "1")
        table = app.screen.query_one("FormTable")
        table.move_cursor(row=table.get_row_index("run.timeout"))  # type: ignore[attr-defined]
        await press_and_settle(pilot, "enter", "ctrl+u", "s", "o", "o", "n")
        lines = screen_lines(app)
    assert any("what it is for, or what is wrong" in line for line in lines), lines
    timeout = next(line for line in lines if line.lstrip().startswith("timeout"))
    assert "✗ must be a positive" in timeout, timeout


async def test_verdicts_column_headers_start_where_their_values_do(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "5")
        lines = screen_lines(app)
    header = next(line for line in lines if line.lstrip().startswith("task "))
    row = next(line for line in lines if line.lstrip().startswith("calc-1 "))
    assert header.index("majority") == row.index("careful"), (header, row)
    assert header.index("unanimous") == row.index("careful", row.index("careful") + 1)


async def test_at_80_columns_the_verdicts_keep_all_five_policies_whole(calc_env: Path) -> None:
    """With environment tasks' long rows five policies outgrow 80 columns: shared picks
    say `same` and the two longest policy names shorten, so no column is scrolled off
    and no name is cut; at 160 columns everything is in full again."""
    app = calc_app(calc_env)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "5")
        lines = await lines_once_shown(pilot, "calc-2 ")
        header = next(line for line in lines if line.lstrip().startswith("task "))
        assert header.split() == [
            "task", "majority", "◂", "unanim.", "strict", "x-vendor", "credible",
        ]  # fmt: skip
        row = next(line for line in lines if line.lstrip().startswith("calc-2 "))
        assert row.split() == ["calc-2", "hasty", "✗", "abstain", "abstain", "same", "same"]
        bar = next(line for line in lines if line.lstrip().startswith("showing"))
        assert bar.rstrip().endswith("· p next · w save"), bar
        await pilot.resize_terminal(160, 45)
        await settle(pilot)
        lines = await lines_once_shown(pilot, "calc-2 ")
    header = next(line for line in lines if line.lstrip().startswith("task "))
    assert header.split() == [
        "task", "majority", "◂", "unanimous", "strict", "cross-vendor", "credible",
    ]  # fmt: skip
    row = next(line for line in lines if line.lstrip().startswith("calc-2 "))
    assert row.split() == ["calc-2", "hasty", "✗", "abstain", "abstain", "hasty", "✗", "hasty", "✗"]


async def test_at_80_columns_each_lane_head_keeps_its_counts(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "3")
        lines = screen_lines(app)
    heads = next(line for line in lines if "│alpha" in line)
    assert "…" not in heads and heads.count(" done") == 2, heads


async def test_below_80_columns_the_race_shows_one_lane_at_a_time(calc: Path) -> None:
    """At 60 × 20 both lanes side by side would be strips of a few columns: one lane
    fills the board, a line says which, and `]` `[` switch to the other and back."""
    (calc / ".bugbout" / "events.jsonl").write_bytes((EVENTS / "race-midway.jsonl").read_bytes())
    app = calc_app(calc)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "3")
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        boxes = list(screen.query(LaneBox))
        assert [box.display for box in boxes] == [True, False]
        assert boxes[0].region.width == 60
        assert "lane 1 of 2 · alpha" in "\n".join(screen_lines(app))
        await press_and_settle(pilot, "right_square_bracket")
        assert [box.display for box in boxes] == [False, True]
        assert boxes[1].region.width == 60 and boxes[1].region.height >= 12
        text = "\n".join(screen_lines(app))
        assert "lane 2 of 2 · beta" in text and "calc-3/rationed" in text
        assert screen.focused is boxes[1].attempts
        await press_and_settle(pilot, "left_square_bracket")
        assert [box.display for box in boxes] == [True, False]
        await pilot.resize_terminal(120, 30)
        await settle(pilot)
        assert [box.display for box in boxes] == [True, True]
        assert "lane 1 of 2" not in "\n".join(screen_lines(app))


def test_compact_chips_count_done_stages_when_none_runs() -> None:
    stages = {stage: StageView(stage, "done") for stage in STAGES[:3]}
    chips: Text = look.stage_chips(STAGES, stages, compact=True)
    assert chips.plain == "✓✓✓···· 3 of 7 stages done"


async def test_at_80_columns_every_task_shows_its_status(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        lines = screen_lines(app)
    rows = {line.split()[0]: line for line in lines if line.strip().startswith("calc-")}
    assert "will race" in rows["calc-1"] and "will race" in rows["calc-2"], rows
    assert "not scored:" in rows["calc-3"], rows


async def test_at_80_columns_the_tasks_footer_says_how_to_reach_the_fix_and_tests_tabs(
    calc: Path,
) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        footer = screen_lines(app)[-1]
    for key in ("t Tabs", "space Select, next", "a Accept", "x Exclude", "u Undo"):
        assert key in footer, footer


async def test_at_80_columns_the_cell_table_shows_what_each_test_counts_as(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=SMALLEST) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "4", "down", "down", "right", "right", "enter")
        lines = screen_lines(app)
    header = next(line for line in lines if line.lstrip().startswith("test "))
    assert header.rstrip().endswith("counts as"), header
    rows = [line for line in lines if "tests/test_x.py::" in line and "reproduction" in line]
    assert rows and all("⚑ reproduction" in row for row in rows), lines
