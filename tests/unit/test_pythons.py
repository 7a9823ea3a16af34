"""Which interpreters a commit may run on: those a version manager installed count too."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout_tui.infra.pythons import Python, parse_list, version_manager_dirs


def installed(root: Path, *versions: str) -> list[Path]:
    bins = []
    for version in versions:
        (root / version / "bin").mkdir(parents=True)
        bins.append(root / version / "bin")
    return bins


def test_every_python_a_version_manager_installed_is_looked_at_not_only_the_selected(
    tmp_path: Path,
) -> None:
    """A shell sees only the versions it selected; an old commit needs the others."""
    home = tmp_path / "home"
    pyenv = installed(home / ".pyenv" / "versions", "3.6.15", "3.10.13")
    (home / ".pyenv" / "versions" / "project-venv").symlink_to(pyenv[1].parent)
    asdf = installed(tmp_path / "asdf" / "installs" / "python", "3.8.18")
    mise = installed(home / ".local" / "share" / "mise" / "installs" / "python", "3.9.1")
    environ = {"ASDF_DATA_DIR": str(tmp_path / "asdf")}
    assert sorted(version_manager_dirs(environ, home)) == sorted([*pyenv, *asdf, *mise])
    assert version_manager_dirs({}, tmp_path / "nobody") == []


def listing(*entries: tuple[str, str | None]) -> str:
    return json.dumps(
        [
            {"key": f"cpython-{v}-linux", "version": v, "implementation": "cpython", "path": p}
            for v, p in entries
        ]
    )


def test_a_shim_gives_way_to_the_installation_it_stands_for() -> None:
    """A shim runs whatever the calling shell selects, so it is kept only when nothing
    else stands for its version."""
    found = parse_list(
        listing(
            ("3.10.13", "/home/u/.pyenv/shims/python3.10"),
            ("3.10.13", "/home/u/.pyenv/versions/3.10.13/bin/python3.10"),
            ("3.12.1", "/home/u/.pyenv/shims/python3.12"),
            ("3.13.0", None),
        )
    )
    assert found == [
        Python((3, 10, 13), Path("/home/u/.pyenv/versions/3.10.13/bin/python3.10")),
        Python((3, 12, 1), Path("/home/u/.pyenv/shims/python3.12")),
        Python((3, 13, 0), None),
    ]
