"""The built-in Lite set in a bout: its repository, written once per machine, and its
package index, served on 127.0.0.1 while a bout needs it.

The Lite projects (`demo.lite`) are small repositories whose environments fail for one
known reason each, against a universe of packages that exists only in the local index
built from them: a yanked release, a typo's twin, an sdist with no wheel. So a Lite task
always installs from that index, whatever `[env] index` says, and its results are kept
under the set's digest rather than the index's address (a new port every run): a Lite
set changed in any file (a project, a package of the universe, the code that builds
them) is a new repository, a new mining and new controls.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import Task
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.infra.package_index import PackageIndex


def lite_digest() -> str:
    """A digest of the Lite set as this bugbout ships it: every file of its data and the
    module that builds its repository and universe. Read once per process."""
    return _digest()


@functools.cache
def _digest() -> str:
    digest = hashlib.sha256()
    demo = resources.files("bugbout_tui.demo")
    stack = [demo / "lite"]
    files: list[tuple[str, bytes]] = [("lite.py", (demo / "lite.py").read_bytes())]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                stack.append(entry)
            elif entry.is_file() and not entry.name.endswith((".pyc", ".pyo")):
                files.append((str(entry), entry.read_bytes()))
    for name, data in sorted(files):
        digest.update(name.split("bugbout_tui/demo/", 1)[-1].encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


def lite_index_label() -> str:
    """How a Lite task's conditions name its index: by the set it serves."""
    return f"the Lite index of set {lite_digest()}"


_COMMITS = "commits.json"


@dataclass(frozen=True)
class LiteRepository:
    """The Lite repository on this machine and each project's base and fix commits."""

    path: Path
    commits: dict[str, tuple[str, str]]

    def tasks(self) -> list[Task]:
        from bugbout_tui.demo.lite import lite_tasks  # the Lite set, read when asked for

        return lite_tasks(self.commits)


def lite_repository(home: Path | None = None) -> LiteRepository:
    """The Lite repository under BUGBOUT_HOME, written the first time it is asked for.

    It is written beside its final place and renamed there with its commits, so a crash
    leaves no half repository that a later bout would take for whole; two processes
    writing it at once both succeed, and one copy stays.
    """
    root = (home or bugbout_home()) / "lite" / f"repository-{lite_digest()}"
    found = _read(root)
    if found is not None:
        return found
    from bugbout_tui.demo.lite import write_lite_repository  # only to write it

    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root.parent, prefix=".lite."))
    try:
        commits = write_lite_repository(staging / "repository")
        (staging / _COMMITS).write_text(json.dumps(commits, indent=2), encoding="utf-8")
        try:
            staging.rename(root)
        except OSError:
            if _read(root) is None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    written = _read(root)
    if written is None:
        raise BugboutError(f"the Lite repository could not be written in {root}")
    return written


def _read(root: Path) -> LiteRepository | None:
    try:
        raw = json.loads((root / _COMMITS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    commits = {task: (pair[0], pair[1]) for task, pair in raw.items()}
    return LiteRepository(root / "repository", commits)


@dataclass(frozen=True)
class IndexUse:
    """Where an environment task installs from and is audited against."""

    simple: str
    """The simple API (PEP 691) a clean install reads."""
    api: str
    """The JSON API the audit reads (yanked releases, removed projects, advisories)."""


class LiteIndex:
    """The Lite universe served on 127.0.0.1, started on first need and stopped by
    `close`; the packages are built into a scratch folder each time (a second or two)."""

    def __init__(self, home: Path | None = None) -> None:
        self._home = home
        self._index: PackageIndex | None = None
        self._workdir: Path | None = None
        self._lock = asyncio.Lock()

    async def use(self) -> IndexUse:
        async with self._lock:
            if self._index is None:
                self._index = await asyncio.to_thread(self._start)
            index = self._index
        return IndexUse(index.url, index.api_url)

    def _start(self) -> PackageIndex:
        from bugbout_tui.demo.lite import publish_universe  # only to serve it

        parent = (self._home or bugbout_home()) / "lite"
        parent.mkdir(parents=True, exist_ok=True)
        self._workdir = Path(tempfile.mkdtemp(dir=parent, prefix="universe."))
        index = PackageIndex()
        index.__enter__()
        try:
            publish_universe(index, self._workdir)
        except BaseException:
            index.__exit__(None, None, None)
            raise
        return index

    def close(self) -> None:
        """Stop serving and drop the built packages; nothing if it never started."""
        index, self._index = self._index, None
        if index is not None:
            index.__exit__(None, None, None)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
