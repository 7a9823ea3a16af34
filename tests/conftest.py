"""Shared fixtures. Git repositories come from `tests/gitrepo.py`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gitrepo import GitRepo
from racekit import template


@pytest.fixture(autouse=True, scope="session")
def _pythons_on_path_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' commits run on the interpreters on PATH alone: with the Pythons a version
    manager installed on this machine, a commit would get another version here than on
    a machine without them. A test of that search points these variables elsewhere."""
    empty = tmp_path_factory.mktemp("no-version-managers")
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("PYENV_ROOT", "ASDF_DATA_DIR", "MISE_DATA_DIR"):
            patch.setenv(variable, str(empty))
        yield


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `BUGBOUT_HOME` under `tmp_path`, so no test shares environments, clones or
    working copies with the machine's own home or with another test. A module whose every
    test needs it says `pytestmark = pytest.mark.usefixtures("home")`."""
    path = tmp_path / "bugbout-home"
    monkeypatch.setenv("BUGBOUT_HOME", str(path))
    return path


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """The agents' state directory, outside every working copy: where they count starts."""
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """An empty repository on branch `main`, isolated from the machine's git config."""
    return GitRepo(tmp_path / "repo")


@pytest.fixture(scope="session")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The race template project (`racekit`), mined and through ground truth, built once
    per test process on first use."""
    return template(tmp_path_factory)
