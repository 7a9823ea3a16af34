"""Table columns that share the table's width instead of each taking a fixed one.

A fixed width that suits 160 columns pushes the last column off screen at 80, and the
last column is often the one that says what is wrong. So some columns keep their width
(names, counts) and the rest split what is left, each up to its own most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.widgets import DataTable

NARROWEST = 12
"""A shared column never gets fewer cells: below that its text says nothing, and the
table scrolls sideways instead."""


@dataclass(frozen=True)
class Column:
    """A column: its key and heading, its width (fixed, or the most it takes when it
    shares), and its share of the room left (0: fixed)."""

    key: str
    heading: str
    width: int
    share: int = 0


def add_columns(table: DataTable[Any], columns: Sequence[Column]) -> None:
    for column in columns:
        table.add_column(column.heading, key=column.key, width=column.width)
    fit_columns(table, columns)


def fit_columns(table: DataTable[Any], columns: Sequence[Column]) -> None:
    """Set the widths of `columns` (the table's, in order) for the table's width now;
    call it again when the table is resized."""
    room = table.scrollable_content_region.width
    if not room or len(table.ordered_columns) != len(columns):
        return
    fixed = sum(column.width for column in columns if not column.share)
    rest = room - 2 * table.cell_padding * len(columns) - fixed
    shares = sum(column.share for column in columns) or 1
    widths = [
        max(NARROWEST, min(column.width, rest * column.share // shares))
        if column.share
        else column.width
        for column in columns
    ]
    shared = [index for index, column in enumerate(columns) if column.share]
    if shared:  # what rounding left over goes to the last shared column
        last = shared[-1]
        spare = rest - sum(widths[index] for index in shared)
        widths[last] = min(columns[last].width, widths[last] + max(0, spare))
    for shown, width in zip(table.ordered_columns, widths, strict=True):
        shown.width, shown.auto_width = width, False
    table._require_update_dimensions = True  # the table's own way to measure again
    table._clear_caches()
    table.refresh()
