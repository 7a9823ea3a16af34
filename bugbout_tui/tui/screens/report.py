"""The Report screen: the same report `bugbout report` prints, and its export.

Environment repairs come last in a long report: their section (the All, Lite, Secure and
Stochastic boards, the env judge's picks, newest against safe, the loosened pins) is a
part of its own, which `b` scrolls to the top.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.text import inert
from bugbout_tui.engine.report import load_report, write_report
from bugbout_tui.report import Report
from bugbout_tui.report.terminal import render_terminal_parts
from bugbout_tui.tui.screens.base import BoutScreen


class ReportScreen(BoutScreen):
    """The report, rebuilt from the store whenever the store changes."""

    MODE = "report"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "export", "Export md + json", id="export",
                tooltip="Write .bugbout/report.md and .bugbout/report.json"),
        Binding("b", "env_boards", "Env boards", id="env-boards",
                tooltip="Scroll to the environment repairs: their boards, picks and pins"),
    ]  # fmt: skip
    WRITES = frozenset({"export"})

    class Built(Message):
        def __init__(self, report: Report | None, error: str | None) -> None:
            super().__init__()
            self.report = report
            self.error = error

    class Exported(Message):
        def __init__(self, paths: list[str], error: str | None) -> None:
            super().__init__()
            self.paths = paths
            self.error = error

    def __init__(self) -> None:
        super().__init__()
        self.report: Report | None = None

    def body(self) -> ComposeResult:
        with VerticalScroll(id="report-scroll"):
            yield Static(Text("Building the report…", style="dim"), id="report-body")
            env = Static(id="report-env")
            env.display = False
            yield env

    def show_records(self) -> None:
        self._build()

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def _build(self) -> None:
        project = self.session.project
        if project is None:
            self.post_message(self.Built(None, "bugbout.toml has problems: fix them first (1)."))
            return
        try:
            report = load_report(project, keep_verdicts=not self.session.watching)
        except BugboutError as exc:
            self.post_message(self.Built(None, str(exc)))
        else:
            self.post_message(self.Built(report, None))

    @on(Built)
    def _built(self, message: Built) -> None:
        body = self.query_one("#report-body", Static)
        env = self.query_one("#report-env", Static)
        had_env = self.report is not None and self.report.env is not None
        self.report = message.report
        if message.report is None:
            body.update(Text(inert(message.error or ""), style="yellow"))
            env.display = False
            return
        head, env_part = render_terminal_parts(message.report)
        body.update(head)
        env.display = env_part is not None
        env.update(env_part or "")
        if had_env != (env_part is not None):
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`b` only when the report has environment repairs to scroll to."""
        if action == "env_boards":
            return self.report is not None and self.report.env is not None
        return super().check_action(action, parameters)

    def action_env_boards(self) -> None:
        env = self.query_one("#report-env", Static)
        self.query_one("#report-scroll", VerticalScroll).scroll_to_widget(
            env, animate=False, top=True
        )

    def action_export(self) -> None:
        if self.report is None:
            self.notify("There is no report to export yet.", severity="warning")
            return
        if self.session.watching:
            self.notify("Following another run: this view is read-only; that run writes "
                        "its own report when it ends.", severity="warning")  # fmt: skip
            return
        self._export()

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export(self) -> None:
        """Build the report afresh from the store, as `bugbout report` does, and write it:
        what is exported is what that command would print at this moment."""
        project = self.session.project
        if project is None:
            return
        try:
            report = load_report(project, keep_verdicts=True)
            paths = write_report(project, report)
        except BugboutError as exc:
            self.post_message(self.Exported([], str(exc)))
        except OSError as exc:
            self.post_message(self.Exported([], f"The report could not be written: {exc}"))
        else:
            self.post_message(self.Built(report, None))
            self.post_message(self.Exported([str(path) for path in paths], None))

    @on(Exported)
    def _exported(self, message: Exported) -> None:
        if message.error is not None:
            self.notify(message.error, severity="error", markup=False)
            return
        self.notify("Wrote " + " and ".join(message.paths), title="Report exported",
                    markup=False, timeout=8)  # fmt: skip
