"""The repositories the benchmarks build and commit to.

git runs in the environment bugbout gives scratch trees (`hermetic_env`: no user or system
configuration, no inherited `GIT_*` variable), with one fixed author, so that neither the
machine's settings nor a signing hook changes what is built or how long it takes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from bugbout_tui.infra.git import hermetic_env

AUTHOR = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    """Run `git <args>` in `repo` and return its output, stripped; failures raise."""
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**hermetic_env(), **AUTHOR},
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def init(repo: Path) -> None:
    """Make `repo` (created if missing) an empty repository on branch `main`."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "--quiet", "--initial-branch=main")


def commit(repo: Path, message: str, files: Mapping[str, str] | None = None) -> str:
    """Write `files` (path → text), commit everything in the tree, return the commit."""
    for path, text in (files or {}).items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")
