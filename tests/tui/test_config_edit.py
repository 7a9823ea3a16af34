"""Editing a key on the Config screen the way a person types changes that value and
nothing else in bugbout.toml; the header counts the problems the form lists."""

from __future__ import annotations

from pathlib import Path

from tuiapp import on_screen, press_and_settle
from tuiproject import CONFIG

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
