"""The race for real: `command` contestants as real processes in bubblewrap, on real git.

Each test races a copy of one small project (see `racekit`) whose ground truth was
established once per session, with agents from `tests/agents/`.
"""

from __future__ import annotations

import subprocess
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from projects import write_issues
from racekit import (
    NO_TEXT,
    PYTHON,
    alive,
    attempt,
    contestant,
    copy_project,
    edit_agent,
    race,
    reconfigure,
    records,
    report,
    script,
    starts,
)

from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    QuotaParked,
)
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import CANCELLED

pytestmark = pytest.mark.usefixtures("home")


def at_once(events: Sequence[BaseEvent]) -> list[dict[str, int]]:
    """How many attempts of each lane ran after each event, replayed in emission order.

    The engine emits from one event loop, so the order of events is the order things
    happened: an attempt runs from its `AttemptStarted` to its `AttemptFinished`.
    """
    lane: dict[str, str] = {}
    running: dict[str, int] = {}
    moments = []
    for event in events:
        if isinstance(event, AttemptQueued):
            lane[event.attempt] = event.quota
        elif isinstance(event, AttemptStarted):
            running[lane[event.attempt]] = running.get(lane[event.attempt], 0) + 1
        elif isinstance(event, AttemptFinished):
            running[lane[event.attempt]] -= 1
        moments.append(dict(running))
    return moments


def test_lanes_run_side_by_side_each_within_its_capacity(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    contestants = "".join(
        edit_agent(f"pair-{n}", state, quota="pair", sleep=0.5) for n in (1, 2, 3)
    )
    contestants += edit_agent("solo", state, quota="solo", sleep=0.5)
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1", "calc-2"],
        run="quotas = { pair = 2 }\n",
        extra=contestants,
    )
    events = race(project)

    moments = at_once(events)
    most = {q: max(m.get(q, 0) for m in moments) for q in ("pair", "solo")}
    assert most == {"pair": 2, "solo": 1}
    assert any(m.get("pair", 0) and m.get("solo", 0) for m in moments), "lanes never overlapped"
    assert all(n == 0 for n in moments[-1].values())
    assert len(starts(state / "count")) == 8
    assert all(
        attempt(project, task, name).status == "finished"
        for task in ("calc-1", "calc-2")
        for name in ("pair-1", "pair-2", "pair-3", "solo")
    )


def test_an_agent_past_its_time_is_stopped_with_everything_it_started(
    project_template: Path, tmp_path: Path
) -> None:
    token = f"bugbout-race-hang-{tmp_path.name}"
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        run="timeout = 2\n",
        extra=contestant("hang", script("hang", token)),
    )
    events = race(project)

    record = attempt(project, "calc-1", "hang")
    assert record.status == "timeout"
    assert record.detail == "stopped after 2s"
    assert record.exit_code is None
    # the helper that ignored SIGTERM did start, and is gone with its parent
    assert "helper started" in (Path(record.logdir) / "stdout.log").read_text()
    assert not alive(token)
    (finished,) = [e for e in events if isinstance(e, AttemptFinished)]
    assert finished.status == "timeout"


def test_one_attempt_is_cancelled_running_or_queued_and_the_race_goes_on(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    token = f"bugbout-race-cancel-{tmp_path.name}"
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1", "calc-2"],
        run="timeout = 120\n",
        extra=contestant("hang", script("hang", token), quota="one")
        + edit_agent("later", state, quota="one"),
    )
    bout = Bout(Project.load(project))
    events: list[BaseEvent] = []
    answers: list[bool] = []
    hangs = {"calc-1/hang", "calc-2/hang"}

    def watch(event: BaseEvent) -> None:
        events.append(event)
        if isinstance(event, AttemptOutput) and event.attempt in hangs and not answers:
            # the helper that ignores SIGTERM is up: stop this one, and the queued one
            (queued,) = hangs - {event.attempt}
            answers.append(bout.cancel_attempt(event.attempt))
            answers.append(bout.cancel_attempt(queued))
            answers.append(bout.cancel_attempt("calc-9/nobody"))

    bout.subscribe(watch)
    bout.run(until="race")

    assert answers == [True, True, False]
    (first,) = [e.attempt for e in events if isinstance(e, AttemptStarted) and e.attempt in hangs]
    (second,) = hangs - {first}
    running = attempt(project, *first.split("/"))
    assert (running.status, running.detail, running.exit_code) == ("crashed", CANCELLED, None)
    assert running.patch.is_empty
    assert not alive(token)
    queued = attempt(project, *second.split("/"))
    assert (queued.status, queued.detail) == ("crashed", f"{CANCELLED} before it started")
    assert [attempt(project, t, "later").status for t in ("calc-1", "calc-2")] == ["finished"] * 2
    assert not bout.cancel_attempt("calc-1/later"), "no race is running any more"


def test_the_last_line_of_a_burst_shows_while_the_agent_is_silent(
    project_template: Path, tmp_path: Path
) -> None:
    quiet = 4.0
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=contestant("burst", script("burst", str(quiet))),
    )
    bout = Bout(Project.load(project))
    late: list[float] = []

    def watch(event: BaseEvent) -> None:
        if isinstance(event, AttemptOutput) and event.line.startswith("burst over at "):
            late.append(time.time() - float(event.line.removeprefix("burst over at ")))

    bout.subscribe(watch)
    bout.run(until="race")

    assert len(late) == 1, "the burst's last line was not shown once"
    assert late[0] < 1.0, f"shown {late[0]:.1f}s after it was printed, the agent silent"


def test_a_spent_quota_parks_its_lane_until_retried(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    spent = state / "spent"
    spent.touch()
    command = script("rationed", str(state / "rationed-count"), str(spent), "{workdir}")
    tasks = ["calc-1", "calc-2", "calc-3"]
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=tasks,
        extra=contestant("rationed", command, quota="plan", state_dirs=[str(state)])
        + edit_agent("steady", state, quota="own"),
    )
    events = race(project)

    (first,) = starts(state / "rationed-count")  # the lane stopped after one start
    attempts = {task: attempt(project, task, "rationed") for task in tasks}
    spent_on = attempts[first[0]]
    assert spent_on.status == "quota"
    assert "hit your usage limit" in (spent_on.detail or "")
    assert spent_on.exit_code == 1
    assert not spent_on.scorable
    for task in set(tasks) - {first[0]}:
        assert attempts[task].status == "quota"
        assert attempts[task].detail == "not started: the plan quota ran out earlier in this run"
        assert attempts[task].exit_code is None
    (parked,) = [e for e in events if isinstance(e, QuotaParked)]
    assert parked.quota == "plan"
    assert "hit your usage limit" in parked.message
    # the other lane is not held up by the spent one
    assert all(attempt(project, task, "steady").status == "finished" for task in tasks)

    stored = records(project)
    again = race(project)
    assert not [e for e in again if isinstance(e, AttemptStarted)]
    assert records(project) == stored
    assert len(starts(state / "rationed-count")) == 1

    # The plan is topped up before the three hours its agent named: the lane's window,
    # kept so that no run spends an attempt to find it closed, is forgotten by hand.
    spent.unlink()
    (project / ".bugbout" / "lanes.json").unlink()
    retried = race(project, retry_failed=True)
    assert sorted(e.attempt for e in retried if isinstance(e, AttemptStarted)) == [
        f"{task}/rationed" for task in tasks
    ]
    assert all(attempt(project, task, "rationed").status == "finished" for task in tasks)
    assert len(starts(state / "rationed-count")) == 4
    assert len(starts(state / "count")) == 3  # finished attempts never run twice


def test_a_new_contestant_runs_only_its_own_attempts(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    tasks = ["calc-1", "calc-2"]
    project = copy_project(
        project_template, tmp_path / "proj", tasks=tasks, extra=edit_agent("first", state)
    )
    race(project)
    before = records(project)
    assert sorted(starts(state / "count")) == [("calc-1", "first"), ("calc-2", "first")]

    reconfigure(
        project, tasks=tasks, extra=edit_agent("first", state) + edit_agent("second", state)
    )
    race(project)

    assert sorted(starts(state / "count")) == [
        ("calc-1", "first"),
        ("calc-1", "second"),
        ("calc-2", "first"),
        ("calc-2", "second"),
    ]
    after = records(project)
    assert {path: after[path] for path in before} == before
    assert all(attempt(project, task, "second").status == "finished" for task in tasks)


def test_a_task_without_issue_text_is_skipped_without_starting_an_agent(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=[NO_TEXT, "calc-1"],
        extra=edit_agent("one", state) + edit_agent("two", state, quota="other"),
    )
    events = race(project)

    started = sorted(e.attempt for e in events if isinstance(e, AttemptStarted))
    assert started == ["calc-1/one", "calc-1/two"]  # nothing said to start in a lane
    for name in ("one", "two"):
        record = attempt(project, NO_TEXT, name)
        assert record.status == "skipped"
        assert record.detail is not None
        assert record.detail.startswith("no issue text to give: issue #5 is not in the issues file")
        assert record.exit_code is None
        assert record.patch.is_empty
        assert not record.scorable
        assert attempt(project, "calc-1", name).status == "finished"
    assert sorted(starts(state / "count")) == [("calc-1", "one"), ("calc-1", "two")]


def test_a_skipped_task_races_once_its_issue_text_is_found(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=[NO_TEXT], extra=edit_agent("one", state)
    )
    race(project)
    assert attempt(project, NO_TEXT, "one").status == "skipped"
    race(project)
    assert attempt(project, NO_TEXT, "one").status == "skipped"

    # the issue turns up (here: a fuller issues file), so the task is mined with its text
    write_issues(project, {n: (f"f{n} returns 0", f"f{n}() should return {n}.") for n in (1, 5)})
    config = project / "bugbout.toml"
    config.write_text(config.read_text().replace('"issues.json"', '"issues-found.json"'))
    (project / "issues.json").rename(project / "issues-found.json")
    race(project)

    assert attempt(project, NO_TEXT, "one").status == "finished"
    assert starts(state / "count") == [(NO_TEXT, "one")]


def test_a_test_interpreter_inside_the_project_stays_usable_while_the_rest_is_hidden(
    project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=["calc-1"])
    venv = project / ".venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    # pytest comes from the environment running this suite
    (site / "suite.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    peek = script(
        "hostile",
        "read-secrets",
        "{workdir}",
        str(project / ".git" / "HEAD"),
        str(project / "src" / "calc" / "ops.py"),
        str(venv / "pyvenv.cfg"),
    )
    reconfigure(
        project,
        tasks=["calc-1"],
        interpreter=str(venv / "bin" / "python"),
        extra=contestant("tester", script("runtests", "{prompt_file}", "{workdir}"))
        + contestant("peek", peek, quota="peek"),
    )
    race(project)

    ran = report(attempt(project, "calc-1", "tester"))
    assert f"PYTHONPATH=src:. {venv}/bin/python -m pytest " in ran["command"]
    assert ran["returncode"] == 0, ran["tail"]
    assert "1 passed" in ran["tail"]
    seen = report(attempt(project, "calc-1", "peek"))
    assert seen[str(project / ".git" / "HEAD")] == "FileNotFoundError"
    assert seen[str(project / "src" / "calc" / "ops.py")] == "FileNotFoundError"
    assert "home = " in seen[str(venv / "pyvenv.cfg")]
