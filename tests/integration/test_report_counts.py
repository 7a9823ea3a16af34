"""Which tasks a real bout's report counts: only those a contestant was given and ran on.

The calc project (see `racekit`) has five scored tasks; `calc-5` has no issue text. One
contestant on a plan that runs out races `calc-1`, then, its plan spent, `calc-2`;
`calc-3` and `calc-4` are never accepted under `require-review`. Only `calc-1` says
anything about the agent or the judge, so every figure counts over it alone, and the
funnel says where each of the other four went.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from racekit import NO_TEXT, contestant, copy_project, reconfigure, script

from bugbout_tui.core.events import StageFinished
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

# a whole bout, ground truth excepted
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("home")]


def test_the_report_counts_only_the_tasks_a_contestant_ran_on(
    project_template: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    spent = state / "spent"
    command = script("rationed", str(state / "count"), str(spent), "{workdir}")
    agent = contestant("rationed", command, state_dirs=[str(state)])
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1", NO_TEXT], extra=agent
    )
    Bout(Project.load(project)).run(until="race")
    spent.touch()
    reconfigure(project, tasks=["calc-1", "calc-2", NO_TEXT], extra=agent)
    bout = Bout(Project.load(project))
    finished: dict[str, str] = {}
    bout.subscribe(
        lambda event: (
            finished.update({event.stage: event.summary})
            if isinstance(event, StageFinished)
            else None
        )
    )
    report = bout.run()
    assert report is not None
    # What the run says as it goes counts the same tasks as the report.
    assert finished["judge"] == "0 of 1 tasks with a patch picked under majority"

    picking = report.picking
    assert picking.best_agent_rate is not None
    assert {
        picking.best_agent_rate.n,
        picking.random_agent.n,
        picking.oracle.n,
        *(side.rate.n for side in picking.policies),
    } == {1}
    assert report.agents.raced_tasks == picking.raced_tasks == 1
    (row,) = report.agents.rows
    assert (row.quota, row.missing) == (0, 0)  # calc-2's quota is not in the table either
    funnel = report.funnel
    assert (funnel.kept, funnel.scored, funnel.raced) == (5, 3, 1)
    assert {g.reason: g.tasks for g in funnel.set_aside} == {
        "awaiting your review": ["calc-4", "calc-3"]
    }
    assert {g.reason: g.tasks for g in funnel.not_raced} == {
        "no issue text": [NO_TEXT],
        "every contestant's attempt hit a usage limit": ["calc-2"],
    }
    assert [row.task for row in report.tasks if row.raced] == ["calc-1"]
    markdown = (project / ".bugbout" / "report.md").read_text()
    assert f"| Not raced: no issue text ({NO_TEXT}) | 1 |" in markdown
    assert "| Raced: the tasks every figure counts | 1 |" in markdown
