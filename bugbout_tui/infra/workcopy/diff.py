"""Git's diff of a working copy against its baseline, read into a `Patch`: each file
pair with its own text, split into source, tests and other.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.patch import ChangeStatus, FileChange, Part, Patch, split_path
from bugbout_tui.infra.git import hermetic_env, run_git, run_hermetic_git
from bugbout_tui.infra.workcopy.index import hash_name_of
from bugbout_tui.infra.workcopy.model import WorkingCopy

_DIFF_OPTIONS = (
    "-z",
    "--patch-with-raw",
    "--binary",
    "--full-index",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
_SYMLINK_MODE = 0o120000


@dataclass
class _Pair:
    """One file pair of git's diff, with the patch text git wrote for it."""

    letter: str
    old_mode: int
    new_mode: int
    path: bytes
    old_path: bytes | None
    text: bytes = b""


_SECTION = re.compile(rb"(?m)^(?=diff --git )")
_STATUSES: dict[str, ChangeStatus] = {
    "A": "added",
    "M": "modified",
    "T": "modified",
    "D": "deleted",
    "R": "renamed",
}


def diff_pairs(
    wc: WorkingCopy, gone: bool, paths: Sequence[bytes] = (), *extra: str
) -> list[_Pair]:
    if gone:
        empty = hashlib.new(hash_name_of(wc.baseline_tree), b"tree 0\0").hexdigest()
        args = ["diff-tree", "-r", *_DIFF_OPTIONS, *extra, wc.baseline_tree, empty]
        env, cwd = hermetic_env(wc.git_dir), wc.git_dir
    else:
        args = ["diff-index", "--cached", *_DIFF_OPTIONS, *extra, wc.baseline_tree]
        env, cwd = hermetic_env(wc.git_dir, wc.path), wc.path
    pathspec = [os.fsdecode(p) for p in paths]
    return _parse_diff(run_hermetic_git(*args, "--", *pathspec, env=env, cwd=cwd))


def _parse_diff(out: bytes) -> list[_Pair]:
    """Split `--patch-with-raw -z` output into pairs, each with its own patch text.

    The raw records come first, in the order the patch sections follow; a type change
    (file ↔ symlink) is written as two sections, a deletion and a creation.
    """
    pairs = []
    fields = out.split(b"\0")
    position = 0
    while position < len(fields) and fields[position].startswith(b":"):
        meta = fields[position][1:].split(b" ")
        letter = meta[4][:1].decode()
        if letter in ("R", "C"):
            old, path = fields[position + 1], fields[position + 2]
            position += 3
        else:
            old, path = None, fields[position + 1]
            position += 2
        pairs.append(_Pair(letter, int(meta[0], 8), int(meta[1], 8), path, old))
    raw_length = sum(len(f) + 1 for f in fields[:position])
    patch = out[raw_length:].lstrip(b"\0")
    sections = [s for s in _SECTION.split(patch) if s]
    expected = sum(2 if pair.letter == "T" else 1 for pair in pairs)
    if len(sections) != expected:
        raise BugboutError(
            f"Could not read git's diff: {len(pairs)} files but {len(sections)} sections."
        )
    cursor = 0
    for pair in pairs:
        count = 2 if pair.letter == "T" else 1
        pair.text = b"".join(sections[cursor : cursor + count])
        cursor += count
    return pairs


def redo_odd_pairs(
    wc: WorkingCopy, gone: bool, pairs: list[_Pair], layout: tuple[str, str]
) -> list[_Pair]:
    """Diff again the pairs that cannot be stored as they are.

    A rename across parts (a test helper moved into the package) becomes a deletion and
    an addition, so each part applies on its own. Text that is not UTF-8 becomes a binary
    patch, so the JSON record keeps its bytes exact.
    """
    crossing = [
        p
        for p in pairs
        if p.old_path is not None and _part(p.old_path, layout) != _part(p.path, layout)
    ]
    unreadable = [p for p in pairs if not _readable(p)]
    if not crossing and not unreadable:
        return pairs
    redo = {id(p) for p in crossing + unreadable}
    paths = sorted(
        {q for p in crossing + unreadable for q in (p.path, p.old_path) if q is not None}
    )
    if unreadable:
        binary = b"".join(
            _attribute_pattern(q) + b" -diff\n"
            for p in unreadable
            for q in (p.path, p.old_path)
            if q is not None
        )
        with (wc.git_dir / "info" / "attributes").open("ab") as handle:
            handle.write(binary)
    again = diff_pairs(wc, gone, paths, "--no-renames")
    return [p for p in pairs if id(p) not in redo] + again


def _attribute_pattern(path: bytes) -> bytes:
    """An attributes pattern matching exactly `path` (anchored, globs escaped, quoted)."""
    escaped = re.sub(rb"([\\*?\[])", rb"\\\1", path)
    quoted = escaped.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    quoted = quoted.replace(b"\n", b"\\n").replace(b"\t", b"\\t")
    return b'"/' + quoted + b'"'


def _readable(pair: _Pair) -> bool:
    try:
        pair.text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _part(path: bytes, layout: tuple[str, str]) -> Part:
    return split_path(path.decode(), *layout)


def assemble_patch(pairs: list[_Pair], layout: tuple[str, str], notes: list[str]) -> Patch:
    texts: dict[Part, list[str]] = {"source": [], "tests": [], "other": []}
    files = []
    for pair in sorted(pairs, key=lambda p: p.path):
        path = pair.path.decode()
        part = _part(pair.path, layout)
        added, removed, binary = _counts(pair.text)
        mode = pair.old_mode if pair.letter == "D" else pair.new_mode
        texts[part].append(pair.text.decode("utf-8"))
        files.append(
            FileChange(
                path=path,
                old_path=pair.old_path.decode() if pair.old_path is not None else None,
                status=_STATUSES[pair.letter],
                part=part,
                binary=binary,
                symlink=mode == _SYMLINK_MODE,
                added_lines=added,
                removed_lines=removed,
            )
        )
    return Patch(
        source="".join(texts["source"]),
        tests="".join(texts["tests"]),
        other="".join(texts["other"]),
        files=files,
        notes=notes,
    )


def _counts(text: bytes) -> tuple[int, int, bool]:
    """Lines added and removed, and whether the section is a binary patch."""
    added = removed = 0
    in_hunk = False
    for line in text.split(b"\n"):
        if line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line.startswith(b"+"):
            added += 1
        elif in_hunk and line.startswith(b"-"):
            removed += 1
    return added, removed, b"\nGIT binary patch\n" in text


def commit_patch(repo: Path, base: str, fix: str, layout: tuple[str, str]) -> Patch:
    """The change from `base` to `fix` in `repo`, split as a harvested patch is.

    The maintainers' fix goes through scoring as an agent's patch does, so it is read
    into the same `Patch`, its files split by the same rule and only its source part
    ever applied. Renames are written as a deletion and an addition, so a file moved
    across parts applies on its own; text that is not UTF-8 is diffed again as binary,
    so the patch keeps its bytes exact.
    """
    pairs = _commit_pairs(repo, base, fix, (), {})
    unreadable = [p for p in pairs if not _readable(p)]
    if unreadable:
        with tempfile.TemporaryDirectory(prefix="bugbout-attributes-") as scratch:
            attributes = Path(scratch) / "attributes"
            attributes.write_bytes(
                b"".join(_attribute_pattern(p.path) + b" -diff\n" for p in unreadable)
            )
            config = {"core.attributesFile": str(attributes)}
            again = _commit_pairs(repo, base, fix, [p.path for p in unreadable], config)
        redone = {id(p) for p in unreadable}
        pairs = [p for p in pairs if id(p) not in redone] + again
    return assemble_patch(pairs, layout, [])


def _commit_pairs(
    repo: Path, base: str, fix: str, paths: Sequence[bytes], config: dict[str, str]
) -> list[_Pair]:
    pathspec = [":(literal)" + os.fsdecode(p) for p in paths]
    args = ["diff-tree", "-r", "--no-renames", *_DIFF_OPTIONS, base, fix, "--", *pathspec]
    return _parse_diff(run_git(repo, *args, config=config))
