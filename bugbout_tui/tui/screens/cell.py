"""One cell of a matrix: each test an author wrote, on one tree, with its failure text,
what each test counts as for the judge, and the patch the tree applies.

Test names, failure texts and patches are the agents': they are shown inert, never as
markup.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from bugbout_tui.core import look
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.tui.matrix_view import BASE, Filters, TestLine, cell_tests, column_of
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.widgets.columns import Column, add_columns, fit_columns

COLUMNS = (
    Column("test", "test", 100, share=1),
    Column("here", "on this tree", 12),
    Column("base", "on the base", 11),
    Column("counts", "counts as", 14),
)
"""The test's id takes what the outcomes and what it counts as leave: those are what a
person opens the cell for, so they stay on screen at 80 columns."""


def counts_as_text(line: TestLine) -> Text:
    """What the judge reads this test as: evidence for patches, or against this one."""
    if line.reproduction:
        return Text("⚑ reproduction", style="bold magenta")
    if line.breakage:
        return Text("✗ breakage", style="bold red")
    return Text("–", style="dim")


def source_patch_view(tree: str, attempt: Attempt | None) -> RenderableType:
    """The source part of the patch this tree applies: the change its cells judge."""
    if tree == BASE:
        return Text("The unfixed base applies no patch.", style="dim")
    if attempt is None:
        return Text(f"No stored attempt of {inert_line(tree)} for this task.", style="dim")
    head = Text.assemble(("\npatch of ", "bold"), (inert_line(tree), "bold cyan"),
                         (" — its source part, applied on this tree", "bold"))  # fmt: skip
    if attempt.patch.oversized is not None:
        return Group(head, Text(f"Too large to keep: {inert_line(attempt.patch.oversized)}.",
                                style="red"))  # fmt: skip
    if not attempt.patch.source:
        return Group(head, Text("It changes no source file.", style="dim"))
    return Group(head, Syntax(inert(attempt.patch.source), "diff", theme="ansi_dark"))


class CellTable(DataTable[Text]):
    """A cell's tests, one a row; its columns fit its width."""

    def on_resize(self) -> None:
        fit_columns(self, COLUMNS)


class CellScreen(BoutScreen):
    """Pushed from the Matrix screen (or a verdict's evidence); escape returns."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Back", id="back")]

    def __init__(
        self,
        task: str,
        tree: str,
        author: str,
        filters: Filters | None = None,
        *,
        test: str | None = None,
    ) -> None:
        """`test` puts the cursor on that test (a verdict's evidence names one)."""
        super().__init__()
        self.task_id = task
        self.tree_name = tree
        self.author = author
        self.filters = filters or Filters()
        self.focus_test = test
        self._lines: list[TestLine] = []

    def body(self) -> ComposeResult:
        yield Static(id="cell-title")
        yield CellTable(id="cell-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="cell-detail-box"):
            yield Static(id="cell-detail")
            yield Static(id="cell-patch")

    def on_mount(self) -> None:
        table = self.query_one(CellTable)
        add_columns(table, COLUMNS)
        table.focus()

    def show_records(self) -> None:
        matrix = self.session.records.matrices.get(self.task_id)
        title = self.query_one("#cell-title", Static)
        if matrix is None:
            title.update(Text(f"No matrix for {inert_line(self.task_id)}.", style="yellow"))
            return
        author = next((a for a in matrix.authors if a.name == self.author), None)
        kind: str = author.kind if author is not None else "author"
        column = column_of(self.author, kind)
        trials = sum(column_of(a.name, a.kind) == column for a in matrix.authors)
        if trials > 1:
            kind += f", {trials} trials pooled"
        where = (
            "the unfixed base"
            if self.tree_name == BASE
            else f"base + the patch of {inert_line(self.tree_name)}"
        )
        header = Text.assemble(
            (inert_line(self.task_id), "bold"), " · tests by ",
            (inert_line(column), "bold cyan"), f" ({kind}) on ", (where, "bold"),
        )  # fmt: skip
        run = matrix.trees.get(self.tree_name)
        if run is not None and run.error:
            header.append("\nthe run on this tree failed as a whole: ", style="bold red")
            header.append(inert_line(run.error), style="red")
        header.append("   esc returns", style="dim")
        title.update(header)
        self._lines = cell_tests(matrix, self.tree_name, self.author, self.filters)
        table = self.query_one(CellTable)
        table.clear()
        for line in self._lines:
            table.add_row(
                Text(inert_line(line.label), no_wrap=True, overflow="ellipsis"),
                look.outcome_text(line.cell.outcome if line.cell else None),
                look.outcome_text(line.base.outcome if line.base else None),
                counts_as_text(line),
                key=line.key,
            )
        focus = next(
            (x.key for x in self._lines if (x.author, x.test) == (self.author, self.focus_test)),
            None,
        )
        if focus is not None:
            table.move_cursor(row=table.get_row_index(focus))
        self._show_detail(table.cursor_row)
        attempt = self.session.records.attempt(self.task_id, self.tree_name)
        self.query_one("#cell-patch", Static).update(source_patch_view(self.tree_name, attempt))

    @on(DataTable.RowHighlighted, "#cell-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, row: int) -> None:
        detail = self.query_one("#cell-detail", Static)
        if not 0 <= row < len(self._lines):
            detail.update(Text("This author has no test here under the current filters.",
                               style="dim"))  # fmt: skip
            return
        line = self._lines[row]
        parts = [Text.assemble(("test ", "dim"), (inert_line(line.label), "bold"))]
        if line.reproduction:
            parts.append(Text("⚑ a reproduction: it fails on the unfixed code, so it tests the "
                              "bug",
                              style="magenta"))  # fmt: skip
        if line.breakage:
            parts.append(Text("✗ a breakage: it passes on the unfixed code and fails with this "
                              "patch; it counts against the patch when most other patches keep "
                              "it passing (an examiner's test only under strict)",
                              style="red"))  # fmt: skip
        for label, cell in (("on this tree", line.cell), ("on the unfixed base", line.base)):
            if cell is None:
                continue
            head = Text.assemble((f"\n{label}: ", "bold"), look.outcome_text(cell.outcome))
            parts.append(head)
            if cell.message:
                parts.append(Text(inert(cell.message)))
        detail.update(Group(*parts))
