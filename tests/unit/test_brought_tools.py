"""What a clean install takes at the interpreter's date rather than the task's: the build
tools always, the test runner when bugbout brings it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bugbout_tui.infra.brought_tools import (
    BUILD_TOOLS,
    PYTHON_RELEASES,
    RUNNER_PACKAGES,
    brought_tools,
    build_tools_of,
    interpreter_version,
    runner_requirements,
)

OLD = datetime(2016, 8, 11, tzinfo=UTC)
NEW = datetime(2024, 4, 1, tzinfo=UTC)
PYTEST_RUN = ["python", "-m", "pytest", "-q", "tests"]


def test_a_pytest_run_takes_the_pytest_the_test_dependencies_name() -> None:
    deps = ["pytest>=7.2.0,<8", "PyYAML>=6.0,<7", "pytest-cov"]
    assert runner_requirements(PYTEST_RUN, deps) == ["pytest>=7.2.0,<8"]
    assert runner_requirements(["pytest", "-x"], ["tornado"]) == ["pytest"]
    assert runner_requirements(["python", "-m", "unittest"], deps) == []


def test_build_tools_and_the_runner_are_lifted_to_the_interpreters_release() -> None:
    tools = brought_tools(runner=["pytest"], declared={"six"}, python="3.11.7", date=OLD)

    assert tools.runner == ("pytest",)
    assert tools.until == datetime(2022, 10, 24, tzinfo=UTC)
    assert set(tools.lifted) == {*BUILD_TOOLS, *RUNNER_PACKAGES}
    arguments = tools.arguments()
    assert arguments[:2] == ["--exclude-newer-package", "setuptools=2022-10-24T00:00:00Z"]
    assert "pytest=2022-10-24T00:00:00Z" in arguments


def test_a_tree_that_declares_pytest_keeps_its_own_dated_as_declared() -> None:
    tools = brought_tools(
        runner=["pytest"], declared={"pytest", "packaging"}, python="3.11.7", date=OLD
    )

    assert tools.runner == ()
    assert set(tools.lifted) == set(BUILD_TOOLS)  # the build tools are not the tree's run's
    assert tools.brought(["pytest", "pluggy"]) == []


def test_nothing_is_lifted_once_the_task_is_newer_than_the_interpreter() -> None:
    tools = brought_tools(runner=["pytest"], declared=(), python="3.11.7", date=NEW)

    assert tools.until is None and tools.arguments() == []
    assert tools.runner == ("pytest",)  # still brought, at the task's date
    assert tools.words(build=["setuptools"], installed=["pytest"]) == []


def test_an_unknown_interpreter_lifts_nothing_and_a_later_one_is_at_least_the_newest() -> None:
    assert brought_tools(runner=[], declared=(), python=None, date=OLD).until is None
    assert brought_tools(runner=[], declared=(), python="3.6.15", date=OLD).until is None
    later = brought_tools(runner=[], declared=(), python="3.15.0", date=OLD)
    assert later.until == PYTHON_RELEASES[max(PYTHON_RELEASES)]


def test_the_record_names_what_this_install_took_one_line_per_role() -> None:
    tools = brought_tools(runner=["pytest"], declared={"six"}, python="3.11.7", date=OLD)

    words = tools.words(build=["setuptools", "pbr"], installed=["six", "pytest", "pluggy"])

    since = "as of 2022-10-24, Python 3.11's release, not the task's date"
    assert words == [
        f"setuptools (build backend): {since}",
        f"pbr (build helper): {since}",
        f"pytest, pluggy (test runner): {since}",
    ]


def test_what_the_runner_brought_is_what_the_tree_does_not_declare() -> None:
    tools = brought_tools(runner=["pytest"], declared={"packaging"}, python="3.11.7", date=NEW)

    brought = tools.brought(["packaging", "pluggy", "pytest", "requests", "pygments"])

    assert brought == ["pluggy", "pygments", "pytest"]


def test_the_trees_build_tools(tmp_path: Path) -> None:
    assert build_tools_of(tmp_path) == ["setuptools"]  # a bare setup.py
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["poetry-core>=1.0", "Setuptools_SCM[toml]"]\n'
    )
    assert build_tools_of(tmp_path) == ["poetry-core", "setuptools-scm"]


def test_the_interpreters_version_is_read_off_the_environment(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.11.7\n")
    assert interpreter_version(tmp_path) == "3.11.7"
    assert interpreter_version(tmp_path / "missing") is None
