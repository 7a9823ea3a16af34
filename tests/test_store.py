"""The results store: atomic records, versioning, corrupt files named, one run at a time."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.models import Oracle, OracleSet, TaskSet
from bugbout_tui.core.store import Store


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
    assert '"schema_version": 1' in store.tasks_path.read_text()
    assert store.read(store.tasks_path, TaskSet) == _taskset()


def test_oracles_file_has_the_flat_documented_shape(tmp_path: Path) -> None:
    store = Store(tmp_path)
    oracles = OracleSet(oracles={"pkg-1": Oracle(fail_to_pass=["t.py::a"], scored=True)})
    store.write(store.oracles_path, oracles)
    import json

    data = json.loads(store.oracles_path.read_text())
    assert data["pkg-1"]["fail_to_pass"] == ["t.py::a"]
    assert data["schema_version"] == 1
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


def test_second_run_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from pathlib import Path\n"
            "from bugbout_tui.core.store import Store\n"
            f"with Store(Path({str(tmp_path)!r})).lock():\n"
            "    print('locked', flush=True)\n"
            "    sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = pytest.raises(StoreError, match=rf"another bugbout run \(pid {holder.pid}\)")
        with refused, Store(tmp_path).lock():
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    with Store(tmp_path).lock():
        pass


def test_lock_of_a_killed_run_is_released(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\n"
            "from pathlib import Path\n"
            "from bugbout_tui.core.store import Store\n"
            f"with Store(Path({str(tmp_path)!r})).lock():\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    holder.kill()
    holder.wait(timeout=10)
    with Store(tmp_path).lock():
        pass
