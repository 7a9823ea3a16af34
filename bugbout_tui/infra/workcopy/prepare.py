"""Preparing a working copy: the pristine tree copied without the hidden files, and
the git directory beside it whose index is the baseline the agent was handed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.infra import handover
from bugbout_tui.infra.git import hermetic_argv, hermetic_env, run_hermetic_git
from bugbout_tui.infra.handover import Handover
from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy.cache import (
    CommitCache,
    Source,
    commit_cache,
    init_args,
    init_git_dir,
    resolve_commit,
)
from bugbout_tui.infra.workcopy.index import Entry, hash_name_of, write_index
from bugbout_tui.infra.workcopy.junk import JUNK_PATTERNS
from bugbout_tui.infra.workcopy.model import WorkingCopy

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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
            source = resolve_commit(repo, base_commit)
        else:
            source = resolve_commit(repo, base_commit)
            pristine = _pristine(repo, source.commit, home)
            copier = _start_copy(pristine, dest)
        cache = commit_cache(pristine, source)
        init = subprocess.Popen(
            hermetic_argv(*init_args(git_dir, source)),
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


def copy_argv(source: Path, destination: Path) -> list[str]:
    """The GNU `cp` command line that copies a working copy's tree on Linux.

    It clones blocks where the filesystem can (`--reflink=auto`) and measured about three
    times faster than `shutil.copytree` or a walk with `os.copy_file_range` for a
    2,000-file tree (`benchmarks/checkout.py`, which times this very command). Times are
    kept so that an agent's edit always changes a file's recorded time, and so that git's
    racy-file check never has to re-read an untouched file. Modes follow the source under
    the umask, which keeps the owner's executable bit, the only one git records.
    """
    options = ["-R", "-P", "--preserve=timestamps", "--reflink=auto", "-T"]
    return ["cp", *options, str(source), str(destination)]


def _start_copy(source: Path, destination: Path) -> subprocess.Popen[bytes] | None:
    """Copy a tree, links as links, times kept, never hard-linked: with `cp` on Linux
    (`copy_argv`), elsewhere with `shutil.copytree`, which does the same job."""
    if sys.platform.startswith("linux"):
        return subprocess.Popen(
            copy_argv(source, destination),
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
    source: Source,
    cache: CommitCache,
    entries: Sequence[Entry],
    dest: Path,
    git_dir: Path,
    hidden: Sequence[str],
) -> int:
    """Hide the fix's tests, then record what the agent is handed: as the git dir's index,
    and at full precision beside it (`handover`), with the copy's clock read last."""
    _remove_hidden(dest, hidden)
    init_git_dir(git_dir, [source.objects, cache.objects])
    (git_dir / "info" / "exclude").write_text("".join(f"{p}\n" for p in JUNK_PATTERNS))
    (git_dir / "HEAD").write_text(source.commit + "\n")
    hidden_bytes = [h.encode() for h in hidden]
    kept = [e for e in entries if not _is_hidden(e[0], hidden_bytes)]
    handed = write_index(git_dir / "index", dest, kept, hash_name_of(source.commit))
    clock = handover.clock_reading(dest)
    Handover.write(git_dir, clock, len(source.commit) // 2, handed)
    return len(kept)
