"""Which part of a patch each changed path belongs to, and the patch record's helpers."""

from __future__ import annotations

import pytest

from bugbout_tui.core.patch import FileChange, Part, Patch, split_path
from bugbout_tui.infra.workcopy import is_junk


@pytest.mark.parametrize(
    ("path", "source", "tests", "part"),
    [
        # the package
        ("src/pkg/core.py", "src/pkg", "tests", "source"),
        ("src/pkg/sub/deep.py", "src/pkg", "tests", "source"),
        ("src/pkg/data/table.json", "src/pkg", "tests", "source"),
        ("src/pkg/py.typed", "src/pkg", "tests", "source"),
        ("pkg/core.py", "pkg", "tests", "source"),
        # tests, wherever they are
        ("tests/test_core.py", "src/pkg", "tests", "tests"),
        ("tests/helpers.py", "src/pkg", "tests", "tests"),
        ("tests/data/input.txt", "src/pkg", "tests", "tests"),
        ("tests/conftest.py", "src/pkg", "tests", "tests"),
        ("src/pkg/test_inline.py", "src/pkg", "tests", "tests"),
        ("src/pkg/core_test.py", "src/pkg", "tests", "tests"),
        ("src/pkg/conftest.py", "src/pkg", "tests", "tests"),
        ("src/pkg/tests/helpers.py", "src/pkg", "tests", "tests"),
        ("src/pkg/test/fixture.json", "src/pkg", "tests", "tests"),
        ("test_top.py", "src/pkg", "tests", "tests"),
        ("testing/check_x.py", "src/pkg", "testing", "tests"),
        ("docs/conftest.py", "src/pkg", "tests", "tests"),
        # everything else
        ("conftest.py", "src/pkg", "tests", "other"),
        ("pyproject.toml", "src/pkg", "tests", "other"),
        ("setup.cfg", "src/pkg", "tests", "other"),
        ("tox.ini", "src/pkg", "tests", "other"),
        ("pytest.ini", "src/pkg", "tests", "other"),
        ("docs/index.md", "src/pkg", "tests", "other"),
        ("src/other/mod.py", "src/pkg", "tests", "other"),
        ("src/pkgextra/mod.py", "src/pkg", "tests", "other"),
        ("testsuite/helpers.py", "src/pkg", "tests", "other"),
        ("src/pkg/testing.py", "src/pkg", "tests", "source"),
        ("src/pkg/contest.py", "src/pkg", "tests", "source"),
        # settings written loosely
        ("src/pkg/core.py", "./src/pkg/", "./tests/", "source"),
        ("tests/x.txt", "src/pkg", "tests/", "tests"),
        # the package at the root: all that is not a test is source
        ("core.py", ".", "tests", "source"),
        ("pyproject.toml", "", "tests", "source"),
        ("conftest.py", ".", "tests", "other"),
        # tests at the root: only names (and test directories) make a test
        ("core.py", "pkg", ".", "other"),
        ("pkg/core.py", "pkg", ".", "source"),
        ("test_core.py", "pkg", ".", "tests"),
    ],
)
def test_split_path(path: str, source: str, tests: str, part: Part) -> None:
    assert split_path(path, source, tests) == part


@pytest.mark.parametrize(
    ("path", "junk"),
    [
        ("src/pkg/__pycache__/core.cpython-311.pyc", True),
        ("src/pkg/__pycache__/", True),
        ("old.pyc", True),
        (".pytest_cache/v/cache/nodeids", True),
        (".mypy_cache/3.11/x.json", True),
        (".ruff_cache/", True),
        (".tox/py311/bin/python", True),
        (".nox/", True),
        (".venv/bin/python", True),
        ("venv/lib/site.py", True),
        ("src/bugbout_pkg.egg-info/PKG-INFO", True),
        (".eggs/setuptools_scm.egg/x", True),
        ("frontend/node_modules/left-pad/index.js", True),
        ("src/pkg/.core.py.swp", True),
        ("src/pkg/.core.py.swo", True),
        ("src/pkg/core.py~", True),
        ("src/pkg/.#core.py", True),
        (".DS_Store", True),
        ("docs/.DS_Store", True),
        (".codex/session.json", True),
        (".claude/settings.json", True),
        (".gemini/state", True),
        (".aider.chat.history.md", True),
        (".aider.tags.cache.v3/", True),
        (".coverage", True),
        (".hypothesis/examples/x", True),
        ("src/pkg/core.py", False),
        ("src/pkg/venv.py", False),
        ("src/pkg/pycache.py", False),
        ("docs/swp.md", False),
        ("src/pkg/egg-info.py", False),
        ("venvs/notes.txt", False),
    ],
)
def test_junk_rules(path: str, junk: bool) -> None:
    assert is_junk(path) is junk


def _change(path: str, part: Part, added: int = 0, removed: int = 0) -> FileChange:
    return FileChange(
        path=path, status="modified", part=part, added_lines=added, removed_lines=removed
    )


def test_patch_helpers() -> None:
    empty = Patch(notes=["left out big.bin: 1.0 GB is over the 10 MB limit"])
    assert empty.is_empty and not empty.has_source_change and empty.source_size == 0

    tests_only = Patch(tests="diff", files=[_change("tests/test_x.py", "tests", 5, 0)])
    assert not tests_only.is_empty
    assert not tests_only.has_source_change
    assert tests_only.source_size == 0

    mixed = Patch(
        files=[
            _change("src/pkg/a.py", "source", 3, 1),
            _change("src/pkg/b.py", "source", 0, 2),
            _change("tests/test_a.py", "tests", 40, 0),
            _change("pyproject.toml", "other", 1, 1),
        ]
    )
    assert mixed.has_source_change
    assert mixed.source_size == 6


def test_patch_round_trips_through_json() -> None:
    patch = Patch(
        source="diff --git a/src/pkg/é.py b/src/pkg/é.py\n",
        files=[
            FileChange(
                path="src/pkg/é.py",
                old_path="src/pkg/e.py",
                status="renamed",
                part="source",
                binary=False,
                symlink=False,
            )
        ],
        notes=["a note"],
    )
    assert Patch.model_validate_json(patch.model_dump_json()) == patch


def test_patch_rejects_unknown_fields_and_values() -> None:
    with pytest.raises(ValueError, match="extra"):
        Patch.model_validate({"source": "", "surprise": 1})
    with pytest.raises(ValueError, match="status"):
        FileChange.model_validate({"path": "a", "status": "copied", "part": "source"})
