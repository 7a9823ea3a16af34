"""Every way bugbout-tui ends on an error ends with its exit code: 2 for a usage
error, 1 for a failure, never 0.

Exits before the interface starts are checked through the real command; exits from
inside the app through the app's return code, which `main` returns.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tuiapp import calc_app, settle

from bugbout_tui.tui.widgets.dialogs import Choice


def tui(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout_tui.tui", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=120,
    )


def test_an_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    done = tui("--no-such-option", cwd=tmp_path)
    assert done.returncode == 2
    assert "--no-such-option" in done.stderr


def test_a_demo_that_cannot_be_built_exits_2_before_the_interface(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    done = tui("--demo", "a-file", cwd=tmp_path)
    assert done.returncode == 2
    assert "is a file" in done.stderr
    assert "Traceback" not in done.stderr


async def test_declining_to_write_a_bugbout_toml_exits_2(tmp_path: Path) -> None:
    app = calc_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, Choice)
        app.screen.query_one("#cancel").press()
        await settle(pilot)
    assert app.return_code == 2


async def test_a_bugbout_toml_that_cannot_be_written_exits_with_its_code(tmp_path: Path) -> None:
    app = calc_app(tmp_path)  # no package to name: `bugbout init` refuses as well
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, Choice)
        app.screen.query_one("#write").press()
        await settle(pilot)
        await settle(pilot)
    assert app.return_code == 2


async def test_a_project_that_cannot_be_opened_exits_with_its_code(tmp_path: Path) -> None:
    (tmp_path / "bugbout.toml").mkdir()
    app = calc_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
    assert app.return_code == 2
