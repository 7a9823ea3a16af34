"""Which files an environment repair may change, and how a repair's files are split."""

from __future__ import annotations

import pytest

from bugbout_tui.core.patch import ChangeStatus, FileChange, Patch
from bugbout_tui.rules.env_files import is_env_file, split_repair


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "packages/core/pyproject.toml",
        "requirements.txt",
        "requirements-dev.txt",
        "test-requirements.txt",
        "requirements/base.txt",
        "requirements/ci.in",
        "requirements.in",
        "constraints.txt",
        "constraints-py311.txt",
        "setup.py",
        "setup.cfg",
        "uv.lock",
        "poetry.lock",
        "Pipfile",
        "Pipfile.lock",
        "pdm.lock",
        ".python-version",
        "runtime.txt",
        "environment.yml",
        "README.md",
        "README",
        "readme.rst",
        "INSTALL.txt",
        "docs/install.rst",
        "docs/source/installation.md",
    ],
)
def test_environment_files(path: str) -> None:
    assert is_env_file(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/pkg/__init__.py",
        "pkg/install.py",  # code, though named like install notes
        "pkg/readme_helpers.py",
        "tests/test_pkg.py",
        "tests/fixtures/setup.py",  # a test's fixture, not the project's packaging
        "pkg/tests/requirements.txt",
        "conftest.py",
        "tox.ini",  # configures how the tests run; the clean install never reads it
        "noxfile.py",
        "pytest.ini",
        "MANIFEST.in",
        "docs/usage.rst",
        "requirements/notes.md",
    ],
)
def test_other_files(path: str) -> None:
    assert not is_env_file(path)


def change(
    path: str,
    *,
    old_path: str | None = None,
    status: ChangeStatus = "modified",
    symlink: bool = False,
    lines: tuple[int, int] = (1, 1),
) -> FileChange:
    return FileChange(
        path=path,
        old_path=old_path,
        status=status,
        part="other",
        symlink=symlink,
        added_lines=lines[0],
        removed_lines=lines[1],
    )


def test_a_repair_is_split_into_environment_files_and_the_rest() -> None:
    patch = Patch(
        files=[
            change("requirements.txt"),
            change("src/pkg/core.py"),
            change("pyproject.toml"),
            change("tests/test_core.py", status="added"),
        ]
    )

    assert split_repair(patch) == (
        ["requirements.txt", "pyproject.toml"],
        ["src/pkg/core.py", "tests/test_core.py"],
    )


def test_a_rename_is_an_environment_change_only_at_both_ends() -> None:
    patch = Patch(
        files=[
            change("requirements/base.txt", old_path="requirements.txt", status="renamed"),
            change("requirements-dev.txt", old_path="src/pkg/deps.py", status="renamed"),
        ]
    )

    assert split_repair(patch) == (["requirements/base.txt"], ["src/pkg/deps.py"])


def test_a_symbolic_link_is_never_an_environment_file() -> None:
    patch = Patch(files=[change("requirements.txt", symlink=True)])

    assert split_repair(patch) == ([], ["requirements.txt"])


def test_an_empty_patch_changes_nothing() -> None:
    assert split_repair(Patch()) == ([], [])
