"""The app's engine stopped by a set-up mistake or a store it cannot write: the message
is shown until dismissed, as `bugbout run` prints it, and the app goes on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from racekit import PYTHON, contestant, copy_project, records
from tuiapp import calc_app, settle, until

from bugbout_tui.tui.widgets.dialogs import Choice

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Stopped:
    """The error a bout stopped with, as its dialog shows it."""

    title: str
    message: str


async def stopped_with(project: Path) -> Stopped:
    """Start the bout in the app and return the error it stopped with, which stays on
    screen until dismissed."""
    app = calc_app(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3", "s", "enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, Choice) and app.screen.heading != "Start the bout?",
            "the bout to stop",
            120,
        )
        await until(pilot, lambda: app.engine is None, "the engine to end", 10)
        dialog = app.screen
        assert isinstance(dialog, Choice)
        found = Stopped(dialog.heading, dialog.text)
        assert app.is_running
        await pilot.press("escape", "q")
    return found


async def test_a_missing_agent_stops_the_bout_with_the_fix_before_any_attempt(
    project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=contestant("ghost", ["/nowhere/ghost-agent", "{prompt_file}"]),
    )
    error = await stopped_with(project)
    assert error.title == "The bout stopped"
    assert error.message.startswith("cannot start the race: the contestant 'ghost'")
    assert "correct `command` of this agent in bugbout.toml" in error.message
    assert records(project) == {}


async def test_a_store_that_cannot_be_written_is_named_in_the_message(
    project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=contestant("idle", [PYTHON, "-c", "pass"]),
    )
    lock = project / ".bugbout" / "lock"
    lock.mkdir()  # something in the way of the lock file
    error = await stopped_with(project)
    assert error.title == "The bout stopped"
    assert error.message.startswith(f"cannot write {lock}:")
