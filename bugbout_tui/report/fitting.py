"""Tables that fit the width they are given without cutting a value in half.

rich fits a table that is too wide by narrowing columns, and a value that cannot wrap
then loses its end: `67% (21–…`, `#…`. A share with its interval, a count, a commit or
a name is worth nothing cut, so here a table is told which of its values may wrap
(titles, reasons, paths) and which columns it can do without; given less room than it
needs it first wraps what may wrap, down to a floor, then leaves out columns in the
order given, and says which. Widths are decided here, not by rich, so no column is ever
narrower than its values. A table given all the room it wants (a file or a pipe, where
nothing is wrapped) keeps every column at its natural width.

`PathText` wraps at spaces and after `/`, so a long path breaks between its parts rather
than inside a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

__all__ = ["Column", "FittedTable", "PathText"]

UNBOUNDED = 1 << 20
"""A width no table reaches: what a table measures against to find its natural width."""

_PIECES = re.compile(r"\s+|[^\s/]*/+|[^\s/]+")
"""A text cut where it may break: runs of spaces, and words with each `/` ending a part."""


class PathText:
    """Text that wraps at spaces and just after each `/`, folding only a part too long
    for a line on its own."""

    def __init__(self, text: Text | str) -> None:
        self.text = text if isinstance(text, Text) else Text(text)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        plain = self.text.plain
        parts = [piece.strip() for piece in _PIECES.findall(plain)]
        longest = max((cell_len(part) for part in parts), default=0)
        widest = max((cell_len(line) for line in plain.splitlines()), default=0)
        return Measurement(longest, widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        lines: list[Text] = []
        for line in self.text.split("\n", allow_blank=True):
            lines.extend(_wrapped(line, width))
        shown = Text("\n").join(lines)
        shown.overflow = "fold"
        shown.no_wrap = False
        yield shown


def _wrapped(line: Text, width: int) -> list[Text]:
    """One line broken greedily at its break points; spaces at a break are dropped."""
    spans: list[tuple[int, int]] = []
    start = end = -1
    used = 0
    gap = 0
    for match in _PIECES.finditer(line.plain):
        piece = match.group()
        size = cell_len(piece)
        if piece.isspace():
            gap += size
            continue
        if start < 0:
            start, end, used = match.start(), match.end(), size
        elif used + gap + size <= width:
            end, used = match.end(), used + gap + size
        else:
            spans.append((start, end))
            start, end, used = match.start(), match.end(), size
        gap = 0
    if start >= 0:
        spans.append((start, end))
    return [line[a:b] for a, b in spans] or [line]


@dataclass(frozen=True)
class Column:
    """A column of a `FittedTable`.

    Attributes:
        header: The column's heading; it may wrap at spaces whatever the cells do.
        justify: `right` for counts and shares.
        wrap: Whether the cells may wrap (titles, reasons, paths). A cell that may not
            stays on one line, and the column is left out before it would be cut.
        drop: When the width runs short, columns are left out from the highest `drop`
            down; 0 (the default) is never left out.
        floor: The narrowest a wrapping column is made, when its values are wider; it
            never goes below its longest word.
        style: The column's style.
    """

    header: str | Text
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    drop: int = 0
    floor: int = 12
    style: str = ""


class FittedTable:
    """A table that wraps, then leaves out columns, to fit; never cuts a value."""

    def __init__(
        self,
        *columns: Column,
        title: str | Text | None = None,
        caption: RenderableType | None = None,
        compact: bool = False,
    ) -> None:
        """`caption` goes under the table, wrapped to the width given, not the table's;
        `compact`: the report's look, without an outer edge; else a boxed table."""
        self.columns = columns
        self.title = title
        self.caption = caption
        self.compact = compact
        self.rows: list[list[RenderableType]] = []

    def add_row(self, *cells: RenderableType) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([Text(cell) if isinstance(cell, str) else cell for cell in cells])

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        natural = self._natural(console, options)
        keep = list(range(len(self.columns)))
        floor = self._width_at(console, options, keep, self._floors(console, options, natural))
        widest = self._width_at(console, options, keep, natural)
        for around in (self.title, self.caption):
            if around is not None:
                measured = Measurement.get(console, options.update_width(UNBOUNDED), around)
                widest = max(widest, measured.maximum)
        return Measurement(floor, widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        natural = self._natural(console, options)
        floors = self._floors(console, options, natural)
        keep = list(range(len(self.columns)))
        droppable = sorted(
            (i for i, column in enumerate(self.columns) if column.drop),
            key=lambda i: -self.columns[i].drop,
        )
        while self._width_at(console, options, keep, floors) > options.max_width and droppable:
            keep.remove(droppable.pop(0))
        wrap_all = self._width_at(console, options, keep, floors) > options.max_width
        if wrap_all:
            # Narrower than the columns that cannot go: every value may wrap at its
            # spaces now (`67%` over `(21–94%)`), which still cuts none of them.
            floors = self._floors(console, options, natural, wrap_all=True)
        widths = self._share(console, options, keep, natural, floors)
        if self.title is not None:
            # on a line of its own, not padded out to the table's width
            yield Text(self.title, "italic") if isinstance(self.title, str) else self.title
        yield self._table(keep, widths, wrap_all=wrap_all)
        left_out = [self.columns[i].header for i in range(len(self.columns)) if i not in keep]
        if left_out:
            names = ", ".join(str(header).replace("\n", " ") for header in left_out)
            yield Text(f"(not shown at this width: {names})", style="dim")
        if self.caption is not None:
            yield self.caption

    def _natural(self, console: Console, options: ConsoleOptions) -> list[int]:
        """Each column's width with its header and every value on one line."""
        wide = options.update_width(UNBOUNDED)
        widths = []
        for index, column in enumerate(self.columns):
            header = Measurement.get(console, wide, column.header).maximum
            cells = [Measurement.get(console, wide, row[index]).maximum for row in self.rows]
            widths.append(max([header, *cells, 1]))
        return widths

    def _floors(
        self,
        console: Console,
        options: ConsoleOptions,
        natural: list[int],
        *,
        wrap_all: bool = False,
    ) -> list[int]:
        """The narrowest each column may be: as wide as its widest value, the header
        wrapping at its spaces, unless the values may wrap too.

        A column meant to wrap goes down to its `floor` (folding a word longer than
        that); under `wrap_all`, any other column goes down to its longest word.
        """
        wide = options.update_width(UNBOUNDED)
        floors = []
        for index, column in enumerate(self.columns):
            header = Measurement.get(console, wide, column.header).minimum
            if column.wrap:
                floors.append(max(header, min(column.floor, natural[index])))
                continue
            cells = [Measurement.get(console, wide, row[index]) for row in self.rows]
            if wrap_all:
                floors.append(max([header, *(cell.minimum for cell in cells)]))
            else:
                floors.append(max([header, *(cell.maximum for cell in cells)]))
        return floors

    def _share(
        self,
        console: Console,
        options: ConsoleOptions,
        keep: Sequence[int],
        natural: list[int],
        floors: list[int],
    ) -> dict[int, int]:
        """Widths for the kept columns: natural, less what each column can give up (its
        values wrapping, or only its header), the widest first, down to the floors."""
        widths = {i: natural[i] for i in keep}
        excess = self._width_at(console, options, keep, natural) - options.max_width
        while excess > 0:
            shrinkable = [i for i in keep if widths[i] > floors[i]]
            if not shrinkable:
                break
            widest = max(widths[i] for i in shrinkable)
            for i in shrinkable:
                if widths[i] == widest and excess > 0:
                    widths[i] -= 1
                    excess -= 1
        return widths

    def _width_at(
        self, console: Console, options: ConsoleOptions, keep: Sequence[int], widths: list[int]
    ) -> int:
        """The whole table's width with these columns at these widths: borders included."""
        table = self._table(keep, {i: widths[i] for i in keep}, rows=False)
        return Measurement.get(console, options.update_width(UNBOUNDED), table).maximum

    def _table(
        self,
        keep: Sequence[int],
        widths: dict[int, int],
        *,
        rows: bool = True,
        wrap_all: bool = False,
    ) -> Table:
        if self.compact:
            table = Table(show_edge=False, header_style="bold", pad_edge=False, expand=False)
        else:
            table = Table(expand=False)
        for i in keep:
            column = self.columns[i]
            # a header wraps at its spaces even above a column whose values do not
            header = Text(column.header) if isinstance(column.header, str) else column.header
            header = header.copy()
            header.no_wrap = False
            table.add_column(
                header,
                justify=column.justify,
                style=column.style,
                width=widths[i],
                no_wrap=not (column.wrap or wrap_all),
                overflow="fold",
            )
        if rows:
            for row in self.rows:
                table.add_row(*(row[i] for i in keep))
        return table
