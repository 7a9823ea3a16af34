"""Whether a change to an environment file changes what is installed: each kind of file
compared by what it declares, parsed on both sides."""

from __future__ import annotations

import pytest

from bugbout_tui.rules.env_changes import (
    change_kind,
    file_change,
    installs_nothing,
    reads_content,
)

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "pkg"
version = "1.0"
requires-python = ">=3.9"
dependencies = ["requests>=2.28", "attrs"]

[project.optional-dependencies]
test = ["pytest"]

[dependency-groups]
dev = ["ruff"]

[tool.ruff]
line-length = 99
"""


def pyproject(old: str, new: str) -> str:
    assert old in PYPROJECT
    return file_change("pyproject.toml", PYPROJECT.encode(), PYPROJECT.replace(old, new).encode())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param('"attrs"]', '"attrs<23"]', id="a pin in [project] dependencies"),
        pytest.param('"attrs"]', '"attrs", "six"]', id="a dependency added"),
        pytest.param('["pytest"]', '["pytest", "hypothesis"]', id="an optional dependency"),
        pytest.param('["ruff"]', '["ruff==0.4"]', id="a dependency group"),
        pytest.param('"setuptools>=61"', '"setuptools>=64"', id="build-system requires"),
        pytest.param('"setuptools.build_meta"', '"hatchling.build"', id="the build backend"),
        pytest.param('">=3.9"', '">=3.10"', id="requires-python"),
    ],
)
def test_a_change_to_a_dependency_table_changes_what_is_installed(old: str, new: str) -> None:
    assert pyproject(old, new) == "dependencies"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("line-length = 99", "line-length = 100", id="tool settings"),
        pytest.param('"requests>=2.28", "attrs"', '"attrs", "requests >= 2.28"', id="reordered"),
        pytest.param('name = "pkg"', '# the package\nname = "pkg"', id="a comment"),
        pytest.param(
            'dependencies = ["requests>=2.28", "attrs"]',
            'dependencies = [\n    "requests>=2.28",\n    "attrs",\n]',
            id="reformatted",
        ),
    ],
)
def test_a_pyproject_change_outside_the_dependency_tables_is_not_one(old: str, new: str) -> None:
    assert pyproject(old, new) == "other"


def test_a_pyproject_whose_version_alone_moved_is_a_version_bump() -> None:
    assert pyproject('version = "1.0"', 'version = "1.1"') == "version"


def test_a_version_moved_with_tool_settings_is_no_version_bump() -> None:
    changed = PYPROJECT.replace('"1.0"', '"1.1"').replace("= 99", "= 100")
    assert file_change("pyproject.toml", PYPROJECT.encode(), changed.encode()) == "other"


POETRY = """\
[tool.poetry]
name = "pkg"
version = "0.12.0"

[tool.poetry.dependencies]
python = "^3.7"

[tool.poetry.group.dev.dependencies]
pytest = "^7.2"

[tool.black]
line-length = 88
"""


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ('python = "^3.7"', 'python = "^3.8"', "dependencies"),
        ('pytest = "^7.2"', 'pytest = "^7.4"', "dependencies"),
        ('version = "0.12.0"', 'version = "0.12.1"', "version"),
        ("line-length = 88", "line-length = 100", "other"),
    ],
)
def test_poetry_keeps_its_dependencies_under_tool(old: str, new: str, kind: str) -> None:
    after = POETRY.replace(old, new).encode()
    assert file_change("pyproject.toml", POETRY.encode(), after) == kind


def test_a_new_pyproject_with_tool_settings_alone_installs_nothing_new() -> None:
    assert file_change("pyproject.toml", None, b"[tool.black]\nline-length = 88\n") == "other"


def test_a_new_pyproject_that_declares_the_project_changes_the_install() -> None:
    declared = b'[project]\nname = "pkg"\nversion = "1"\n'
    assert file_change("pyproject.toml", None, declared) == "dependencies"


def test_a_pyproject_that_stops_parsing_changes_the_install() -> None:
    broken = PYPROJECT.replace("[project]", "[project").encode()
    assert file_change("pyproject.toml", PYPROJECT.encode(), broken) == "dependencies"


SETUP_PY = """\
from setuptools import setup

__version__ = "2.0"
REQUIRES = ["six"]
if sys.version_info < (3, 8):
    REQUIRES.append("importlib-metadata")

setup(
    name="pkg",
    version=__version__,
    install_requires=REQUIRES,
    extras_require={"test": ["pytest"]},
    python_requires=">=3.7",
    classifiers=["Programming Language :: Python :: 3.7"],
)
"""


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        pytest.param('["six"]', '["six>=1.16"]', "dependencies", id="a name's assignment"),
        pytest.param('"importlib-metadata"', '"importlib<5"', "dependencies", id="an append"),
        pytest.param('["pytest"]', '["pytest", "mock"]', "dependencies", id="extras"),
        pytest.param('">=3.7"', '">=3.8"', "dependencies", id="python_requires"),
        pytest.param('"2.0"', '"2.1"', "version", id="the version alone"),
        pytest.param('name="pkg",', 'name="pkg",  # the name', "other", id="a comment"),
        pytest.param(":: 3.7", ":: 3.8", "other", id="a classifier"),
        pytest.param("from setuptools", "from distutils.core", "dependencies", id="its builder"),
        pytest.param('name="pkg",', 'name="pkg", use_2to3=True,', "dependencies", id="2to3"),
    ],
)
def test_setup_py_is_compared_by_its_setup_call_without_running_it(
    old: str, new: str, kind: str
) -> None:
    after = SETUP_PY.replace(old, new).encode()
    assert file_change("setup.py", SETUP_PY.encode(), after) == kind


SETTINGS_PY = """\
from setuptools import setup

settings = dict()
with open("requirements.txt") as file_requirements:
    requirements = file_requirements.read().splitlines()
settings.update(name="retrying", version="1.3.1", install_requires=requirements)
setup(**settings)
"""


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        pytest.param('"1.3.1"', '"1.3.2-dev"', "version", id="the version alone"),
        pytest.param(".splitlines()", ".split()", "dependencies", id="how requirements are read"),
        pytest.param("name=", "license='Apache', name=", "other", id="metadata"),
    ],
)
def test_setup_py_settings_given_through_a_dict_are_found_where_they_are_given(
    old: str, new: str, kind: str
) -> None:
    after = SETTINGS_PY.replace(old, new).encode()
    assert file_change("setup.py", SETTINGS_PY.encode(), after) == kind


def test_a_setup_py_that_appears_changes_the_install() -> None:
    assert file_change("setup.py", None, b"from setuptools import setup\nsetup()\n") == (
        "dependencies"
    )


SETUP_CFG = """\
[metadata]
name = pkg
version = 3.0

[options]
install_requires =
    click>=8
    rich
python_requires = >=3.8

[options.extras_require]
test = pytest

[flake8]
max-line-length = 99
"""


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("click>=8", "click>=8,<9", "dependencies"),
        ("test = pytest", "test = pytest\n    hypothesis", "dependencies"),
        ("python_requires = >=3.8", "python_requires = >=3.9", "dependencies"),
        ("    click>=8\n    rich", "    rich\n    click>=8", "other"),
        ("version = 3.0", "version = 3.1", "version"),
        ("max-line-length = 99", "max-line-length = 100", "other"),
    ],
)
def test_setup_cfg_is_compared_by_its_install_options(old: str, new: str, kind: str) -> None:
    after = SETUP_CFG.replace(old, new).encode()
    assert file_change("setup.cfg", SETUP_CFG.encode(), after) == kind


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("six\nattrs==22.1\n", "six\nattrs==22.1\nrequests\n", "dependencies"),
        ("attrs==22.1\n", "attrs==22.2\n", "dependencies"),
        ("attrs\n", "--index-url https://example.invalid/simple\nattrs\n", "dependencies"),
        ("six\nattrs  # pinned below\n", "attrs\n\n# the rest\nsix\n", "other"),
        ("six \\\n  >=1.16\n", "six>=1.16\n", "other"),
    ],
)
def test_a_requirements_file_is_compared_by_its_lines(before: str, after: str, kind: str) -> None:
    assert file_change("requirements.txt", before.encode(), after.encode()) == kind


@pytest.mark.parametrize(
    ("path", "reads"),
    [
        ("pyproject.toml", True),
        ("pkg/sub/setup.py", True),
        ("setup.cfg", True),
        ("requirements.txt", True),
        ("requirements-dev.txt", True),
        ("dev-requirements.in", True),
        ("requirements/test.txt", True),
        ("constraints.txt", True),
        ("uv.lock", False),
        ("poetry.lock", False),
        (".python-version", False),
        ("README.md", False),
        ("docs/requirements.txt", False),
    ],
)
def test_which_files_are_compared_by_what_they_declare(path: str, reads: bool) -> None:
    assert reads_content(path) is reads


@pytest.mark.parametrize(
    ("path", "notes"),
    [
        ("README.md", True),
        ("docs/installation.rst", True),
        ("INSTALL", True),
        ("docs/requirements.txt", True),
        ("requirements-lint.txt", True),
        ("install-requirements.txt", False),
        ("requirements.txt", False),
        ("uv.lock", False),
    ],
)
def test_install_notes_and_tooling_lists_install_nothing(path: str, notes: bool) -> None:
    assert installs_nothing(path) is notes


@pytest.mark.parametrize(
    ("files", "kind"),
    [
        (["other", "dependencies"], "dependencies"),
        (["version", "version"], "version"),
        (["version", "other"], "other"),
        (["other"], "other"),
        ([], "other"),
    ],
)
def test_a_change_is_judged_by_all_its_files(files: list[str], kind: str) -> None:
    assert change_kind(files) == kind  # type: ignore[arg-type]
