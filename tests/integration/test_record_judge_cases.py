"""The judge benchmark's recorder on a small history of its own.

`calc-3`'s fix makes `mean([])` return 0.0 instead of raising, in two hunks of one file
(the value, at the top; its use, at the bottom), adds a test, and changes what an old
test asserts: it used to expect the ZeroDivisionError. So the recorded case has all
three archetypes, the `right` author's reproductions, and a suite test that the right
patch breaks while the partial and wrong patches keep it passing, which is the case the
judge's breakage quorum gets wrong.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from benchkit.judge_cases import JudgeCases
from gitrepo import GitRepo
from projects import write_config, write_issues

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("home")]

TOOL = Path(__file__).resolve().parents[2] / "tools" / "record_judge_cases.py"

OPS = """\
EMPTY = None


def clamp(x, low, high):
    return max(low, min(x, high))


def total(xs):
    return sum(xs)


def mean(xs):
    return sum(xs) / len(xs)
"""
OPS_FIXED = OPS.replace("EMPTY = None", "EMPTY = 0.0").replace(
    "    return sum(xs) / len(xs)",
    "    if not xs:\n        return EMPTY\n    return sum(xs) / len(xs)",
)
TESTS = """\
import pytest

from calc.ops import clamp, mean


def test_clamp():
    assert clamp(5, 0, 3) == 3


def test_mean():
    assert mean([1, 3]) == 2


def test_mean_empty():
    with pytest.raises(ZeroDivisionError):
        mean([])
"""
TESTS_FIXED = TESTS.replace(
    "    with pytest.raises(ZeroDivisionError):\n        mean([])\n",
    "    assert mean([]) == 0.0\n\n\n"
    "def test_mean_of_none_is_zero():\n    assert mean(()) == 0.0\n",
)
OLD_TEST = "tests/test_ops.py::test_mean_empty"
NEW_TEST = "tests/test_ops.py::test_mean_of_none_is_zero"


def build(root: Path) -> str:
    """The project; returns its head commit."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={"src/calc/__init__.py": "", "src/calc/ops.py": OPS, "tests/test_ops.py": TESTS},
    )
    head = repo.commit(
        "Fix mean raising on an empty list (#3)",
        files={"src/calc/ops.py": OPS_FIXED, "tests/test_ops.py": TESTS_FIXED},
    )
    write_issues(root, {3: ("mean([]) raises", "It should be 0.0, as for no data.")})
    path = write_config(root, "calc")
    quiet = 'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n\n[run]\n'
    path.write_text(path.read_text().replace("\n[run]\n", "\n" + quiet, 1))
    return head


def test_a_recorded_case_holds_each_archetype_its_truth_and_the_breakage(tmp_path: Path) -> None:
    root = tmp_path / "calc"
    head = build(root)
    out = tmp_path / "cases.json"
    done = subprocess.run(
        [sys.executable, str(TOOL), f"example/calc={root}", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    recorded = JudgeCases.model_validate_json(out.read_text())
    assert recorded.recorded_from == {"example/calc": head}
    (case,) = recorded.cases
    assert (case.project, case.task) == ("example/calc", "calc-3")
    assert case.truth["right"] == "resolved"
    assert case.truth["partial"] != "resolved"
    assert case.truth["wrong"] != "resolved"

    matrix = case.matrix
    assert set(matrix.trees) == {"base", "right", "partial", "wrong"}
    assert all(tree.error is None for tree in matrix.trees.values())
    assert [author.name for author in matrix.authors] == ["right", "suite"]

    def outcome(tree: str, author: str, test: str) -> str:
        return matrix.trees[tree].cells[author][test].outcome

    # The right author's tests are the fix's: its new test reproduces the bug, and so does
    # the old test whose assertion the fix changed.
    for test in (NEW_TEST, OLD_TEST):
        assert outcome("base", "right", test) == "failed"
        assert outcome("right", "right", test) == "passed"
        assert outcome("partial", "right", test) == "failed"
        assert outcome("wrong", "right", test) == "failed"
    # The suite's old assertion passes on the base and is broken by the right patch alone.
    assert outcome("base", "suite", OLD_TEST) == "passed"
    assert outcome("right", "suite", OLD_TEST) == "failed"
    assert outcome("partial", "suite", OLD_TEST) == outcome("wrong", "suite", OLD_TEST) == "passed"
    # The suite tests no tree tells apart are left out; the right author keeps all its own.
    suite = {test for tree in matrix.trees.values() for test in tree.cells["suite"]}
    assert suite == {OLD_TEST}
    assert "tests/test_ops.py::test_clamp" in matrix.trees["base"].cells["right"]
    cells = [c for t in matrix.trees.values() for tests in t.cells.values() for c in tests.values()]
    assert all(cell.message is None for cell in cells)
    assert "calc-3 on right" in done.stdout and "example/calc at" in done.stdout

    # The attempts are where the race stores them, so the project's store opens as a bout.
    attempts = root / ".bugbout" / "attempts" / "calc-3"
    assert sorted(p.name for p in attempts.iterdir()) == [
        "partial.json",
        "right.json",
        "wrong.json",
    ]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_judge_cases", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_partial_patch_is_the_first_half_of_the_hunks_rounded_up() -> None:
    diff = (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "@@ -20 +20 @@\n-y = 1\n+y = 2\n"
        "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n"
        "@@ -1 +1 @@\n-z = 1\n+z = 2\n"
    )
    tool = _tool()
    assert tool.first_half(diff) == (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "@@ -20 +20 @@\n-y = 1\n+y = 2\n"
    )
    one_hunk = "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-z = 1\n+z = 2\n"
    assert tool.first_half(one_hunk) is None
