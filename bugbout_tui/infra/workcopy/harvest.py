"""Harvesting: the patch an agent left in its working copy, within the caps."""

from __future__ import annotations

import heapq
import os
import stat
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.patch import MAX_PATCH_BYTES, MAX_PATCH_FILES, Patch
from bugbout_tui.infra.git import hermetic_env, run_hermetic_git
from bugbout_tui.infra.handover import Handover
from bugbout_tui.infra.workcopy.diff import assemble_patch, diff_pairs, redo_odd_pairs
from bugbout_tui.infra.workcopy.index import hash_name_of, smudge
from bugbout_tui.infra.workcopy.model import WorkingCopy
from bugbout_tui.infra.workcopy.survey import Change, Survey, human_size, survey_changes

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""A single file larger than this is left out of a patch, with a note."""
NOTES_LISTED = 20
"""Left-out paths named one by one in a patch's notes; the rest are counted."""
LARGEST_LISTED = 5
"""The largest files named in the summary of a patch too large to keep."""
_DELETED_ALL = "every file of the working copy was deleted"


def harvest(
    wc: WorkingCopy,
    *,
    source_dir: str,
    tests_dir: str = "tests",
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_files: int = MAX_PATCH_FILES,
    max_bytes: int = MAX_PATCH_BYTES,
) -> Patch:
    """The patch the agent left in `wc`, split by `split_path(…, source_dir, tests_dir)`.

    Call it once the agent's processes are gone, so the tree holds still while it is read.
    Nothing outside the working copy is read: links are recorded, never followed, and a
    copy deleted outright (or replaced by a link) yields a patch deleting every file.

    A patch of more than `max_files` changed files, or whose changed files weigh more than
    `max_bytes` (each file the larger of its size before and after), is not built: the
    patch returned is empty, says which cap it passed in `oversized`, and sums up what it
    held in its notes. A single file over `max_file_bytes` (or over `max_bytes`, which it
    could never fit) is left out with a note instead.
    """
    layout = (source_dir, tests_dir)
    limit = min(max_file_bytes, max_bytes)
    handed = Handover.read(wc.git_dir)
    try:
        gone = not stat.S_ISDIR(os.lstat(wc.path).st_mode)
    except FileNotFoundError:
        gone = True
    notes: list[str] = []
    env = hermetic_env(wc.git_dir, wc.path)
    if gone:
        notes.append("the working copy was deleted or replaced, so every file counts as deleted")
        survey = Survey([Change(path, "D", file.size) for path, file in handed.files.items()])
    else:
        smudge(wc.git_dir / "index", handed.touched(wc.path), hash_name_of(wc.base_commit))
        survey = survey_changes(wc, env, handed, limit, layout)
    oversized = _over_caps(survey.changes, max_files, max_bytes)
    if oversized is not None:
        summary = _summary(survey.changes)
        return Patch(notes=[*notes, *summary, *_left_out(survey.left_out)], oversized=oversized)
    if not gone:
        _update_index(env, wc.path, survey.changes)
    pairs = []
    for pair in diff_pairs(wc, gone, (), "-M"):
        try:
            for name in (pair.path, pair.old_path or b""):
                name.decode("utf-8")
        except UnicodeDecodeError:
            survey.left_out.append((pair.path, "the name is not valid UTF-8"))
            continue
        pairs.append(pair)
    notes += _left_out(survey.left_out)
    patch = assemble_patch(redo_odd_pairs(wc, gone, pairs, layout), layout, notes)
    deleted = sum(1 for change in patch.files if change.status == "deleted")
    if not gone and wc.files and deleted == wc.files:
        patch.notes.append(_DELETED_ALL)
    return patch


def _update_index(env: dict[str, str], cwd: Path, changes: Sequence[Change]) -> None:
    """Record the surveyed changes in the index: git hashes the files it adds, only those."""
    remove = [change.path for change in changes if change.letter == "D"]
    add = [change.path for change in changes if change.letter != "D"]
    for options, paths in ((["--force-remove"], remove), (["--add", "--replace"], add)):
        if paths:
            run_hermetic_git(
                "update-index",
                "-z",
                *options,
                "--stdin",
                env=env,
                cwd=cwd,
                input=b"\0".join(paths) + b"\0",
            )


def _over_caps(changes: Sequence[Change], max_files: int, max_bytes: int) -> str | None:
    """Which cap the changes pass and by how much; None within both."""
    count = len(changes)
    weight = sum(change.weight for change in changes)
    over = []
    if count > max_files:
        over.append(f"{count:,} changed files, {count - max_files:,} over the cap of {max_files:,}")
    if weight > max_bytes:
        over.append(
            f"{human_size(weight)} of changed files, {human_size(weight - max_bytes)} over the "
            f"cap of {human_size(max_bytes)}"
        )
    return "; ".join(over) or None


def _summary(changes: Sequence[Change]) -> list[str]:
    """A few lines on a patch too large to keep: its counts and its largest files."""
    letters = Counter(change.letter for change in changes)
    weight = sum(change.weight for change in changes)
    largest = heapq.nlargest(LARGEST_LISTED, changes, key=lambda change: change.weight)
    return [
        f"not kept: {len(changes):,} changed files ({letters['A']:,} new, "
        f"{letters['M']:,} modified, {letters['D']:,} deleted), {human_size(weight)} in all",
        "largest: "
        + ", ".join(f"{_shown(change.path)} ({human_size(change.weight)})" for change in largest),
    ]


def _left_out(left_out: list[tuple[bytes, str]]) -> list[str]:
    """One note per left-out path, the first `NOTES_LISTED` by path, and a count of the rest."""
    left_out.sort()
    notes = [f"left out {_shown(path)}: {why}" for path, why in left_out[:NOTES_LISTED]]
    if len(left_out) > NOTES_LISTED:
        notes.append(f"left out {len(left_out) - NOTES_LISTED:,} more, not listed one by one")
    return notes


def _shown(path: bytes) -> str:
    """A path as a note names it; one that is not UTF-8 is quoted with its odd bytes escaped."""
    try:
        return path.decode("utf-8")
    except UnicodeDecodeError:
        return repr(os.fsdecode(path))
