"""The results store: atomic records, versioning, corrupt files named, one run at a time."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.models import SCHEMA_VERSION, Attempt, Matrix, Oracle, OracleSet, TaskSet
from bugbout_tui.core.store import LockHolder, Store


def _taskset() -> TaskSet:
    return TaskSet(
        mined_at=datetime(2026, 1, 1, tzinfo=UTC),
        head="a" * 40,
        fingerprint="f",
        issue_source="issues file",
        examined=3,
    )


def test_store_ignores_itself_in_git(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write(store.tasks_path, _taskset())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    status = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


def test_records_round_trip_with_schema_version(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write(store.tasks_path, _taskset())
    assert f'"schema_version": {SCHEMA_VERSION}' in store.tasks_path.read_text()
    assert store.read(store.tasks_path, TaskSet) == _taskset()


def test_a_record_of_the_version_before_reads_as_it_is(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write(store.tasks_path, _taskset())
    older = store.tasks_path.read_text().replace(
        f'"schema_version": {SCHEMA_VERSION}', '"schema_version": 1'
    )
    store.tasks_path.write_text(older)
    assert store.read(store.tasks_path, TaskSet) == _taskset().model_copy(
        update={"schema_version": 1}
    )


def test_oracles_file_has_the_flat_documented_shape(tmp_path: Path) -> None:
    store = Store(tmp_path)
    oracles = OracleSet(oracles={"pkg-1": Oracle(fail_to_pass=["t.py::a"], scored=True)})
    store.write(store.oracles_path, oracles)
    import json

    data = json.loads(store.oracles_path.read_text())
    assert data["pkg-1"]["fail_to_pass"] == ["t.py::a"]
    assert data["schema_version"] == SCHEMA_VERSION
    assert store.read(store.oracles_path, OracleSet) == oracles


def test_missing_record_reads_as_none(tmp_path: Path) -> None:
    assert Store(tmp_path).read(tmp_path / ".bugbout" / "tasks.json", TaskSet) is None


def test_corrupt_file_is_named_and_left_alone(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.ensure()
    store.tasks_path.write_text("{ not json")
    with pytest.raises(StoreError, match=r"tasks\.json is not valid JSON"):
        store.read(store.tasks_path, TaskSet)
    assert store.tasks_path.read_text() == "{ not json"


def test_wrong_shape_is_named(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.ensure()
    store.tasks_path.write_text('{"schema_version": 1, "examined": "many"}')
    with pytest.raises(StoreError, match=r"tasks\.json does not hold a valid record"):
        store.read(store.tasks_path, TaskSet)


def test_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.ensure()
    store.tasks_path.write_text('{"schema_version": 99}')
    with pytest.raises(StoreError, match="written by a newer bugbout"):
        store.read(store.tasks_path, TaskSet)


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "record.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["record.json"]


def _lock_holder(root: Path) -> subprocess.Popen[str]:
    """Another process that takes the lock of the store at `root` and keeps it until its
    standard input closes; returned once it holds the lock."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from pathlib import Path\n"
            "from bugbout_tui.core.store import Store\n"
            f"with Store(Path({str(root)!r})).lock():\n"
            "    print('locked', flush=True)\n"
            "    sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


@contextmanager
def _holding(root: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the store at `root` until the block ends."""
    holder = _lock_holder(root)
    try:
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)


def test_second_run_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    with _holding(tmp_path) as holder:
        refused = pytest.raises(StoreError, match=rf"another bugbout run \(pid {holder.pid}\)")
        with refused, Store(tmp_path).lock():
            pass
    with Store(tmp_path).lock():
        pass


def test_lock_of_a_killed_run_is_released(tmp_path: Path) -> None:
    holder = _lock_holder(tmp_path)
    holder.kill()
    holder.wait(timeout=10)
    assert holder.stdin is not None
    holder.stdin.close()
    with Store(tmp_path).lock():
        pass


def test_a_run_holding_the_store_is_found_by_trying_its_lock(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.lock_holder() is None
    with _holding(tmp_path) as holder:
        assert store.lock_holder() == LockHolder(holder.pid)
        assert str(store.lock_holder()) == f"pid {holder.pid}"
    assert store.lock_holder() is None
    with store.lock():
        assert store.lock_holder() is None  # this store is not another run
        assert Store(tmp_path).lock_holder() is None  # nor is this process


def test_a_stale_lock_naming_a_live_process_holds_nothing(tmp_path: Path) -> None:
    """A run killed outright leaves its pid in the lock file, and the system may give that
    pid to another process: only the lock itself says whether a run holds the store."""
    store = Store(tmp_path)
    store.ensure()
    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.DEVNULL
    )
    try:
        store.lock_path.write_text(f"{stranger.pid}\n")
        assert store.lock_holder() is None
        with store.lock():
            pass
    finally:
        stranger.kill()
        stranger.wait()


def test_a_look_at_the_lock_does_not_turn_away_a_run_starting_meanwhile(tmp_path: Path) -> None:
    """A look holds the lock for an instant; a run starting in that instant waits it out."""
    store = Store(tmp_path)
    store.ensure()
    look = os.open(store.lock_path, os.O_RDONLY | os.O_CREAT)
    fcntl.flock(look, fcntl.LOCK_SH)
    threading.Timer(0.05, os.close, [look]).start()
    with store.lock():
        pass


def _attempt(task: str, contestant: str) -> Attempt:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Attempt(
        task=task,
        contestant=contestant,
        status="finished",
        started_at=now,
        ended_at=now,
        seconds=1.0,
        logdir="logs",
    )


def test_attempts_and_matrices_are_read_by_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for task, contestant in [("pkg-2", "zed"), ("pkg-1", "codex"), ("pkg-2", "amp")]:
        store.write(store.attempts_dir / task / f"{contestant}.json", _attempt(task, contestant))
    store.write(store.matrix_path("pkg-1"), Matrix(task="pkg-1"))
    assert {task: [a.contestant for a in found] for task, found in store.attempts().items()} == {
        "pkg-1": ["codex"],
        "pkg-2": ["amp", "zed"],
    }
    assert list(store.matrices()) == ["pkg-1"]

    torn = store.attempts_dir / "pkg-1" / "torn.json"
    torn.write_text("{")
    (store.matrices_dir / "pkg-9.json").write_text("[]")
    with pytest.raises(StoreError, match=r"torn\.json"):
        store.attempts()
    with pytest.raises(StoreError, match=r"pkg-9\.json"):
        store.matrices()
    unreadable: list[StoreError] = []
    assert sorted(store.attempts(unreadable)) == ["pkg-1", "pkg-2"]
    assert list(store.matrices(unreadable)) == ["pkg-1"]
    assert [problem.message.split(" ")[0] for problem in unreadable] == [
        str(torn),
        str(store.matrices_dir / "pkg-9.json"),
    ]
    assert torn.read_text() == "{"
