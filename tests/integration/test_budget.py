"""Budgets and the estimate on a real race: scripted agents in the sandbox, real records.

A budget is counted over the bout's stored attempts; a lane stops starting an agent's
attempts once the next one would pass it, records them as `budget`, and goes on with
its other agents. The estimate before the race names exactly the attempts that start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from racekit import TASKS, attempt, copy_project, edit_agent, journal, race, reconfigure, starts

from bugbout_tui.core.events import AttemptFinished, AttemptStarted, RaceEstimated
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report
from bugbout_tui.report import render_json, render_markdown

pytestmark = pytest.mark.usefixtures("home")


def budgeted(name: str, state: Path, budget: str | None, *, quota: str = "lane") -> str:
    entry = edit_agent(name, state / name, quota=quota)
    (state / name).mkdir(exist_ok=True)
    return entry + (f"budget = {json.dumps(budget)}\n" if budget else "")


def statuses(project: Path, name: str) -> Counter[str]:
    return Counter(attempt(project, task, name).status for task in TASKS)


def test_an_agents_budget_stops_it_mid_lane_and_the_lane_goes_on(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    agents = budgeted("thrifty", state, "2 attempts") + budgeted("free", state, None)
    project = copy_project(project_template, tmp_path / "proj", tasks=TASKS, extra=agents)

    events = race(project)

    assert statuses(project, "thrifty") == Counter(finished=2, budget=2)
    assert statuses(project, "free") == Counter(finished=4)
    assert len(starts(state / "thrifty" / "count")) == 2
    assert len(starts(state / "free" / "count")) == 4
    (stopped, _) = [
        a for task in TASKS if (a := attempt(project, task, "thrifty")).status == "budget"
    ]
    assert stopped.detail is not None
    assert "the budget 2 attempts of thrifty would be passed: 2 run" in stopped.detail
    assert stopped.logdir == "" and not stopped.scorable
    finished = [e for e in events if isinstance(e, AttemptFinished) and e.status == "budget"]
    assert sorted(e.attempt for e in finished) == sorted(f"{a.task}/thrifty" for a in [stopped, _])

    # Resuming does not reset what was spent: nothing of thrifty starts again ...
    race(project)
    assert statuses(project, "thrifty") == Counter(finished=2, budget=2)
    assert len(starts(state / "thrifty" / "count")) == 2
    # ... until its budget allows one more, which a later run then starts.
    agents = budgeted("thrifty", state, "3 attempts") + budgeted("free", state, None)
    reconfigure(project, tasks=TASKS, extra=agents)
    race(project)
    assert statuses(project, "thrifty") == Counter(finished=3, budget=1)
    assert len(starts(state / "thrifty" / "count")) == 3
    assert len(starts(state / "free" / "count")) == 4

    report = load_report(Project.load(project))
    (stop,) = report.cost.budget_stops
    assert (stop.name, stop.attempts) == ("thrifty", 1)
    assert stop.reason.startswith("the budget 3 attempts of thrifty would be passed")
    assert "thrifty" in render_markdown(report) and '"budget_stops"' in render_json(report)


def test_the_bouts_budget_counts_every_agent_and_stops_the_rest(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    agents = budgeted("one", state, None) + budgeted("two", state, None)
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=TASKS,
        run='budget = "5 attempts"\n',
        extra=agents,
    )

    race(project)

    # one lane, task by task, one then two: five start, then the budget stops the rest
    assert statuses(project, "one") == Counter(finished=3, budget=1)
    assert statuses(project, "two") == Counter(finished=2, budget=2)
    details = {attempt(project, task, "two").detail for task in TASKS} - {None}
    assert details == {"the bout's budget 5 attempts would be passed: 5 run"}


def test_the_estimate_names_the_attempts_the_race_starts(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    agents = budgeted("a", state, None, quota="x") + budgeted("b", state, None, quota="y")
    project = copy_project(project_template, tmp_path / "proj", tasks=TASKS[:3], extra=agents)
    before = Bout(Project.load(project)).estimate()
    assert (before.tasks, before.attempts) == (3, 6)
    assert {a.name: (a.attempts, a.stored, a.basis) for a in before.agents} == {
        "a": (3, 0, "default"),
        "b": (3, 0, "default"),
    }

    events = race(project)

    started = [e for e in events if isinstance(e, AttemptStarted)]
    (said,) = [e for e in events if isinstance(e, RaceEstimated)]
    assert events.index(said) < events.index(started[0])
    assert said.estimate.attempts == len(started) == before.attempts == 6
    assert isinstance(journal(project)[-1], type(events[-1]))
    assert any(isinstance(e, RaceEstimated) for e in journal(project))

    # With the race done, the next run has nothing to start, and the figures per
    # attempt are now this project's own.
    after = Bout(Project.load(project)).estimate()
    assert after.attempts == 0
    assert {a.name: (a.stored, a.basis, a.history) for a in after.agents} == {
        "a": (3, "history", 3),
        "b": (3, "history", 3),
    }
    # One more task: exactly its two attempts are to run.
    reconfigure(project, tasks=TASKS, extra=agents)
    more = Bout(Project.load(project)).estimate()
    assert more.attempts == 2
    events = race(project)
    assert Counter(type(e) for e in events)[AttemptStarted] == 2


def test_bugbout_run_estimate_prints_and_starts_nothing(
    project_template: Path, tmp_path: Path, state: Path, home: Path
) -> None:
    agents = budgeted("a", state, "1 attempts")
    project = copy_project(project_template, tmp_path / "proj", tasks=TASKS, extra=agents)
    result = subprocess.run(
        [sys.executable, "-m", "bugbout_tui", "run", "--estimate"],
        cwd=project,
        capture_output=True,
        text=True,
        env={"BUGBOUT_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Estimate: 4 attempts to run on 4 tasks" in result.stdout
    assert "it stops this agent after about 1 of its 4 attempts" in result.stdout
    assert not (project / ".bugbout" / "attempts").exists()
    assert starts(state / "a" / "count") == []
