"""Usage windows for real: a scripted agent on a spent plan, as a real process in the
sandbox, whose lane waits for the reset its message names (under a clock whose hours
take milliseconds) and resumes, in one run or across a restart."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fakeclock import START, FakeClock
from racekit import attempt, contestant, copy_project, edit_agent, script, starts

from bugbout_tui.core.events import (
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    QuotaParked,
    QuotaResumed,
)
from bugbout_tui.core.models import LaneWindows
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

pytestmark = pytest.mark.usefixtures("home")

TASKS = ["calc-1", "calc-2", "calc-3"]
RESETS = START + timedelta(hours=3)
"""The rationed agent says "Try again in 3 hours", counted from when it said so."""


def rationed_project(template: Path, root: Path, state: Path, *, wait: str | None) -> Path:
    """A bout whose `rationed` contestant is out of quota while `state/spent` exists;
    `steady` runs in a lane of its own."""
    (state / "spent").touch()
    command = script("rationed", str(state / "rationed-count"), str(state / "spent"), "{workdir}")
    return copy_project(
        template,
        root,
        tasks=TASKS,
        run=f'wait-for-quota = "{wait}"\n' if wait else "",
        extra=contestant("rationed", command, quota="plan", state_dirs=[str(state)])
        + edit_agent("steady", state, quota="own"),
    )


def race(project: Path, clock: FakeClock, *, retry_failed: bool = False) -> list[BaseEvent]:
    bout = Bout(Project.load(project), retry_failed=retry_failed, clock=clock)
    events: list[BaseEvent] = []
    bout.subscribe(events.append)
    bout.run(until="race")
    return events


def windows(project: Path) -> LaneWindows:
    path = project / ".bugbout" / "lanes.json"
    return LaneWindows.model_validate_json(path.read_text()) if path.exists() else LaneWindows()


def resetting_clock(state: Path, start: datetime) -> tuple[FakeClock, list[int]]:
    """A fake clock at `start` whose plan refills as it reaches the reset, noting how
    many times the rationed agent had been started by then."""
    started_before: list[int] = []

    def wake(moment: datetime) -> None:
        if moment >= RESETS:
            started_before.append(len(starts(state / "rationed-count")))
            (state / "spent").unlink(missing_ok=True)

    return FakeClock(start, on_wake=wake), started_before


def test_a_lane_waits_for_the_reset_its_agent_names_and_resumes_by_itself(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = rationed_project(project_template, tmp_path / "proj", state, wait="6h")
    clock, started_before = resetting_clock(state, START)
    events = race(project, clock)

    # one start hit the limit; the lane waited for the reset, then ran all three
    assert started_before == [1]
    rationed = [task for task, _ in starts(state / "rationed-count")]
    assert len(rationed) == 4 and rationed[0] == rationed[1]
    assert all(attempt(project, task, "rationed").status == "finished" for task in TASKS)
    assert all(attempt(project, task, "steady").status == "finished" for task in TASKS)
    assert len(starts(state / "count")) == 3  # nothing finished ran twice
    assert clock.slept == [RESETS]
    (parked,) = [e for e in events if isinstance(e, QuotaParked)]
    assert (parked.quota, parked.resets_at, parked.resumes_at) == ("plan", RESETS, RESETS)
    (resumed,) = [e for e in events if isinstance(e, QuotaResumed)]
    assert resumed.quota == "plan"
    hit = f"{rationed[0]}/rationed"
    queued = [e.attempt for e in events if isinstance(e, AttemptQueued)]
    assert queued.count(hit) == 2, "the attempt that hit the limit waits in its lane again"
    assert events.index(parked) < events.index(resumed)
    after = [
        e.attempt
        for e in events[events.index(resumed) :]
        if isinstance(e, AttemptStarted) and e.attempt.endswith("/rationed")
    ]
    assert after[0] == hit, "it runs first once the lane resumes"
    assert windows(project).lanes == {}, "a window that reopened is forgotten"


def test_a_run_started_while_a_window_is_closed_waits_or_skips_without_starting_an_agent(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    # The first run does not wait: the lane parks and its window is kept.
    project = rationed_project(project_template, tmp_path / "proj", state, wait=None)
    race(project, FakeClock(START))
    assert len(starts(state / "rationed-count")) == 1
    (kept,) = windows(project).lanes.items()
    assert kept[0] == "plan" and kept[1].resets_at == RESETS
    assert "hit your usage limit" in kept[1].message

    # Restarted an hour later, even asked to retry: no agent is started to find out.
    retried = race(project, FakeClock(START + timedelta(hours=1)), retry_failed=True)
    assert len(starts(state / "rationed-count")) == 1
    assert not [e for e in retried if isinstance(e, AttemptStarted) and "rationed" in e.attempt]
    for task in TASKS:
        record = attempt(project, task, "rationed")
        assert record.status == "quota"
        assert record.detail is not None
        assert record.detail.startswith("not started: the plan usage window is closed until ")
        assert record.resets_at == RESETS
    (parked,) = [e for e in retried if isinstance(e, QuotaParked)]
    assert parked.resets_at == RESETS and parked.resumes_at is None

    # Restarted with wait-for-quota: it waits for the reset, then runs them all.
    text = (project / "bugbout.toml").read_text()
    (project / "bugbout.toml").write_text(
        text.replace("[run]\n", '[run]\nwait-for-quota = "6h"\n', 1)
    )
    clock, started_before = resetting_clock(state, START + timedelta(hours=1))
    events = race(project, clock)
    assert started_before == [1], "no agent was started before the reset"
    assert clock.slept == [RESETS]
    assert len(starts(state / "rationed-count")) == 4
    assert all(attempt(project, task, "rationed").status == "finished" for task in TASKS)
    assert [e.quota for e in events if isinstance(e, QuotaResumed)] == ["plan"]
    assert windows(project).lanes == {}


def test_a_window_that_has_passed_is_forgotten_and_the_lane_runs(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = rationed_project(project_template, tmp_path / "proj", state, wait=None)
    race(project, FakeClock(START))
    (state / "spent").unlink()
    events = race(project, FakeClock(RESETS + timedelta(seconds=1)), retry_failed=True)
    assert not [e for e in events if isinstance(e, QuotaParked)]
    assert all(attempt(project, task, "rationed").status == "finished" for task in TASKS)
    assert windows(project).lanes == {}
