"""Atomic writes: a reader, or a crash, never sees half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file, fsync and rename.

    The temporary file lives in the same directory so the rename stays on one
    filesystem and is atomic; the directory is fsynced so the rename itself survives
    a power loss.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_model(path: Path, model: BaseModel) -> None:
    """Store a pydantic model as indented JSON, atomically."""
    write_atomic(path, model.model_dump_json(indent=2, by_alias=True) + "\n")
