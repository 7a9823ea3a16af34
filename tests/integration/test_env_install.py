"""The clean install of an environment task, for real: uv, a package index on 127.0.0.1
with upload times, and projects built by their own backend.

`shapes` 1.0 was "uploaded" in 2020 and 2.0 in 2023; `helper`, `pytest` and `sphinx` in
2020; `nodate`'s index entry gives no upload time. Every install is dated 2021 unless a
test says otherwise.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from envkit import when, write_project
from fakes.harness import bubblewrap

from bugbout_tui.core.env_models import EnvInstall
from bugbout_tui.infra.env_declared import declared_packages
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.package_index import PackageIndex, build_wheel
from bugbout_tui.infra.sandbox import NoSandbox, Sandbox

DATE = when(2021)


@dataclass(frozen=True)
class Served:
    url: str
    helper_wheel: Path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The index, and uv kept to it: its own cache, no Python downloads."""
    wheels = tmp_path_factory.mktemp("wheels")
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        for version, year in (("1.0", 2020), ("2.0", 2023)):
            wheel = build_wheel(wheels, "shapes", version, {"shapes/__init__.py": f"V = {year}"})
            served.publish(wheel, uploaded=when(year))
        helper = build_wheel(wheels, "helper", "1.0", {"helper/__init__.py": ""})
        served.publish(helper, uploaded=when(2020))
        for tool in ("pytest", "sphinx"):
            wheel = build_wheel(wheels, tool, "1.0", {f"{tool}/__init__.py": ""})
            served.publish(wheel, uploaded=when(2020))
        served.publish(build_wheel(wheels, "nodate", "1.0", {"nodate.py": ""}), uploaded=None)
        patch.setenv("UV_CACHE_DIR", str(tmp_path_factory.mktemp("uv-cache")))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        yield Served(served.url, helper)


def install(
    tree: Path,
    index: str,
    *,
    date: datetime = DATE,
    python: str = "3.11",
    timeout: float = 120,
    sandbox: Sandbox | None = None,
) -> EnvInstall:
    """`tree` installed into `venv` beside it, in bubblewrap unless `sandbox` says
    otherwise (skipped where bwrap cannot run)."""
    return asyncio.run(
        clean_install(
            tree,
            python=python,
            date=date,
            index=index,
            venv=tree.parent / "venv",
            log=tree.parent / "logs" / "install.log",
            timeout=timeout,
            sandbox=sandbox or bubblewrap(),
        )
    )


@pytest.mark.parametrize("confined", [True, False], ids=["bubblewrap", "none"])
def test_the_date_picks_the_version_uploaded_before_it(
    tmp_path: Path, index: Served, confined: bool
) -> None:
    tree = write_project(tmp_path / "tree", "geom", dependencies=["shapes"])
    (tree / "requirements.txt").write_text("helper\n")
    sandbox = bubblewrap() if confined else NoSandbox()

    dated = install(tree, index.url, sandbox=sandbox)
    later = install(tree, index.url, date=when(2024), sandbox=sandbox)

    assert dated.ok and dated.exit_code == 0 and dated.detail is None
    assert dated.installed == ["helper==1.0", "shapes==1.0"]  # the project itself left out
    assert later.installed == ["helper==1.0", "shapes==2.0"]
    assert dated.unenforced == [] and dated.seconds > 0
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    assert (site / "geom" / "__init__.py").is_file()  # installed, not linked to the tree
    source = json.loads((site / "geom-0.1.dist-info" / "direct_url.json").read_text())
    assert source["dir_info"].get("editable", False) is False


def _names(installed: list[str]) -> set[str]:
    return {line.split("==")[0].split(" @ ")[0] for line in installed}


def test_a_test_extra_is_installed_with_the_project(tmp_path: Path, index: Served) -> None:
    """pytest only in the `test` extra: the task's command could not run without it."""
    tree = write_project(
        tmp_path / "tree",
        "geom",
        dependencies=["shapes"],
        extras={"test": ["pytest"], "docs": ["sphinx"]},
    )

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["pytest==1.0", "shapes==1.0"]
    assert _names(result.installed) == {d.name for d in declared_packages(tree)}


def test_a_test_dependency_group_is_installed(tmp_path: Path, index: Served) -> None:
    tree = write_project(tmp_path / "tree", "geom", dependencies=["shapes"])
    with (tree / "pyproject.toml").open("a") as pyproject:
        pyproject.write(
            '\n[dependency-groups]\ntest = ["pytest", {include-group = "more"}]\n'
            'more = ["helper"]\ndocs = ["sphinx"]\n'
        )

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["helper==1.0", "pytest==1.0", "shapes==1.0"]
    assert _names(result.installed) == {d.name for d in declared_packages(tree)}


def test_test_and_dev_requirement_files_are_installed(tmp_path: Path, index: Served) -> None:
    tree = tmp_path / "tree"
    (tree / "requirements").mkdir(parents=True)
    (tree / "requirements-dev.txt").write_text("pytest\n")
    (tree / "requirements" / "test.txt").write_text("helper\n")
    (tree / "test-requirements.txt").write_text("shapes\n")

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["helper==1.0", "pytest==1.0", "shapes==1.0"]
    assert _names(result.installed) == {d.name for d in declared_packages(tree)}


def test_a_requirements_file_names_the_project_as_a_user_would(
    tmp_path: Path, index: Served
) -> None:
    """`.[test]` in `requirements-dev.txt` is read from the tree, where pip is run."""
    tree = write_project(tmp_path / "tree", "geom", extras={"test": ["pytest"]})
    (tree / "requirements-dev.txt").write_text(".[test]\nhelper\n")

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["helper==1.0", "pytest==1.0"]


def test_a_docs_requirements_file_is_not_installed(tmp_path: Path, index: Served) -> None:
    """Nor refused for where it takes packages from: it is not installed at all."""
    tree = tmp_path / "tree"
    (tree / "docs").mkdir(parents=True)
    (tree / "requirements.txt").write_text("shapes\n")
    (tree / "requirements-docs.txt").write_text("--index-url http://127.0.0.1:9/simple\nsphinx\n")
    (tree / "docs" / "requirements.txt").write_text("sphinx\n")

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["shapes==1.0"]
    assert [d.name for d in declared_packages(tree)] == ["shapes"]


def test_a_test_requirements_file_that_changes_the_index_is_refused(
    tmp_path: Path, index: Served
) -> None:
    tree = tmp_path / "tree"
    (tree / "requirements").mkdir(parents=True)
    (tree / "requirements" / "test.txt").write_text("--find-links /tmp\npytest\n")

    result = install(tree, index.url)

    assert not result.ok and result.exit_code is None
    assert result.detail is not None
    assert result.detail.startswith("requirements/test.txt, line 1: --find-links changes where")


def test_a_pin_that_does_not_exist_fails_with_uvs_words(tmp_path: Path, index: Served) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "requirements.txt").write_text("shapes==9.9\n")

    failed = install(tree, index.url)

    assert not failed.ok and failed.exit_code == 1 and failed.installed == []
    assert failed.detail is not None
    assert failed.detail.startswith("No solution found when resolving dependencies: ")
    assert "shapes==9.9" in failed.detail
    log = (tmp_path / "logs" / "install.log").read_text()
    assert "$ uv pip install" in log and "shapes==9.9" in log


def test_what_a_date_cannot_limit_is_recorded(tmp_path: Path, index: Served) -> None:
    """A wheel in the tree (one outside it is not in the sandbox's view)."""
    tree = tmp_path / "tree"
    (tree / "vendor").mkdir(parents=True)
    wheel = tree / "vendor" / index.helper_wheel.name
    shutil.copy(index.helper_wheel, wheel)
    (tree / "requirements.txt").write_text(f"helper @ {wheel.as_uri()}\n")
    (tree / "requirements-dev.txt").write_text("shapes\n")

    direct = install(tree, index.url)
    (tree / "requirements-dev.txt").write_text("nodate\n")
    undated = install(tree, index.url)

    assert direct.ok, direct.detail
    assert direct.installed == [f"helper @ {wheel.as_uri()}", "shapes==1.0"]
    assert direct.unenforced == [f"helper @ {wheel.as_uri()} (a local path, not limited by date)"]
    assert not undated.ok  # uv leaves out a file it cannot date
    assert undated.unenforced == ["nodate (the index gives no upload time, not limited by date)"]


def test_a_pyproject_that_only_configures_tools_is_no_project(
    tmp_path: Path, index: Served
) -> None:
    """Installing such a tree as a project would need setuptools, which the index lacks."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    (tree / "requirements.txt").write_text("shapes\n")

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["shapes==1.0"]


def test_the_users_uv_settings_change_nothing(
    tmp_path: Path, index: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    (config / "uv").mkdir(parents=True)
    (config / "uv" / "uv.toml").write_text('constraint-dependencies = ["shapes>=2"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("UV_EXCLUDE_NEWER", "2030-01-01T00:00:00Z")
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_INDEX_STRATEGY", "unsafe-best-match")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "requirements.txt").write_text("shapes\n")

    result = install(tree, index.url)

    assert result.ok, result.detail
    assert result.installed == ["shapes==1.0"]


def test_an_interpreter_uv_cannot_find_is_a_failed_step(tmp_path: Path, index: Served) -> None:
    tree = write_project(tmp_path / "tree", "geom")

    result = install(tree, index.url, python=str(tmp_path / "no-such-python"))

    assert not result.ok and result.exit_code not in (0, None)
    assert result.detail is not None
    assert result.detail.startswith("uv could not create a Python ")
    assert "No interpreter found" in result.detail


def test_an_install_past_its_time_is_stopped(tmp_path: Path, index: Served) -> None:
    """An index that takes the connection and never answers: uv waits, bugbout does not."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        tree = tmp_path / "tree"
        tree.mkdir()
        (tree / "requirements.txt").write_text("shapes\n")

        result = install(tree, f"http://127.0.0.1:{silent.getsockname()[1]}/simple", timeout=4)

    assert not result.ok and result.exit_code is None
    assert result.detail == "the install did not finish within 4 seconds"
    assert 4 <= result.seconds < 30
    assert (
        "[stopped: the install took longer than 4 seconds]"
        in (tmp_path / "logs" / "install.log").read_text()
    )


def test_a_failed_build_is_told_by_what_the_build_said_last(tmp_path: Path, index: Served) -> None:
    """uv's own words say only that a build failed; the reason is the build's."""
    tree = write_project(tmp_path / "tree", "geom")
    backend = tree / "envkit_backend.py"
    failing = "def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n"
    raising = failing + "    from collections import Mapping\n"
    backend.write_text(backend.read_text().replace(failing, raising))

    result = install(tree, index.url)

    assert not result.ok
    assert (result.detail or "").startswith("Failed to build `geom @")
    assert ": ImportError: cannot import name 'Mapping' from 'collections'" in (result.detail or "")
