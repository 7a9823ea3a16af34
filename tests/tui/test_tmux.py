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

    def wait_for(self, *texts: str, timeout: float) -> str:
        """The screen once it shows every one of `texts` (a capture may catch a frame
        half drawn, so each is waited for, not asserted after the first)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{texts!r} never appeared; the screen shows:\n{screen}")
            time.sleep(0.2)

    def wait_for_one_of(self, *texts: str, timeout: float) -> str:
        """The first of `texts` the screen shows."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            for text in texts:
                if text in screen:
                    return text
            if time.monotonic() > deadline:
                raise AssertionError(f"none of {texts!r} appeared; the screen shows:\n{screen}")
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
    terminal.wait_for("● running", "3 Race", timeout=120)
    terminal.wait_for("lane-a", timeout=240)
    terminal.wait_for("▶", "running", "queued", timeout=120)
    # The head's second line, lane-a running two at once: a head cut to one line hid it.
    terminal.wait_for("(+1 more)", timeout=120)

    terminal.press("2")
    terminal.wait_for("funnel", "changes examined", "Issue #", timeout=20)

    terminal.press("1")
    terminal.wait_for("[tasks]", "reruns", "what it is for, or what is wrong", timeout=20)

    terminal.press("4")
    terminal.wait_for("4 Matrix", timeout=20)
    terminal.press("5")
    terminal.wait_for("policy", "majority", timeout=20)
    terminal.press("6")
    terminal.wait_for("6 Report", timeout=20)

    terminal.press("3")
    terminal.wait_for("lane-a", timeout=20)
    terminal.press("Enter")  # the first lane has the keys: its highlighted attempt opens
    terminal.wait_for("esc returns", "Summary", "Patch", "Prompt", timeout=20)
    terminal.press("Escape")
    terminal.wait_for("Open attempt", timeout=20)  # back on the race board
    terminal.press("q")
    # While the demo's bout still runs, quitting asks first; enter answers "Stop and quit".
    asked = "Stop the bout and quit?"
    if terminal.wait_for_one_of(asked, "BUGBOUT-TUI-EXITED", timeout=60) == asked:
        terminal.press("Enter")
    ended = terminal.wait_for("BUGBOUT-TUI-EXITED", timeout=60)
    assert "BUGBOUT-TUI-EXITED 0" in ended
