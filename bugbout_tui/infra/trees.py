"""Pristine source trees, one per commit, and scratch copies of them.

A pristine tree is `git archive` of a commit, with the files of each of its submodules
at the commit it records (`submodules.py`): no `.git`, nothing from the future, and the
same bytes every time. It is extracted once under `BUGBOUT_HOME/trees/` and never
written to again; anything that runs code gets a scratch copy, because a test (or an
agent) may write into the tree it runs in.

Trees made before submodules were included sit under a bare commit id: no current tree
is ever read from there, so the first use of a repository's trees in a process removes
them.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import secrets
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.fs import write_model
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.infra.git import git_env
from bugbout_tui.infra.submodules import (
    MissingSubmodule,
    MissingSubmodules,
    fill_submodules,
    worth_retrying,
)


def repo_key(repo: Path) -> str:
    """A readable, collision-free directory name for a repository on this machine."""
    resolved = repo.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return f"{resolved.name}-{digest}"


def pristine_tree(repo: Path, commit: str, *, home: Path | None = None) -> Path:
    """The tree of `commit` with its submodules, extracted once and reused.

    Extraction goes to a temporary directory that is renamed into place, so a crash
    mid-way never leaves a half tree that a later run would trust. A tree that lacks a
    submodule which could not be fetched is kept under another name, with what it lacks
    beside it (`missing_submodules`); a later process tries the fetch once more and, when
    every submodule can be had, makes the whole tree.
    """
    home = home or bugbout_home()
    root = home / "trees" / repo_key(repo)
    _clear_old_layout(root)
    target = root / f"{commit}{_WHOLE}"
    if target.is_dir():
        return target
    partial = root / f"{commit}{_PARTIAL}"
    if partial.is_dir() and not worth_retrying(missing_submodules(partial), home, repo):
        return partial
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{commit[:12]}."))
    try:
        empty = _archive(repo, commit, staging)
        missing = fill_submodules(repo, commit, staging, home=home) if empty else []
        if missing:
            if partial.is_dir():  # still lacking: the tree made before serves
                shutil.rmtree(staging)
                return partial
            write_model(_gaps_file(partial), MissingSubmodules(missing=missing))
        _settle(staging, partial if missing else target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return partial if missing else target


def missing_submodules(tree: Path) -> list[MissingSubmodule]:
    """The submodules a pristine tree lacks, with why; none for a whole tree."""
    if not tree.name.endswith(_PARTIAL):
        return []
    try:
        return MissingSubmodules.model_validate_json(_gaps_file(tree).read_bytes()).missing
    except (OSError, ValidationError):
        return []


_WHOLE = ".tree"
_PARTIAL = ".partial"
"""The names of a tree with every submodule and of one lacking some. A tree made before
submodules were included has a bare commit id for a name, so it is never taken for
either."""


_OLD_LAYOUT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_DOOMED = re.compile(r"\.(?:[0-9a-f]{40}|[0-9a-f]{64})\.[0-9a-f]+\.removing")
"""A tree of the earlier layout while it is removed (renamed so, then deleted)."""
_cleared: set[Path] = set()
_cleared_lock = threading.Lock()


def _clear_old_layout(root: Path) -> None:
    """Remove the trees an earlier version left in `root`, once per process.

    Only a real directory named by a bare commit id goes (or one whose removal was cut
    short): never a `.tree` or `.partial`, a staging directory or a symbolic link, and
    `shutil.rmtree` follows no link inside. Each is first renamed out of the way, which is
    atomic, so of two processes clearing at once only one removes it, and a process of the
    earlier version still running never finds half a tree under the name it reads.
    """
    with _cleared_lock:
        if root in _cleared:
            return
        _cleared.add(root)
    if root.is_symlink():
        return  # not a directory bugbout made
    try:
        with os.scandir(root) as listing:
            entries = [entry for entry in listing if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return  # no trees yet
    for entry in entries:
        if _OLD_LAYOUT.fullmatch(entry.name):
            doomed = os.path.join(root, f".{entry.name}.{secrets.token_hex(4)}.removing")
            try:
                os.rename(entry.path, doomed)
            except OSError:
                continue  # another process took it first
        elif _DOOMED.fullmatch(entry.name):
            doomed = entry.path
        else:
            continue
        shutil.rmtree(doomed, ignore_errors=True)


def _gaps_file(tree: Path) -> Path:
    return tree.with_name(f"{tree.name}.json")


def _archive(repo: Path, commit: str, dest: Path) -> bool:
    """Extract `commit` into `dest`; whether it holds an empty directory.

    git tracks no empty directory, so one in the archive is where a submodule belongs:
    only then is the commit asked for its submodules, and a tree without any costs no
    more than the archive.
    """
    archive = subprocess.Popen(
        ["git", "-C", str(repo), "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(user_config=False),
    )
    assert archive.stdout is not None
    directories: set[str] = set()
    parents: set[str] = set()

    def watched(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
        for member in tar:
            name = member.name.rstrip("/")
            if member.isdir():
                directories.add(name)
            parents.add(posixpath.dirname(name))
            yield member

    with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
        tar.extractall(dest, members=watched(tar), filter="tar")
    stderr = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
    if archive.wait() != 0:
        raise BugboutError(f"git archive {commit[:12]} failed in {repo}: {stderr.strip()}")
    return bool(directories - parents)


def _settle(staging: Path, target: Path) -> None:
    try:
        os.rename(staging, target)
    except OSError:
        if not target.is_dir():
            raise
        shutil.rmtree(staging)  # another process extracted the same commit first


def copy_tree(source: Path, destination: Path) -> Path:
    """A writable copy of a tree; symlinks are copied as links, never followed."""
    shutil.copytree(source, destination, symlinks=True)
    return destination
