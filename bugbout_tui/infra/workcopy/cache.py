"""What every working copy of one commit shares: the resolved commit, the manifest of
its pristine tree and the baseline trees, kept beside the pristine tree.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.infra.git import GitError, hermetic_env, run_hermetic_git
from bugbout_tui.infra.workcopy.index import Entry

_EXACT_BYTES = "* -text -filter -ident -working-tree-encoding !eol\n"
"""Our attributes win over the project's: a patch records bytes exactly as they are."""


@dataclass(frozen=True)
class Source:
    commit: str
    objects: Path
    object_format: str


def resolve_commit(repo: Path, base_commit: str) -> Source:
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
    return Source(commit, Path(objects), object_format)


_MANIFEST_LINE = re.compile(rb"([0-7]+) ([0-9a-f]+) [0-3]\t([^\0]*)\0")


def init_git_dir(git_dir: Path, alternates: Iterable[Path]) -> None:
    """Make `git_dir` usable: alternates to the repository's objects, exact-bytes attributes.

    Objects are borrowed through `objects/info/alternates`, never copied, so a git dir
    costs a few small files whatever the size of the repository.
    """
    (git_dir / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (git_dir / "info").mkdir(exist_ok=True)
    lines = "".join(f"{path}\n" for path in alternates)
    (git_dir / "objects" / "info" / "alternates").write_text(lines)
    (git_dir / "info" / "attributes").write_text(_EXACT_BYTES)


def init_args(git_dir: Path, source: Source) -> tuple[str, ...]:
    object_format = f"--object-format={source.object_format}"
    return ("init", "--quiet", "--bare", "--template=", object_format, str(git_dir))


@dataclass(frozen=True)
class CommitCache:
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

    def entries(self) -> list[Entry]:
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


def commit_cache(pristine: Path, source: Source) -> CommitCache:
    cache = CommitCache(pristine.parent / f"{pristine.name}.git")
    if (cache.root / "manifest").is_file():
        return cache
    staging = Path(tempfile.mkdtemp(dir=pristine.parent, prefix=f".{pristine.name}.git."))
    try:
        run_hermetic_git(*init_args(staging, source), env=hermetic_env(), cwd=pristine.parent)
        init_git_dir(staging, [source.objects])
        env = hermetic_env(staging, pristine, staging / "index")
        run_hermetic_git("read-tree", source.commit, env=env, cwd=pristine)
        _unlink_filled_submodules(pristine, env)
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


def _unlink_filled_submodules(pristine: Path, env: dict[str, str]) -> None:
    """Drop from the index each submodule whose files the pristine tree holds, so that
    `git add` records those files: the agent is handed them as files, and a change to
    one is a change like any other. A submodule the tree lacks stays a gitlink."""
    staged = run_hermetic_git("ls-files", "--stage", "-z", env=env, cwd=pristine)
    filled = [
        path
        for mode, _, path in _MANIFEST_LINE.findall(staged)
        if mode == b"160000" and any(os.scandir(pristine / os.fsdecode(path)))
    ]
    if filled:
        paths = b"".join(path + b"\0" for path in filled)
        run_hermetic_git(
            "update-index", "--force-remove", "-z", "--stdin", env=env, cwd=pristine, input=paths
        )
