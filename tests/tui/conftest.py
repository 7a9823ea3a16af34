"""Fixtures for the app's tests: an isolated BUGBOUT_HOME and config directory, and the
calc project."""

from __future__ import annotations

from pathlib import Path

import pytest
from envproject import add_env_tasks
from tuiproject import build_project


@pytest.fixture(autouse=True)
def isolated_home(home: Path) -> Path:
    """Every app test gets its own `BUGBOUT_HOME` (the `home` of tests/conftest.py)."""
    return home


@pytest.fixture(autouse=True)
def preferences_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every app test keeps its preferences (the theme) in its own config directory, so
    none reads or writes the user's."""
    path = tmp_path / "config-home"
    monkeypatch.setenv("BUGBOUT_CONFIG_HOME", str(path))
    return path


@pytest.fixture
def calc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The calc project after a finished bout; the working directory is inside it, so
    paths on screen are short and the same on every machine."""
    root = build_project(tmp_path / "calc")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def calc_env(calc: Path) -> Path:
    """calc with two Lite environment tasks raced and their repairs scored."""
    return add_env_tasks(calc)
