"""Shared fixtures. Git repositories come from `tests/gitrepo.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """An empty repository on branch `main`, isolated from the machine's git config."""
    return GitRepo(tmp_path / "repo")
