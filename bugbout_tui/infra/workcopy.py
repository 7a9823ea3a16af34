"""Agents' working copies, the patch each one leaves behind, and applying patches to trees.

A working copy is the pristine tree of the base commit (`trees.pristine_tree`) copied
without the fix's test files. It has no `.git`: the git directory that finds the patch lives
beside the copy, never inside it, so an agent sees neither history nor metadata of ours.
The patch is what changed on disk; what the agent says it did does not matter.

**The baseline git compares against is an index written here**, from a manifest of the
pristine tree (path, mode and blob id of every file, hashed once per commit) and the copy's
own `lstat`. Three properties decided it over the alternatives (`git add -A` of the fresh
copy, or `read-tree` of the commit and a refresh, both of which hash every file on every
checkout):

- every file of the commit is in the index, so it counts as tracked: a file the project's
  `.gitignore` would ignore is still seen when the agent edits it (ignore rules only ever
  hide untracked files);
- the manifest hashes the pristine *files*, not the commit's blobs, so content that
  `git archive` rewrote on export (`export-subst`, end-of-line attributes) is the baseline
  the agent was really handed, and no patch shows it as a change;
- the copy's own inode, times and size are recorded, so git knows an untouched file without
  reading it: preparing hashes nothing and harvesting hashes only what changed.

Git's stat data is not exact, though: it compares whole seconds and 32-bit sizes, so an
in-place edit that keeps the size and puts the old modification time back, within the
second the copy was made, would look untouched. Beside the index, `handover` records every
file's `lstat` to the nanosecond and a reading of the copy's clock. At harvest each handed
file is `lstat`ed once; those that differ in any way (the change time, which no process
can set, differs after any write), or that were copied too close to the clock reading to
tell, get their times zeroed in the index, so git must read them to call them unchanged.
Every content change is therefore in the patch, whatever the timestamps, and an untouched
file is still never read.

Git runs with `LC_ALL=C`, without user or system configuration or attributes, with exact
bytes (no end-of-line conversion, no filters) and with literal pathspecs, so nobody's
settings can change a patch. Junk (caches, virtualenvs, editor files, agents' state) is
left out through the git directory's own exclude file, and files over a size limit are
left out after an `lstat`, before git reads a byte of them. Symlinks are recorded as links:
git stores the target text and never follows them. Pipes, sockets and devices, which git's
own walk passes over in silence, are found by a walk of ours (never opened) and named in a
note. What the patch would hold is surveyed before anything is hashed, so a patch past the
caps on files or bytes is refused without git reading a file of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.patch import (
    MAX_PATCH_BYTES,
    MAX_PATCH_FILES,
    ChangeStatus,
    FileChange,
    Part,
    Patch,
    split_path,
)
from bugbout_tui.infra import handover
from bugbout_tui.infra.git import GitError, hermetic_argv, hermetic_env, run_hermetic_git
from bugbout_tui.infra.handover import Handover
from bugbout_tui.infra.trees import pristine_tree

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""A single file larger than this is left out of a patch, with a note."""
NOTES_LISTED = 20
"""Left-out paths named one by one in a patch's notes; the rest are counted."""
LARGEST_LISTED = 5
"""The largest files named in the summary of a patch too large to keep."""

JUNK_PATTERNS = (
    "__pycache__/",
    "*.py[co]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".coverage.*",
    ".tox/",
    ".nox/",
    ".venv/",
    "venv/",
    "*.egg-info/",
    ".eggs/",
    "node_modules/",
    "*.swp",
    "*.swo",
    "*~",
    ".#*",
    ".DS_Store",
    ".codex/",
    ".claude/",
    ".gemini/",
    ".aider*",
)
"""Never part of a patch unless the repository tracks them (gitignore syntax, any depth).

A directory holding `pyvenv.cfg` is a virtualenv whatever its name, and is left out too.
"""

_EXACT_BYTES = "* -text -filter -ident -working-tree-encoding !eol\n"
"""Our attributes win over the project's: a patch records bytes exactly as they are."""

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
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SYMLINK_MODE = 0o120000
_GITLINK_MODE = 0o160000
_DELETED_ALL = "every file of the working copy was deleted"


class WorkingCopy(BaseModel):
    """A prepared checkout, and what `harvest` needs to find its patch later."""

    model_config = ConfigDict(frozen=True)

    path: Path
    """The directory the agent works in: no `.git`, none of the hidden files."""
    git_dir: Path
    """Our git directory, beside the copy; its index is the baseline until harvest."""
    base_commit: str
    baseline_tree: str
    """The tree the agent was handed: the base commit as exported, minus the hidden files."""
    hidden: tuple[str, ...]
    files: int
    """How many files the agent was handed."""


@dataclass(frozen=True)
class _Source:
    commit: str
    objects: Path
    object_format: str


def _resolve(repo: Path, base_commit: str) -> _Source:
    if not base_commit or base_commit.startswith("-"):
        raise UsageError(f"{base_commit!r} is not a commit.")
    try:
        out = run_hermetic_git(
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "objects",
            "--show-object-format",
            "--verify",
            f"{base_commit}^{{commit}}",
            env=hermetic_env(),
            cwd=repo,
        )
    except GitError as exc:
        raise BugboutError(
            f"Cannot check out {base_commit} from {repo}: {exc.stderr or 'not a commit'}"
        ) from exc
    objects, object_format, commit = os.fsdecode(out).splitlines()
    return _Source(commit, Path(objects), object_format)


# --- the pristine manifest -----------------------------------------------------------------


_Entry = tuple[bytes, int, bytes]
"""A manifest line: path, mode, raw object id."""
_MANIFEST_LINE = re.compile(rb"([0-7]+) ([0-9a-f]+) [0-3]\t([^\0]*)\0")


def _init_git_dir(git_dir: Path, alternates: Iterable[Path]) -> None:
    """Make `git_dir` usable: alternates to the repository's objects, exact-bytes attributes.

    Objects are borrowed through `objects/info/alternates`, never copied, so a git dir
    costs a few small files whatever the size of the repository.
    """
    (git_dir / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (git_dir / "info").mkdir(exist_ok=True)
    lines = "".join(f"{path}\n" for path in alternates)
    (git_dir / "objects" / "info" / "alternates").write_text(lines)
    (git_dir / "info" / "attributes").write_text(_EXACT_BYTES)


def _init_args(git_dir: Path, source: _Source) -> tuple[str, ...]:
    object_format = f"--object-format={source.object_format}"
    return ("init", "--quiet", "--bare", "--template=", object_format, str(git_dir))


@dataclass(frozen=True)
class _CommitCache:
    """What every working copy of one commit shares, kept beside its pristine tree.

    A git dir of its own holds the manifest (every pristine file with its mode and blob
    id), the blobs of files that `git archive` rewrote (the repository does not hold
    them), and the baseline tree of each set of hidden files, so the agents racing on
    one task pay for hashing and for tree objects once, not once each.
    """

    root: Path

    @property
    def objects(self) -> Path:
        return self.root / "objects"

    def entries(self) -> list[_Entry]:
        data = (self.root / "manifest").read_bytes()
        return [
            (path, int(mode, 8), bytes.fromhex(oid.decode()))
            for mode, oid, path in _MANIFEST_LINE.findall(data)
        ]

    def _baseline_file(self, hidden: Sequence[str]) -> Path:
        key = hashlib.sha256("\0".join(hidden).encode()).hexdigest()[:32]
        return self.root / "baselines" / key

    def baseline(self, hidden: Sequence[str]) -> str | None:
        try:
            return self._baseline_file(hidden).read_text().strip() or None
        except FileNotFoundError:
            return None

    def remember_baseline(self, hidden: Sequence[str], tree: str) -> None:
        write_atomic(self._baseline_file(hidden), tree + "\n")


def _commit_cache(pristine: Path, source: _Source) -> _CommitCache:
    cache = _CommitCache(pristine.parent / f"{pristine.name}.git")
    if (cache.root / "manifest").is_file():
        return cache
    staging = Path(tempfile.mkdtemp(dir=pristine.parent, prefix=f".{pristine.name}.git."))
    try:
        run_hermetic_git(*_init_args(staging, source), env=hermetic_env(), cwd=pristine.parent)
        _init_git_dir(staging, [source.objects])
        env = hermetic_env(staging, pristine, staging / "index")
        run_hermetic_git("read-tree", source.commit, env=env, cwd=pristine)
        run_hermetic_git("add", "--all", "--force", env=env, cwd=pristine)
        listing = run_hermetic_git("ls-files", "--stage", "-z", env=env, cwd=pristine)
        write_atomic(staging / "manifest", listing)
        try:
            os.rename(staging, cache.root)
        except OSError:
            if not (cache.root / "manifest").is_file():
                raise
            shutil.rmtree(staging)  # another process built it first
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return cache


# --- preparing a working copy --------------------------------------------------------------


def _hidden_paths(hidden: Sequence[str]) -> tuple[str, ...]:
    clean = set()
    for item in hidden:
        path = PurePosixPath(item.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or path.as_posix() in ("", "."):
            raise UsageError(
                f"Cannot hide {item!r} from a working copy: "
                "give paths relative to the repository root."
            )
        clean.add(path.as_posix())
    return tuple(sorted(clean))


def _is_hidden(path: bytes, hidden: Sequence[bytes]) -> bool:
    return any(path == h or path.startswith(h + b"/") for h in hidden)


def _start_copy(source: Path, destination: Path) -> subprocess.Popen[bytes] | None:
    """Copy a tree, links as links, times kept, never hard-linked.

    GNU `cp` clones blocks where the filesystem can (`--reflink=auto`) and measured about
    three times faster than `shutil.copytree` or a walk with `os.copy_file_range` for a
    2,000-file tree (`benchmarks/checkout.py`). Times are kept so that an agent's edit
    always changes a file's recorded time, and so that git's racy-file check never has to
    re-read an untouched file. Modes follow the source under the umask, which keeps the
    owner's executable bit, the only one git records. Elsewhere `shutil.copytree` does
    the same job.
    """
    if sys.platform.startswith("linux"):
        return subprocess.Popen(
            [
                "cp",
                "-R",
                "-P",
                "--preserve=timestamps",
                "--reflink=auto",
                "-T",
                str(source),
                str(destination),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    shutil.copytree(source, destination, symlinks=True)
    return None


def _beyond_symlink(root: Path, relative: str) -> bool:
    parent = root
    for part in PurePosixPath(relative).parts[:-1]:
        parent = parent / part
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(parent).st_mode):
                return True
    return False


def _remove_hidden(root: Path, hidden: Sequence[str]) -> None:
    """Delete the hidden paths, and directories they leave empty (they would hint at them)."""
    for relative in hidden:
        target = root / relative
        if not os.path.lexists(target) or _beyond_symlink(root, relative):
            continue
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
        parent = target.parent
        while parent != root:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


_INDEX_STAT = struct.Struct(">10I")


def _write_index(index: Path, root: Path, entries: Sequence[_Entry], hash_name: str) -> list[bytes]:
    """Write a version 2 git index (gitformat-index) whose stat data is the copy's own,
    and return the same `lstat`s at full precision, as lines of the handover record.

    Each entry: ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size, all
    32-bit; the object id; 16 bits of flags holding the name length; the name,
    NUL-padded to a multiple of 8 bytes. A checksum of everything closes the file.
    """
    mask = 0xFFFFFFFF
    pack = _INDEX_STAT.pack
    chunks = [b"DIRC", struct.pack(">II", 2, len(entries))]
    handed = []
    base = os.fsencode(root) + b"/"
    for path, mode, oid in entries:
        try:
            st = os.lstat(base + path)
        except FileNotFoundError:
            raise BugboutError(
                f"The working copy {root} is incomplete: {os.fsdecode(path)} is missing."
            ) from None
        ctime, ctime_ns = divmod(st.st_ctime_ns, 1_000_000_000)
        mtime, mtime_ns = divmod(st.st_mtime_ns, 1_000_000_000)
        chunks.append(
            pack(
                ctime & mask,
                ctime_ns,
                mtime & mask,
                mtime_ns,
                st.st_dev & mask,
                st.st_ino & mask,
                mode,
                st.st_uid & mask,
                st.st_gid & mask,
                st.st_size & mask,
            )
        )
        padding = 8 - (42 + len(oid) + len(path)) % 8
        chunks.append(oid + min(len(path), 0xFFF).to_bytes(2, "big") + path + b"\0" * padding)
        handed.append(handover.pack(path, st, mode, oid))
    data = b"".join(chunks)
    index.write_bytes(data + hashlib.new(hash_name, data).digest())
    return handed


def prepare_working_copy(
    repo: Path,
    base_commit: str,
    dest: Path,
    *,
    hidden: Sequence[str],
    scratch: Path | None = None,
    home: Path | None = None,
) -> WorkingCopy:
    """A fresh copy of `base_commit` at `dest` without git metadata or the `hidden` paths.

    `scratch` is the git directory that will find the patch (default: `<dest>.git`
    beside it); it must lie outside `dest`. Neither may exist yet, so an old attempt's
    leftovers are never mistaken for a fresh start. `home` overrides `BUGBOUT_HOME`.
    """
    dest = Path(os.path.abspath(dest))
    git_dir = Path(os.path.abspath(scratch)) if scratch else dest.with_name(dest.name + ".git")
    if git_dir == dest or dest in git_dir.parents:
        raise UsageError(f"The git directory {git_dir} must lie outside the working copy {dest}.")
    for path in (dest, git_dir):
        if os.path.lexists(path):
            raise BugboutError(
                f"{path} already exists.",
                hint="Remove it, or give each attempt a directory of its own.",
            )
    hidden_paths = _hidden_paths(hidden)
    enclosing = _enclosing_repository(dest)
    if enclosing is not None:
        raise UsageError(
            f"The working copy {dest} would sit inside the git repository {enclosing}, "
            "where an agent could read its history.",
            hint="Set BUGBOUT_HOME to a directory outside any git repository.",
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    copier = init = None
    try:
        if _OBJECT_ID.fullmatch(base_commit):
            # A full id names its pristine tree before git is asked anything, so the copy
            # runs while the commit is checked and the git dir is made.
            pristine = _pristine(repo, base_commit, home)
            copier = _start_copy(pristine, dest)
            source = _resolve(repo, base_commit)
        else:
            source = _resolve(repo, base_commit)
            pristine = _pristine(repo, source.commit, home)
            copier = _start_copy(pristine, dest)
        cache = _commit_cache(pristine, source)
        init = subprocess.Popen(
            hermetic_argv(*_init_args(git_dir, source)),
            env=hermetic_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        entries = cache.entries()
        _finish(copier, "cp", dest)
        _finish(init, "git init", dest)
        kept = _write_baseline(source, cache, entries, dest, git_dir, hidden_paths)
        baseline = cache.baseline(hidden_paths)
        if baseline is None:
            env = hermetic_env(git_dir, dest, objects=cache.objects)
            baseline = run_hermetic_git("write-tree", env=env, cwd=dest).decode().strip()
            cache.remember_baseline(hidden_paths, baseline)
    except BaseException:
        for proc in (copier, init):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(git_dir, ignore_errors=True)
        raise
    return WorkingCopy(
        path=dest,
        git_dir=git_dir,
        base_commit=source.commit,
        baseline_tree=baseline,
        hidden=hidden_paths,
        files=kept,
    )


def _enclosing_repository(path: Path) -> Path | None:
    for parent in Path(os.path.realpath(path)).parents:
        if os.path.lexists(parent / ".git"):
            return parent
    return None


def _pristine(repo: Path, commit: str, home: Path | None) -> Path:
    return Path(os.path.abspath(pristine_tree(repo, commit, home=home)))


def _finish(proc: subprocess.Popen[bytes] | None, name: str, dest: Path) -> None:
    if proc is None:
        return
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise BugboutError(
            f"Could not prepare the working copy {dest}: {name} failed: "
            f"{err.decode('utf-8', 'replace').strip()}"
        )


def _write_baseline(
    source: _Source,
    cache: _CommitCache,
    entries: Sequence[_Entry],
    dest: Path,
    git_dir: Path,
    hidden: Sequence[str],
) -> int:
    """Hide the fix's tests, then record what the agent is handed: as the git dir's index,
    and at full precision beside it (`handover`), with the copy's clock read last."""
    _remove_hidden(dest, hidden)
    _init_git_dir(git_dir, [source.objects, cache.objects])
    (git_dir / "info" / "exclude").write_text("".join(f"{p}\n" for p in JUNK_PATTERNS))
    (git_dir / "HEAD").write_text(source.commit + "\n")
    hidden_bytes = [h.encode() for h in hidden]
    kept = [e for e in entries if not _is_hidden(e[0], hidden_bytes)]
    handed = _write_index(git_dir / "index", dest, kept, _hash_name(source.commit))
    clock = handover.clock_reading(dest)
    Handover.write(git_dir, clock, len(source.commit) // 2, handed)
    return len(kept)


def _hash_name(object_id: str) -> str:
    return "sha1" if len(object_id) == 40 else "sha256"


# --- harvesting ----------------------------------------------------------------------------


def is_junk(path: str) -> bool:
    """Whether `path` (a trailing `/` marks a directory) matches `JUNK_PATTERNS`."""
    directory = path.endswith("/")
    parts = path.rstrip("/").split("/")
    return any(
        _junk_name(part, directory or position < len(parts) - 1)
        for position, part in enumerate(parts)
    )


_JUNK_FILE = re.compile("|".join(translate(p) for p in JUNK_PATTERNS if not p.endswith("/")))
_JUNK_DIRECTORY = re.compile("|".join(translate(p.removesuffix("/")) for p in JUNK_PATTERNS))
"""`JUNK_PATTERNS` as one expression each for a file's name and a directory's (which the
file patterns match as well), so a name is matched once, not once per pattern."""


def _junk_name(name: str, directory: bool) -> bool:
    """Whether one name, of a directory or of a file, matches `JUNK_PATTERNS`."""
    return (_JUNK_DIRECTORY if directory else _JUNK_FILE).match(name) is not None


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            break
        value /= 1024
    if unit == "B":
        return f"{size} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def _in_any(path: bytes, directories: set[bytes]) -> bool:
    return any(path.startswith(d + b"/") for d in directories)


def _shown(path: bytes) -> str:
    """A path as a note names it; one that is not UTF-8 is quoted with its odd bytes escaped."""
    try:
        return path.decode("utf-8")
    except UnicodeDecodeError:
        return repr(os.fsdecode(path))


def _smudge(index: Path, paths: Iterable[bytes], hash_name: str) -> None:
    """Zero the times of these entries of the index, keeping the rest of their stat data.

    Git then cannot take such a file as unchanged from its `lstat`: one whose size still
    matches is read and compared, one whose size differs is changed without a read (so a
    file grown past the size limit is still never read). The index may be git's own by
    now (version 2 or 3, extensions after the entries); only entry bytes change, so the
    extensions stay valid, and the closing checksum is computed again.
    """
    wanted = set(paths)
    if not wanted:
        return
    data = bytearray(index.read_bytes())
    version, count = struct.unpack_from(">II", data, 4)
    if data[:4] != b"DIRC" or version not in (2, 3):
        raise BugboutError(f"Cannot read the index {index}: version {version} is not expected.")
    digest = hashlib.new(hash_name).digest_size
    offset = 12
    for _ in range(count):
        flags_at = offset + 40 + digest
        flags = int.from_bytes(data[flags_at : flags_at + 2], "big")
        name_at = flags_at + (4 if flags & 0x4000 else 2)  # extended flags follow, in v3
        length = flags & 0xFFF
        if length == 0xFFF:
            length = data.index(0, name_at) - name_at
        if bytes(data[name_at : name_at + length]) in wanted:
            data[offset : offset + 16] = bytes(16)  # ctime, mtime: seconds, nanoseconds
        offset += (name_at - offset + length + 8) & ~7
    data[-digest:] = hashlib.new(hash_name, data[:-digest]).digest()
    index.write_bytes(data)


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


class _Change(NamedTuple):
    """A path the patch would hold, found before anything is hashed."""

    path: bytes
    letter: str
    """A (new), M (changed) or D (deleted)."""
    weight: int
    """What it weighs against the cap: the larger of its size before and after."""


@dataclass
class _Survey:
    """What changed on disk, as `lstat` tells it, and what is left out, with why."""

    changes: list[_Change] = field(default_factory=list)
    left_out: list[tuple[bytes, str]] = field(default_factory=list)


def _survey(
    wc: WorkingCopy, env: dict[str, str], handed: Handover, limit: int, layout: tuple[str, str]
) -> _Survey:
    """Every path the patch would hold, leaving out junk, giants and odd files.

    Nothing is hashed and the index is not changed: the caps are decided on this first.
    """
    found = _status(env, wc.path)
    venvs = {
        path[: -len(b"/pyvenv.cfg")]
        for path in found.untracked + found.ignored
        if path.endswith(b"/pyvenv.cfg")
    }
    survey = _Survey()
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
            survey.changes.append(_Change(path, "D", _handed_size(handed, path)))
        else:
            candidates.append((path, True))
    candidates += [(path, False) for path in found.untracked if not _in_any(path, venvs)]
    root = os.fsencode(wc.path) + b"/"
    for path, tracked in candidates:
        action, reason, size = _decide(root + path, tracked, limit)
        before = _handed_size(handed, path) if tracked else 0
        if action == "add":
            survey.changes.append(_Change(path, "M" if tracked else "A", max(before, size)))
        elif action == "remove":
            survey.changes.append(_Change(path, "D", before))
        if reason:
            survey.left_out.append((path, reason))
    skipped = {path.rstrip(b"/") for path in found.untracked + found.ignored if path.endswith(b"/")}
    for path, kind in _special_files(root, skipped | venvs):
        if path not in handed.files:  # a handed file turned special: git saw it, `_decide` said
            survey.left_out.append((path, f"a special file ({kind})"))
    return survey


def _handed_size(handed: Handover, path: bytes) -> int:
    file = handed.files.get(path)
    return file.size if file is not None else 0


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
                    junk = entry.name == b".git" or _junk_name(os.fsdecode(entry.name), True)
                    if not junk and path not in skipped:
                        pending.append(path + b"/")
                elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                    with contextlib.suppress(OSError):
                        kind = _special_kind(entry.stat(follow_symlinks=False).st_mode)
                        if kind is not None and not _junk_name(os.fsdecode(entry.name), False):
                            found.append((path, kind))
    return found


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
            size, most = _human(st.st_size), _human(limit)
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


def _update_index(env: dict[str, str], cwd: Path, changes: Sequence[_Change]) -> None:
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


def _over_caps(changes: Sequence[_Change], max_files: int, max_bytes: int) -> str | None:
    """Which cap the changes pass and by how much; None within both."""
    count = len(changes)
    weight = sum(change.weight for change in changes)
    over = []
    if count > max_files:
        over.append(f"{count:,} changed files, {count - max_files:,} over the cap of {max_files:,}")
    if weight > max_bytes:
        over.append(
            f"{_human(weight)} of changed files, {_human(weight - max_bytes)} over the cap of "
            f"{_human(max_bytes)}"
        )
    return "; ".join(over) or None


def _summary(changes: Sequence[_Change]) -> list[str]:
    """A few lines on a patch too large to keep: its counts and its largest files."""
    letters = Counter(change.letter for change in changes)
    weight = sum(change.weight for change in changes)
    largest = heapq.nlargest(LARGEST_LISTED, changes, key=lambda change: change.weight)
    return [
        f"not kept: {len(changes):,} changed files ({letters['A']:,} new, "
        f"{letters['M']:,} modified, {letters['D']:,} deleted), {_human(weight)} in all",
        "largest: "
        + ", ".join(f"{_shown(change.path)} ({_human(change.weight)})" for change in largest),
    ]


def _left_out(left_out: list[tuple[bytes, str]]) -> list[str]:
    """One note per left-out path, the first `NOTES_LISTED` by path, and a count of the rest."""
    left_out.sort()
    notes = [f"left out {_shown(path)}: {why}" for path, why in left_out[:NOTES_LISTED]]
    if len(left_out) > NOTES_LISTED:
        notes.append(f"left out {len(left_out) - NOTES_LISTED:,} more, not listed one by one")
    return notes


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


def _diff(wc: WorkingCopy, gone: bool, paths: Sequence[bytes] = (), *extra: str) -> list[_Pair]:
    if gone:
        empty = hashlib.new(_hash_name(wc.baseline_tree), b"tree 0\0").hexdigest()
        args = ["diff-tree", "-r", *_DIFF_OPTIONS, *extra, wc.baseline_tree, empty]
        env, cwd = hermetic_env(wc.git_dir), wc.git_dir
    else:
        args = ["diff-index", "--cached", *_DIFF_OPTIONS, *extra, wc.baseline_tree]
        env, cwd = hermetic_env(wc.git_dir, wc.path), wc.path
    pathspec = [os.fsdecode(p) for p in paths]
    return _parse_diff(run_hermetic_git(*args, "--", *pathspec, env=env, cwd=cwd))


def _attribute_pattern(path: bytes) -> bytes:
    """An attributes pattern matching exactly `path` (anchored, globs escaped, quoted)."""
    escaped = re.sub(rb"([\\*?\[])", rb"\\\1", path)
    quoted = escaped.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    quoted = quoted.replace(b"\n", b"\\n").replace(b"\t", b"\\t")
    return b'"/' + quoted + b'"'


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


def _readable(pair: _Pair) -> bool:
    try:
        pair.text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
        survey = _Survey([_Change(path, "D", file.size) for path, file in handed.files.items()])
    else:
        _smudge(wc.git_dir / "index", handed.touched(wc.path), _hash_name(wc.base_commit))
        survey = _survey(wc, env, handed, limit, layout)
    oversized = _over_caps(survey.changes, max_files, max_bytes)
    if oversized is not None:
        summary = _summary(survey.changes)
        return Patch(notes=[*notes, *summary, *_left_out(survey.left_out)], oversized=oversized)
    if not gone:
        _update_index(env, wc.path, survey.changes)
    pairs = []
    for pair in _diff(wc, gone, (), "-M"):
        try:
            for name in (pair.path, pair.old_path or b""):
                name.decode("utf-8")
        except UnicodeDecodeError:
            survey.left_out.append((pair.path, "the name is not valid UTF-8"))
            continue
        pairs.append(pair)
    notes += _left_out(survey.left_out)
    patch = _assemble(_redo_odd_pairs(wc, gone, pairs, layout), layout, notes)
    deleted = sum(1 for change in patch.files if change.status == "deleted")
    if not gone and wc.files and deleted == wc.files:
        patch.notes.append(_DELETED_ALL)
    return patch


def _part(path: bytes, layout: tuple[str, str]) -> Part:
    return split_path(path.decode(), *layout)


def _redo_odd_pairs(
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
    again = _diff(wc, gone, paths, "--no-renames")
    return [p for p in pairs if id(p) not in redo] + again


def _assemble(pairs: list[_Pair], layout: tuple[str, str], notes: list[str]) -> Patch:
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


# --- applying ------------------------------------------------------------------------------

_APPLY_FAILURE = re.compile(
    r"^error: (?:patch failed: (?P<a>.+):\d+"
    r"|(?P<b>.+?): (?:patch does not apply|already exists in working directory"
    r"|No such file or directory|wrong type)"
    r"|binary patch does not apply to '(?P<c>.+)'"
    r"|the patch applies to '(?P<d>.+)' \("
    r"|affected file '(?P<e>.+)' is beyond a symbolic link)",
    re.MULTILINE,
)


def apply_patch(tree: Path, diff: str) -> None:
    """Apply one part of a patch to `tree` (a scratch copy, not a repository).

    All or nothing: when any file does not apply, nothing is changed and the error names
    the files. Git is kept from looking for a repository above `tree`, which would
    otherwise make it skip every path outside the directory it runs in.
    """
    if not diff.strip():
        return
    tree = Path(os.path.abspath(tree))
    if not tree.is_dir():
        raise BugboutError(f"Cannot apply a patch to {tree}: it is not a directory.")
    env = hermetic_env()
    env["GIT_CEILING_DIRECTORIES"] = str(tree.parent)
    try:
        run_hermetic_git(
            "apply", "--whitespace=nowarn", "-", env=env, cwd=tree, input=diff.encode()
        )
    except GitError as exc:
        failed = []
        for match in _APPLY_FAILURE.finditer(exc.stderr):
            name = next(group for group in match.groups() if group)
            if name not in failed:
                failed.append(name)
        what = ", ".join(failed) if failed else "the patch is malformed"
        raise BugboutError(
            f"The patch does not apply to {tree}: {what}.", hint=f"git said: {exc.stderr}"
        ) from exc
