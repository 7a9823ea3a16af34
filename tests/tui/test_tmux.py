"""The real terminal: `bugbout-tui --demo` in tmux, visited screen by screen with keys.

tmux gives the app a real terminal of 120 × 40; the test reads the screen back as text,
as a person would see it. COLUMNS and LINES are dropped from the app's environment: where
a CI runner sets them, they would override the terminal's own size.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Terminal:
    """One detached tmux session running a command."""

    def __init__(self, name: str, command: list[str], env: dict[str, str]) -> None:
        self.name = name
        exports = " ".join(f"{key}={value}" for key, value in env.items())
        script = (
            f"env -u COLUMNS -u LINES {exports} {' '.join(command)};"
            " echo BUGBOUT-TUI-EXITED $?; sleep 60"
        )
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", script],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip

    def press(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen shows:\n{screen}")
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    env = {
        "BUGBOUT_HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
    }
    command = [sys.executable, "-m", "bugbout_tui.tui", "--demo", str(tmp_path / "demo")]
    session = Terminal(f"bugbout-tui-{os.getpid()}", command, env)
    try:
        yield session
    finally:
        session.close()


def test_the_demo_runs_live_and_every_screen_can_be_visited(terminal: Terminal) -> None:
    first = terminal.wait_for("● running", 120)
    assert "3 Race" in first
    terminal.wait_for("lane-a", 240)
    race = terminal.wait_for("▶", 120)
    assert "running" in race and "queued" in race

    terminal.press("2")
    tasks = terminal.wait_for("funnel", 20)
    assert "changes examined" in tasks and "Issue #" in tasks

    terminal.press("1")
    config = terminal.wait_for("[[contestants]]", 20)
    assert "what it is for, or what is wrong" in config

    terminal.press("4")
    terminal.wait_for("4 Matrix", 20)
    terminal.press("5")
    verdicts = terminal.wait_for("policy", 20)
    assert "majority" in verdicts
    terminal.press("6")
    terminal.wait_for("6 Report", 20)

    terminal.press("3", "Tab", "Enter")
    detail = terminal.wait_for("esc returns", 20)
    assert "Summary" in detail and "Patch" in detail and "Prompt" in detail
    terminal.press("Escape")
    terminal.wait_for("Retry failed", 20)
    terminal.press("q")
    ended = terminal.wait_for("BUGBOUT-TUI-EXITED", 60)
    assert "BUGBOUT-TUI-EXITED 0" in ended
