"""The `.bugbout/` results store beside `bugbout.toml`.

Results belong to the project (small JSON records a person may want to keep), heavy
state does not (it lives under `BUGBOUT_HOME`). Every file is written atomically and
carries a schema version; a file that cannot be read is named in the error and left
exactly as it is, so nothing a run produced is ever silently thrown away.

Every way the store can fail (full disk, used-up quota, read-only or foreign files)
comes out of this module as a `StoreError` naming the file and what to do, so a run
stops with one message and keeps every record it finished.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.fs import write_atomic, write_model
from bugbout_tui.core.models import SCHEMA_VERSION, Attempt, Matrix

STORE_DIR = ".bugbout"

_LOCK_TRIES = 10
_LOCK_PAUSE = 0.02
"""Seconds between tries: a look at who holds the lock (`Store.lock_holder`) holds it
itself for an instant, and a run starting in that instant must not take it for another."""

M = TypeVar("M", bound=BaseModel)

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
_LOCKED_OUT = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_WHY = {
    errno.ENOSPC: "no space is left on its device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "its file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


def store_error(exc: OSError, path: Path, *, reading: bool = False) -> StoreError:
    """The `StoreError` for an `OSError` on `path`: what failed, why, and what to do.

    Whatever failed, every record written before it is whole (writes are atomic), so
    the advice is always to fix the cause and run again.
    """
    why = _WHY.get(exc.errno or 0) or exc.strerror or str(exc)
    verb = "read" if reading else "write"
    store = next((p for p in path.parents if p.name == STORE_DIR), path.parent)
    if exc.errno in _FULL:
        hint = "Free some space there and run again: everything recorded so far is kept."
    elif exc.errno in _LOCKED_OUT:
        able = "readable" if reading else "writable"
        where = f"{_show(store)}: make it {able}"
        if path.name == STORE_DIR:
            where = f"{_show(path)}, which needs {_show(path.parent)} to be writable"
        hint = f"bugbout keeps its results in {where} (or work on a copy of the project)."
    else:
        hint = "Everything recorded so far is kept; fix the cause and run again."
    return StoreError(f"cannot {verb} {_show(path)}: {why}.", hint=hint)


def _show(path: Path) -> str:
    """A path as the user would type it: relative to the current directory below it."""
    with contextlib.suppress(ValueError):
        if (relative := path.relative_to(Path.cwd())) != Path():
            return str(relative)
    return str(path)


@dataclass(frozen=True)
class LockHolder:
    """Another process holding a store's lock."""

    pid: int | None
    """Its pid as it wrote it into the lock file; None when it has not (yet) written one."""

    def __str__(self) -> str:
        return f"pid {self.pid}" if self.pid is not None else "pid unknown"


class Store:
    """One project's results, rooted at the directory that holds `bugbout.toml`."""

    def __init__(self, project_dir: Path) -> None:
        self.project_dir = project_dir
        self.root = project_dir / STORE_DIR
        self._lock_fd: int | None = None
        """The open lock file while this store is held by `lock`."""

    @property
    def tasks_path(self) -> Path:
        return self.root / "tasks.json"

    @property
    def oracles_path(self) -> Path:
        return self.root / "oracles.json"

    @property
    def attempts_dir(self) -> Path:
        return self.root / "attempts"

    @property
    def matrices_dir(self) -> Path:
        return self.root / "matrices"

    @property
    def verdicts_path(self) -> Path:
        return self.root / "verdicts.json"

    @property
    def resolutions_path(self) -> Path:
        return self.root / "resolutions.json"

    @property
    def repairs_path(self) -> Path:
        """Every environment task's repairs, scored, and its controls (`RepairSet`)."""
        return self.root / "repairs.json"

    @property
    def ledger_path(self) -> Path:
        """The flake ledger: every test outcome seen, by tree (`Ledger`)."""
        return self.root / "ledger.json"

    @property
    def lanes_path(self) -> Path:
        """Each quota lane's usage window while it is closed (`LaneWindows`)."""
        return self.root / "lanes.json"

    def matrix_path(self, task: str) -> Path:
        return self.matrices_dir / f"{task}.json"

    @property
    def report_markdown_path(self) -> Path:
        return self.root / "report.md"

    @property
    def report_json_path(self) -> Path:
        return self.root / "report.json"

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def logs_dir(self) -> Path:
        """The output of test runs worth reading again (each ground truth's pytest runs)."""
        return self.root / "logs"

    def ensure(self) -> None:
        """Create the store with a `.gitignore` that ignores the store itself.

        Deleting that `.gitignore` is how a team opts in to committing results. Called
        before every write, it also recreates a store deleted while a run goes on, and
        the lock that run holds.
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise store_error(exc, self.root) from None
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            self._write(ignore, "# bugbout results; delete this file to commit them\n*\n")
        self._check_lock()

    def records(self, directory: Path, pattern: str) -> list[Path]:
        """The files in `directory` matching `pattern`, sorted; none when it is missing.

        A folder may vanish while it is listed (a user deleting the store during a run):
        the listing is taken again rather than fail.
        """
        for _ in range(3):
            try:
                return sorted(directory.glob(pattern))
            except FileNotFoundError:
                continue
        return []

    def attempts(self, unreadable: list[StoreError] | None = None) -> dict[str, list[Attempt]]:
        """Every stored attempt, by task, each task's in the order of their contestants.

        A record that cannot be read raises its `StoreError`; given `unreadable`, it is
        added there and left out instead, so one torn file does not hide the rest.
        """
        found: dict[str, list[Attempt]] = {}
        paths = self.records(self.attempts_dir, "*/*.json")
        for attempt in self._read_all(paths, Attempt, unreadable):
            found.setdefault(attempt.task, []).append(attempt)
        for attempts in found.values():
            attempts.sort(key=lambda attempt: attempt.contestant)
        return found

    def matrices(self, unreadable: list[StoreError] | None = None) -> dict[str, Matrix]:
        """Every stored cross-examination matrix, by task; unreadable ones as in `attempts`."""
        paths = self.records(self.matrices_dir, "*.json")
        return {matrix.task: matrix for matrix in self._read_all(paths, Matrix, unreadable)}

    def _read_all(
        self, paths: Iterable[Path], model: type[M], unreadable: list[StoreError] | None
    ) -> Iterator[M]:
        for path in paths:
            try:
                record = self.read(path, model)
            except StoreError as exc:
                if unreadable is None:
                    raise
                unreadable.append(exc)
                continue
            if record is not None:
                yield record

    def read(self, path: Path, model: type[M]) -> M | None:
        """Load a record, or None when it was never written.

        A file that exists but cannot be understood raises `StoreError` naming it:
        replacing it would throw away what an earlier run paid for.
        """
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise store_error(exc, path, reading=True) from None
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise StoreError(
                f"{_show(path)} is not valid JSON ({exc}).",
                hint="Move it aside to start that stage afresh, or restore it from a backup.",
            ) from None
        version = data.get("schema_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise StoreError(
                f"{_show(path)} was written by a newer bugbout "
                f"(schema {version}; this one reads {SCHEMA_VERSION}).",
                hint="Upgrade bugbout to read it.",
            )
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the top level"
            raise StoreError(
                f"{_show(path)} does not hold a valid record: {first['msg']} at {where}.",
                hint="Move it aside to start that stage afresh, or restore it from a backup.",
            ) from None

    def write(self, path: Path, record: BaseModel) -> None:
        """Store a record atomically; any failure is a `StoreError` naming `path`."""
        self.ensure()
        try:
            write_model(path, record)
        except OSError as exc:
            raise store_error(exc, path) from None

    def write_text(self, path: Path, text: str) -> None:
        """Store a text file (a report) atomically, failing as `write` does."""
        self.ensure()
        self._write(path, text)

    def _write(self, path: Path, text: str) -> None:
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise store_error(exc, path) from None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for one run; a second run stops with the holder's pid.

        `flock` is released by the kernel when the holder dies, even by `kill -9`, so a
        crashed run never leaves a stale lock behind.
        """
        self.ensure()
        self._lock_fd = self._take_lock()
        try:
            yield
        finally:
            fd, self._lock_fd = self._lock_fd, None
            assert fd is not None
            with contextlib.suppress(OSError):  # closing the fd is what releases the lock
                os.ftruncate(fd, 0)
            os.close(fd)

    @property
    def lock_path(self) -> Path:
        return self.root / "lock"

    def lock_holder(self) -> LockHolder | None:
        """Another process holding the store, found by trying its lock; None when none does.

        The pid in the lock file is only what a run wrote there: a run killed outright
        leaves it behind, and the system may since have given that pid to any process.
        Only the `flock` tells, so it is tried (shared, never waited for) and let go at
        once. A run of this very process, through another `Store`, is not another.
        """
        if self._lock_fd is not None:
            return None
        try:
            fd = os.open(self.lock_path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _written_pid(fd)
                return None if pid == os.getpid() else LockHolder(pid)
            except OSError:
                return None
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def _take_lock(self) -> int:
        """Open the lock file, lock it and write our pid into it; the open descriptor."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise store_error(exc, self.lock_path) from None
        try:
            for tries_left in reversed(range(_LOCK_TRIES)):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if tries_left:
                        time.sleep(_LOCK_PAUSE)
                        continue
                    holder = LockHolder(_written_pid(fd))
                    raise StoreError(
                        f"another bugbout run ({holder}) is using {_show(self.root)}.",
                        hint="Wait for it to finish or stop it; "
                        "`bugbout-tui --watch` can follow it.",
                    ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise store_error(exc, self.lock_path) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _check_lock(self) -> None:
        """Take the lock again if its file was deleted while this run held it.

        A lock on a deleted file keeps out no one: a second run would create a new
        file and lock that. Retaking it before each write keeps one run per store.
        """
        fd = self._lock_fd
        if fd is None or os.fstat(fd).st_nlink > 0:
            return
        fresh = self._take_lock()
        os.close(fd)
        self._lock_fd = fresh


def _written_pid(fd: int) -> int | None:
    """The pid a run wrote into the lock file open as `fd`, if it wrote one."""
    text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None
