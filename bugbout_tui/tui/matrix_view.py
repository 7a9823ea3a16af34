"""The cross-examination matrix summed up cell by cell, for the Matrix screen.

A stored matrix holds one outcome per (tree, author, test). The screen shows one cell
per (tree, author): how many of the author's tests passed on that tree, and how many of
its reproductions (its tests that fail on the unfixed code, the judge's evidence) pass.
An author is one column as the judge sees it: an agent's repeated trials are one author,
their tests pooled under it, while each trial's patch is a tree of its own. Filters
narrow the tests every cell counts; authors left with no test disappear.
"""

from __future__ import annotations

from dataclasses import dataclass

from bugbout_tui.core.models import Author, Cell, Matrix
from bugbout_tui.core.trials import trial_label
from bugbout_tui.rules.judge import author_identity, breaks, reproductions

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
    author: str = ""
    """The matrix author the test is of: one of the column's trials."""
    label: str = ""
    """The test as the cell lists it: prefixed with its trial when the column pools more
    than one (`alpha #2 · tests/test_x.py::test_y`)."""

    @property
    def key(self) -> str:
        """Unique within a cell, as the label is: two trials may write tests of one name."""
        return self.label

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
    """One per column: an agent's trials pooled under its name, tests left empty."""
    cells: dict[tuple[str, str], CellSummary]
    """(tree, column name) → summary."""


def column_of(name: str, kind: str) -> str:
    """The column a matrix author's tests are shown under: its agent, trials pooled."""
    return name if kind == "suite" else author_identity(name)


def columns(matrix: Matrix) -> list[tuple[Author, list[Author]]]:
    """Each column (an author as the judge sees it) with the matrix authors it pools."""
    groups: dict[str, list[Author]] = {}
    for author in matrix.authors:
        groups.setdefault(column_of(author.name, author.kind), []).append(author)
    return [
        (Author(name=name, kind=members[0].kind, vendor=members[0].vendor), members)
        for name, members in groups.items()
    ]


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
    for column, members in columns(matrix):
        counted = [
            (member.name, test, test in repro.get(member.name, set()))
            for member in members
            for test in counted_tests(matrix, member, filters, repro.get(member.name, set()))
        ]
        if not counted and (filters.only_reproductions or filters.only_disagreements):
            continue
        authors.append(column)
        for tree_name in trees:
            run = matrix.trees.get(tree_name)
            if run is None:
                cells[(tree_name, column.name)] = CellSummary(0, 0, 0, 0, "not run")
                continue
            passing = [
                _outcome(run.cells.get(name, {}).get(test)) == "passed" for name, test, _ in counted
            ]
            cells[(tree_name, column.name)] = CellSummary(
                passed=sum(passing),
                total=len(counted),
                reproductions=sum(is_repro for _, _, is_repro in counted),
                reproductions_passing=sum(
                    passed and is_repro
                    for passed, (_, _, is_repro) in zip(passing, counted, strict=True)
                ),
                error=run.error,
            )
    return MatrixGrid(matrix.task, trees, authors, cells)


def cell_tests(matrix: Matrix, tree: str, author_name: str, filters: Filters) -> list[TestLine]:
    """Every counted test of one column on one tree (`author_name` may name the column or
    any trial in it), with its outcome there and on the base; failing tests first, since
    they are what a reader opens a cell to see."""
    wanted = {column_of(a.name, a.kind) for a in matrix.authors if a.name == author_name}
    wanted = wanted or {author_name}
    members = [a for a in matrix.authors if column_of(a.name, a.kind) in wanted]
    found = reproductions(matrix)
    run = matrix.trees.get(tree)
    base = matrix.trees.get(BASE)
    lines = []
    for author in members:
        repro = set(found.get(author.name, []))
        here = run.cells.get(author.name, {}) if run is not None else {}
        before = base.cells.get(author.name, {}) if base is not None else {}
        for test in counted_tests(matrix, author, filters, repro):
            lines.append(
                TestLine(
                    test,
                    here.get(test),
                    before.get(test),
                    test in repro,
                    tree != BASE and breaks(author, before.get(test), here.get(test)),
                    author=author.name,
                    label=f"{trial_label(author.name)} · {test}" if len(members) > 1 else test,
                )
            )
    return sorted(lines, key=lambda line: not line.failing)
