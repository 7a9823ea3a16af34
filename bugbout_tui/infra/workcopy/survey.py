"""What changed in a working copy, as `lstat` tells it, before anything is hashed:
the paths a patch would hold, and those left out with why.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from bugbout_tui.core.patch import split_path
from bugbout_tui.infra.git import run_hermetic_git
from bugbout_tui.infra.handover import Handover
from bugbout_tui.infra.workcopy.junk import is_junk, junk_name
from bugbout_tui.infra.workcopy.model import WorkingCopy

_GITLINK_MODE = 0o160000


class Change(NamedTuple):
    """A path the patch would hold, found before anything is hashed."""

    path: bytes
    letter: str
    """A (new), M (changed) or D (deleted)."""
    weight: int
    """What it weighs against the cap: the larger of its size before and after."""


@dataclass
class Survey:
    """What changed on disk, as `lstat` tells it, and what is left out, with why."""

    changes: list[Change] = field(default_factory=list)
    left_out: list[tuple[bytes, str]] = field(default_factory=list)


def survey_changes(
    wc: WorkingCopy, env: dict[str, str], handed: Handover, limit: int, layout: tuple[str, str]
) -> Survey:
    """Every path the patch would hold, leaving out junk, giants and odd files.

    Nothing is hashed and the index is not changed: the caps are decided on this first.
    """
    found = _status(env, wc.path)
    venvs = {
        path[: -len(b"/pyvenv.cfg")]
        for path in found.untracked + found.ignored
        if path.endswith(b"/pyvenv.cfg")
    }
    survey = Survey()
    for path in found.ignored:
        name = os.fsdecode(path)
        junk = _in_any(path, venvs) or is_junk(name)
        if not junk and split_path(name.rstrip("/"), *layout) == "source":
            survey.left_out.append((path, "the project's .gitignore ignores it"))
    candidates: list[tuple[bytes, bool]] = []
    for path, letter, mode in found.changed:
        if mode == _GITLINK_MODE:
            survey.left_out.append((path, "a git submodule"))
        elif letter == "D":
            survey.changes.append(Change(path, "D", _handed_size(handed, path)))
        else:
            candidates.append((path, True))
    candidates += [(path, False) for path in found.untracked if not _in_any(path, venvs)]
    root = os.fsencode(wc.path) + b"/"
    for path, tracked in candidates:
        action, reason, size = _decide(root + path, tracked, limit)
        before = _handed_size(handed, path) if tracked else 0
        if action == "add":
            survey.changes.append(Change(path, "M" if tracked else "A", max(before, size)))
        elif action == "remove":
            survey.changes.append(Change(path, "D", before))
        if reason:
            survey.left_out.append((path, reason))
    skipped = {path.rstrip(b"/") for path in found.untracked + found.ignored if path.endswith(b"/")}
    for path, kind in _special_files(root, skipped | venvs):
        if path not in handed.files:  # a handed file turned special: git saw it, `_decide` said
            survey.left_out.append((path, f"a special file ({kind})"))
    return survey


@dataclass
class _Status:
    changed: list[tuple[bytes, str, int]]
    """Tracked files that differ on disk: path, git's letter (M, T, D), mode in the index."""
    untracked: list[bytes]
    ignored: list[bytes]


def _status(env: dict[str, str], cwd: Path) -> _Status:
    out = run_hermetic_git(
        "status",
        "--porcelain=v2",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--no-renames",
        env=env,
        cwd=cwd,
    )
    status = _Status([], [], [])
    records = iter(out.split(b"\0"))
    for record in records:
        kind = record[:2]
        if kind == b"1 ":
            fields = record.split(b" ", 8)
            letter = fields[1][1:2].decode()
            if letter != ".":
                status.changed.append((fields[8], letter, int(fields[4], 8)))
        elif kind == b"? ":
            status.untracked.append(record[2:])
        elif kind == b"! ":
            status.ignored.append(record[2:])
        elif kind == b"2 ":
            next(records)  # a rename's origin; cannot occur with --no-renames
    return status


def _handed_size(handed: Handover, path: bytes) -> int:
    file = handed.files.get(path)
    return file.size if file is not None else 0


def _decide(path: bytes, tracked: bool, limit: int) -> tuple[str, str | None, int]:
    """What to do with one changed path: "add" it, "remove" it from the index, or "keep"
    the index as it was; when the file is left out, why; and its size on disk."""
    try:
        st = os.lstat(path)
    except OSError:
        return ("remove" if tracked else "keep"), None, 0
    if stat.S_ISLNK(st.st_mode):
        return "add", None, st.st_size  # git stores the link's target text, never follows it
    if stat.S_ISREG(st.st_mode):
        if st.st_size > limit:
            size, most = human_size(st.st_size), human_size(limit)
            return "keep", f"{size} is over the {most} limit for harvested files", 0
        if not os.access(path, os.R_OK):
            return "keep", "it cannot be read", 0
        return "add", None, st.st_size
    if stat.S_ISDIR(st.st_mode):
        if tracked:
            return "remove", None, 0  # a file replaced by a directory: its files come as new
        return "keep", "a nested git repository", 0
    kind = _special_kind(st.st_mode) or "of an unknown type"
    if tracked:
        return "remove", f"a special file ({kind}); the file counts as deleted", 0
    return "keep", f"a special file ({kind})", 0


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def _special_kind(mode: int) -> str | None:
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), None)


def _special_files(root: bytes, skipped: set[bytes]) -> list[tuple[bytes, str]]:
    """Pipes, sockets and devices below `root`, as (path, kind), none of them opened.

    Git's own walk passes them over in silence, so they are looked for here: directories
    only listed, never entered through a link, with the directories git already left out
    whole (ignored, nested repositories, junk, virtualenvs) and `.git` skipped. A
    directory is entered only once its own name is known not to be junk, so each name is
    matched against the patterns once.
    """
    found = []
    pending = [b""]
    while pending:
        folder = pending.pop()
        try:
            entries = os.scandir(root + folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                path = folder + entry.name
                if entry.is_dir(follow_symlinks=False):
                    junk = entry.name == b".git" or junk_name(os.fsdecode(entry.name), True)
                    if not junk and path not in skipped:
                        pending.append(path + b"/")
                elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                    with contextlib.suppress(OSError):
                        kind = _special_kind(entry.stat(follow_symlinks=False).st_mode)
                        if kind is not None and not junk_name(os.fsdecode(entry.name), False):
                            found.append((path, kind))
    return found


def _in_any(path: bytes, directories: set[bytes]) -> bool:
    return any(path.startswith(d + b"/") for d in directories)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            break
        value /= 1024
    if unit == "B":
        return f"{size} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
