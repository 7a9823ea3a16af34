"""`[run] stop-when-decided` for real: the race stops starting tasks once it is decided.

Two contestants share one lane on the template project (`racekit`): `fixer` fixes every
bug and `never` only adds a comment. Each task is scored as its two attempts are
recorded; at the level 0.5 the four tasks allow (Pocock's level for four looks is 0.5
there, so two tasks all one way decide), the pair is decided after the second task, and
the last two never start. The statistics themselves are tested in
`tests/unit/test_sequential.py`; this is the engine around them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from racekit import (
    TASKS,
    attempt,
    contestant,
    copy_project,
    edit_agent,
    journal,
    race,
    records,
    script,
    starts,
)

from bugbout_tui.core import events as ev
from bugbout_tui.core.events import AttemptQueued, BaseEvent, BoutDecided, StageStarted
from bugbout_tui.core.models import ResolutionSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report
from bugbout_tui.report import render_markdown

pytestmark = pytest.mark.usefixtures("home")

DECIDED = ("calc-4", "calc-3")
"""Tasks are raced newest first: the first two."""
LEFT = ("calc-2", "calc-1")


def _project(template: Path, root: Path, state: Path) -> Path:
    fixer = contestant(
        "fixer",
        script("calcfix", "--count", str(state / "count"), "{prompt_file}", "{workdir}"),
        state_dirs=[str(state)],
    )
    return copy_project(
        template,
        root,
        tasks=TASKS,
        run="stop-when-decided = true\ndecided-at = 0.5\n",
        extra=fixer + edit_agent("never", state),
    )


def _scores(project: Path) -> dict[str, dict[str, str]]:
    stored = ResolutionSet.model_validate_json(
        (project / ".bugbout" / "resolutions.json").read_text()
    )
    return {
        task: {name: score.status for name, score in by_name.items()}
        for task, by_name in stored.patches.items()
    }


def test_the_race_stops_starting_tasks_once_every_pair_is_decided(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = _project(project_template, tmp_path / "proj", state)
    events = race(project)

    assert sorted(starts(state / "count")) == sorted(
        (task, name) for task in DECIDED for name in ("fixer", "never")
    )
    (decided,) = [e for e in events if isinstance(e, BoutDecided)]
    assert (decided.after, decided.tasks_done, decided.tasks, decided.level) == (
        "calc-3",
        2,
        4,
        0.5,
    )
    assert decided.pairs == ["fixer ahead of never: 2 to 0, p = 0.5"]
    assert decided.withdrawn == [f"{t}/{n}" for t in LEFT for n in ("fixer", "never")]
    # The tasks not raced have no record: nothing ran, so nothing is kept.
    assert {path.parent.name for path in records(project)} == set(DECIDED)
    assert _scores(project) == {
        task: {"fixer": "resolved", "never": "wrong-fix"} for task in DECIDED
    }
    assert attempt(project, "calc-3", "never").status == "finished"

    # The score stage finds the race's scores and makes none of them again.
    bout = Bout(Project.load(project))
    later: list[BaseEvent] = []
    bout.subscribe(later.append)
    bout.run(until="score")
    score = next(
        i for i, e in enumerate(later) if isinstance(e, StageStarted) and e.stage == "score"
    )
    runs = [(e.task, e.label) for e in later[score:] if isinstance(e, ev.TestRunStarted)]
    # Only the gold controls of the tasks not raced are new; no patch is scored twice.
    assert sorted(runs) == sorted((task, "gold") for task in LEFT)
    assert not [e for e in later if isinstance(e, AttemptQueued)]
    assert _scores(project) == {
        task: {"fixer": "resolved", "never": "wrong-fix"} for task in DECIDED
    }

    # The report says where it stopped, which pair was decided, and what was not started.
    report = load_report(Project.load(project))
    stopping = report.stopping
    assert stopping is not None
    assert (stopping.decided_after, stopping.decided_tasks, stopping.tasks) == ("calc-3", 2, 4)
    assert (stopping.level, stopping.nominal) == (0.5, 0.5)
    ((pair),) = stopping.pairs
    assert (pair.ahead, pair.behind, pair.ahead_only, pair.behind_only) == ("fixer", "never", 2, 0)
    assert stopping.not_started_tasks == list(LEFT)
    assert [(n.agent, n.attempts) for n in stopping.not_started] == [("fixer", 2), ("never", 2)]
    assert report.picking.raced_tasks == 2
    assert "## Stopping once decided" in render_markdown(report)
    assert "The bout was decided after task `calc-3` (2 of 4)" in render_markdown(report)


def test_a_restart_of_a_decided_bout_starts_nothing_and_scores_what_was_not(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = _project(project_template, tmp_path / "proj", state)
    race(project)
    before = records(project)
    # As if the run had been killed after the attempts were recorded, before any score.
    (project / ".bugbout" / "resolutions.json").unlink()

    events = race(project)

    assert len(starts(state / "count")) == 4
    assert records(project) == before
    assert not [e for e in events if isinstance(e, AttemptQueued)]
    (decided,) = [e for e in events if isinstance(e, BoutDecided)]
    assert decided.after == "calc-3"
    assert _scores(project) == {
        task: {"fixer": "resolved", "never": "wrong-fix"} for task in DECIDED
    }
    assert [e for e in journal(project) if isinstance(e, BoutDecided)] == [decided]
