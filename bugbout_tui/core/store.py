"""The `.bugbout/` results store beside `bugbout.toml`.

Results belong to the project (small JSON records a person may want to keep), heavy
state does not (it lives under `BUGBOUT_HOME`). Every file is written atomically and
carries a schema version; a file that cannot be read is named in the error and left
exactly as it is, so nothing a run produced is ever silently thrown away.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.fs import write_atomic, write_model
from bugbout_tui.core.models import SCHEMA_VERSION

STORE_DIR = ".bugbout"

M = TypeVar("M", bound=BaseModel)


class Store:
    """One project's results, rooted at the directory that holds `bugbout.toml`."""

    def __init__(self, project_dir: Path) -> None:
        self.project_dir = project_dir
        self.root = project_dir / STORE_DIR

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

    def matrix_path(self, task: str) -> Path:
        return self.matrices_dir / f"{task}.json"

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    def ensure(self) -> None:
        """Create the store with a `.gitignore` that ignores the store itself.

        Deleting that `.gitignore` is how a team opts in to committing results.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            write_atomic(ignore, "# bugbout results; delete this file to commit them\n*\n")

    def read(self, path: Path, model: type[M]) -> M | None:
        """Load a record, or None when it was never written.

        A file that exists but cannot be understood raises `StoreError` naming it:
        replacing it would throw away what an earlier run paid for.
        """
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise StoreError(
                f"{self._show(path)} is not valid JSON ({exc}).",
                hint="Move it aside to start that stage afresh, or restore it from a backup.",
            ) from None
        version = data.get("schema_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise StoreError(
                f"{self._show(path)} was written by a newer bugbout "
                f"(schema {version}; this one reads {SCHEMA_VERSION}).",
                hint="Upgrade bugbout to read it.",
            )
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the top level"
            raise StoreError(
                f"{self._show(path)} does not hold a valid record: {first['msg']} at {where}.",
                hint="Move it aside to start that stage afresh, or restore it from a backup.",
            ) from None

    def write(self, path: Path, record: BaseModel) -> None:
        self.ensure()
        write_model(path, record)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for one run; a second run stops with the holder's pid.

        `flock` is released by the kernel when the holder dies, even by `kill -9`, so a
        crashed run never leaves a stale lock behind.
        """
        self.ensure()
        lock_path = self.root / "lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                raise StoreError(
                    f"another bugbout run (pid {holder}) is using {self._show(self.root)}.",
                    hint="Wait for it to finish or stop it; `bugbout-tui --watch` can follow it.",
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _show(self, path: Path) -> str:
        with contextlib.suppress(ValueError):
            return str(path.relative_to(Path.cwd()))
        return str(path)
