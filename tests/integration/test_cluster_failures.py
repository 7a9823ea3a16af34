"""Workers lost mid-bout, and a bout stopped: what a cluster costs when it fails.

Each test starts its own scheduler and worker processes (`clusterkit.py`); a worker is
killed as a machine goes down, with everything it started.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from clusterkit import (
    AGENTS_W1,
    follow,
    journal,
    local_machines,
    make_demo,
    start_bout,
    stored_attempts,
)
from terminals import bugbout

from bugbout_tui.core.events import AttemptStarted
from bugbout_tui.core.events import TestRunFinished as RunFinished
from bugbout_tui.core.models import OracleSet, TaskSet
from bugbout_tui.core.store import Store
from bugbout_tui.demo.project import STATE_DIR
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.cluster_attempts import WORKER_LOST
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import CANCELLED

pytestmark = pytest.mark.slow

DESIGNED = {
    "careful": ["finished"] * 6,
    "examiner": ["finished"] * 6,
    "hasty": ["finished"] * 5 + ["no-change"],
}
"""How the demo's agents in the lane no worker is lost from end, by design."""


def records_of_ground_truth(demo: Path) -> Any:
    store = Store(demo)
    oracles = store.read(store.oracles_path, OracleSet)
    assert oracles is not None
    return {t: (o.fail_to_pass, o.pass_to_pass, o.scored) for t, o in oracles.oracles.items()}


def order(demo: Path, agent: str) -> list[str]:
    """`agent`'s attempts in the order of the tasks."""
    store = Store(demo)
    taskset = store.read(store.tasks_path, TaskSet)
    assert taskset is not None
    return [f"{task.id}/{agent}" for task in taskset.tasks]


def test_test_runs_of_a_lost_worker_are_made_by_another(tmp_path: Path) -> None:
    alone = make_demo(tmp_path / "alone", tmp_path / "alone" / "home")
    here = bugbout(
        "--project", str(alone), "run", "--until", "ground-truth", home=tmp_path / "alone" / "home"
    )  # fmt: skip
    assert here.returncode == 0, here.stderr
    coordinator = tmp_path / "coordinator"
    demo = make_demo(coordinator, coordinator / "home")
    with local_machines(tmp_path / "logs") as machines:
        machines.start_worker("w1", tmp_path / "w1", hidden=[coordinator], threads=1)
        machines.start_worker("w2", tmp_path / "w2", hidden=[coordinator], threads=1)
        bout = start_bout(
            demo, coordinator / "home", "--project", str(demo), "run", "--until", "ground-truth",
            "--cluster", machines.address,
        )  # fmt: skip
        follow(demo, bout, lambda e: isinstance(e, RunFinished) and e.worker == "w2")
        machines.kill("w2")
        _, err = bout.communicate(timeout=300)
    assert bout.returncode == 0, err
    assert records_of_ground_truth(demo) == records_of_ground_truth(alone)
    runs = [e for e in journal(demo) if isinstance(e, RunFinished)]
    assert {e.worker for e in runs} == {"w1", "w2"}


def test_an_attempt_on_a_lost_worker_is_recorded_lost_and_run_again_only_when_asked(
    tmp_path: Path,
) -> None:
    coordinator = tmp_path / "coordinator"
    demo = make_demo(coordinator, coordinator / "home")
    home = coordinator / "home"
    with local_machines(tmp_path / "logs") as machines:
        machines.start_worker("w1", tmp_path / "w1", hidden=[coordinator], resources=AGENTS_W1)
        machines.start_worker("w2", tmp_path / "w2", hidden=[coordinator], resources=["agent:slow"])
        bout = start_bout(demo, home, "demo", str(demo), "--cluster", machines.address)
        first = follow(
            demo,
            bout,
            lambda e: isinstance(e, AttemptStarted) and e.attempt.endswith("/slow"),
        )
        assert first.worker == "w2"
        machines.kill("w2")
        machines.start_worker("w3", tmp_path / "w3", hidden=[coordinator], resources=["agent:slow"])
        _, err = bout.communicate(timeout=600)
        assert bout.returncode == 0, err
        before = stored_attempts(demo)
        lost = before[first.attempt]
        assert lost.status == "crashed" and lost.worker == "w2"
        assert lost.detail is not None and lost.detail.startswith(f"{WORKER_LOST}: w2")
        # it was not started again by anyone: one start of it in the whole journal
        starts = [e for e in journal(demo) if isinstance(e, AttemptStarted)]
        assert [e.attempt for e in starts].count(first.attempt) == 1
        # the agents of the other lane ended as they do by design, on one machine or not
        assert len(before) == 30
        for agent, statuses in DESIGNED.items():
            ended = [before[name].status for name in order(demo, agent)]
            assert ended == statuses, agent
        # The rationed agent's ten-minute cap parked the lane it shares with the slow
        # one until its reset; the plan is let refill and the reset pass, as if it had.
        shutil.rmtree(demo / STATE_DIR)
        (demo / STATE_DIR).mkdir()
        Store(demo).lanes_path.unlink()
        retried = bugbout(
            "--project", str(demo), "run", "--retry-failed", "--cluster", machines.address,
            home=home, timeout=600,
        )  # fmt: skip
    assert retried.returncode == 0, retried.stderr
    after = stored_attempts(demo)
    assert after[first.attempt].status == "finished"
    assert after[first.attempt].worker == "w3"
    assert not after[first.attempt].patch.is_empty
    for name, attempt in before.items():
        if attempt.status not in ("crashed", "quota", "timeout"):
            assert after[name].started_at == attempt.started_at, f"{name} ran twice"


SLEEPER = "bugbout-test-sleeper"
"""What the sleeping agent's command line says, so the test finds its process."""


def sleepers() -> list[int]:
    """The sleeping agents running on this machine, by process id."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if SLEEPER.encode() in words:
            found.append(int(entry.name))
    return found


def add_sleeper(demo: Path) -> None:
    """A contestant that sleeps ten minutes, in a lane of its own."""
    sleep = ["import time; time.sleep(600)", SLEEPER]
    with (demo / "bugbout.toml").open("a") as config:
        config.write(
            '\n[[contestants]]\nagent = "command"\nname = "sleeper"\nquota = "lane-c"\n'
            f"command = {json.dumps([sys.executable, '-c', *sleep])}\n"
        )


def test_an_attempt_cancelled_here_is_ended_on_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    coordinator = tmp_path / "coordinator"
    demo = make_demo(coordinator, coordinator / "home")
    add_sleeper(demo)
    monkeypatch.setenv("BUGBOUT_HOME", str(coordinator / "home"))
    with local_machines(tmp_path / "logs") as machines:
        machines.start_worker("w1", tmp_path / "w1", hidden=[coordinator], resources=AGENTS_W1)
        machines.start_worker(
            "w2", tmp_path / "w2", hidden=[coordinator], resources=["agent:sleeper"]
        )
        bout = Bout(Project.load(demo), cluster=machines.address)
        seen: list[str] = []

        def cancel_sleepers(event: object) -> None:
            # as the race board's `c` does, on each sleeper as its worker starts it
            if isinstance(event, AttemptStarted) and event.attempt.endswith("/sleeper"):
                assert event.worker == "w2"
                seen.append(event.attempt)
                bout.cancel_attempt(event.attempt)

        bout.subscribe(cancel_sleepers)
        bout.run(until="race")
    assert len(seen) == 6 and not sleepers()
    for name in seen:
        attempt = stored_attempts(demo)[name]
        assert (attempt.status, attempt.detail, attempt.worker) == ("crashed", CANCELLED, "w2")


def test_stopping_the_coordinator_stops_its_agents_on_the_workers(tmp_path: Path) -> None:
    coordinator = tmp_path / "coordinator"
    demo = make_demo(coordinator, coordinator / "home")
    home = coordinator / "home"
    add_sleeper(demo)
    with local_machines(tmp_path / "logs") as machines:
        machines.start_worker("w1", tmp_path / "w1", hidden=[coordinator], resources=AGENTS_W1)
        machines.start_worker(
            "w2", tmp_path / "w2", hidden=[coordinator], resources=["agent:sleeper"]
        )
        bout = start_bout(demo, home, "--project", str(demo), "run", "--cluster", machines.address)
        first = follow(
            demo, bout, lambda e: isinstance(e, AttemptStarted) and e.attempt.endswith("/sleeper")
        )
        assert first.worker == "w2"
        deadline = time.monotonic() + 30
        while not sleepers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleepers(), "the sleeping agent runs on w2"
        bout.send_signal(signal.SIGINT)
        bout.communicate(timeout=120)
        deadline = time.monotonic() + 20
        while sleepers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not sleepers(), "the worker's agent outlived the bout"
    assert first.attempt not in stored_attempts(demo)  # in flight: nothing kept of it
    (last,) = journal(demo)[-1:]
    assert last.type == "bout-finished" and last.outcome == "stopped"
