"""An error that stops a stage stays on screen until dismissed, and the stage shows as
failed: in the header's chips and where its results would be."""

from __future__ import annotations

import shutil
from pathlib import Path

from tuiapp import calc_app, press_and_settle, settle, until

from bugbout_tui.core.events import BoutFinished, BoutStarted, StageStarted
from bugbout_tui.engine.state import BoutState
from bugbout_tui.tui.screens.tasks import TasksScreen
from bugbout_tui.tui.widgets.dialogs import Choice


def test_a_bout_that_fails_marks_the_stage_it_was_in() -> None:
    state = BoutState()
    state.apply(BoutStarted(project="p", stages=["mine", "ground-truth"], pid=1))
    state.apply(StageStarted(stage="mine"))
    state.apply(BoutFinished(outcome="failed", message="not a git repository"))
    assert state.stages["mine"].state == "failed"
    assert state.current is None


async def test_mining_a_directory_that_is_not_a_repository_stays_failed_on_screen(
    calc: Path,
) -> None:
    shutil.rmtree(calc / ".git")
    shutil.rmtree(calc / ".bugbout", ignore_errors=True)
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TasksScreen)
        tasks = app.screen
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, Choice), "the error", 60)
        await until(pilot, lambda: app.engine is None, "the engine to end", 30)
        await settle(pilot)
        error = app.screen
        assert isinstance(error, Choice)
        assert error.heading == "The bout stopped"
        assert "git" in error.text
        await pilot.pause(app.NOTIFICATION_TIMEOUT + 1)  # longer than any toast
        assert app.screen is error
        await press_and_settle(pilot, "enter")
        assert app.screen is tasks
        header = str(tasks.query_one("StatusHeader").render())
        assert "✗ mine" in header and "◐" not in header
        funnel = str(tasks.query_one("#tasks-funnel").content)
        assert funnel.startswith("Mining stopped:") and "Press m to mine" not in funnel
