"""The cross-examination matrix summed up cell by cell, for the Matrix screen.

A stored matrix holds one outcome per (tree, author, test). The screen shows one cell
per (tree, author): how many of the author's tests passed on that tree, and how many of
its reproductions (its tests that fail on the unfixed code, the judge's evidence) pass.
Filters narrow the tests every cell counts; authors left with no test disappear.
"""

from __future__ import annotations

from dataclasses import dataclass

from bugbout_tui.core.models import Author, Cell, Matrix
from bugbout_tui.rules.judge import breaks, reproductions

BASE = "base"


@dataclass(frozen=True)
class Filters:
    only_reproductions: bool = False
    """Count only tests that fail on the unfixed code (the suite has none)."""
    only_disagreements: bool = False
    """Count only tests on which the patches do not all agree."""


@dataclass(frozen=True)
class CellSummary:
    """One (tree, author) cell."""

    passed: int
    total: int
    reproductions: int
    """How many of the counted tests are reproductions."""
    reproductions_passing: int
    error: str | None = None
    """The run on this tree failed as a whole."""


@dataclass(frozen=True)
class TestLine:
    """One test of a cell, for the cell's detail."""

    test: str
    cell: Cell | None
    """Its outcome on the tree; None when the tree has no result for it."""
    base: Cell | None
    reproduction: bool
    breakage: bool
    """A suite or examiner test that passes on the unfixed code and fails on this patch."""

    @property
    def failing(self) -> bool:
        """Anything but `passed` on this tree, a missing result included."""
        return self.cell is None or self.cell.outcome != "passed"


@dataclass(frozen=True)
class MatrixGrid:
    task: str
    trees: list[str]
    """`base` first, then each patch's tree in the matrix's order."""
    authors: list[Author]
    cells: dict[tuple[str, str], CellSummary]
    """(tree, author name) → summary."""


def counted_tests(matrix: Matrix, author: Author, filters: Filters, repro: set[str]) -> list[str]:
    """The author's tests the filters keep, in the author's order; `repro` holds the
    author's reproductions."""
    tests = _author_tests(matrix, author)
    if filters.only_reproductions:
        tests = [test for test in tests if test in repro]
    if filters.only_disagreements:
        patches = [tree for name, tree in matrix.trees.items() if name != BASE]
        tests = [
            test
            for test in tests
            if len({_outcome(tree.cells.get(author.name, {}).get(test)) for tree in patches}) > 1
        ]
    return tests


def _author_tests(matrix: Matrix, author: Author) -> list[str]:
    """The author's declared tests, then any the trees report that it did not declare."""
    seen = dict.fromkeys(author.tests)
    for tree in matrix.trees.values():
        for test in tree.cells.get(author.name, {}):
            seen.setdefault(test)
    return list(seen)


def _outcome(cell: Cell | None) -> str | None:
    return None if cell is None else cell.outcome


def matrix_grid(matrix: Matrix, filters: Filters = Filters()) -> MatrixGrid:
    repro = {name: set(tests) for name, tests in reproductions(matrix).items()}
    trees = [BASE, *(patch.contestant for patch in matrix.patches if patch.contestant != BASE)]
    trees += [name for name in matrix.trees if name not in trees]
    authors: list[Author] = []
    cells: dict[tuple[str, str], CellSummary] = {}
    for author in matrix.authors:
        mine = repro.get(author.name, set())
        tests = counted_tests(matrix, author, filters, mine)
        if not tests and (filters.only_reproductions or filters.only_disagreements):
            continue
        authors.append(author)
        for tree_name in trees:
            run = matrix.trees.get(tree_name)
            if run is None:
                cells[(tree_name, author.name)] = CellSummary(0, 0, 0, 0, "not run")
                continue
            results = run.cells.get(author.name, {})
            passed = sum(1 for test in tests if _outcome(results.get(test)) == "passed")
            counted_repro = [test for test in tests if test in mine]
            cells[(tree_name, author.name)] = CellSummary(
                passed=passed,
                total=len(tests),
                reproductions=len(counted_repro),
                reproductions_passing=sum(
                    1 for test in counted_repro if _outcome(results.get(test)) == "passed"
                ),
                error=run.error,
            )
    return MatrixGrid(matrix.task, trees, authors, cells)


def cell_tests(matrix: Matrix, tree: str, author_name: str, filters: Filters) -> list[TestLine]:
    """Every counted test of one author on one tree, with its outcome there and on the base;
    failing tests first, since they are what a reader opens a cell to see."""
    author = next((a for a in matrix.authors if a.name == author_name), None)
    if author is None:
        return []
    repro = set(reproductions(matrix).get(author_name, []))
    run = matrix.trees.get(tree)
    base = matrix.trees.get(BASE)
    here = run.cells.get(author_name, {}) if run is not None else {}
    before = base.cells.get(author_name, {}) if base is not None else {}
    lines = [
        TestLine(
            test,
            here.get(test),
            before.get(test),
            test in repro,
            tree != BASE and breaks(author, before.get(test), here.get(test)),
        )
        for test in counted_tests(matrix, author, filters, repro)
    ]
    return sorted(lines, key=lambda line: not line.failing)
