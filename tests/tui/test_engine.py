"""The app with a real engine: its own worker started and stopped, and `--watch` following
a real `bugbout run` in another process. Agents are small scripts, run in the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from racekit import alive, contestant, copy_project, script
from tuiapp import calc_app, settle, until

from bugbout_tui.engine.race import CANCELLED
from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.screens.race import RaceScreen

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).resolve().parent / "agents"


def phase(app: BugboutApp, attempt: str) -> str | None:
    view = app.state.attempts.get(attempt)
    return None if view is None else view.phase


async def test_stopping_the_engine_kills_the_agent_starting_again_resumes_and_c_cancels_it(
    project_template: Path, tmp_path: Path
) -> None:
    token = f"bugbout-tui-hang-{os.getpid()}"
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=contestant("hang", script("hang", token)),
    )

    app = calc_app(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3", "s", "enter")  # enter: yes, start
        await until(pilot, lambda: phase(app, "calc-1/hang") == "running", "the start", 60)
        await until(pilot, lambda: bool(alive(token)), "the agent's helper", 30)
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        # The counts line shows it, drawn with the lanes from the same state.
        await until(
            pilot,
            lambda: "1 running" in str(screen.query_one("#race-summary").render()),
            "the counts to show it",
            5,
        )
        await pilot.press("s", "enter")
        await until(pilot, lambda: app.engine is None, "the engine to stop", 30)
        await until(pilot, lambda: app.state.outcome == "stopped", "the last event", 5)
        await until(pilot, lambda: not alive(token), "the agent to die", 10)

        await pilot.press("s", "enter")
        await until(pilot, lambda: phase(app, "calc-1/hang") == "running", "a restart", 60)
        await until(pilot, lambda: bool(alive(token)), "the helper again", 30)
        await until(pilot, lambda: screen._highlighted() == "calc-1/hang",
                    "the lane to list it", 10)  # fmt: skip
        await pilot.press("c")
        await until(pilot, lambda: phase(app, "calc-1/hang") == "crashed", "the cancel", 30)
        assert app.state.attempts["calc-1/hang"].detail == CANCELLED
        assert not alive(token)
        # The bout goes on past one cancelled attempt, to its end.
        await until(pilot, lambda: app.state.outcome == "done", "the bout to finish", 60)
        await pilot.press("q")
        await until(pilot, lambda: app.return_code is not None, "the app to quit", 30)
    assert not alive(token)
    # The stopped run's journal is kept beside the one of the run that finished.
    (stopped,) = (project / ".bugbout").glob("events-*.jsonl")
    assert '"outcome":"stopped"' in stopped.read_text()
    journal = (project / ".bugbout" / "events.jsonl").read_text()
    assert '"outcome":"done"' in journal


async def test_watch_follows_a_bout_run_by_another_process(
    project_template: Path, tmp_path: Path, home: Path
) -> None:
    slow = [sys.executable, str(AGENTS / "scripted.py"), "slow", "{workdir}"]
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1", "calc-2"],
        extra=contestant("editor", slow),
    )  # fmt: skip
    config_before = (project / "bugbout.toml").read_text()
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
        while not (project / ".bugbout" / "events.jsonl").exists():
            assert time.monotonic() < deadline, "the run never wrote its journal"
            assert run.poll() is None, run.stderr.read() if run.stderr else ""
            time.sleep(0.05)

        app = calc_app(project, watch=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: phase(app, "calc-2/editor") == "running",
                        "the first attempt to run", 60)  # fmt: skip
            await until(pilot, lambda: app.outputs.count("calc-2/editor") > 0,
                        "its output", 30)  # fmt: skip
            assert app.current_mode == "race"
            header = str(app.screen.query_one("StatusHeader").render())
            assert "following" in header and "read-only" in header
            await until(pilot, lambda: phase(app, "calc-1/editor") == "finished",
                        "the last attempt to finish", 60)  # fmt: skip
            await until(pilot, lambda: app.state.outcome == "done", "the run to end", 30)
            await until(pilot, lambda: app.records.attempt("calc-1", "editor") is not None,
                        "the store to be read again", 10)  # fmt: skip
            assert phase(app, "calc-2/editor") == "finished"
            # The followed process gone and the store free, the view is no longer read-only.
            await until(pilot, lambda: not app.session.watching, "read-only to end", 30)
            assert app.engine is None
        assert run.wait(timeout=60) == 0, run.stderr.read() if run.stderr else ""
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert (project / "bugbout.toml").read_text() == config_before
