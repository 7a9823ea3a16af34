"""Every screen as a person sees it, from the calc project and a recorded run: at 80 × 24,
the smallest size the app is made for, where nothing essential may be cut, and at 160 × 45.

Regenerate after a deliberate change with `pytest tests/tui/test_snapshots.py
--snapshot-update`, and look at the report pytest writes when one differs.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from clusterrun import write_journal
from textual.pilot import Pilot
from textual.widgets import Tree
from tuiapp import calc_app, press_and_settle, settle
from tuiproject import CONFIG, EVENTS

from bugbout_tui.tui.screens.race import RaceScreen

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
"""The smallest supported size, and a large one."""

sizes = pytest.mark.parametrize("size", list(SIZES))

Compare = Callable[..., bool]


def keys(*pressed: str) -> Callable[[Pilot[int]], Awaitable[None]]:
    """Wait for the app to catch up, press `pressed` one by one, and catch up again."""

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, *pressed)

    return run_before


SCREENS = {
    "tasks": ("down",),
    "tasks-tests": ("down", "t", "t"),
    "config": ("1", "down", "down"),
    "race": ("3",),
    "matrix": ("4",),
    "cell": ("4", "down", "down", "right", "right", "enter"),
    "verdicts": ("5", "down"),
    "verdicts-credible": ("5", "down", "p", "p", "p", "p"),
    "report": ("6",),
    "keys": ("3", "question_mark"),
}
"""Each screen and the keys that reach it from the start (the Tasks screen)."""


@sizes
@pytest.mark.parametrize("name", list(SCREENS))
def test_screen(snap_compare: Compare, calc: Path, name: str, size: str) -> None:
    run_before = keys(*SCREENS[name])
    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_attempt_detail(snap_compare: Compare, calc: Path, size: str) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "3")
        screen = pilot.app.screen
        assert isinstance(screen, RaceScreen)
        lane = screen.query("LaneBox").first()
        lane.attempts.highlight("calc-1/careful")
        await press_and_settle(pilot, "enter", "right")

    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_credible_breakage_quorum(snap_compare: Compare, calc: Path, size: str) -> None:
    """calc-1 under `credible`: hasty's patch opened to its breakage, kept passing by the
    two supported patches, the only ones in the quorum."""

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "5", "p", "p", "p", "p")
        trail: Tree[object] = pilot.app.screen.query_one("#verdict-trail", Tree)
        patches = trail.root.children[2]
        hasty = next(node for node in patches.children if "hasty" in str(node.label))
        breakages = hasty.children[2]
        hasty.expand()
        breakages.expand()
        trail.focus()
        await settle(pilot)
        trail.move_cursor(breakages.children[0])
        trail.scroll_to_node(breakages.children[0])
        await settle(pilot)

    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_race_in_progress(snap_compare: Compare, calc: Path, size: str) -> None:
    shutil.copyfile(EVENTS / "race-midway.jsonl", calc / ".bugbout" / "events.jsonl")
    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=keys("3"))


@sizes
def test_race_on_a_cluster(snap_compare: Compare, calc: Path, size: str) -> None:
    """The race midway on a cluster: its state under the counts (the lost worker in red)
    and the worker of each attempt that ran on one."""
    write_journal(calc)
    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=keys("3"))


@sizes
def test_config_with_a_problem_beside_its_key(snap_compare: Compare, calc: Path, size: str) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "1")
        table = pilot.app.screen.query_one("FormTable")
        table.move_cursor(row=table.get_row_index("run.timeout"))  # type: ignore[attr-defined]
        await press_and_settle(pilot, "enter", "ctrl+u", "s", "o", "o", "n")

    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_config_prices(snap_compare: Compare, calc: Path, size: str) -> None:
    """`[prices]` at the foot of the form: the file's own price of a model, the list price
    an agent's model gets without one, and a price the model refuses, marked."""
    config = calc / "bugbout.toml"
    config.write_text(
        CONFIG.replace('name = "careful"\n', 'name = "careful"\nmodel = "claude-sonnet-4-5"\n')
        + '\n[prices."gpt-5-codex"]  # negotiated\ninput = 1.0\noutput = 8.0\n'
        + '\n[prices."ollama/qwen3-coder:30b"]\ninput = 0\noutput = -1\n'
    )

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "1")
        pilot.app.clear_notifications()  # the one saying the file has a problem
        table = pilot.app.screen.query_one("FormTable")
        table.move_cursor(row=table.row_count - 1)  # type: ignore[attr-defined]
        await settle(pilot)
        await press_and_settle(pilot, "up", "up")  # the price with a problem, the rest in view

    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_unsaved_changes_question(snap_compare: Compare, calc: Path, size: str) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "1", "down", "enter", "x", "enter", "2")

    assert snap_compare(calc_app(calc), terminal_size=SIZES[size], run_before=run_before)


# --- Environment tasks (calc with two Lite tasks raced and scored: `envproject`) ----------


@sizes
def test_env_attempt_repair(snap_compare: Compare, calc_env: Path, size: str) -> None:
    """An attempt on an environment task, on its Repair tab: the install, the traced
    run, D¹, D², D³ and the audit."""

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "3")
        screen = pilot.app.screen
        assert isinstance(screen, RaceScreen)
        lane = screen.query("LaneBox").first()
        lane.attempts.focus()
        lane.attempts.highlight("lite-pin-yanked/careful")
        await press_and_settle(pilot, "enter", "right", "right", "right", "right")

    assert snap_compare(calc_app(calc_env), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_env_verdict(snap_compare: Compare, calc_env: Path, size: str) -> None:
    """The env judge's verdict on a task whose pick the merge gate refuses."""

    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        await press_and_settle(pilot, "5")
        table = pilot.app.screen.query_one("#verdict-table")
        table.move_cursor(row=table.get_row_index("lite-pin-yanked"))  # type: ignore[attr-defined]
        await settle(pilot)

    assert snap_compare(calc_app(calc_env), terminal_size=SIZES[size], run_before=run_before)


@sizes
def test_env_report_boards(snap_compare: Compare, calc_env: Path, size: str) -> None:
    """The report scrolled to the environment boards with `b`."""
    assert snap_compare(calc_app(calc_env), terminal_size=SIZES[size], run_before=keys("6", "b"))
