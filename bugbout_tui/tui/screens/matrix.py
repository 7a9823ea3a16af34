"""The Matrix screen: per task, every author's tests on the base and on every patch.

An environment task has no tests to cross-examine, so no matrix: it is listed, and says
where its repairs are shown instead. Author and patch names come from the config, task
ids from the repository: labels show them inert.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from bugbout_tui.core import look
from bugbout_tui.core.models import Author, Matrix
from bugbout_tui.core.text import inert_line
from bugbout_tui.tui.env_view import ENV_MARK
from bugbout_tui.tui.matrix_view import BASE, CellSummary, Filters, MatrixGrid, matrix_grid
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.screens.cell import CellScreen
from bugbout_tui.tui.widgets.grid import CellGrid

LEGEND = Text.assemble(
    ("Rows", "bold"), ": the unfixed base, then base + each patch. ",
    ("Columns", "bold"), ": who wrote the tests.\n",
    ("Cells", "bold"), ": tests passed/total. ",
    ("⚑ k/n", "bold magenta"), ": k of the author's n reproductions pass.\n",
    "A reproduction is a test that fails on the unfixed code. ",
    ("enter", "bold"), " opens a cell.",
    style="dim",
)  # fmt: skip
"""Every line ends a sentence and fits 80 columns, so the legend is never cut mid-sentence."""


def _patches(count: int) -> tuple[str, str]:
    return (f"  {count} patch{'es' if count != 1 else ''}", "dim")


def no_matrix_text(task: str) -> Text:
    """What the Matrix screen says of an environment task."""
    return Text.assemble(
        (f"{ENV_MARK} ", "magenta"), (inert_line(task), "bold"),
        " is an environment repair: there are no tests to cross-examine, so it has no "
        "matrix. A clean install at the task's date and a traced run of its command judge "
        "each repair: open an attempt on the Race screen (3) for its install, trace and "
        "audit, and see the env judge's pick on the Verdicts screen (5).",
        style="yellow",
    )  # fmt: skip


def tree_label(tree: str) -> Text:
    if tree == BASE:
        return Text("base (unfixed)", style="bold")
    return Text.assemble(("patch ", "dim"), (inert_line(tree), "bold"))


def author_label(author: Author) -> Text:
    kind = {"contestant": "contestant", "examiner": "examiner", "suite": "repository"}
    return Text.assemble(
        (inert_line(author.name), "bold"), "\n", (kind.get(author.kind, author.kind), "dim")
    )


def cell_text(cell: CellSummary, tree: str) -> Text:
    """`passed/total`, green when all pass, red when none do; reproductions marked."""
    if cell.error is not None:
        return Text("run failed", style="bold red")
    if cell.total == 0:
        return Text("–", style="dim")
    if cell.passed == cell.total:
        style = "green"
    elif cell.passed == 0:
        style = "red"
    else:
        style = "yellow"
    text = Text(f"{cell.passed}/{cell.total}", style=style)
    if cell.reproductions:
        if tree == BASE:
            text.append(f" ⚑{cell.reproductions}", style="bold magenta")
        else:
            text.append(
                f" ⚑{cell.reproductions_passing}/{cell.reproductions}", style="bold magenta"
            )
    return text


class MatrixScreen(BoutScreen):
    """Tasks on the left; the highlighted task's matrix on the right, cell by cell."""

    MODE = "matrix"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "filter('only_reproductions')", "Only reproductions", id="only-repro",
                tooltip="Count only tests that fail on the unfixed code"),
        Binding("d", "filter('only_disagreements')", "Only disagreements", id="only-disagree",
                tooltip="Count only tests on which the patches disagree"),
        Binding("left_square_bracket", "step(-1)", "Prev task", id="prev-task"),
        Binding("right_square_bracket", "step(1)", "Next task", id="next-task"),
    ]  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self.filters = Filters()
        self.task_id: str | None = None
        self._grid: MatrixGrid | None = None
        self._tasks: list[str] = []

    def body(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="matrix-tasks", markup=False)
            with Vertical(id="matrix-main"):
                yield Static(id="matrix-title")
                yield CellGrid(id="matrix-grid")
                yield Static(LEGEND, id="matrix-legend")

    @property
    def grid(self) -> CellGrid:
        return self.query_one(CellGrid)

    def on_mount(self) -> None:
        self.grid.focus()

    def show_records(self) -> None:
        records = self.session.records
        matrices = records.matrices
        env = [task for task in records.env_tasks if task not in matrices]
        tasks = [*sorted(matrices, key=look.task_order), *env]
        if tasks != self._tasks:
            self._tasks = tasks
            listing = self.query_one("#matrix-tasks", OptionList)
            listing.set_options(
                Option(Text.assemble((inert_line(task), "bold"),
                                     _patches(len(matrices[task].patches)) if task in matrices
                                     else (f"  {ENV_MARK}", "magenta"),
                                     no_wrap=True, overflow="ellipsis"), id=task)
                for task in tasks
            )  # fmt: skip
        if self.task_id not in tasks:
            self.task_id = tasks[0] if tasks else None
        self._show_task(force=True)

    @on(OptionList.OptionHighlighted, "#matrix-tasks")
    def _task_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_id is not None and event.option_id != self.task_id:
            self.task_id = event.option_id
            self._show_task()

    @on(OptionList.OptionSelected, "#matrix-tasks")
    def _task_chosen(self, event: OptionList.OptionSelected) -> None:
        self.grid.focus()

    def action_step(self, step: int) -> None:
        """`]` and `[` step through what a screen shows one at a time: here, the tasks."""
        if not self._tasks:
            return
        index = self._tasks.index(self.task_id) if self.task_id in self._tasks else 0
        self.task_id = self._tasks[(index + step) % len(self._tasks)]
        self._show_task()

    def action_filter(self, name: str) -> None:
        if name == "only_reproductions":
            self.filters = Filters(not self.filters.only_reproductions,
                                   self.filters.only_disagreements)  # fmt: skip
        else:
            self.filters = Filters(self.filters.only_reproductions,
                                   not self.filters.only_disagreements)  # fmt: skip
        self._show_task(force=True)

    def _matrix(self) -> Matrix | None:
        return self.session.records.matrices.get(self.task_id) if self.task_id else None

    def _show_task(self, *, force: bool = False) -> None:
        matrix = self._matrix()
        title = self.query_one("#matrix-title", Static)
        env = matrix is None and self.task_id is not None and self.task_id in self._tasks
        self.query_one("#matrix-legend", Static).display = not env
        if matrix is None:
            self.grid.set_grid(Text(""), [], [], [])
            self._grid = None
            if env and self.task_id is not None:
                self._highlight_task()
                title.update(no_matrix_text(self.task_id))
                return
            title.update(
                Text(
                    "No matrix yet. After the race, every author's tests run on the unfixed "
                    "code and on every patch; each task's matrix appears here as it is built.",
                    style="yellow",
                )
            )
            return
        self._highlight_task()
        grid = matrix_grid(matrix, self.filters)
        filters = Text.assemble(
            ("  r ", "bold cyan"), "only reproductions ",
            ("on" if self.filters.only_reproductions else "off",
             "bold" if self.filters.only_reproductions else "dim"),
            ("   d ", "bold cyan"), "only disagreements ",
            ("on" if self.filters.only_disagreements else "off",
             "bold" if self.filters.only_disagreements else "dim"),
        )  # fmt: skip
        title.update(Text.assemble(("Task ", "dim"), (inert_line(matrix.task), "bold"), filters))
        if not force and grid == self._grid:
            return
        self._fill(grid)

    def _highlight_task(self) -> None:
        listing = self.query_one("#matrix-tasks", OptionList)
        if self.task_id in self._tasks:
            listing.highlighted = self._tasks.index(self.task_id)

    def _fill(self, grid: MatrixGrid) -> None:
        """Show a grid; the cursor stays on the same tree and author when it can."""
        self._grid = grid
        self.grid.set_grid(
            Text("tree", style="bold"),
            [(tree, tree_label(tree)) for tree in grid.trees],
            [(author.name, author_label(author)) for author in grid.authors],
            [[cell_text(grid.cells[(tree, a.name)], tree) for a in grid.authors]
             for tree in grid.trees],
        )  # fmt: skip
        if not grid.authors:
            self.query_one("#matrix-title", Static).update(
                Text(
                    f"Task {inert_line(grid.task)}: no test is left under these filters.",
                    style="yellow",
                )
            )

    @on(CellGrid.CellSelected, "#matrix-grid")
    def _cell_selected(self, event: CellGrid.CellSelected) -> None:
        event.stop()
        self._open(event.row, event.column)

    def _open(self, tree: str, author: str) -> None:
        if self.task_id is None:
            return
        self.app.push_screen(CellScreen(self.task_id, tree, author, self.filters))
