"""Shared fixtures. Git repositories come from `tests/gitrepo.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from racekit import template


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """An empty repository on branch `main`, isolated from the machine's git config."""
    return GitRepo(tmp_path / "repo")


@pytest.fixture(scope="session")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The race template project (`racekit`), mined and through ground truth, built once
    per test process on first use."""
    return template(tmp_path_factory)
