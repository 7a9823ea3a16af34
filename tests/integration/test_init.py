"""`bugbout init`: detecting a repository's layout, remote and agents, and the file written."""

from __future__ import annotations

import itertools
import os
import stat
import subprocess
from pathlib import Path

import pytest

from bugbout_tui.core.config import load_config, parse_config_text
from bugbout_tui.core.config_doc import ConfigDocument, Layout, render_initial_config
from bugbout_tui.core.errors import UsageError
from bugbout_tui.infra.detect import (
    detect_layout,
    find_agents,
    github_from_remote,
    write_initial_config,
)
from bugbout_tui.infra.test_needs import find_test_dependencies

ALL_AGENTS = ["codex", "claude-code", "gemini-cli", "mini-swe-agent"]


def package(root: Path, relative: str) -> None:
    (root / relative).mkdir(parents=True, exist_ok=True)
    (root / relative / "__init__.py").write_text("")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def fake_path(tmp_path: Path, programs: list[str]) -> str:
    """A directory holding executables with the given names, to stand in for PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program in programs:
        executable = bin_dir / program
        executable.write_text("#!/bin/sh\nexit 0\n")
        executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    return str(bin_dir)


# --- layout -------------------------------------------------------------------------------


def test_src_layout(tmp_path: Path) -> None:
    package(tmp_path, "src/widgets")
    (tmp_path / "tests").mkdir()
    assert detect_layout(tmp_path) == Layout(source="src/widgets", tests="tests")


def test_flat_layout_ignores_tests_docs_builds_and_environments(tmp_path: Path) -> None:
    for name in ("tests", "docs", "examples", "benchmarks", "build", "dist", ".hidden", "venv"):
        package(tmp_path, name)
    package(tmp_path, "env-py311")
    (tmp_path / "env-py311" / "pyvenv.cfg").write_text("home = /usr\n")
    package(tmp_path, "widgets")
    (tmp_path / "notapackage").mkdir()
    layout = detect_layout(tmp_path)
    assert layout == Layout(source="widgets", tests="tests")


def test_test_directory_named_test(tmp_path: Path) -> None:
    package(tmp_path, "widgets")
    (tmp_path / "test").mkdir()
    assert detect_layout(tmp_path).tests == "test"


def test_no_tests_and_no_package(tmp_path: Path) -> None:
    assert detect_layout(tmp_path) == Layout(source=None, tests=None)


def test_the_package_named_in_pyproject_wins(tmp_path: Path) -> None:
    package(tmp_path, "src/alpha")
    package(tmp_path, "src/my_widgets")
    package(tmp_path, "helpers")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "My-Widgets"\n')
    layout = detect_layout(tmp_path)
    assert layout.source == "src/my_widgets"
    assert layout.other_packages == ("src/alpha", "helpers")


def test_several_packages_without_a_name_take_the_first(tmp_path: Path) -> None:
    package(tmp_path, "zeta")
    package(tmp_path, "beta")
    (tmp_path / "pyproject.toml").write_text("this is [not toml")
    layout = detect_layout(tmp_path)
    assert (layout.source, layout.other_packages) == ("beta", ("zeta",))


# --- remote -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/octo/widgets.git", "octo/widgets"),
        ("https://github.com/octo/widgets", "octo/widgets"),
        ("git@github.com:octo/wid.gets.git", "octo/wid.gets"),
        ("ssh://git@github.com/octo/widgets", "octo/widgets"),
        ("https://gitlab.com/octo/widgets.git", None),
        ("git@example.org:octo/widgets.git", None),
    ],
)
def test_github_from_origin(tmp_path: Path, url: str, expected: str | None) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", url)
    assert github_from_remote(tmp_path) == expected


def test_no_origin_or_no_repository(tmp_path: Path) -> None:
    assert github_from_remote(tmp_path) is None
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "upstream", "https://github.com/octo/widgets")
    assert github_from_remote(tmp_path) is None


# --- agents -------------------------------------------------------------------------------


def test_find_agents_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", fake_path(tmp_path, ["gemini", "codex", "unrelated"]))
    assert find_agents() == ["codex", "gemini-cli"]
    monkeypatch.setenv("PATH", fake_path(tmp_path, ["claude", "mini"]))
    assert find_agents() == ["codex", "claude-code", "gemini-cli", "mini-swe-agent"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_agents() == []


# --- the rendered file --------------------------------------------------------------------


@pytest.mark.parametrize("tests", ["tests", None])
@pytest.mark.parametrize("github", ["octo/widgets", None])
def test_rendered_file_loads_for_every_combination(
    tmp_path: Path, tests: str | None, github: str | None
) -> None:
    package(tmp_path, "src/widgets")
    layout = Layout(source="src/widgets", tests=tests, other_packages=("helpers",))
    file = tmp_path / "bugbout.toml"
    for size in range(len(ALL_AGENTS) + 1):
        for agents in itertools.combinations(ALL_AGENTS, size):
            text = render_initial_config(layout, github, agents)
            config = parse_config_text(text, file)
            racing = [agent for agent in agents if agent != "mini-swe-agent"]
            assert [contestant.agent for contestant in config.contestants] == racing
            assert config.examiners == []
            assert config.project.tests == (tests or "tests")
            assert config.project.github is None
            assert ("mini-swe-agent is installed" in text) == ("mini-swe-agent" in agents)
            assert ("No agent was found" in text) == (not agents)
            assert ('# github = "octo/widgets"' in text) == (github is not None)
            assert "# Other packages found here: helpers" in text


@pytest.mark.parametrize(
    ("agents", "names"),
    [
        ([], ["claude-code/sonnet", "aider"]),
        (
            ["codex", "mini-swe-agent"],
            ["codex/gpt-5-codex", "mini-swe-agent/ollama/qwen3-coder:30b", "aider"],
        ),
    ],
)
def test_every_commented_example_is_valid_when_uncommented(
    tmp_path: Path, agents: list[str], names: list[str]
) -> None:
    """The examples are there to be uncommented, so uncommenting them must work."""
    package(tmp_path, "src/widgets")
    text = render_initial_config(Layout("src/widgets", "tests"), "octo/widgets", agents)
    keep = ("# The", "# Commented", "# Other", "# Where", "# No ", "# Issues", "# What", "# Extra")
    uncommented = []
    for line in text.splitlines():
        example = (
            line.startswith("# ")
            and ("=" in line or line.startswith("# ["))
            and (not line.startswith(keep))
        )
        uncommented.append(line[2:] if example else line)
    uncommented_text = "\n".join(uncommented) + "\n"
    config = parse_config_text(uncommented_text, tmp_path / "bugbout.toml")
    assert [agent.name for agent in config.contestants] == names
    assert config.examiners[0].assignment == "reproduce"
    assert config.run.capacity("codex") == 2
    assert config.project.github == "octo/widgets"


def test_decisions_land_in_the_written_tasks_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package(tmp_path, "src/widgets")
    monkeypatch.setenv("PATH", fake_path(tmp_path, ["codex"]))
    path = write_initial_config(tmp_path)
    before = path.read_text()
    document = ConfigDocument.load(path)
    document.set_task_decision("widgets-3", "accepted")
    document.save()
    after = path.read_text()
    assert after.replace('include = ["widgets-3"]\n', "", 1) == before
    assert after.index("[tasks]") < after.index("include") < after.index("[run]")


# --- writing it ---------------------------------------------------------------------------


def test_write_initial_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package(tmp_path, "src/widgets")
    (tmp_path / "tests").mkdir()
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", "git@github.com:octo/widgets.git")
    bin_dir = fake_path(tmp_path, ["claude", "mini"])
    monkeypatch.setenv("PATH", os.pathsep.join([bin_dir, os.environ["PATH"]]))
    path = write_initial_config(tmp_path)
    assert path == tmp_path / "bugbout.toml"
    config = load_config(path)
    assert config.project.source == "src/widgets"
    assert [contestant.name for contestant in config.contestants] == ["claude-code"]
    text = path.read_text()
    assert '# github = "octo/widgets"' in text
    assert '# agent = "mini-swe-agent"' in text


def test_init_refuses_to_overwrite_without_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    package(tmp_path, "widgets")
    existing = tmp_path / "bugbout.toml"
    existing.write_text("# mine\n")
    with pytest.raises(UsageError) as caught:
        write_initial_config(tmp_path)
    assert caught.value.message == "bugbout.toml already exists"
    assert "--force" in str(caught.value)
    assert existing.read_text() == "# mine\n"
    write_initial_config(tmp_path, force=True)
    assert load_config(existing).project.source == "widgets"


def test_init_without_a_package_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    with pytest.raises(UsageError) as caught:
        write_initial_config(tmp_path)
    assert "no Python package found" in caught.value.message
    assert "src/" in caught.value.message
    assert 'source = "src/mypkg"' in str(caught.value)
    assert not (tmp_path / "bugbout.toml").exists()


def test_init_with_a_named_source(tmp_path: Path) -> None:
    (tmp_path / "lib" / "widgets").mkdir(parents=True)
    path = write_initial_config(tmp_path, source="lib/widgets")
    assert load_config(path).project.source == "lib/widgets"
    with pytest.raises(UsageError, match="no directory 'lib/nothing'"):
        write_initial_config(tmp_path, force=True, source="lib/nothing")


# --- what the tests need ------------------------------------------------------------------

TENACITY_LIKE = """\
[project]
name = "widgets"
dependencies = ["attrs"]

[project.optional-dependencies]
doc = ["sphinx"]
test = ["pytest", "tornado>=6.0", "typeguard"]

[dependency-groups]
dev = ["ruff", "pytest", "tornado>=6.0"]
"""


@pytest.mark.parametrize(
    ("files", "requirements", "source"),
    [
        (
            {"pyproject.toml": TENACITY_LIKE},
            ["pytest", "tornado>=6.0", "typeguard"],
            "`[project.optional-dependencies] test` in pyproject.toml",
        ),
        (
            {
                "pyproject.toml": '[dependency-groups]\nbase = ["hypothesis"]\n'
                'tests = ["pytest>=8", {include-group = "base"}, "widgets[extra]"]\n'
                '[project]\nname = "widgets"\n'
            },
            ["pytest>=8", "hypothesis"],  # the project itself is no test dependency
            "`[dependency-groups] tests` in pyproject.toml",
        ),
        (
            {
                "pyproject.toml": '[tool.poetry.group.test.dependencies]\npytest = "^7.2.0"\n'
                'PyYAML = "~6.0"\nfreezegun = { version = "^0.3" }\nmock = "*"\n'
            },
            ["pytest>=7.2.0,<8", "PyYAML>=6.0,<6.1", "freezegun>=0.3,<0.4", "mock"],
            "`[tool.poetry.group.test.dependencies]` in pyproject.toml",
        ),
        (
            {
                "requirements-test.txt": "# for the tests\n-r requirements/base.txt\n"
                "pytest-mock>=3  # mocks\n--index-url https://example.invalid\n",
                "requirements/base.txt": "pytest\nresponses==0.25\n",
            },
            ["pytest", "responses==0.25", "pytest-mock>=3"],
            "requirements-test.txt",
        ),
        (
            {
                "tox.ini": "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    pytest\n"
                "    py38: mock\n    -r{toxinidir}/extra.txt\ncommands = pytest\n",
                "extra.txt": "freezegun\n",
            },
            ["pytest", "mock", "freezegun"],
            "`[testenv] deps` in tox.ini",
        ),
        (
            {
                "noxfile.py": "import nox\n\n\n@nox.session\ndef lint(session):\n"
                "    session.install('ruff')\n\n\n@nox.session\ndef tests(session):\n"
                "    session.install('-e', '.')\n    session.install('pytest', 'trustme')\n"
            },
            ["pytest", "trustme"],
            "the test sessions of noxfile.py",
        ),
    ],
)
def test_test_dependencies_are_read_where_projects_declare_them(
    tmp_path: Path, files: dict[str, str], requirements: list[str], source: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = find_test_dependencies(tmp_path)
    assert list(found.requirements) == requirements
    assert found.source == source
    assert found.left_out == ()


def test_a_development_group_is_read_without_its_tools(tmp_path: Path) -> None:
    """As sqlparse declares its test dependencies: only in a `dev` group."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "sqlparse"\n[dependency-groups]\n'
        'dev = ["pytest", "coverage", "ruff", "build", "sphinx", "furo", "hatch>=1.18.0",'
        ' "sphinx-rtd-theme", "flake8-bugbear", "types-requests", "pyyaml"]\n'
    )
    found = find_test_dependencies(tmp_path)
    assert found.requirements == ("pytest", "pyyaml")
    assert found.source == "`[dependency-groups] dev` in pyproject.toml"
    assert found.left_out == (
        "coverage", "ruff", "build", "sphinx", "furo", "hatch", "sphinx-rtd-theme",
        "flake8-bugbear", "types-requests",
    )  # fmt: skip


def test_init_writes_the_test_dependencies_with_where_they_came_from(tmp_path: Path) -> None:
    package(tmp_path, "src/widgets")
    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text(TENACITY_LIKE)
    path = write_initial_config(tmp_path)
    text = path.read_text()
    assert (
        "# What the tests need besides the project's own dependencies, from\n"
        "# `[project.optional-dependencies] test` in pyproject.toml.\n"
        'test-dependencies = ["pytest", "tornado>=6.0", "typeguard"]\n'
    ) in text
    assert load_config(path).project.test_dependencies == ["pytest", "tornado>=6.0", "typeguard"]


def test_init_without_declared_test_dependencies_leaves_the_default(tmp_path: Path) -> None:
    package(tmp_path, "src/widgets")
    path = write_initial_config(tmp_path)
    text = path.read_text()
    assert '# test-dependencies = ["pytest"]' in text
    assert "none is declared\n# where bugbout looks" in text
    assert load_config(path).project.test_dependencies == ["pytest"]
