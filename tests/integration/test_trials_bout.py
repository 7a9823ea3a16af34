"""A whole bout with `trials = 3`: every trial raced, cross-examined, judged and scored,
and pass@1, pass@3, pass^3 and consistency per agent in every form of the report.

Two contestants on two tasks of `racekit`'s calc project, in one lane so a task's trials
run in order: `right` fixes every time; `sometimes` fixes on its first and third trial
and makes a wrong fix on its second (`tests/agents/trialfix.py`). By hand:

| agent | resolved | pass@1 | pass@3 | pass^3 | consistency |
|---|---|---|---|---|---|
| right | 6 of 6 | 100% | 100% | 100% | 100% of 2 tasks |
| sometimes | 4 of 6 | 67% | 100% (1 − C(1,3)/C(3,3)) | 0% (C(2,3) = 0) | 0% of 2 tasks |
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from racekit import PYTHON, contestant, copy_project, script

from bugbout_tui.core.models import Matrix
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.report import Report
from bugbout_tui.tui.main import make_app
from bugbout_tui.tui.matrix_view import matrix_grid
from bugbout_tui.tui.screens.report import ReportScreen

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("home")]

TASKS = ("calc-1", "calc-2")
TRIALS = ["", "#2", "#3"]


def agents(state: Path) -> str:
    return "".join(
        contestant(
            style,
            script("trialfix", style, str(state), "{prompt_file}", "{workdir}"),
            quota="lane",
            state_dirs=[str(state)],
        )
        for style in ("right", "sometimes")
    )


@pytest.fixture
def bout(project_template: Path, tmp_path: Path, state: Path) -> Path:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=TASKS, run="trials = 3\n", extra=agents(state)
    )
    Bout(Project.load(project)).run()
    return project


def test_a_three_trial_bout_reports_pass_at_k_pass_hat_k_and_consistency(bout: Path) -> None:
    store = bout / ".bugbout"
    # Cross-examination: every trial's patch is a tree and every trial's tests an author;
    # the matrix screen pools an agent's trials in one column.
    for task in TASKS:
        matrix = Matrix.model_validate_json((store / "matrices" / f"{task}.json").read_text())
        names = [f"{agent}{t}" for agent in ("right", "sometimes") for t in TRIALS]
        assert sorted(p.contestant for p in matrix.patches) == sorted(names)
        assert sorted(a.name for a in matrix.authors if a.kind == "contestant") == sorted(names)
        assert [a.name for a in matrix_grid(matrix).authors] == ["right", "sometimes", "suite"]

    data = json.loads((store / "report.json").read_text())
    rows = {row["agent"]: row for row in data["trials"]["rows"]}
    assert {name: figures(row) for name, row in rows.items()} == {
        "right": (3, 6, 6, 1.0, 1.0, 1.0, 1.0),
        "sometimes": (3, 4, 6, pytest.approx(2 / 3), 1.0, 0.0, 0.0),
    }
    # The judge picks a resolving patch on both tasks, as does always taking `right`.
    majority = next(p for p in data["picking"]["policies"] if p["policy"] == "majority")
    assert majority["right"] == 2
    assert majority["versus_best"]["test"] == "sign-flip"
    assert (majority["versus_best"]["difference"], majority["versus_best"]["p_value"]) == (0, 1)

    markdown = (store / "report.md").read_text()
    assert "| Agent | Trials | Resolved, all trials | pass@1 | pass@3 | pass^3 | Consistency |" in (
        markdown
    )
    assert "| sometimes | 3 | 4 of 6, 67% " in markdown

    terminal = subprocess.run(
        [PYTHON, "-m", "bugbout_tui", "report"],
        cwd=bout,
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(bout)},
    ).stdout
    for heading in ("Repeated trials", "pass@1", "pass@3", "pass^3", "Consistency"):
        assert heading in terminal, heading

    # The Report screen draws the same report (`render_terminal`) from the same store.
    report = asyncio.run(report_screen(bout))
    assert report is not None and report.trials is not None
    assert [row.agent for row in report.trials.rows] == ["right", "sometimes"]


def figures(row: dict[str, Any]) -> tuple[Any, ...]:
    at = {item["k"]: item["value"] for item in row["pass_at"]}
    every = {item["k"]: item["value"] for item in row["pass_hat"]}
    return (
        row["trials"],
        row["resolved_trials"],
        row["scored_trials"],
        at[1],
        at[3],
        every[3],
        row["consistency"],
    )


async def report_screen(root: Path) -> Report | None:
    """The Report screen's report, as a person opens it."""
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("6")
        for _ in range(400):
            if isinstance(app.screen, ReportScreen) and app.screen.report is not None:
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, ReportScreen)
        return app.screen.report
