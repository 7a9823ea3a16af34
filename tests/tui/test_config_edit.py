"""Editing a key on the Config screen the way a person types changes that value and
nothing else in bugbout.toml; the header counts the problems the form lists."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input
from tuiapp import on_screen, press_and_settle, settle
from tuiproject import CONFIG

from bugbout_tui.engine.project import Project
from bugbout_tui.tui.screens.config import ConfigScreen
from bugbout_tui.tui.widgets.fields import FieldEditor

COMMENTED = CONFIG.replace(
    "timeout = 600\n", "# Agents get a minute.\ntimeout = 60  # seconds, per agent per task\n"
)


def status(screen: ConfigScreen) -> str:
    return str(screen.query_one("#config-status").content)


async def test_retyping_a_number_keeps_the_key_in_place_with_its_comments(calc: Path) -> None:
    config = calc / "bugbout.toml"
    assert COMMENTED != CONFIG
    config.write_text(COMMENTED)

    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("run.timeout"))
        await press_and_settle(pilot, "enter", "backspace", "backspace")
        assert screen.document is not None
        assert screen.document.text == COMMENTED, "an empty box removes nothing"
        assert "empty" in str(screen.table.get_row("run.timeout")[2])
        assert "1 problem" in status(screen)
        await press_and_settle(pilot, "9")
        assert screen.document.text == COMMENTED, "nothing reaches the document before enter"
        await press_and_settle(pilot, "0", "enter")
        assert not screen.editor.has_class("-open")
        await press_and_settle(pilot, "ctrl+s")

    assert config.read_text() == COMMENTED.replace("timeout = 60  #", "timeout = 90  #")


async def test_escape_leaves_the_document_as_it_was(calc: Path) -> None:
    config = calc / "bugbout.toml"
    config.write_text(COMMENTED)
    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("run.timeout"))
        await press_and_settle(pilot, "enter", "backspace", "backspace", "7", "escape")
        assert screen.document is not None and screen.document.text == COMMENTED
        assert not screen.has_unsaved_changes
        assert str(screen.table.get_row("run.timeout")[1]) == "60"


async def test_ctrl_s_while_typing_keeps_the_value_typed(calc: Path) -> None:
    config = calc / "bugbout.toml"
    config.write_text(COMMENTED)
    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("run.timeout"))
        await press_and_settle(pilot, "enter", "backspace", "5", "ctrl+s")
        assert not screen.query_one(FieldEditor).has_class("-open")
    assert config.read_text() == COMMENTED.replace("timeout = 60  #", "timeout = 65  #")


async def test_the_header_counts_every_problem_listed(calc: Path) -> None:
    config = calc / "bugbout.toml"
    broken = (
        CONFIG.replace("limit = 10", 'limit = "ten"').replace(
            "timeout = 600", "timeout = -5\ntest-timout = 3"
        )
        + "\n[bogus]\nkey = 1\n"
    )
    config.write_text(broken)
    async with on_screen(calc, "1", ConfigScreen) as (_app, _pilot, screen):
        assert screen.document is not None
        problems = screen.document.problems()
        assert len(problems) >= 4
        listed = str(screen.query_one("#config-problems").content).splitlines()
        marked = [
            cell for key in screen._rows
            for cell in [str(screen.table.get_row(key)[2])] if cell.startswith("✗")
        ]  # fmt: skip
        assert listed and marked
        assert f"⚠ {len(problems)} problems" in status(screen)


PRICED = (
    CONFIG.replace('name = "careful"\n', 'name = "careful"\nmodel = "claude-sonnet-4-5"\n')
    + '\n# What our contract says.\n[prices."gpt-5-codex"]  # negotiated\n'
    + "input = 1.0  # per million\noutput = 8.0\n"
)


async def type_into(pilot: Pilot[int], screen: ConfigScreen, text: str) -> None:
    """Replace the editor's text, as typing it would, then wait for the app."""
    screen.editor.query_one(Input).value = text
    await settle(pilot)


async def test_a_models_price_is_edited_key_by_key_and_comments_stay(calc: Path) -> None:
    config = calc / "bugbout.toml"
    config.write_text(PRICED)
    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        row = "prices.gpt-5-codex"
        assert str(screen.table.get_row(row)[1]) == "{ input = 1.0, output = 8.0 }"
        # An agent's model without a price of the file's shows the list price that applies.
        listed = screen.table.get_row("prices.claude-sonnet-4-5")
        assert str(listed[1]).startswith("default: { input = 3.0, output = 15.0, cached = 0.3")
        screen.table.move_cursor(row=screen.table.get_row_index(row))
        await press_and_settle(pilot, "enter")
        await type_into(pilot, screen, "{ input = 1.0, output = -9 }")
        assert str(screen.table.get_row(row)[2]) == "✗ output: must be at least 0.0"
        await type_into(pilot, screen, "{ input = 1.0, output = 9.0, cached = 0.1 }")
        assert not str(screen.table.get_row(row)[2]).startswith("✗ ")
        await press_and_settle(pilot, "enter", "ctrl+s")

    assert config.read_text() == PRICED.replace("output = 8.0\n", "output = 9.0\ncached = 0.1\n")


async def test_a_price_is_added_for_a_model_by_name(calc: Path) -> None:
    config = calc / "bugbout.toml"
    config.write_text(PRICED)
    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("add:prices"))
        await press_and_settle(pilot, "enter")
        await type_into(pilot, screen, "ollama/qwen3-coder:30b")
        await press_and_settle(pilot, "enter")
        row = "prices.ollama/qwen3-coder:30b"
        assert screen.editor.loc == ("prices", "ollama/qwen3-coder:30b"), "its price is asked"
        assert screen.table.coordinate_to_cell_key(screen.table.cursor_coordinate).row_key == row
        assert screen.document is not None and not screen.document.modified, "a name alone"
        await type_into(pilot, screen, "{ input = 0, output = 0 }")
        await press_and_settle(pilot, "enter", "ctrl+s")

    added = '\n[prices."ollama/qwen3-coder:30b"]\ninput = 0\noutput = 0\n'
    assert config.read_text() == PRICED + added
    free = Project.load(calc).config.price_table().price("ollama/qwen3-coder:30b")
    assert free is not None and free.cost(1000, 1000, 0) == 0
