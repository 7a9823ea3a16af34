"""The report: a pure model of what a bout found, and its renderers.

`build_report` turns stored records into a `Report`; `render_terminal` and
`render_markdown` show it; `render_json` is its JSON form, whose schema
`report_json_schema()` returns and `docs/report.schema.json` publishes.
"""

from bugbout_tui.report.build import build_report
from bugbout_tui.report.json_form import render_json
from bugbout_tui.report.markdown import render_markdown
from bugbout_tui.report.model import Report, report_json_schema
from bugbout_tui.report.terminal import render_terminal

__all__ = [
    "Report",
    "build_report",
    "render_json",
    "render_markdown",
    "render_terminal",
    "report_json_schema",
]
