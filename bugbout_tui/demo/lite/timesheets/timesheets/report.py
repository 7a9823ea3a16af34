"""Read a week's entries and lay them out as a table for the Monday e-mail."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import yaml
from tabulate import tabulate


def load_entries(text: str) -> list[dict[str, Any]]:
    """The entries of a timesheet file: one mapping per block of work."""
    data = yaml.safe_load(text) or {}
    return list(data.get("entries") or [])


def total_hours(entries: list[dict[str, Any]]) -> dict[str, float]:
    """Hours per project, projects in alphabetical order."""
    totals: dict[str, float] = defaultdict(float)
    for entry in entries:
        totals[str(entry["project"])] += float(entry["hours"])
    return dict(sorted(totals.items()))


def render_table(entries: list[dict[str, Any]]) -> str:
    rows = [[project, f"{hours:.1f}"] for project, hours in total_hours(entries).items()]
    return tabulate(rows, headers=["project", "hours"])
