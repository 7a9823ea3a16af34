"""A bout on a Dask cluster: the demo on two worker processes, against the same demo run
on this machine alone, and workers lost mid-bout.

The cluster is real (a `dask scheduler` and `dask worker` processes on 127.0.0.1); each
worker has its own `BUGBOUT_HOME` and cannot see the coordinator's directory, which holds
the project, its store and the coordinator's home: whatever a worker runs, it made from
what the units carried.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from clusterkit import free_port, local_machines
from terminals import bugbout, clean_env
from test_dated_env import configure, geom_history, index  # noqa: F401 (a fixture)

from bugbout_tui.core.events import AttemptStarted, parse_event
from bugbout_tui.core.events import TestRunFinished as RunFinished
from bugbout_tui.core.models import Attempt, Matrix, OracleSet, ResolutionSet
from bugbout_tui.core.store import Store
from bugbout_tui.demo.project import STATE_DIR, build_demo
from bugbout_tui.engine.cluster_attempts import WORKER_LOST
from bugbout_tui.infra.package_index import PackageIndex
from bugbout_tui.rules.judge import VerdictSet

pytestmark = pytest.mark.slow

CLOCK = re.compile(r"\d\d:\d\d:\d\d")
WINDOW = 5.0
"""The rationed agent's refill, shorter than the demo's, as in the demo's own tests."""
AGENTS_W1 = ("agent:careful", "agent:hasty", "agent:examiner")
AGENTS_W2 = ("agent:careful", "agent:slow")
"""What each worker declares; the rationed agent, declared by none, runs on the
coordinator (its usage counter lives in the project's directory)."""


def make_demo(root: Path, home: Path) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        build_demo(root / "demo", window=WINDOW)
    return root / "demo"


def records(demo: Path) -> dict[str, Any]:
    """What a bout stored, without what depends on where or when it ran: each task's
    oracle, each attempt's status and patch, each tree's cells, each policy's verdict,
    each patch's score."""
    store = Store(demo)
    oracles = store.read(store.oracles_path, OracleSet)
    verdicts = store.read(store.verdicts_path, VerdictSet)
    resolutions = store.read(store.resolutions_path, ResolutionSet)
    assert oracles is not None and verdicts is not None and resolutions is not None
    attempts: dict[str, Any] = {}
    for path in sorted(store.attempts_dir.glob("*/*.json")):
        attempt = store.read(path, Attempt)
        assert attempt is not None
        detail = CLOCK.sub("HH:MM:SS", attempt.detail or "")  # a usage limit's reset time
        attempts[attempt.id] = (attempt.status, detail, attempt.patch.model_dump())
    matrices: dict[str, Any] = {}
    for path in sorted(store.matrices_dir.glob("*.json")):
        matrix = store.read(path, Matrix)
        assert matrix is not None
        matrices[matrix.task] = {
            name: (
                run.error,
                {a: {t: c.outcome for t, c in cells.items()} for a, cells in run.cells.items()},
            )
            for name, run in matrix.trees.items()
        }
    return {
        "oracles": {
            task: (o.fail_to_pass, o.pass_to_pass, o.unstable, o.scored, o.reason)
            for task, o in oracles.oracles.items()
        },
        "attempts": attempts,
        "matrices": matrices,
        "verdicts": {
            task: {policy: (v.pick, v.abstained) for policy, v in by_policy.items()}
            for task, by_policy in verdicts.verdicts.items()
        },
        "scores": {
            task: {name: (r.status, r.fail_to_pass, r.broken) for name, r in by_name.items()}
            for task, by_name in resolutions.patches.items()
        },
        "controls": {task: r.status for task, r in resolutions.controls.items()},
    }


def _outcomes(cells: dict[str, Any]) -> dict[str, str]:
    return {test: cell.outcome for test, cell in cells.items()}


def journal(demo: Path) -> list[Any]:
    path = Store(demo).events_path
    return [parse_event(line) for line in path.read_text().splitlines() if line.strip()]


def stored_attempts(demo: Path) -> dict[str, Attempt]:
    store = Store(demo)
    found = {}
    for path in store.attempts_dir.glob("*/*.json"):
        attempt = store.read(path, Attempt)
        assert attempt is not None
        found[attempt.id] = attempt
    return found


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo bout on this machine alone."""
    root = tmp_path_factory.mktemp("local")
    demo = make_demo(root, root / "home")
    result = bugbout("demo", str(demo), home=root / "home", timeout=600)
    assert result.returncode == 0, result.stderr
    return demo


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The same demo bout on two workers: the demo, and each worker's home."""
    coordinator = tmp_path_factory.mktemp("coordinator")
    demo = make_demo(coordinator, coordinator / "home")
    homes = tmp_path_factory.mktemp("w1"), tmp_path_factory.mktemp("w2")
    with local_machines(tmp_path_factory.mktemp("logs")) as machines:
        machines.start_worker("w1", homes[0], hidden=[coordinator], resources=AGENTS_W1)
        machines.start_worker("w2", homes[1], hidden=[coordinator], resources=AGENTS_W2)
        result = bugbout(
            "demo", str(demo), "--cluster", machines.address, home=coordinator / "home", timeout=600
        )
    assert result.returncode == 0, result.stderr
    return demo, homes[0], homes[1]


def test_the_demo_on_two_workers_stores_what_it_stores_on_one_machine(
    local_run: Path, cluster_run: tuple[Path, Path, Path]
) -> None:
    demo, *homes = cluster_run
    assert records(demo) == records(local_run)
    # ... and the workers made it: every test run, and the declared agents' attempts
    events = journal(demo)
    runs = [e for e in events if isinstance(e, RunFinished)]
    assert runs and {e.worker for e in runs} == {"w1", "w2"}
    by_agent: dict[str, set[str | None]] = {}
    for attempt in stored_attempts(demo).values():
        if attempt.status == "finished":  # not the ones a parked lane never started
            by_agent.setdefault(attempt.contestant, set()).add(attempt.worker)
    assert by_agent["hasty"] == by_agent["examiner"] == {"w1"}
    assert by_agent["slow"] == {"w2"}
    assert by_agent["careful"] <= {"w1", "w2"}
    assert by_agent["rationed"] == {None}
    started = [e for e in events if isinstance(e, AttemptStarted) and e.worker is not None]
    assert {e.worker for e in started} == {"w1", "w2"}
    # the repository reached each worker once, as a bundle kept by its content
    for home in homes:
        (kept,) = (home / "cluster" / "repos").iterdir()
        assert kept.name.endswith(".git")


def test_the_cluster_bout_reads_as_the_local_one(
    local_run: Path, cluster_run: tuple[Path, Path, Path]
) -> None:
    demo, *_ = cluster_run
    store, local = Store(demo), Store(local_run)
    ours = json.loads(store.report_json_path.read_text())
    theirs = json.loads(local.report_json_path.read_text())
    for key in ("agents", "judge"):
        if key in theirs:
            assert _without_times(ours[key]) == _without_times(theirs[key])


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_times(v)
            for k, v in value.items()
            if "second" not in k and "time" not in k and "median" not in k
        }
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


# ---------------------------------------------------------------- workers lost mid-bout


def follow(demo: Path, bout: subprocess.Popen[str], seen: Callable[[Any], bool]) -> Any:
    """The first event of the bout's journal that `seen` picks, waiting for it."""
    deadline = time.monotonic() + 300
    path = Store(demo).events_path
    while time.monotonic() < deadline:
        if path.exists():
            for event in journal(demo):
                if seen(event):
                    return event
        assert bout.poll() is None, "the bout ended before the event came"
        time.sleep(0.05)
    raise AssertionError("the event never came")


def start_bout(demo: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bugbout_tui", *args],
        env=clean_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_test_runs_of_a_lost_worker_are_made_by_another(local_run: Path, tmp_path: Path) -> None:
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
    assert records_of_ground_truth(demo) == records_of_ground_truth(local_run)


def records_of_ground_truth(demo: Path) -> Any:
    store = Store(demo)
    oracles = store.read(store.oracles_path, OracleSet)
    assert oracles is not None
    return {t: (o.fail_to_pass, o.pass_to_pass, o.scored) for t, o in oracles.oracles.items()}


def test_an_attempt_on_a_lost_worker_is_recorded_lost_and_run_again_only_when_asked(
    local_run: Path, tmp_path: Path
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
        # every other attempt ended as on one machine
        expected = stored_attempts(local_run)
        assert set(before) == set(expected)
        for name, attempt in before.items():
            if name != first.attempt:
                assert attempt.status == expected[name].status, name
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
    assert after[first.attempt].patch == expected[first.attempt].patch
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


def test_stopping_the_coordinator_stops_its_agents_on_the_workers(tmp_path: Path) -> None:
    coordinator = tmp_path / "coordinator"
    demo = make_demo(coordinator, coordinator / "home")
    home = coordinator / "home"
    sleep = ["import time; time.sleep(600)", SLEEPER]
    with (demo / "bugbout.toml").open("a") as config:
        config.write(
            '\n[[contestants]]\nagent = "command"\nname = "sleeper"\nquota = "lane-c"\n'
            f"command = {json.dumps([sys.executable, '-c', *sleep])}\n"
        )
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


def test_dated_environments_are_built_on_the_workers(
    tmp_path: Path,
    home: Path,
    index: PackageIndex,  # noqa: F811 (the fixture imported above)
) -> None:
    repo = geom_history(tmp_path / "geom")
    configure(repo)
    with local_machines(tmp_path / "logs") as machines:
        machines.start_worker("w1", tmp_path / "w1", hidden=[repo.root, home])
        result = bugbout(
            "--project", str(repo.root), "run", "--until", "ground-truth",
            "--cluster", machines.address, home=home, timeout=600,
            UV_DEFAULT_INDEX=index.url, UV_CACHE_DIR=str(tmp_path / "uv-cache"),
            UV_PYTHON_DOWNLOADS="never",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = OracleSet.model_validate_json((repo.root / ".bugbout" / "oracles.json").read_text())
    # the old fixes pass only with shapes 1.0, the new one only with 2.0: each ran in its
    # dated environment, which the worker made from the pins
    assert {task: oracle.scored for task, oracle in found.oracles.items()} == {
        "geom-1": True, "geom-2": True, "geom-3": True,
    }  # fmt: skip
    built = sorted(path.name for path in (tmp_path / "w1" / "envs").glob("dated-*"))
    assert len(built) == 2
    runs = [e for e in journal(repo.root) if isinstance(e, RunFinished)]
    assert runs and {e.worker for e in runs} == {"w1"}


def test_an_unreachable_scheduler_is_named_without_a_traceback(tmp_path: Path) -> None:
    demo = make_demo(tmp_path, tmp_path / "home")
    address = f"tcp://127.0.0.1:{free_port()}"
    result = bugbout(
        "--project", str(demo), "run", "--until", "ground-truth", home=tmp_path / "home",
        BUGBOUT_CLUSTER=address, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s",
    )  # fmt: skip
    assert result.returncode == 1
    assert f"Cannot reach the cluster's scheduler at {address}" in result.stderr
    assert "dask scheduler" in result.stderr and "Traceback" not in result.stderr
