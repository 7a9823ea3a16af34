"""A tree's files as data: how a tree a stage built here is described to another machine.

A worker of a cluster has the repository's commits but not the scratch trees the
coordinator made from them (a patch applied, the fix's tests laid over, an author's
tests). Such a tree is sent as the commit it was copied from and the files that differ
from that commit's pristine tree, which are few: the rest the worker makes itself.

The comparison reads bytes, never dates: a pristine tree's files carry their commit's
time, and two commits made in the same second with a file of the same size would pass
for one by their metadata.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict


class FileEntry(BaseModel):
    """One path of a tree: a file with its bytes, a link with its target, an empty
    directory, or a path the tree no longer has."""

    model_config = ConfigDict(frozen=True)

    path: str
    kind: Literal["file", "link", "dir", "deleted"]
    data: bytes = b""
    """A file's bytes, or a link's target."""
    executable: bool = False


class FileSet(BaseModel):
    """Files to lay over a tree, in the order they are laid."""

    model_config = ConfigDict(frozen=True)

    entries: list[FileEntry] = []

    @property
    def size(self) -> int:
        return sum(len(entry.data) for entry in self.entries)


def snapshot(root: Path) -> FileSet:
    """Every file, link and empty directory under `root`."""
    return FileSet(entries=[_entry(root, rel) for rel in _walk(root)])


def changes(tree: Path, origin: Path | None) -> FileSet:
    """What turns `origin` (a pristine tree; None for an empty one) into `tree`: the
    files that differ or are new, then the paths `tree` lacks."""
    if origin is None:
        return snapshot(tree)
    entries = [_entry(tree, rel) for rel in _walk(tree) if not _same(tree / rel, origin / rel)]
    entries += [
        FileEntry(path=rel, kind="deleted")
        for rel in _walk(origin)
        if not os.path.lexists(tree / rel)
    ]
    return FileSet(entries=entries)


def lay_down(files: FileSet, root: Path) -> None:
    """Make `root` hold `files`: over what it has, removing what they delete.

    Raises:
        ValueError: an entry's path leads out of `root`.
    """
    for entry in files.entries:
        parts = Path(entry.path).parts
        if not parts or Path(entry.path).is_absolute() or ".." in parts:
            raise ValueError(f"{entry.path!r} is not a path inside a tree")
        target = root / entry.path
        _clear(target, keep_dir=entry.kind == "dir")
        if entry.kind == "deleted":
            continue
        _make_parent(root, target)
        if entry.kind == "dir":
            target.mkdir(exist_ok=True)
        elif entry.kind == "link":
            os.symlink(entry.data.decode("utf-8", "surrogateescape"), target)
        else:
            target.write_bytes(entry.data)
            if entry.executable:
                target.chmod(target.stat().st_mode | 0o111)


def _walk(root: Path) -> Iterator[str]:
    """Relative paths of the files, links and empty directories under `root`, sorted;
    a link to a directory is a link, never followed."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        here = Path(folder)
        rel_folder = here.relative_to(root)
        for name in sorted(files):
            yield str(rel_folder / name) if str(rel_folder) != "." else name
        for name in list(dirs):
            if (here / name).is_symlink():
                dirs.remove(name)
                yield str(rel_folder / name) if str(rel_folder) != "." else name
        if not files and not dirs and here != root:
            yield str(rel_folder)


def _entry(root: Path, rel: str) -> FileEntry:
    path = root / rel
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return FileEntry(path=rel, kind="link", data=os.fsencode(os.readlink(path)))
    if stat.S_ISDIR(info.st_mode):
        return FileEntry(path=rel, kind="dir")
    return FileEntry(
        path=rel, kind="file", data=path.read_bytes(), executable=bool(info.st_mode & 0o100)
    )


def _same(path: Path, other: Path) -> bool:
    try:
        mine, theirs = path.lstat(), other.lstat()
    except OSError:
        return False
    if stat.S_IFMT(mine.st_mode) != stat.S_IFMT(theirs.st_mode):
        return False
    if stat.S_ISLNK(mine.st_mode):
        return os.readlink(path) == os.readlink(other)
    if stat.S_ISDIR(mine.st_mode):
        return True
    return (mine.st_mode & 0o100) == (theirs.st_mode & 0o100) and filecmp.cmp(
        path, other, shallow=False
    )


def _make_parent(root: Path, target: Path) -> None:
    """The folders above `target`, a file or link standing where one goes removed (a
    path the tree turned from a file into a folder)."""
    folder = root
    for part in target.relative_to(root).parts[:-1]:
        folder = folder / part
        if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
            folder.unlink()
        folder.mkdir(exist_ok=True)


def _clear(target: Path, *, keep_dir: bool) -> None:
    if target.is_dir() and not target.is_symlink():
        if not keep_dir:
            shutil.rmtree(target)
    elif os.path.lexists(target):
        target.unlink()
