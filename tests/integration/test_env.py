"""Test environments: real uv, real installs from PyPI, a temporary BUGBOUT_HOME."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest
import uv

from bugbout_tui.core.errors import BugboutError, ToolMissingError
from bugbout_tui.infra import env
from bugbout_tui.infra.env import (
    MARKER_NAME,
    Environment,
    EnvSpec,
    ensure_environment,
    find_uv,
    spec_for,
)

RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("BUGBOUT_HOME", str(path))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")  # no downloads reachable here
    return path


@pytest.fixture
def uv_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every uv command line run through the module, recorded while still running it."""
    calls: list[list[str]] = []
    real: Callable[..., Awaitable[env._UvRun]] = env._run_uv

    async def recording(
        uv_bin: Path, args: list[str], log: Path, **options: Mapping[str, str] | None
    ) -> env._UvRun:
        calls.append(args)
        return await real(uv_bin, args, log, **options)

    monkeypatch.setattr(env, "_run_uv", recording)
    return calls


def static_project(root: Path, dependencies: list[str]) -> Path:
    """A pyproject project whose package `staticproj` is importable from its tree only."""
    (root / "staticproj").mkdir(parents=True)
    (root / "staticproj" / "__init__.py").write_text("VALUE = 42\n")
    quoted = ", ".join(f'"{d}"' for d in dependencies)
    (root / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n'
        "[project]\n"
        'name = "static-proj"\n'
        'version = "0.1"\n'
        f"dependencies = [{quoted}]\n"
    )
    return root


def setup_py_project(root: Path) -> Path:
    """A setup.py project: its dependencies are only known by building it."""
    (root / "legacyproj").mkdir(parents=True)
    (root / "legacyproj" / "__init__.py").write_text("VALUE = 7\n")
    (root / "setup.py").write_text(
        "from setuptools import setup\n"
        'setup(name="legacy-proj", version="0.1", packages=["legacyproj"],\n'
        '      install_requires=["iniconfig"])\n'
    )
    return root


def imports(python: Path, module: str, *, pythonpath: Path | None = None) -> bool:
    child_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        child_env["PYTHONPATH"] = str(pythonpath)
    result = subprocess.run(
        [str(python), "-c", f"import {module}"],
        env=child_env,
        cwd="/",
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


def build(project: Path, **overrides: object) -> Environment:
    arguments: dict[str, object] = {
        "python": RUNNING,
        "test_dependencies": ["pytest"],
        "install_project": True,
        "interpreter": None,
    }
    arguments.update(overrides)
    return asyncio.run(ensure_environment(project, **arguments))  # type: ignore[arg-type]


def test_find_uv_uses_the_binary_our_dependency_ships() -> None:
    found = find_uv()
    assert found.is_file()
    version = subprocess.run([str(found), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("uv ")


def test_find_uv_falls_back_to_path_then_names_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def missing() -> str:
        raise FileNotFoundError("no uv next to this interpreter")

    monkeypatch.setattr(uv, "find_uv_bin", missing)
    on_path = tmp_path / "uv"
    monkeypatch.setattr(shutil, "which", lambda name: str(on_path))
    assert find_uv() == on_path

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ToolMissingError, match="uv is not installed") as raised:
        find_uv()
    assert "pip install uv" in str(raised.value)


@pytest.mark.slow
def test_builds_once_with_runtime_dependencies_but_not_the_project(
    home: Path, tmp_path: Path, uv_calls: list[list[str]]
) -> None:
    project = static_project(tmp_path / "proj", ["iniconfig"])

    first = build(project)

    assert first.built
    assert first.root is not None and first.root.parent == home.resolve() / "envs"
    assert first.key.startswith(f"static-proj-py{RUNNING}-")
    assert first.python == first.root / "bin" / "python"
    assert imports(first.python, "pytest")
    assert imports(first.python, "iniconfig")
    assert not imports(first.python, "staticproj")
    assert imports(first.python, "staticproj", pythonpath=project)
    assert [call[0] for call in uv_calls] == ["venv", "pip"]
    assert not (project / "build").exists()

    uv_calls.clear()
    second = build(project)

    assert second == Environment(first.python, first.root, first.key, built=False)
    assert uv_calls == []


@pytest.mark.slow
def test_a_build_without_its_marker_is_rebuilt(home: Path, tmp_path: Path) -> None:
    project = static_project(tmp_path / "proj", [])
    first = build(project, install_project=False)
    assert first.root is not None
    (first.root / MARKER_NAME).unlink()
    (first.root / "leftover").write_text("from the interrupted build")

    again = build(project, install_project=False)

    assert again.built and again.root == first.root
    assert not (first.root / "leftover").exists()
    assert (first.root / MARKER_NAME).is_file()


@pytest.mark.slow
def test_setup_py_project_is_built_on_a_copy_then_removed(
    home: Path, tmp_path: Path, uv_calls: list[list[str]]
) -> None:
    project = setup_py_project(tmp_path / "legacy")
    before = sorted(p.name for p in project.iterdir())

    environment = build(project)

    assert environment.built and environment.key.startswith("legacy-")
    assert imports(environment.python, "iniconfig")
    assert not imports(environment.python, "legacyproj")
    assert imports(environment.python, "legacyproj", pythonpath=project)
    assert ["pip", "uninstall", "--python", str(environment.python), "legacy-proj"] in uv_calls
    assert sorted(p.name for p in project.iterdir()) == before  # no build/ nor egg-info


@pytest.mark.slow
async def test_concurrent_builders_of_one_environment_build_it_once(
    home: Path, tmp_path: Path, uv_calls: list[list[str]]
) -> None:
    project = static_project(tmp_path / "proj", [])

    request = ensure_environment(
        project,
        python=RUNNING,
        test_dependencies=["pytest"],
        install_project=False,
        interpreter=None,
    )
    twin = ensure_environment(
        project,
        python=RUNNING,
        test_dependencies=["pytest"],
        install_project=False,
        interpreter=None,
    )
    first, second = await asyncio.gather(request, twin)

    assert first.root == second.root
    assert sorted([first.built, second.built]) == [False, True]
    assert [call[0] for call in uv_calls].count("venv") == 1


def test_key_follows_what_goes_into_the_environment(tmp_path: Path) -> None:
    project = static_project(tmp_path / "proj", ["iniconfig>=1"])

    def digest(**changes: object) -> str:
        arguments: dict[str, object] = {
            "python": "3.11",
            "test_dependencies": ["pytest"],
            "install_project": True,
        }
        arguments.update(changes)
        return spec_for(project, **arguments).digest()  # type: ignore[arg-type]

    base = digest()
    assert digest(test_dependencies=["  pytest ", "pytest"]) == base
    assert digest(test_dependencies=["pytest", "hypothesis"]) != base
    assert digest(python="3.12") != base
    assert digest(install_project=False) != base

    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace("iniconfig>=1", "iniconfig>=2")
    )
    assert digest() != base


def test_dynamic_dependencies_are_keyed_by_the_packaging_files(tmp_path: Path) -> None:
    project = setup_py_project(tmp_path / "legacy")
    spec = spec_for(project, python="3.11", test_dependencies=["pytest"], install_project=True)
    assert spec.runtime_dependencies == []
    assert spec.metadata_digest is not None

    (project / "requirements.txt").write_text("six\n")
    changed = spec_for(project, python="3.11", test_dependencies=["pytest"], install_project=True)
    assert changed.metadata_digest != spec.metadata_digest

    only_tests = spec_for(
        project, python="3.11", test_dependencies=["pytest"], install_project=False
    )
    assert only_tests == EnvSpec(
        python="3.11", test_dependencies=["pytest"], runtime_dependencies=[], install_project=False
    )


def test_install_project_needs_something_to_install(tmp_path: Path) -> None:
    with pytest.raises(
        BugboutError, match=r"no pyproject\.toml, setup\.cfg or setup\.py"
    ) as raised:
        spec_for(tmp_path, python="3.11", test_dependencies=["pytest"], install_project=True)
    assert "install-project = false" in str(raised.value)


def test_broken_pyproject_is_named(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'x'\n")
    with pytest.raises(BugboutError, match=r"pyproject\.toml is not valid TOML"):
        spec_for(tmp_path, python="3.11", test_dependencies=[], install_project=True)


def test_interpreter_is_used_as_given(
    home: Path, tmp_path: Path, uv_calls: list[list[str]]
) -> None:
    python = Path(sys.executable)  # runs this suite, so it has pytest

    environment = build(tmp_path, interpreter=str(python))

    assert environment == Environment(python=python, root=None, key=str(python), built=False)
    assert uv_calls == []
    assert not home.exists()


def test_missing_interpreter_is_named(tmp_path: Path) -> None:
    with pytest.raises(BugboutError, match="does not exist") as raised:
        build(tmp_path, interpreter=str(tmp_path / "nowhere" / "python"))
    assert str(tmp_path / "nowhere" / "python") in str(raised.value)


def test_interpreter_that_is_not_python(tmp_path: Path) -> None:
    impostor = tmp_path / "python"
    impostor.write_text("#!/bin/sh\necho 'not python' >&2\nexit 3\n")
    impostor.chmod(0o755)
    with pytest.raises(BugboutError, match="failed to start: not python"):
        build(tmp_path, interpreter=str(impostor))


def test_interpreter_without_pytest_says_how_to_fix(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([str(find_uv()), "venv", "--python", sys.executable, str(bare)], check=True)
    python = bare / "bin" / "python"

    with pytest.raises(BugboutError, match="cannot import pytest") as raised:
        build(tmp_path, interpreter=str(python))

    assert f"install pytest into {python}" in str(raised.value).lower()


def test_relative_interpreter_is_taken_from_the_project_root(tmp_path: Path) -> None:
    bin_dir = tmp_path / "tools"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)

    environment = build(tmp_path, interpreter="tools/python")

    assert environment.python == tmp_path / "tools" / "python"


@pytest.mark.parametrize("version", ["3.2", "3.99"])
def test_unavailable_python_is_named(home: Path, tmp_path: Path, version: str) -> None:
    project = static_project(tmp_path / "proj", [])

    with pytest.raises(BugboutError) as raised:
        build(project, python=version, install_project=False)

    message = str(raised.value)
    assert f"Python {version} is not available" in message
    assert f"({RUNNING} is running bugbout)" in message
    assert version in message.split("uv said:")[1]  # uv's own words follow


@pytest.mark.slow
def test_failed_install_keeps_uv_output_in_the_named_log(home: Path, tmp_path: Path) -> None:
    project = static_project(tmp_path / "proj", [])
    logs = tmp_path / "logs"
    missing = "this-package-does-not-exist-bugbout"

    with pytest.raises(BugboutError, match="uv failed to install") as raised:
        build(project, test_dependencies=["pytest", missing], install_project=False, log_dir=logs)

    message = str(raised.value)
    [log] = logs.glob("*.log")
    assert f"Full output: {log}" in message
    assert missing in message.split("uv said:")[1]
    recorded = log.read_text()
    assert "$ uv pip install --python" in recorded and missing in recorded
    [env_dir] = (home / "envs").glob("static-proj-*")
    assert not (env_dir / MARKER_NAME).exists()
