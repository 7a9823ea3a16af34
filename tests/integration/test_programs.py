"""What a program needs to read, asked of real interpreters and read off real files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bugbout_tui.infra.programs import interpreter_paths, is_python, program_paths

PYTHON = sys.executable


def _venv(root: Path) -> tuple[Path, Path]:
    """A virtual environment at `root`: its interpreter and its site-packages."""
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(root)], check=True)
    (site_packages,) = root.glob("lib/python3*/site-packages")
    return root / "bin" / "python", site_packages


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configured bugbout home, and a default one, both under `tmp_path`."""
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "bugbout-home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "bugbout-home"


def test_an_interpreter_names_its_environment_base_and_pth_directories(
    tmp_path: Path, homes: Path
) -> None:
    python, site_packages = _venv(tmp_path / "venv")
    tool = tmp_path / "tool-src"
    tool.mkdir()
    (site_packages / "_editable_impl_tool.pth").write_text(f"{tool}\n")

    found = interpreter_paths(python)

    assert _real(tmp_path / "venv") in found
    assert _real(Path(sys.base_prefix)) in found or any(
        _real(Path(sys.base_prefix)).is_relative_to(p) for p in found
    )
    assert _real(tool) in found
    assert not any(a != b and a.is_relative_to(b) for a in found for b in found)


def test_an_editable_install_of_the_project_does_not_bring_the_repository_into_view(
    tmp_path: Path, homes: Path
) -> None:
    """A `.venv` inside the repository, with the project installed in editable mode: the
    environment is shown, the repository's source (the fixed code) is not."""
    repository = tmp_path / "repo"
    python, site_packages = _venv(repository / ".venv")
    (repository / "src").mkdir()
    (site_packages / "_editable_impl_project.pth").write_text(f"{repository / 'src'}\n")
    (site_packages / "_whole_tree.pth").write_text(f"{tmp_path}\n")  # holds the repository

    shown = interpreter_paths(python)
    hidden = interpreter_paths(python, hidden=[repository])

    assert _real(repository / "src") in shown  # control: without hiding, it is named
    assert _real(repository / ".venv") in hidden
    repo = _real(repository)
    assert not any(repo.is_relative_to(p) for p in hidden)  # nothing holding it
    inside = [p for p in hidden if p.is_relative_to(repo)]
    assert inside == [_real(repository / ".venv")]  # and of it only the environment


def test_a_test_environment_in_a_bugbout_home_is_shown_and_nothing_else_of_it(
    tmp_path: Path, homes: Path
) -> None:
    python, site_packages = _venv(homes / "envs" / "calc-py3-abc")
    fix = homes / "trees" / "calc-1" / "f1x"
    fix.mkdir(parents=True)
    default_tree = tmp_path / "cache" / "bugbout" / "trees" / "calc-1" / "f1x"
    default_tree.mkdir(parents=True)
    (site_packages / "a.pth").write_text(f"{fix}\n{default_tree}\n")

    found = interpreter_paths(python)

    assert _real(homes / "envs" / "calc-py3-abc") in found
    assert not any(p.is_relative_to(_real(homes / "trees")) for p in found)
    assert not any(p.is_relative_to(_real(tmp_path / "cache")) for p in found)


def test_an_install_into_the_interpreter_is_seen_at_the_next_call(
    tmp_path: Path, homes: Path
) -> None:
    python, site_packages = _venv(tmp_path / "venv")
    added = tmp_path / "added"
    added.mkdir()
    assert _real(added) not in interpreter_paths(python)
    time.sleep(0.01)  # a directory's modification time has a coarse grain on some systems
    (site_packages / "added.pth").write_text(f"{added}\n")
    assert _real(added) in interpreter_paths(python)


def test_a_node_cli_brings_its_package_and_its_node(tmp_path: Path, homes: Path) -> None:
    """npm's layout: `<prefix>/bin/tool` links to a script in `lib/node_modules`, whose
    `#!/usr/bin/env node` runs the `node` found on PATH (here in an nvm-like prefix)."""
    package = tmp_path / "npm" / "lib" / "node_modules" / "@scope" / "tool"
    (package / "dist").mkdir(parents=True)
    script = package / "dist" / "cli.js"
    script.write_text("#!/usr/bin/env node\n")
    (tmp_path / "npm" / "bin").mkdir()
    (tmp_path / "npm" / "bin" / "tool").symlink_to(script)
    node = tmp_path / "nvm" / "versions" / "v22" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_bytes(b"\x7fELF")
    node.chmod(0o755)

    found = program_paths(
        [str(tmp_path / "npm" / "bin" / "tool"), "--yes"],
        env={"PATH": f"{node.parent}:/usr/bin:/bin"},
    )

    assert found == (
        _real(tmp_path / "npm" / "lib" / "node_modules"),
        _real(tmp_path / "nvm" / "versions" / "v22"),
    )


def test_a_shim_brings_its_version_managers_root(tmp_path: Path, homes: Path) -> None:
    shim = tmp_path / ".pyenv" / "shims" / "mytool"
    shim.parent.mkdir(parents=True)
    shim.write_text('#!/bin/sh\nexec pyenv exec "$0" "$@"\n')
    shim.chmod(0o755)

    found = program_paths(["mytool"], env={"PATH": f"{shim.parent}:/usr/bin:/bin"})

    assert _real(tmp_path / ".pyenv") in found


@pytest.mark.parametrize("folder", ["bin", ".local/bin"])
def test_a_program_in_a_home_bin_does_not_bring_the_home(
    folder: str, tmp_path: Path, homes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    program = user / folder / "tool"
    program.parent.mkdir(parents=True)
    program.write_bytes(b"\x7fELF")
    monkeypatch.setenv("HOME", str(user))

    assert program_paths([str(program)], env={}) == (_real(user / folder),)


def test_files_named_on_the_command_line_bring_their_directory_unless_hidden(
    tmp_path: Path, homes: Path
) -> None:
    script = tmp_path / "agents" / "agent.sh"
    script.parent.mkdir()
    script.write_text("echo hi\n")
    answer = homes / "trees" / "calc-1" / "f1x" / "ops.py"
    answer.parent.mkdir(parents=True)
    answer.write_text("the fix")
    repository = tmp_path / "repo"
    (repository / "src").mkdir(parents=True)
    (repository / "src" / "ops.py").write_text("the fix")

    found = program_paths(
        ["/bin/sh", str(script), str(answer), str(repository / "src" / "ops.py")],
        env={},
        hidden=[repository],
    )

    assert _real(script.parent) in found
    assert not any(p.is_relative_to(_real(homes)) for p in found)
    assert not any(p.is_relative_to(_real(repository)) for p in found)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("python", True),
        ("python3", True),
        ("python3.12", True),
        ("python3.13t", True),
        ("pythonw", False),
        ("mypython", False),
        ("ipython", False),
    ],
)
def test_what_counts_as_an_interpreter(name: str, expected: bool) -> None:
    assert is_python(f"/usr/bin/{name}") is expected


def test_an_environment_that_holds_the_repository_shows_nothing_of_it(
    tmp_path: Path, homes: Path
) -> None:
    python, site_packages = _venv(tmp_path / "venv")
    repository = tmp_path / "venv" / "repo"
    (repository / "src").mkdir(parents=True)
    (site_packages / "project.pth").write_text(f"{repository / 'src'}\n")

    found = interpreter_paths(python, hidden=[repository])

    repo = _real(repository)
    assert _real(site_packages) in found  # control: the environment's own files are there
    assert not any(p.is_relative_to(repo) or repo.is_relative_to(p) for p in found)
