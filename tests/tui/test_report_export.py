"""The Report screen and its export show what `bugbout report` shows: the store's
records, whatever the config says about who races now."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tuiapp import on_screen, press_and_settle

from bugbout_tui.tui.screens.config import ConfigScreen
from bugbout_tui.tui.screens.report import ReportScreen


def bugbout_report(project: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "bugbout_tui", "-C", str(project), "report", "--format",
         "markdown"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip


async def test_an_agent_taken_out_of_the_config_stays_in_the_exported_report(
    calc: Path,
) -> None:
    before = bugbout_report(calc)
    assert "hasty" in before
    async with on_screen(calc, "1", ConfigScreen) as (app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("contestants[1]"))
        await press_and_settle(pilot, "delete", "ctrl+s")
        assert 'name = "hasty"' not in (calc / "bugbout.toml").read_text()
        await press_and_settle(pilot, "6")
        report = app.screen
        assert isinstance(report, ReportScreen)
        assert report.report is not None
        assert "hasty" in [row.name for row in report.report.agents.rows]
        await press_and_settle(pilot, "e")
    exported = (calc / ".bugbout" / "report.md").read_text()
    assert exported == bugbout_report(calc)
    agents = json.loads((calc / ".bugbout" / "report.json").read_text())["agents"]["rows"]
    assert [row["name"] for row in agents] == ["careful", "slow", "rationed", "hasty"]
