"""Pretty-print tabular data in the "simple" format."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["tabulate"]


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def tabulate(
    tabular_data: Iterable[Sequence[Any]],
    headers: Sequence[str] = (),
    tablefmt: str = "simple",
) -> str:
    """The rows of `tabular_data` under `headers`, numbers right-aligned."""
    if tablefmt != "simple":
        raise ValueError(f"unknown table format {tablefmt!r}")
    rows = [[str(cell) for cell in row] for row in tabular_data]
    numeric = [
        all(_is_number(row[i]) for row in rows if i < len(row))
        for i in range(max([len(headers), *(len(row) for row in rows)]))
    ]
    table = [list(headers), *rows] if headers else rows
    widths = [max(len(row[i]) for row in table if i < len(row)) + 2 for i in range(len(numeric))]

    def line(cells: Sequence[str]) -> str:
        laid = [
            cell.rjust(width) if numeric[i] else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=False))
        ]
        return "  ".join(laid).rstrip()

    out = []
    if headers:
        out += [line(list(headers)), "  ".join("-" * width for width in widths)]
    out += [line(row) for row in rows]
    return "\n".join(out)
