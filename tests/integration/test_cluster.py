"""A bout on a Dask cluster: the demo on two worker processes, against the same demo run
on this machine alone; dated environments built on a worker; a scheduler not there.

The cluster is real (a `dask scheduler` and `dask worker` processes on 127.0.0.1); each
worker has its own `BUGBOUT_HOME` and cannot see the coordinator's directory, which holds
the project, its store and the coordinator's home: whatever a worker runs, it made from
what the units carried.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from clusterkit import (
    AGENTS_W1,
    AGENTS_W2,
    free_port,
    journal,
    local_machines,
    make_demo,
    stored_attempts,
)
from terminals import bugbout
from test_dated_env import configure, geom_history, index  # noqa: F401 (a fixture)

from bugbout_tui.core.events import AttemptFinished, AttemptQueued, AttemptStarted
from bugbout_tui.core.events import TestRunFinished as RunFinished
from bugbout_tui.core.models import Attempt, Matrix, OracleSet, ResolutionSet
from bugbout_tui.core.store import Store
from bugbout_tui.infra.package_index import PackageIndex
from bugbout_tui.rules.judge import VerdictSet

pytestmark = pytest.mark.slow

CLOCK = re.compile(r"\d\d:\d\d:\d\d")


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


def peaks(events: list[Any]) -> dict[str, int]:
    """The most attempts each quota lane ran at once, by the journal."""
    lane = {e.attempt: e.quota for e in events if isinstance(e, AttemptQueued)}
    running: Counter[str] = Counter()
    most: Counter[str] = Counter()
    begun = set()
    for event in events:
        if isinstance(event, AttemptStarted):
            begun.add(event.attempt)
            running[lane[event.attempt]] += 1
            most[lane[event.attempt]] = max(most[lane[event.attempt]], running[lane[event.attempt]])
        elif isinstance(event, AttemptFinished) and event.attempt in begun:
            running[lane[event.attempt]] -= 1
    return dict(most)


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
    # the quota lanes held across the cluster: lane-a runs 2 at once, lane-b 1
    assert peaks(events) == {"lane-a": 2, "lane-b": 1}
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


def test_a_cluster_flag_that_is_no_address_is_a_usage_error(tmp_path: Path) -> None:
    demo = make_demo(tmp_path, tmp_path / "home")
    result = bugbout("--project", str(demo), "run", "--cluster", "foo", home=tmp_path / "home")
    assert result.returncode == 2
    assert "'foo' is not a scheduler address" in result.stderr and "tcp://" in result.stderr
    assert not (demo / ".bugbout" / "tasks.json").exists()  # nothing ran
