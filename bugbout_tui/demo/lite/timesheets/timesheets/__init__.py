"""Weekly hours per project, from a YAML timesheet."""

from timesheets.report import load_entries, render_table, total_hours

__all__ = ["load_entries", "render_table", "total_hours"]
