"""What bugbout brings to a clean install, for real: uv, a package index on 127.0.0.1,
the sandbox, and a traced run of pytest.

Every install is dated 2021 on Python 3.11 (released 2022-10-24). The index serves
pytest, repacked from this interpreter, "uploaded" in March 2022: after the task's date,
before the interpreter's release. It also serves a build backend named `setuptools`
(the standard library alone, as `envkit`'s) in a 1.0 of January 2022 and a 2.0 of 2023,
each of which leaves its version in the wheels it builds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

import pytest
from envkit import BACKEND, when, write_project
from fakes.harness import bubblewrap

from bugbout_tui.core.env_models import EnvInstall, EnvTrace
from bugbout_tui.infra.env_declared import declared_packages
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.env_trace import traced_run
from bugbout_tui.infra.package_index import PackageIndex, build_wheel

DATE = when(2021)
SINCE = "as of 2022-10-24, Python 3.11's release, not the task's date"
_BEFORE_INFO = '    info = f"{name}-{version}.dist-info"\n'
COMMAND = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
TEST = "import geom\n\n\ndef test_geom():\n    assert geom.__name__ == 'geom'\n"
IN_TREE_BUILD = (
    '[build-system]\nrequires = []\nbuild-backend = "envkit_backend"\nbackend-path = ["."]\n'
)
SETUPTOOLS_BUILD = (
    '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
)


def _marking(backend: str, file: str, value: str) -> str:
    """`backend` also writing `file`, holding `value` (an expression), into the package it
    builds."""
    marked = backend.replace(
        _BEFORE_INFO,
        f'    contents[package.name + "/{file}"] = ({value}).encode()\n' + _BEFORE_INFO,
    )
    assert marked != backend
    return marked


def _setuptools(version: str) -> dict[str, str]:
    """A backend named `setuptools` that writes its version into what it builds."""
    backend = _marking(BACKEND, "built_with.txt", repr(version))
    return {"setuptools/__init__.py": "", "setuptools/build_meta.py": backend}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    wheels = tmp_path_factory.mktemp("wheels")
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        served.publish_runner(wheels, pytest_uploaded=when(2022, 3))
        for version, uploaded in (("1.0", when(2022)), ("2.0", when(2023, 6))):
            wheel = build_wheel(wheels, "setuptools", version, _setuptools(version))
            served.publish(wheel, uploaded=uploaded)
        patch.setenv("UV_CACHE_DIR", str(tmp_path_factory.mktemp("uv-cache")))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        yield served.url


def project(root: Path, *, build: str = IN_TREE_BUILD, requirements: str = "") -> Path:
    tree = write_project(root / "tree", "geom", files={"tests/test_geom.py": TEST})
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(IN_TREE_BUILD, build))
    if requirements:
        (tree / "requirements.txt").write_text(requirements)
    return tree


def install(
    tree: Path, index: str, *, date: datetime = DATE, runner: Sequence[str] = ()
) -> EnvInstall:
    return asyncio.run(
        clean_install(
            tree,
            python="3.11",
            date=date,
            index=index,
            venv=tree.parent / "venv",
            log=tree.parent / "logs" / "install.log",
            timeout=120,
            sandbox=bubblewrap(),
            runner=runner,
        )
    )


def trace(tree: Path, brought: Sequence[str]) -> EnvTrace:
    return asyncio.run(
        traced_run(
            tree,
            COMMAND,
            venv=tree.parent / "venv",
            sandbox=bubblewrap(),
            log=tree.parent / "logs" / "trace.log",
            timeout=60,
            brought=brought,
        )
    )


def _built(tree: Path, file: str) -> str:
    """What the build of `tree` left in `file` of its package."""
    site = tree.parent / "venv" / "lib" / "python3.11" / "site-packages"
    return (site / "geom" / file).read_text()


def test_a_tree_that_declares_no_pytest_gets_the_runner_left_out_of_d3(
    tmp_path: Path, index: str
) -> None:
    tree = project(tmp_path)

    result = install(tree, index, runner=["pytest"])
    run = trace(tree, result.brought)
    untrimmed = trace(tree, ())

    assert result.ok, result.detail
    assert "pytest" in result.brought and "pluggy" in result.brought
    assert any(line.startswith("pytest==") for line in result.installed)
    assert f"pytest, pluggy, iniconfig, packaging, pygments (test runner): {SINCE}" in (
        result.unenforced
    )
    assert run.ok, run.detail
    assert declared_packages(tree) == []
    assert "pytest" in untrimmed.used
    assert not set(run.used) & set(result.brought)


def test_a_tree_that_declares_pytest_keeps_its_own_dated_and_counted_in_d3(
    tmp_path: Path, index: str
) -> None:
    """Its pytest is held to the task's date, and there was none then."""
    dated = project(tmp_path / "dated", requirements="pytest\n")
    later = project(tmp_path / "later", requirements="pytest\n")

    before = install(dated, index, runner=["pytest"])
    after = install(later, index, date=when(2022, 6), runner=["pytest"])
    run = trace(later, after.brought)

    assert not before.ok and "pytest" in (before.detail or "")
    assert before.unenforced == [] and before.brought == []
    assert after.ok, after.detail
    assert after.brought == [] and after.unenforced == []
    assert run.ok, run.detail
    assert "pytest" in run.used


def test_a_build_backend_published_before_the_interpreter_is_taken_and_recorded(
    tmp_path: Path, index: str
) -> None:
    """setuptools 1.0 came after the task's date and before Python 3.11: taken, and said;
    2.0 came after both: not taken."""
    tree = project(tmp_path, build=SETUPTOOLS_BUILD)

    result = install(tree, index)

    assert result.ok, result.detail
    assert _built(tree, "built_with.txt") == "1.0"
    assert result.unenforced == [f"setuptools (build backend): {SINCE}"]
    assert result.brought == []  # no runner asked for


def test_a_task_newer_than_the_interpreter_takes_its_own_dates_build_tools(
    tmp_path: Path, index: str
) -> None:
    tree = project(tmp_path, build=SETUPTOOLS_BUILD)

    result = install(tree, index, date=when(2023, 9))

    assert result.ok, result.detail
    assert _built(tree, "built_with.txt") == "2.0"
    assert result.unenforced == []


def test_a_build_that_takes_its_version_from_git_is_told_one(tmp_path: Path, index: str) -> None:
    """The tree has no history, so pbr and setuptools-scm, asked, would find no version."""
    tree = project(tmp_path)
    backend = tree / "envkit_backend.py"
    told = " + ' ' + ".join(
        f'__import__("os").environ.get("{name}", "")'
        for name in ("PBR_VERSION", "SETUPTOOLS_SCM_PRETEND_VERSION")
    )
    backend.write_text(_marking(backend.read_text(), "told.txt", told))

    result = install(tree, index)

    assert result.ok, result.detail
    assert _built(tree, "told.txt") == "0.0.0 0.0.0"
