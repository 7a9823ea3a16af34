"""The interpreters a task may run on, as uv lists them on this machine."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from bugbout_tui.infra.python_list import available_pythons


def test_uv_is_shown_the_pythons_a_version_manager_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list comes from uv itself, asked with those folders on its PATH."""
    home = tmp_path / "home"
    bin_dir = home / ".pyenv" / "versions" / "3.11-selected-elsewhere" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python3").symlink_to(Path(sys.executable).resolve())
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    found = asyncio.run(available_pythons(tmp_path / "envs"))
    assert bin_dir / "python3" in {p.path for p in found}
