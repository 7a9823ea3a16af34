"""The report as JSON: `report.json`, and what `bugbout report --format json` prints.

JSON spells ESC and the other C0 controls as `\\u001b`, but writes DEL, the C1 controls
and bidi overrides as they are, and a terminal showing the document would obey them.
`inert_json` spells those as escapes too; the value a script reads is the same.
"""

from __future__ import annotations

from bugbout_tui.core.text import inert_json
from bugbout_tui.report.model import Report

__all__ = ["render_json"]


def render_json(report: Report) -> str:
    """The report as indented JSON, ending with a newline."""
    return inert_json(report.model_dump_json(indent=2)) + "\n"
