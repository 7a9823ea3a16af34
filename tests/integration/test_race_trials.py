"""Repeated trials in the race: each trial an attempt of its own, stored, resumed and
raised or lowered without running anything twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from racekit import attempt, copy_project, edit_agent, race, reconfigure, records, starts

from bugbout_tui.core.events import AttemptQueued
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

pytestmark = pytest.mark.usefixtures("home")

TASKS = ("calc-1", "calc-2")


def agents(state: Path) -> str:
    """Two agents sharing one quota lane, so the order they run in is the order queued."""
    return edit_agent("alpha", state, quota="lane") + edit_agent("beta", state, quota="lane")


def test_each_trial_is_its_own_attempt_in_a_fair_order(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=TASKS, run="trials = 2\n", extra=agents(state)
    )
    events = race(project)

    queued = [e.attempt for e in events if isinstance(e, AttemptQueued)]
    order = list(dict.fromkeys(name.split("/")[0] for name in queued))
    assert sorted(order) == sorted(TASKS)
    assert queued == [
        f"{task}/{name}"
        for task in order
        for name in ("alpha", "beta", "alpha#2", "beta#2")  # task, then trial, then agent
    ]
    # One lane runs them one at a time in that order; each in a folder of its own.
    ran = starts(state / "count")
    assert ran == [
        (task, folder) for task in order for folder in ("alpha", "beta", "alpha+232", "beta+232")
    ]
    for task in TASKS:
        found = [attempt(project, task, name) for name in ("alpha", "alpha#2", "beta", "beta#2")]
        assert [a.contestant for a in found] == ["alpha", "alpha#2", "beta", "beta#2"]
        assert all(a.status == "finished" for a in found)
        # A fresh checkout every time: each trial's patch is the one edit, not two.
        assert len({a.patch.source for a in found}) == 1
        assert found[0].patch.source.count("# looked at this") == 1
        folders = {Path(a.logdir).parent for a in found}
        assert len(folders) == 4 and all((f / "home").is_dir() for f in folders)


def test_raising_trials_runs_only_the_new_ones_and_lowering_keeps_the_stored(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=TASKS, extra=agents(state))
    race(project)
    assert len(starts(state / "count")) == 4
    before = records(project)

    reconfigure(project, tasks=TASKS, run="trials = 2\n", extra=agents(state))
    race(project)
    # Only the second trials ran (their folders are the quoted names `alpha#2`, ...).
    assert sorted(starts(state / "count")[4:]) == [
        (task, f"{name}+232") for task in sorted(TASKS) for name in ("alpha", "beta")
    ]
    after = records(project)
    assert {path: after[path] for path in before} == before  # the first trials untouched
    assert len(after) == 8

    # Lowered again: nothing runs, and every stored trial stays in the bout.
    reconfigure(project, tasks=TASKS, extra=agents(state))
    bout = Bout(Project.load(project))
    bout.run(until="race")
    assert len(starts(state / "count")) == 8
    assert records(project) == after
    assert {task: sorted(a.contestant for a in found) for task, found in bout.attempts.items()} == {
        task: ["alpha", "alpha#2", "beta", "beta#2"] for task in TASKS
    }
