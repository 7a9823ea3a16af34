"""Pristine source trees, one per commit, and scratch copies of them.

A pristine tree is `git archive` of a commit: no `.git`, nothing from the future, and
the same bytes every time. It is extracted once under `BUGBOUT_HOME/trees/` and never
written to again; anything that runs code gets a scratch copy, because a test (or an
agent) may write into the tree it runs in.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.infra.git import git_env


def repo_key(repo: Path) -> str:
    """A readable, collision-free directory name for a repository on this machine."""
    resolved = repo.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return f"{resolved.name}-{digest}"


def pristine_tree(repo: Path, commit: str, *, home: Path | None = None) -> Path:
    """The tree of `commit`, extracted once and reused.

    Extraction goes to a temporary directory that is renamed into place, so a crash
    mid-way never leaves a half tree that a later run would trust.
    """
    root = (home or bugbout_home()) / "trees" / repo_key(repo)
    target = root / commit
    if target.is_dir():
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{commit[:12]}."))
    try:
        archive = subprocess.Popen(
            ["git", "-C", str(repo), "archive", "--format=tar", commit],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(user_config=False),
        )
        assert archive.stdout is not None
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(staging, filter="tar")
        stderr = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
        if archive.wait() != 0:
            raise BugboutError(f"git archive {commit[:12]} failed in {repo}: {stderr.strip()}")
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():
                raise
            shutil.rmtree(staging)  # another process extracted the same commit first
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def copy_tree(source: Path, destination: Path) -> Path:
    """A writable copy of a tree; symlinks are copied as links, never followed."""
    shutil.copytree(source, destination, symlinks=True)
    return destination
