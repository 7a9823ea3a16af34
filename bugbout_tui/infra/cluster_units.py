"""What a test run sent to a cluster carries, and what comes back.

A unit assumes nothing of the worker but bugbout, uv and the sandbox: no shared file
system, no path of the coordinator's. The repository travels apart, once per worker,
as a git bundle named by its content; a unit names the commit its tree starts from and
the files that differ (`file_sets.py`), the environment as what it holds (pins or an
interpreter path), and pytest's settings. What comes back is what the local run would
have returned, with the worker's name and its log compressed.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.dated_env import Resolution
from bugbout_tui.infra.env import MARKER_NAME, Environment
from bugbout_tui.infra.file_sets import FileSet
from bugbout_tui.infra.proc import run_process
from bugbout_tui.infra.pytest_run import TestRun

LOG_LIMIT = 4 * 1024 * 1024
"""The most of a run's log that comes back from a worker: its end, where pytest's
summary is."""


class TreeRecipe(BaseModel):
    """A tree as a commit's pristine tree (none: an empty one) with `changes` over it."""

    model_config = ConfigDict(frozen=True)

    commit: str | None
    changes: FileSet = FileSet()
    whole: bool = True
    """Whether the coordinator's pristine tree had every submodule: a worker whose tree
    lacks one would run other tests, so it refuses."""


class EnvRecipe(BaseModel):
    """A test environment as what it holds, so a worker can make its own: an existing
    interpreter (the same path on every worker) or pinned packages."""

    model_config = ConfigDict(frozen=True)

    interpreter: str | None = None
    pins: Resolution | None = None


class EachRun(BaseModel):
    """One of the separate runs on a tree (`pytest_each.SeparateRun`), its files inline."""

    model_config = ConfigDict(frozen=True)

    name: str
    paths: list[str]
    overlay: FileSet | None = None
    overlay_at: str | None = None


class TestUnit(BaseModel):
    """One pytest run (or one tree's separate runs) to make on a worker."""

    __test__ = False  # a model, not a pytest test class
    model_config = ConfigDict(frozen=True)

    repository: str
    """The digest of the repository's refs and the objects they name (`cluster.bundle`)."""
    tree: TreeRecipe
    environment: EnvRecipe
    sandbox: str
    paths: list[str] = []
    pythonpath: list[str]
    """Import roots, relative to the tree."""
    pytest_args: list[str] = []
    env: dict[str, str] = {}
    timeout: float
    each: list[EachRun] | None = None
    """None: one run over `paths`."""
    keep_log: bool = False
    stop: str
    """The name of the bout's stop event: set, it ends the unit."""


class UnitResult(BaseModel):
    """A unit's runs as the local run would return them (`""` keys a single run)."""

    model_config = ConfigDict(frozen=True)

    runs: dict[str, TestRun]
    tree: str
    """The tree's path on the worker, which the runs' messages may name."""
    worker: str
    """The worker's name."""
    address: str = ""
    """The worker's address, where a run that must follow this one is sent."""
    log: bytes = b""
    """The end of the run's output, compressed (only when the unit asked for it)."""
    setup_seconds: float = Field(default=0.0)
    """Time the worker spent on the repository, tree and environment before pytest."""
    needs_repository: bool = False
    """The unit came without the repository, and this worker has none of its content:
    nothing ran, and the unit is to be sent again with it."""


def pack_log(path: Path) -> bytes:
    """The end of a log, at most `LOG_LIMIT` bytes of it, compressed."""
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - LOG_LIMIT))
            return zlib.compress(handle.read())
    except OSError:
        return b""


def unpack_log(data: bytes) -> bytes:
    return zlib.decompress(data) if data else b""


async def recipe_for(environment: Environment, uv_bin: Path) -> EnvRecipe:
    """What a worker needs to make an environment like `environment`.

    A dated environment keeps its resolution beside it. Any other environment bugbout
    built is described by what it holds (`uv pip freeze`), without the project itself,
    which the tests import from their tree.

    Raises:
        BugboutError: uv could not list the environment.
    """
    if environment.root is None:
        return EnvRecipe(interpreter=str(environment.python))
    marker = environment.root / MARKER_NAME
    try:
        return EnvRecipe(pins=Resolution.model_validate_json(marker.read_bytes()))
    except (OSError, ValueError):
        pass
    lines: list[str] = []
    result = await run_process(
        [str(uv_bin), "pip", "freeze", "--python", str(environment.python)],
        cwd=environment.root,
        env=dict(os.environ),
        timeout=120,
        on_line=lambda stream, line: lines.append(line) if stream == "stdout" else None,
    )
    if result.returncode != 0:
        raise BugboutError(
            f"uv could not list the packages of {environment.root}: {result.stderr_tail.strip()}"
        )
    pins = [
        line.strip()
        for line in lines
        if line.strip() and not line.startswith(("-e", "#")) and " @ file:" not in line
    ]
    version = _version(environment.root)
    return EnvRecipe(pins=Resolution(packages=pins, python=version, interpreter=None))


def _version(root: Path) -> str:
    """The Python version a virtual environment was made with, from its `pyvenv.cfg`."""
    for line in (root / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version_info", "version"):
            return value.strip()
    raise BugboutError(f"{root} names no Python version in its pyvenv.cfg.")


__all__ = [
    "LOG_LIMIT",
    "EachRun",
    "EnvRecipe",
    "TestUnit",
    "TreeRecipe",
    "UnitResult",
    "pack_log",
    "recipe_for",
    "unpack_log",
]
