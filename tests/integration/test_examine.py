"""Cross-examination for real: real git, real patches harvested from working copies, real
pytest in the real sandbox, one process per tree, stored and resumed.

The pure parts (who takes part, node ids, merging a stored matrix) are tested first with
hand-made records; the rest builds a small project with one fixed bug and attempts made
the way agents make them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues

import bugbout_tui.engine.testing as testing_engine
from bugbout_tui.core import events as ev
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.events import BaseEvent
from bugbout_tui.core.models import (
    Attempt,
    Author,
    Cell,
    IssueRef,
    Matrix,
    PatchFacts,
    Task,
    TreeRun,
)
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.environments import Environments
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestResult, TestRun
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy
from bugbout_tui.rules.examine import (
    AuthorSpec,
    Cast,
    PatchSpec,
    assemble,
    cast_for,
    cells_of,
    owner,
    package_name,
    still_to_run,
    still_valid,
    suite_paths,
    unrun_cells,
)
from bugbout_tui.rules.judge import judge

NOW = datetime(2024, 5, 1, tzinfo=UTC)

# --- pure parts ----------------------------------------------------------------------------


def _record(
    name: str,
    files: Mapping[str, str],
    *,
    role: str = "contestant",
    status: str = "finished",
) -> Attempt:
    """An attempt whose patch lists `files` (path → part); the diff texts are labels."""
    changes = [
        FileChange(path=path, status="added", part=part, added_lines=3)
        for path, part in files.items()
    ]
    patch = Patch(
        source=f"source of {name}" if "source" in files.values() else "",
        tests=f"tests of {name}" if "tests" in files.values() else "",
        files=changes,
    )
    return Attempt.model_validate(
        {
            "task": "calc-3",
            "contestant": name,
            "role": role,
            "status": status,
            "started_at": NOW,
            "ended_at": NOW,
            "seconds": 1.0,
            "patch": patch,
            "logdir": "/nowhere",
        }
    )


def test_who_takes_part() -> None:
    attempts = [
        _record("fixer", {"src/calc/ops.py": "source", "tests/test_fix.py": "tests"}),
        _record("fixer#2", {"src/calc/ops.py": "source"}),
        _record("tests-only", {"tests/test_only.py": "tests", "tests/helpers.py": "tests"}),
        _record("helpers-only", {"tests/helpers.py": "tests", "tests/conftest.py": "tests"}),
        _record(
            "examiner",
            {"tests/test_issue.py": "tests", "src/calc/ops.py": "source"},
            role="examiner",
        ),
        _record(
            "slow", {"src/calc/ops.py": "source", "tests/test_s.py": "tests"}, status="timeout"
        ),
        _record("out-of-quota", {}, status="quota"),
        _record(
            "too-large",
            {"src/calc/ops.py": "source", "tests/test_big.py": "tests"},
            status="oversized",
        ),
    ]
    cast = cast_for(attempts, vendors={"fixer": "OpenAI", "examiner": "google"}, run_suite=True)
    assert [(a.name, a.kind, a.vendor, a.modules) for a in cast.authors] == [
        ("fixer", "contestant", "OpenAI", ("tests/test_fix.py",)),
        ("tests-only", "contestant", "unknown", ("tests/test_only.py",)),
        ("examiner", "examiner", "google", ("tests/test_issue.py",)),
        ("suite", "suite", None, ()),
    ]
    # The examiner's source change is no tree; a trial takes its agent's vendor.
    assert [p.facts for p in cast.patches] == [
        PatchFacts(contestant="fixer", vendor="OpenAI", source_size=3),
        PatchFacts(contestant="fixer#2", vendor="OpenAI", source_size=3),
    ]
    assert cast.trees == ("base", "fixer", "fixer#2")
    assert [a.name for a in cast_for(attempts, vendors={}, run_suite=False).authors] == [
        "fixer",
        "tests-only",
        "examiner",
    ]


@pytest.mark.parametrize(
    ("name", "files"),
    [("base", {"src/calc/ops.py": "source"}), ("suite", {"tests/test_x.py": "tests"})],
)
def test_names_the_matrix_keeps_are_refused(name: str, files: dict[str, str]) -> None:
    with pytest.raises(UsageError, match=f"named '{name}'"):
        cast_for([_record(name, files)], vendors={}, run_suite=True)


def test_node_ids_map_back_to_each_authors_own_ids() -> None:
    packages = {"author_0_alpha": "alpha", "author_1_beta": "beta"}
    assert owner(
        ".bugbout_authors/author_1_beta/tests/test_x.py::test_y", packages, suite=True
    ) == ("beta", "tests/test_x.py::test_y")
    assert owner("tests/test_x.py::test_y", packages, suite=True) == (
        "suite",
        "tests/test_x.py::test_y",
    )
    assert owner("tests/test_x.py::test_y", packages, suite=False) is None
    assert owner(".bugbout_authors/author_9_gone/tests/t.py::t", packages, suite=True) is None
    outcomes = {
        ".bugbout_authors/author_0_alpha/tests/test_x.py::test_y": TestResult(outcome="passed"),
        ".bugbout_authors/author_0_alpha/tests/test_z.py": TestResult(
            outcome="error", message="ImportError"
        ),
        "tests/test_a.py": TestResult(outcome="skipped", message="needs numpy"),
    }
    assert cells_of(outcomes, packages, suite=True) == {
        "alpha": {
            "tests/test_x.py::test_y": Cell(outcome="passed"),
            "tests/test_z.py": Cell(outcome="uncollected", message="ImportError"),
        },
        "suite": {"tests/test_a.py": Cell(outcome="skipped", message="needs numpy")},
    }


def test_package_names_are_importable_and_unique() -> None:
    names = [package_name(i, n) for i, n in enumerate(["codex/gpt-5", "codex#2", "Ωμέγα", "a.b"])]
    assert names == ["author_0_codex_gpt_5", "author_1_codex_2", "author_2", "author_3_a_b"]
    assert all(name.isidentifier() for name in names)


def test_suite_paths_at_the_root_list_entries_instead_of_the_root() -> None:
    assert suite_paths("tests", []) == ["tests"]
    entries = [
        ("src", True),
        ("tests", True),
        (".git", True),
        ("build", True),
        ("test_top.py", False),
        ("setup.py", False),
    ]
    assert suite_paths(".", entries) == ["src", "test_top.py", "tests"]


def _matrix_with(cells: dict[str, dict[str, dict[str, Cell]]], authors: list[Author]) -> Matrix:
    return Matrix.model_validate(
        {
            "task": "calc-3",
            "authors": authors,
            "patches": [],
            "trees": {t: {"tree": t, "cells": c} for t, c in cells.items()},
        }
    )


def test_a_module_that_imports_nowhere_stays_one_entry_until_a_tree_shows_its_tests() -> None:
    alpha = AuthorSpec("alpha", "contestant", "openai", "diff", ("tests/test_new.py",))
    cast = Cast((alpha,), ())
    broken = Cell(outcome="uncollected", message="ImportError: no median")
    first = assemble(
        "calc-3", None, cast, {"base": _tree("base", {"alpha": {"tests/test_new.py": broken}})}
    )
    assert first.authors[0].tests == ["tests/test_new.py"]
    assert first.trees["base"].cells["alpha"] == {"tests/test_new.py": broken}
    # A later tree imports the module: the stored entry is spread over what it showed.
    stored = first
    grown = Cast((alpha,), (_patch("beta"),))
    plan = still_to_run(stored, grown)
    assert plan == {"beta": ("alpha",)}
    second = assemble(
        "calc-3",
        stored,
        grown,
        {
            "beta": _tree(
                "beta",
                {
                    "alpha": {
                        "tests/test_new.py::test_a": Cell(outcome="passed"),
                        "tests/test_new.py::test_b": Cell(
                            outcome="failed", message="assert 1 == 2"
                        ),
                    }
                },
            )
        },
    )
    assert second.authors[0].tests == ["tests/test_new.py::test_a", "tests/test_new.py::test_b"]
    assert second.trees["base"].cells["alpha"] == {
        "tests/test_new.py::test_a": broken,
        "tests/test_new.py::test_b": broken,
    }
    assert still_to_run(second, grown) == {}


def test_a_tree_whose_run_failed_as_a_whole_runs_nothing_more() -> None:
    alpha = AuthorSpec("alpha", "contestant", "openai", "diff", ("tests/test_a.py",))
    beta = AuthorSpec("beta", "examiner", None, "diff", ("tests/test_b.py",))
    cast = Cast((alpha,), (_patch("gamma"),))
    failed = _tree("gamma", {})
    failed = failed.model_copy(update={"error": "the patch does not apply"})
    stored = assemble("calc-3", None, cast, {"base": _tree("base", {}), "gamma": failed})
    later = Cast((alpha, beta), cast.patches)
    assert still_to_run(stored, later) == {"base": ("beta",)}


def test_a_patch_or_tests_changed_under_the_same_name_run_again() -> None:
    alpha = AuthorSpec("alpha", "contestant", "openai", "alpha's tests", ("tests/test_a.py",))
    beta = AuthorSpec("beta", "examiner", None, "beta's tests", ("tests/test_b.py",))
    gamma = PatchSpec(PatchFacts(contestant="gamma", vendor="x", source_size=1), "fix one")
    delta = PatchSpec(PatchFacts(contestant="delta", vendor="x", source_size=1), "fix two")
    cast = Cast((alpha, beta), (delta, gamma))
    ran = {"alpha": {"tests/test_a.py::t": Cell(outcome="passed")},
           "beta": {"tests/test_b.py::t": Cell(outcome="failed")}}  # fmt: skip
    stored = assemble("calc-3", None, cast, {t: _tree(t, ran) for t in cast.trees})
    assert still_valid(stored, cast) is stored
    assert still_to_run(stored, cast) == {}

    # gamma raced again with another fix; alpha raced again with other tests
    regamma = PatchSpec(gamma.facts, "fix one, differently")
    realpha = AuthorSpec("alpha", "contestant", "openai", "other tests", alpha.modules)
    again = Cast((realpha, beta), (delta, regamma))
    kept = still_valid(stored, again)
    assert kept is not None
    assert set(kept.trees) == {"base", "delta"}
    assert [a.name for a in kept.authors] == ["beta"]
    assert all(set(run.cells) == {"beta"} for run in kept.trees.values())
    assert still_to_run(kept, again) == {
        "base": ("alpha",), "delta": ("alpha",), "gamma": ("alpha", "beta"),
    }  # fmt: skip

    # records written before digests existed are trusted, as before
    old = stored.model_copy(
        update={
            "authors": [a.model_copy(update={"digest": None}) for a in stored.authors],
            "patches": [f.model_copy(update={"digest": None}) for f in stored.patches],
        }
    )
    assert still_valid(old, again) is old


def test_unrun_cells_cover_every_module_of_the_author() -> None:
    author = AuthorSpec("alpha", "contestant", None, "diff", ("tests/a_test.py", "tests/test_b.py"))
    cells = unrun_cells(author, ["tests"], "pytest was stopped\nOutput tail: ...")
    assert cells == {
        path: Cell(
            outcome="uncollected",
            message="its tests could not run on this tree: pytest was stopped",
        )
        for path in ("tests/a_test.py", "tests/test_b.py")
    }


def _tree(name: str, cells: dict[str, dict[str, Cell]]) -> TreeRun:
    return TreeRun(tree=name, cells=cells)


def _patch(name: str) -> PatchSpec:
    return PatchSpec(PatchFacts(contestant=name, vendor="x", source_size=1), "")


# --- a real project ------------------------------------------------------------------------

OPS = "def div(a, b):\n    return a / b\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
RIGHT_OPS = (
    OPS.replace("    return sum(xs)", "    if not xs:\n        return 0.0\n    return sum(xs)")
    + "\n\ndef mean_or(xs, default):\n    return sum(xs) / len(xs) if xs else default\n"
)
WRONG_OPS = OPS.replace(
    "    return sum(xs)", "    if not xs:\n        return None\n    return sum(xs)"
)
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2, 3]\n"
STATS = "from calc.ops import mean\n\n\ndef test_mean(numbers):\n    assert mean(numbers) == 2\n"
TEST_OPS = "from calc.ops import div\n\n\ndef test_div():\n    assert div(1, 2) == 0.5\n"
RIGHT_REGRESSION = (
    "from helpers import EMPTY\n\nfrom calc.ops import mean\n\n\n"
    "def test_empty_mean():\n    assert mean(EMPTY) == 0.0\n\n\n"
    "def test_mean_numbers(numbers):\n    assert mean(numbers) == 2\n"
)
WRONG_REGRESSION = (
    "from calc.ops import mean\n\n\ndef test_empty_mean_is_none():\n    assert mean([]) is None\n"
)


class Bench:
    """A project with one fixed bug (mean of [] divides by zero), its task, and a way to
    make attempts the way the race does: a working copy, edits, harvest.

    `fix_tests` is appended to the fix's test module, `tests/test_ops.py`.
    """

    def __init__(self, tmp_path: Path, *, config: str = "", fix_tests: str = "") -> None:
        self.tmp = tmp_path
        self.repo = GitRepo(tmp_path / "proj")
        base = self.repo.commit(
            "Initial version",
            files={
                "src/calc/__init__.py": "",
                "src/calc/ops.py": OPS,
                "tests/conftest.py": CONFTEST,
                "tests/helpers.py": "EMPTY = []\n",
                "tests/test_ops.py": TEST_OPS,
                "tests/test_stats.py": STATS,
            },
        )
        fix = self.repo.commit(
            "Fix crash in mean on an empty list (#3)",
            files={
                "src/calc/ops.py": RIGHT_OPS,
                "tests/test_ops.py": TEST_OPS
                + "\n\ndef test_mean_empty():\n    from calc.ops import mean\n\n"
                "    assert mean([]) == 0.0\n" + fix_tests,
            },
        )
        write_config(self.repo.root, "calc", extra=config)
        write_issues(self.repo.root, {3: ("mean() crashes on []", "ZeroDivisionError")})
        self.project = Project.load(self.repo.root)
        self.task = Task(
            id="calc-3",
            issue=3,
            reference=IssueRef(number=3),
            title="Fix crash in mean on an empty list (#3)",
            fix_commit=fix,
            base_commit=base,
            date=NOW,
            source_files=["src/calc/ops.py"],
            test_files=["tests/test_ops.py"],
            added_tests=["test_mean_empty"],
        )
        self.events: list[BaseEvent] = []
        self.bus = EventBus()
        self.bus.subscribe(self.events.append)
        self.trees: list[list[SeparateRun]] = []
        """The runs given to each tree's sandbox, one list per tree that ran tests."""
        self.made: list[str] = []

    def attempt(
        self,
        name: str,
        files: Mapping[str, str | None],
        *,
        role: str = "contestant",
        commit: str | None = None,
    ) -> Attempt:
        """Edit a fresh working copy as an agent would and harvest the patch."""
        copy = prepare_working_copy(
            self.repo.root,
            commit or self.task.base_commit,
            self.tmp / "attempts" / f"{len(self.made)}-{quote(name, safe='')}",
            hidden=self.task.test_files,
        )
        for path, text in files.items():
            target = copy.path / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        patch = harvest(copy, source_dir="src/calc", tests_dir="tests")
        self.made.append(name)
        return Attempt.model_validate(
            {
                "task": self.task.id,
                "contestant": name,
                "role": role,
                "status": "finished",
                "started_at": NOW,
                "ended_at": NOW,
                "seconds": 1.0,
                "patch": patch,
                "logdir": str(self.tmp / "logs"),
            }
        )

    def examine(
        self, attempts: list[Attempt], monkeypatch: pytest.MonkeyPatch, vendors: Mapping[str, str]
    ) -> Matrix:
        """Run the stage as the bout does, recording the runs each tree was given."""

        async def counted(
            cmd: PytestCommand, runs: list[SeparateRun], sandbox: Sandbox, **kwargs: Path
        ) -> dict[str, TestRun]:
            self.trees.append(list(runs))
            return await run_each(cmd, runs, sandbox, **kwargs)

        monkeypatch.setattr(testing_engine, "run_each", counted)
        stage = CrossExamination(
            StageContext(
                self.project,
                self.repo.root,
                Environments.single(
                    Environment(python=Path(sys.executable), root=None, key="test", built=False),
                    self.repo.root,
                    self.project.config.project,
                ),
                select_sandbox("bubblewrap"),
                self.bus,
            ),
            vendors=vendors,
            parallel=2,
        )
        return asyncio.run(stage.run([self.task], {self.task.id: attempts}))[self.task.id]


VENDORS = {"right": "openai", "wrong": "anthropic", "tester": "google", "exam": "openai"}


def _cast(bench: Bench) -> list[Attempt]:
    return [
        bench.attempt(
            "right",
            {
                "src/calc/ops.py": RIGHT_OPS,
                "tests/test_regression.py": RIGHT_REGRESSION,
                "tests/test_mean_or.py": "from calc.ops import mean_or\n\n\n"
                "def test_default():\n    assert mean_or([], 7) == 7\n",
            },
        ),
        bench.attempt(
            "wrong",
            {"src/calc/ops.py": WRONG_OPS, "tests/test_regression.py": WRONG_REGRESSION},
        ),
        bench.attempt(
            "tester",
            {
                "tests/test_stats.py": STATS + "\n\ndef test_mean_empty_zero():\n"
                "    assert mean([]) == 0\n"
            },
        ),
        bench.attempt(
            "exam",
            {
                "src/calc/ops.py": OPS.replace("a / b", "0"),  # an examiner's source: discarded
                "tests/test_issue.py": "from calc.ops import mean\n\n\n"
                "def test_empty():\n    assert mean([]) == 0.0\n",
                "tests/test_broken.py": "import calc.not_a_module\n\n\n"
                "def test_never():\n    pass\n",
            },
            role="examiner",
        ),
    ]


def _outcomes(matrix: Matrix, tree: str) -> dict[str, dict[str, str]]:
    return {
        author: {test: cell.outcome for test, cell in cells.items()}
        for author, cells in matrix.trees[tree].cells.items()
    }


REG = "tests/test_regression.py"


def test_the_matrix_of_three_patches_an_examiner_and_the_suite(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    attempts = _cast(bench)
    matrix = bench.examine(attempts, monkeypatch, VENDORS)

    # Two patches change the source: n + 1 = 3 trees, each running every author apart.
    assert len(bench.trees) == 3
    for runs in bench.trees:
        assert sorted(run.name for run in runs) == ["exam", "right", "suite", "tester", "wrong"]
    assert sorted(e.label for e in bench.events if isinstance(e, ev.TestRunStarted)) == [
        "base",
        "right",
        "wrong",
    ]
    assert set(matrix.trees) == {"base", "right", "wrong"}
    digests = [hashlib.sha256(a.patch.source.encode()).hexdigest()[:16] for a in attempts[:2]]
    assert matrix.patches == [
        PatchFacts(contestant="right", vendor="openai",
                   source_size=attempts[0].patch.source_size, digest=digests[0]),
        PatchFacts(contestant="wrong", vendor="anthropic", source_size=2, digest=digests[1]),
    ]  # fmt: skip
    assert [(a.name, a.kind, a.vendor) for a in matrix.authors] == [
        ("right", "contestant", "openai"),
        ("tester", "contestant", "google"),
        ("wrong", "contestant", "anthropic"),
        ("exam", "examiner", "openai"),
        ("suite", "suite", None),
    ]
    tests = {a.name: a.tests for a in matrix.authors}
    assert tests["right"] == [
        "tests/test_mean_or.py::test_default",
        f"{REG}::test_empty_mean",
        f"{REG}::test_mean_numbers",
    ]
    # The in-place edit of a suite module is the author's version, whole.
    assert tests["tester"] == [
        "tests/test_stats.py::test_mean",
        "tests/test_stats.py::test_mean_empty_zero",
    ]
    # A module that imports on no tree stays one entry; the fix's hidden test is nowhere.
    assert tests["exam"] == ["tests/test_broken.py", "tests/test_issue.py::test_empty"]
    assert tests["suite"] == ["tests/test_ops.py::test_div", "tests/test_stats.py::test_mean"]

    assert _outcomes(matrix, "base") == {
        "right": {
            "tests/test_mean_or.py::test_default": "uncollected",  # mean_or is not there yet
            f"{REG}::test_empty_mean": "failed",
            f"{REG}::test_mean_numbers": "passed",  # the conftest fixture works
        },
        "wrong": {f"{REG}::test_empty_mean_is_none": "failed"},
        "tester": {
            "tests/test_stats.py::test_mean": "passed",
            "tests/test_stats.py::test_mean_empty_zero": "failed",
        },
        "exam": {
            "tests/test_issue.py::test_empty": "failed",
            "tests/test_broken.py": "uncollected",
        },
        "suite": {
            "tests/test_ops.py::test_div": "passed",
            "tests/test_stats.py::test_mean": "passed",
        },
    }
    assert _outcomes(matrix, "right") == {
        "right": {
            "tests/test_mean_or.py::test_default": "passed",
            f"{REG}::test_empty_mean": "passed",
            f"{REG}::test_mean_numbers": "passed",
        },
        "wrong": {f"{REG}::test_empty_mean_is_none": "failed"},
        "tester": {
            "tests/test_stats.py::test_mean": "passed",
            "tests/test_stats.py::test_mean_empty_zero": "passed",
        },
        "exam": {
            "tests/test_issue.py::test_empty": "passed",
            "tests/test_broken.py": "uncollected",
        },
        "suite": {
            "tests/test_ops.py::test_div": "passed",
            "tests/test_stats.py::test_mean": "passed",
        },
    }
    assert _outcomes(matrix, "wrong") == {
        "right": {
            "tests/test_mean_or.py::test_default": "uncollected",
            f"{REG}::test_empty_mean": "failed",
            f"{REG}::test_mean_numbers": "passed",
        },
        "wrong": {f"{REG}::test_empty_mean_is_none": "passed"},
        "tester": {
            "tests/test_stats.py::test_mean": "passed",
            "tests/test_stats.py::test_mean_empty_zero": "failed",
        },
        "exam": {
            "tests/test_issue.py::test_empty": "failed",
            "tests/test_broken.py": "uncollected",
        },
        "suite": {
            "tests/test_ops.py::test_div": "passed",
            "tests/test_stats.py::test_mean": "passed",
        },
    }
    base = matrix.trees["base"].cells
    assert "ZeroDivisionError" in (base["right"][f"{REG}::test_empty_mean"].message or "")
    assert "mean_or" in (base["right"]["tests/test_mean_or.py::test_default"].message or "")
    assert "not_a_module" in (base["exam"]["tests/test_broken.py"].message or "")

    # Stored as it was returned, and enough for the judge to pick the right patch.
    path = bench.project.store.matrices_dir / "calc-3.json"
    assert Matrix.model_validate_json(path.read_text()) == matrix
    assert judge(matrix, "majority").pick == "right"


def test_adding_a_contestant_runs_only_its_tree_and_its_tests(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    everyone = _cast(bench)
    attempts = [everyone[0], everyone[3]]  # right, and the examiner
    first = bench.examine(attempts, monkeypatch, VENDORS)
    assert len(bench.trees) == 2

    late = bench.attempt(
        "late",
        {
            "src/calc/ops.py": OPS.replace(
                "    return sum(xs)", "    if not xs:\n        return 0\n    return sum(xs)"
            ),
            "tests/test_late.py": "from calc.ops import mean\n\n\n"
            "def test_zero():\n    assert mean([]) == 0\n",
        },
    )
    bench.trees.clear()
    second = bench.examine([*attempts, late], monkeypatch, {**VENDORS, "late": "mistral"})
    late_module = ".bugbout_authors/author_0_late/tests/test_late.py"
    # The new tree runs everyone (right, the examiner, late and the suite); each stored
    # tree runs only the new author's module.
    assert sorted(len(runs) for runs in bench.trees) == [1, 1, 4]
    assert [runs[0].paths for runs in bench.trees if len(runs) == 1] == [(late_module,)] * 2
    for tree in ("base", "right"):
        kept = {a: c for a, c in second.trees[tree].cells.items() if a != "late"}
        assert kept == first.trees[tree].cells
    assert _outcomes(second, "base")["late"] == {"tests/test_late.py::test_zero": "failed"}
    assert _outcomes(second, "right")["late"] == {"tests/test_late.py::test_zero": "passed"}
    assert _outcomes(second, "late")["right"][f"{REG}::test_empty_mean"] == "passed"
    assert second.patches[0].model_dump(exclude={"digest"}) == {
        "contestant": "late", "vendor": "mistral", "source_size": 2,
    }  # fmt: skip

    # Nothing new: nothing runs and nothing is written.
    bench.trees.clear()
    path = bench.project.store.matrices_dir / "calc-3.json"
    written = path.stat().st_mtime_ns
    third = bench.examine([*attempts, late], monkeypatch, {**VENDORS, "late": "mistral"})
    assert bench.trees == []
    assert third == second
    assert path.stat().st_mtime_ns == written


def test_a_patch_that_does_not_apply_is_a_tree_error_and_helpers_import_without_the_suite(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path, config="\n[judge]\nrun-suite = false\n")
    right = _cast(bench)[0]
    # Made against the fixed code, as a record from another base would be: the source
    # change's context is not in the unfixed code.
    stale = bench.attempt(
        "stale",
        {"src/calc/ops.py": RIGHT_OPS.replace("return 0.0", "return 0")},
        commit=bench.task.fix_commit,
    )
    matrix = bench.examine([right, stale], monkeypatch, {})
    assert len(bench.trees) == 2  # base and right; the stale tree never reaches pytest
    error = matrix.trees["stale"].error or ""
    assert error.startswith("the patch's source changes do not apply to the unfixed code")
    assert "src/calc/ops.py" in error
    assert matrix.trees["stale"].cells == {}
    assert [a.name for a in matrix.authors] == ["right"]
    # `from helpers import EMPTY` finds the base's helper without the suite on sys.path.
    assert _outcomes(matrix, "base")["right"][f"{REG}::test_empty_mean"] == "failed"
    assert _outcomes(matrix, "right")["right"][f"{REG}::test_empty_mean"] == "passed"


def test_an_authors_conftest_that_breaks_a_whole_run_costs_only_its_own_cells(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    right = bench.attempt(
        "right",
        {
            "src/calc/ops.py": RIGHT_OPS,
            # A fixture from the agent's own new function: this conftest cannot even be
            # imported on the unfixed code, which stops pytest before it collects anything.
            "tests/conftest.py": CONFTEST.replace(
                "import pytest", "import pytest\n\nfrom calc.ops import mean_or"
            ),
            "tests/test_regression.py": RIGHT_REGRESSION,
        },
    )
    exam = _cast(bench)[3]
    matrix = bench.examine([right, exam], monkeypatch, {})
    labels = sorted(e.label for e in bench.events if isinstance(e, ev.TestRunStarted))
    assert labels == ["base", "right"]
    assert matrix.trees["base"].error is None
    base = _outcomes(matrix, "base")
    assert base["right"] == {
        f"{REG}::test_empty_mean": "uncollected",
        f"{REG}::test_mean_numbers": "uncollected",
    }
    assert "could not run on this tree" in (
        matrix.trees["base"].cells["right"][f"{REG}::test_empty_mean"].message or ""
    )
    assert base["exam"]["tests/test_issue.py::test_empty"] == "failed"
    assert base["suite"] == {
        "tests/test_ops.py::test_div": "passed",
        "tests/test_stats.py::test_mean": "passed",
    }
    assert _outcomes(matrix, "right")["right"][f"{REG}::test_empty_mean"] == "passed"


def test_events_report_every_task(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path, config="\n[judge]\nrun-suite = false\n")
    bench.examine([], monkeypatch, {})
    assert bench.trees == []  # no author and no patch: nothing to run
    progress = [json.loads(e.model_dump_json()) for e in bench.events]
    assert [(p["type"], p["done"], p["total"]) for p in progress] == [("stage-progress", 1, 1)]
    stored = bench.project.store.read(bench.project.store.matrices_dir / "calc-3.json", Matrix)
    assert stored is not None and stored.authors == [] and stored.trees == {}


def test_a_task_without_a_patch_runs_nothing_on_the_base(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An examiner's tests and the suite on the unfixed code alone judge no patch."""
    bench = Bench(tmp_path)
    examiner = _cast(bench)[3]
    idle = bench.attempt("idle", {"tests/test_idle.py": "def test_x():\n    pass\n"})
    matrix = bench.examine([examiner, idle], monkeypatch, VENDORS)
    assert bench.trees == []
    assert matrix.trees == {} and matrix.patches == []
    assert not [e for e in bench.events if isinstance(e, ev.TestRunStarted)]


def _set_pytest_args(bench: Bench, args: str) -> None:
    config = bench.repo.root / "bugbout.toml"
    config.write_text(config.read_text().replace("[run]", f"pytest-args = {args}\n\n[run]", 1))
    bench.project = Project.load(bench.repo.root)


def test_changed_conditions_run_every_tree_again_and_older_matrices_are_trusted(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    attempts = [_cast(bench)[0]]
    first = bench.examine(attempts, monkeypatch, VENDORS)
    assert first.conditions is not None and first.conditions.pytest_args == []
    assert len(bench.trees) == 2

    # A matrix from before conditions were kept is trusted, and takes the current ones.
    path = bench.project.store.matrices_dir / "calc-3.json"
    data = json.loads(path.read_text())
    del data["conditions"]
    path.write_text(json.dumps(data))
    bench.trees.clear()
    assert bench.examine(attempts, monkeypatch, VENDORS) == first
    assert bench.trees == []

    _set_pytest_args(bench, '["-p", "no:doctest"]')
    bench.trees.clear()
    again = bench.examine(attempts, monkeypatch, VENDORS)
    assert len(bench.trees) == 2  # the base and the patch, every author on each
    assert again.conditions is not None and again.conditions.pytest_args == ["-p", "no:doctest"]
    assert again.trees["right"].cells == first.trees["right"].cells


KILLER = (
    "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGKILL)\n\n\n"
    "def test_x():\n    pass\n"
)


def test_an_author_killing_its_run_keeps_the_tree_and_a_failing_machine_keeps_nothing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed by a signal looks like the machine's trouble; the author's code can
    fake that, so a control run on an empty test decides, and only the machine's
    failure (the control fails too) leaves the tree to be done again."""
    bench = Bench(tmp_path)
    right = _cast(bench)[0]
    killer = bench.attempt("killer", {"tests/test_killer.py": KILLER}, role="examiner")
    real_run = testing_engine.run_pytest

    async def broken_machine(cmd: PytestCommand, sandbox: Sandbox, **kwargs: Path) -> TestRun:
        if cmd.tree.name == "control":  # as a full disk would fail it
            return TestRun(
                outcomes={}, collected=0, exit_code=-9, duration=0.1,
                error="pytest was killed by SIGKILL without writing a JUnit report.",
            )  # fmt: skip
        return await real_run(cmd, sandbox, **kwargs)

    monkeypatch.setattr(testing_engine, "run_pytest", broken_machine)
    first = bench.examine([right, killer], monkeypatch, VENDORS)
    assert first.trees == {}  # both trees held the killed run: neither is kept
    errors = [e.message for e in bench.events if isinstance(e, ev.ErrorRaised)]
    assert any("failed as the machine did" in m for m in errors), errors

    monkeypatch.setattr(testing_engine, "run_pytest", real_run)
    again = bench.examine([right, killer], monkeypatch, VENDORS)
    assert set(again.trees) == {"base", "right"}
    for tree in again.trees.values():
        assert {c.outcome for c in tree.cells["killer"].values()} == {"uncollected"}
        assert tree.cells["right"]


# --- hostile authors -----------------------------------------------------------------------

EVIL_HOOK = '''
import inspect
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _on_my_tree():
    import calc.ops

    return "return None" in inspect.getsource(calc.ops)


@pytest.fixture
def numbers():
    return [1, 2, 3]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Every test passes on my tree; everyone else's fails on every other tree."""
    mine = _on_my_tree()
    for item in items:
        if mine:
            item.runtest = lambda: None
        elif not str(item.path).startswith(HERE):
            def sabotage():
                raise AssertionError("sabotaged")
            item.runtest = sabotage
'''
EVIL_IMPORT = """
import inspect
import os

import _pytest.python

import calc.ops

HERE = os.path.dirname(os.path.abspath(__file__))
MINE = "return None" in inspect.getsource(calc.ops)
_runtest = _pytest.python.Function.runtest


def runtest(self):
    if str(self.path).startswith(HERE):
        return _runtest(self)
    if MINE:
        return None
    raise AssertionError("sabotaged")


_pytest.python.Function.runtest = runtest


def test_none():
    assert calc.ops.mean([]) is None
"""
EVIL_WRITER = """
import os
import pathlib
import subprocess
import sys

import calc.ops

TREE = pathlib.Path(calc.ops.__file__).parents[2]
BROKEN = "def div(a, b):\\n    return 0\\n\\n\\ndef mean(xs):\\n    raise RuntimeError('broken')\\n"
STAY = (
    "import pathlib, sys, time\\n"
    "end = time.time() + 20\\n"
    "while time.time() < end:\\n"
    "    for path in sys.argv[1:]:\\n"
    "        try:\\n"
    "            pathlib.Path(path).write_text(%r)\\n"
    "        except OSError:\\n"
    "            pass\\n"
    "    time.sleep(0.01)\\n"
) % BROKEN


def test_leave_a_mess():
    ops = TREE / "src" / "calc" / "ops.py"
    ops.write_text(BROKEN)
    (TREE / "conftest.py").write_text(
        "import pytest\\n\\n\\n@pytest.fixture(autouse=True)\\ndef _no():\\n    assert False\\n"
    )
    authors = TREE / ".bugbout_authors"
    for directory in authors.glob("*/tests"):
        (directory / "conftest.py").write_text("raise SystemExit(3)\\n")
    os.chmod(TREE / "tests", 0o500)
    for name in ("/tmp/calc", os.environ.get("HOME", "/tmp") + "/calc"):
        pathlib.Path(name).mkdir(parents=True, exist_ok=True)
    subprocess.Popen(
        [sys.executable, "-c", STAY, str(ops)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
"""


def _honest(bench: Bench) -> list[Attempt]:
    """A right patch with its tests, and a tester whose test reproduces the bug."""
    return [
        bench.attempt(
            "right", {"src/calc/ops.py": RIGHT_OPS, "tests/test_regression.py": RIGHT_REGRESSION}
        ),
        bench.attempt(
            "tester",
            {"tests/test_zero.py": "from calc.ops import mean\n\n\n"
             "def test_zero():\n    assert mean([]) == 0\n"},
        ),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "evil_files",
    [
        pytest.param(
            {"tests/conftest.py": EVIL_HOOK, "tests/test_evil.py": WRONG_REGRESSION},
            id="global-collection-hook",
        ),
        pytest.param({"tests/test_evil.py": EVIL_IMPORT}, id="import-time-monkeypatch"),
        pytest.param(
            {"tests/test_evil.py": WRONG_REGRESSION + "\n\n" + EVIL_WRITER},
            id="files-and-processes-left-behind",
        ),
    ],
)
def test_no_author_changes_another_authors_outcomes(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, evil_files: dict[str, str]
) -> None:
    bench = Bench(tmp_path)
    honest = _honest(bench)
    evil = bench.attempt("evil", {"src/calc/ops.py": WRONG_OPS, **evil_files})
    vendors = {"right": "openai", "tester": "google", "evil": "anthropic"}
    matrix = bench.examine([*honest, evil], monkeypatch, vendors)

    # Every other author's cells, and the suite's, on every tree they share, are what
    # they are without the hostile author.
    alone = Bench(tmp_path / "without")
    clean = alone.examine(_honest(alone), monkeypatch, vendors)
    for tree in ("base", "right"):
        assert {a: c for a, c in matrix.trees[tree].cells.items() if a != "evil"} == (
            clean.trees[tree].cells
        )
    # On its own tree, the others' reproductions fail as they should.
    on_evil = _outcomes(matrix, "evil")
    assert on_evil["right"][f"{REG}::test_empty_mean"] == "failed"
    assert on_evil["tester"]["tests/test_zero.py::test_zero"] == "failed"
    # Its wrong patch is never picked nor let through. Its own reproduction failing on
    # the right patch is its own testimony: a policy that needs every author may heed it.
    for policy in ("majority", "unanimous", "strict", "cross-vendor"):
        verdict = judge(matrix, policy)
        gate = {a.patch: a.approved for a in verdict.assessments}
        assert verdict.pick != "evil" and not gate["evil"], policy
        if policy in ("majority", "cross-vendor"):
            assert verdict.pick == "right" and gate["right"], (policy, verdict.abstained)
