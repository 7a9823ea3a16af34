"""The Tasks screen: the bugs (and environment repairs) mining found, and a person's say
on which ones race.

Decisions go to `[tasks] include` / `exclude` in bugbout.toml (through the same
comment-keeping editor as the Config screen), so they are reviewable in the file and
reversible here or there. Titles, issue text, file and test names and the fix's diff come
from the repository and its issues: they are shown inert, as `Text`, never as markup. The
issue text is Markdown and shown rendered, after `inert`, by a parser with links, images
and HTML turned off: a hostile issue can style its text but not offer a click that opens
a URL or a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from markdown_it import MarkdownIt
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Markdown, Static, TabbedContent, TabPane

from bugbout_tui.core import look
from bugbout_tui.core.config import Decision, TasksConfig
from bugbout_tui.core.config_doc import ConfigDocument
from bugbout_tui.core.env_models import Repair
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import Oracle, OracleSet, OutcomeTally, Resolution, Task, TaskSet
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.show_commit import show_commit
from bugbout_tui.report.env_build import NO_CONTROLS, control_problem
from bugbout_tui.rules.score import unreliable_grader
from bugbout_tui.rules.task_facts import (
    control_words,
    env_task_rows,
    environment_rows,
    issue_words,
    quarantined_lines,
)
from bugbout_tui.tui.env_view import env_controls_view, env_kind
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.widgets.columns import Column, add_columns, fit_columns

COLUMNS = (
    Column("sel", "", 1),
    Column("id", "task", 14),
    Column("kind", "kind", 4),
    Column("issue", "issue", 6),
    Column("title", "title", 60, share=1),
    Column("status", "status", 34, share=1),
    Column("f2p", "fail→pass", 9),
)
"""The task table's columns: the title and the status share what the others leave (the
issue tab below shows the whole title, the status starts with what matters)."""


Row = tuple[tuple[str, str], ...]


class TaskTable(DataTable[Text]):
    """The mined tasks, one a row; its columns fit its width."""

    def on_resize(self) -> None:
        fit_columns(self, COLUMNS)


"""A table row as (text, style) per column: compared to find the cells that changed."""


def cell_text(value: tuple[str, str]) -> Text:
    text, style = value
    return Text(inert_line(text), style=style, no_wrap=True, overflow="ellipsis")


@dataclass(frozen=True)
class TaskStatus:
    """Whether a task will race, in one phrase, and why."""

    label: str
    style: str


def task_status(
    task: Task,
    tasks: TasksConfig,
    oracles: OracleSet | None,
    controls: Mapping[str, Repair] | None = None,
) -> TaskStatus:
    """A person's decision first, then what keeps a task from being scored or raced. An
    environment task's ground truth is its two controls (`controls`), not an oracle."""
    decision = tasks.decision(task.id)
    if decision == "excluded":
        return TaskStatus("excluded by you", "red")
    pending, unscored = ground_truth_state(task, oracles, controls)
    if unscored is not None:
        return TaskStatus(f"not scored: {unscored}", "yellow")
    if not task.statement and task.kind == "bug":
        return TaskStatus(f"not raced: no issue text ({task.statement_missing})", "yellow")
    if decision == "accepted":
        return TaskStatus("accepted by you", "bold green")
    if tasks.require_review:
        return TaskStatus("awaiting review (a accepts)", "cyan")
    if pending:
        return TaskStatus("will race (ground truth pending)", "green")
    return TaskStatus("will race", "green")


def ground_truth_state(
    task: Task, oracles: OracleSet | None, controls: Mapping[str, Repair] | None
) -> tuple[bool, str | None]:
    """Whether the task's ground truth is still to come, and why it leaves the task
    unscored (None: it does not, or is not known yet). A bug's is its oracle; an
    environment task's, its controls: the files as written must fail, the known repair
    must install and run."""
    if task.kind == "env":
        problem = control_problem(controls)
        return (True, None) if problem == NO_CONTROLS else (False, problem)
    oracle = oracles.oracles.get(task.id) if oracles is not None else None
    if oracle is None:
        return True, None
    return False, None if oracle.scored else (oracle.reason or "no ground truth")


def funnel_text(taskset: TaskSet) -> Text:
    """How the examined changes became tasks: the count left out for each reason."""
    text = Text.assemble(
        ("funnel ", "bold"),
        f"{taskset.examined} changes examined → {len(taskset.tasks)} tasks",
    )
    left_out = [(reason, n) for reason, n in taskset.funnel().items() if n]
    if left_out:
        text.append(" · left out: ", style="dim")
        text.append(", ".join(f"{reason} {n}" for reason, n in left_out), style="dim")
    return text


def issue_head(task: Task) -> RenderableType:
    """What stands above the issue text: its number, or why there is no text. An
    environment task races without one: the agents get its failing log."""
    head = Text(f"Issue {issue_words(task)}", style="bold")
    if task.statement is None and task.kind == "env":
        why = task.statement_missing or "unknown"
        return Group(head, Text(inert(f"\nNo issue text ({why})."), style="dim"),
                     Text("The agents get the failing log of a clean install at the task's "
                          "date.", style="dim"))  # fmt: skip
    if task.statement is None:
        why = task.statement_missing or "unknown"
        return Group(head, Text(inert(f"\nNo issue text could be read ({why})."), style="yellow"),
                     Text("Tasks without text are not raced.", style="dim"))  # fmt: skip
    return Group(
        head, Text("As the agents see it: descriptions of the fix are removed.", style="dim")
    )


def issue_markdown() -> MarkdownIt:
    """Textual's parser without the parts an untrusted text could act through.

    Links and images would be clickable (a click opens the URL), raw HTML has no place in
    a terminal; turned off, each shows as the characters it was written with.
    """
    return MarkdownIt("gfm-like").disable(["link", "image", "autolink", "html_inline",
                                            "html_block", "linkify"])  # fmt: skip


def tests_view(
    task: Task,
    oracle: Oracle | None,
    control: Resolution | None = None,
    quarantined: Mapping[str, Mapping[str, OutcomeTally]] | None = None,
) -> RenderableType:
    """The task's tests and how far its grading can be trusted: the ground truth, the
    gold control, the tests the flake ledger quarantined, and the environment the tests
    ran in, worded as `bugbout tasks ID` words them."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    facts.add_row("fix commit", task.fix_commit[:12])
    facts.add_row("base commit", Text(f"{task.base_commit[:12]} (the agents start here)"))
    if task.env is not None:
        for label, words in env_task_rows(task):
            facts.add_row(label, Text(inert(words)))
        return facts
    facts.add_row("source files", Text(inert_line(", ".join(task.source_files))))
    tests_shown = inert_line(", ".join(task.test_files))
    facts.add_row("test files", Text(f"{tests_shown} (hidden from agents)"))
    facts.add_row("tests added", Text(inert_line(", ".join(task.added_tests)) or "–"))
    if oracle is None:
        facts.add_row("ground truth", Text("not established yet", style="dim"))
        return facts
    facts.add_row(
        "ground truth",
        Text("scored", style="green")
        if oracle.scored
        else Text(inert_line(f"not scored: {oracle.reason}"), style="yellow"),
    )
    if control is not None:
        style = "green" if unreliable_grader(control) is None else "yellow"
        facts.add_row("gold control", Text(inert_line(control_words(control)), style=style))
    elif oracle.scored:
        facts.add_row("gold control", Text("not made yet (scoring makes it)", style="dim"))
    parts: list[RenderableType] = [facts]
    for heading, tests, style in (
        ("fail → pass (fail on the base, pass on the fix)", oracle.fail_to_pass, "green"),
        ("pass → pass (must keep passing)", oracle.pass_to_pass, "dim"),
        ("unstable (set aside)", oracle.unstable, "yellow"),
    ):
        parts.append(Text(f"\n{heading}: {len(tests)}", style="bold"))
        shown = tests if style != "dim" else tests[:20]
        parts.extend(Text(f"  {inert_line(test)}", style=style) for test in shown)
        if len(shown) < len(tests):
            parts.append(Text(f"  … {len(tests) - len(shown)} more", style="dim"))
    flaky = quarantined_lines(quarantined or {})
    if flaky:
        heading = f"\nquarantined as flaky (they decide nothing): {len(flaky)}"
        parts.append(Text(heading, style="bold"))
        parts.extend(
            Padding(Text(inert_line(line), style="yellow"), (0, 0, 0, 2)) for line in flaky
        )
    environment = environment_view(oracle)
    if environment is not None:
        parts.extend([Text("\nenvironment", style="bold"), environment])
    return Group(*parts)


def environment_view(oracle: Oracle) -> Table | None:
    """The environment the task's tests ran in; None in records from before it was kept."""
    rows = environment_rows(oracle, brief=True)
    if not rows:
        return None
    record = oracle.environment
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    for label, words in rows:
        style = ""
        if label == "rung" and record is not None:
            style = "green" if record.rung == "dated" else "yellow"
        elif label in ("why", "date lifted for", "runner from later") or (
            label == "not dated" and words != "nothing"
        ):
            style = "yellow"
        shown = "key" if label == "environment" else label
        facts.add_row(f"  {shown}", Text(inert(words), style=style))
    return facts


class TasksScreen(BoutScreen):
    """Mined tasks with their status; the highlighted one in full below."""

    MODE = "tasks"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_select", "Select, next", id="select",
                tooltip="Mark the task (or unmark it) and move to the next one, to accept or "
                        "exclude several at once"),
        Binding("a", "decide('accepted')", "Accept", id="accept",
                tooltip="Race the selected (or highlighted) tasks"),
        Binding("x", "decide('excluded')", "Exclude", id="exclude",
                tooltip="Never race the selected (or highlighted) tasks"),
        Binding("t", "next_tab", "Tabs", id="next-tab",
                tooltip="Show the next tab of the highlighted task: issue, fix, tests"),
        Binding("u", "decide('')", "Undo", id="undecide",
                tooltip="Remove your decision: the task follows the defaults again"),
        Binding("asterisk", "select_all", "Select all/none", id="select-all", show=False),
        Binding("m", "mine", "Mine now", id="mine", tooltip="Mine the history and stop there"),
    ]  # fmt: skip
    WRITES = frozenset({"toggle_select", "select_all", "decide", "mine"})

    class Decided(Message):
        """Decisions were written to bugbout.toml (or could not be)."""

        def __init__(self, count: int, decision: Decision | None, error: str | None) -> None:
            super().__init__()
            self.count = count
            self.decision = decision
            self.error = error

    class FixRead(Message):
        def __init__(self, commit: str, diff: str) -> None:
            super().__init__()
            self.commit = commit
            self.diff = diff

    def __init__(self) -> None:
        super().__init__()
        self.selected: set[str] = set()
        self._rows: dict[str, Row] = {}
        self._fixes: dict[str, str] = {}
        self._detail_task: str | None = None
        self._told_mining_failed = False
        """Whether the empty table last said that mining failed."""

    def body(self) -> ComposeResult:
        with Vertical(id="tasks-top"):
            yield TaskTable(id="tasks-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="tasks-funnel")
        with TabbedContent(id="task-detail"):
            with TabPane("Issue", id="tab-issue"), VerticalScroll():
                yield Static(id="task-issue")
                yield Markdown(id="task-issue-text", parser_factory=issue_markdown,
                               open_links=False)  # fmt: skip
                yield Static(id="task-issue-note")
            with TabPane("Fix", id="tab-fix"), VerticalScroll():
                yield Static(id="task-fix")
            with TabPane("Tests & ground truth", id="tab-tests"), VerticalScroll():
                yield Static(id="task-tests")

    def on_mount(self) -> None:
        add_columns(self.table, COLUMNS)

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#tasks-table", DataTable)

    def _tasks_config(self) -> TasksConfig | None:
        project: Project | None = self.session.project
        return project.config.tasks if project is not None else None

    def _mining_failed(self) -> bool:
        mine = self.session.state.stages.get("mine")
        return mine is not None and mine.state == "failed"

    def show_live(self) -> None:
        """Mining that stopped on an error says so where the tasks would be, once the
        bout's end has reached the live state."""
        if self.session.records.taskset is None and (
            self._mining_failed() != self._told_mining_failed
        ):
            self.show_records()

    def show_records(self) -> None:
        taskset = self.session.records.taskset
        tasks_cfg = self._tasks_config()
        funnel = self.query_one("#tasks-funnel", Static)
        if taskset is None or tasks_cfg is None:
            self.table.clear()
            self._rows.clear()
            self._told_mining_failed = self._mining_failed()
            if tasks_cfg is None:
                why = "bugbout.toml has problems: fix them on the Config screen (1)."
            elif self._told_mining_failed:
                why = (
                    f"Mining stopped: {inert(self.session.state.message or 'an error')}\n"
                    "Fix that, then press m to mine again."
                )
            else:
                why = "No tasks mined yet. Press m to mine the history (or s to run the bout)."
            funnel.update(Text(why, style="yellow"))
            self._show_detail(None)
            return
        records = self.session.records
        statuses = {
            task.id: task_status(task, tasks_cfg, records.oracles, records.env_controls(task.id))
            for task in taskset.tasks
        }
        rows = {
            task.id: self._row(task, statuses[task.id], records.oracles) for task in taskset.tasks
        }
        self._sync_rows(rows)
        racing = sum(
            status.label.startswith(("will race", "accepted")) for status in statuses.values()
        )
        line = funnel_text(taskset)
        line.append(f"\n{racing} of {len(taskset.tasks)} tasks can race", style="dim")
        if self.selected:
            line.append(f" · {len(self.selected)} selected", style="bold")
        funnel.update(line)
        self._show_detail(self._highlighted())

    def _row(self, task: Task, status: TaskStatus, oracles: OracleSet | None) -> Row:
        oracle = oracles.oracles.get(task.id) if oracles is not None else None
        f2p = str(len(oracle.fail_to_pass)) if oracle is not None else "–"
        mark = "●" if task.id in self.selected else ""
        return (
            (mark, "bold cyan"),
            (task.id, "bold"),
            (task.kind, "magenta" if task.kind == "env" else "dim"),
            (issue_words(task), ""),
            (task.title, ""),
            (status.label, status.style),
            (f2p, ""),
        )

    def _sync_rows(self, rows: dict[str, Row]) -> None:
        """Change only the cells that differ; rebuild only when the task list changed."""
        table = self.table
        with self.app.batch_update():
            if list(rows) != list(self._rows):
                keep = self._highlighted()
                table.clear()
                for key, row in rows.items():
                    table.add_row(*(cell_text(value) for value in row), key=key)
                if keep in rows:
                    table.move_cursor(row=table.get_row_index(keep))
            else:
                for key, row in rows.items():
                    old = self._rows[key]
                    if row == old:
                        continue
                    for column, new, was in zip(COLUMNS, row, old, strict=True):
                        if new != was:
                            table.update_cell(key, column.key, cell_text(new))
        self._rows = rows

    def _highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @on(DataTable.RowHighlighted, "#tasks-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(str(event.row_key.value))

    def _find_task(self, task_id: str | None) -> Task | None:
        taskset = self.session.records.taskset
        if taskset is None or task_id is None:
            return None
        return next((task for task in taskset.tasks if task.id == task_id), None)

    def _show_detail(self, task_id: str | None) -> None:
        task = self._find_task(task_id)
        issue = self.query_one("#task-issue", Static)
        tests = self.query_one("#task-tests", Static)
        fix = self.query_one("#task-fix", Static)
        text = self.query_one("#task-issue-text", Markdown)
        note = self.query_one("#task-issue-note", Static)
        if task is None:
            for widget in (issue, tests, fix, note):
                widget.update("")
            text.update("")
            self._detail_task = None
            return
        records = self.session.records
        oracle = records.oracles.oracles.get(task.id) if records.oracles else None
        shown = tests_view(task, oracle, records.control(task.id), records.quarantined(task.id))
        if task.kind == "env":
            shown = Group(shown, env_controls_view(records.env_controls(task.id)))
        tests.update(shown)
        if task.id == self._detail_task:
            return
        self._detail_task = task.id
        head = issue_head(task)
        issue.update(Group(env_kind(task), head) if task.kind == "env" else head)
        text.update(inert(task.statement or ""))
        note.update(Text(inert(task.statement_note or ""), style="dim"))
        if task.fix_commit in self._fixes:
            fix.update(self._fix_view(task.fix_commit))
        else:
            fix.update(Text("Reading the fix from git…", style="dim"))
            self._read_fix(task.fix_commit)

    def _fix_view(self, commit: str) -> RenderableType:
        return Syntax(inert(self._fixes[commit]), "diff", theme="ansi_dark", word_wrap=False)

    @work(thread=True, group="fix", exit_on_error=False)
    def _read_fix(self, commit: str) -> None:
        project = self.session.project
        if project is None:
            return
        try:
            text = show_commit(project, commit)
        except BugboutError as exc:
            text = f"The fix could not be read: {exc}"
        self.post_message(self.FixRead(commit, text))

    @on(FixRead)
    def _fix_read(self, message: FixRead) -> None:
        self._fixes[message.commit] = message.diff
        task = self._find_task(self._detail_task)
        if task is not None and task.fix_commit == message.commit:
            self.query_one("#task-fix", Static).update(self._fix_view(message.commit))

    def action_next_tab(self) -> None:
        tabs = self.query_one("#task-detail", TabbedContent)
        panes = [pane.id for pane in tabs.query(TabPane) if pane.id is not None]
        tabs.active = panes[(panes.index(tabs.active) + 1) % len(panes)]

    # --- decisions -----------------------------------------------------------------------

    def action_toggle_select(self) -> None:
        task_id = self._highlighted()
        if task_id is None:
            return
        self.selected.symmetric_difference_update({task_id})
        self.show_records()
        table = self.table
        if table.cursor_row < table.row_count - 1:
            table.move_cursor(row=table.cursor_row + 1)

    def action_select_all(self) -> None:
        taskset = self.session.records.taskset
        every = {task.id for task in taskset.tasks} if taskset is not None else set()
        self.selected = set() if self.selected >= every else every
        self.show_records()

    def action_decide(self, decision: str) -> None:
        if self.session.watching:
            self.notify("Following another run: this view is read-only.", severity="warning")
            return
        chosen = sorted(self.selected) or [t for t in [self._highlighted()] if t is not None]
        if not chosen:
            return
        value: Decision | None
        if decision == "accepted":
            value = "accepted"
        elif decision == "excluded":
            value = "excluded"
        else:
            value = None
        self._write_decisions(chosen, value)

    @work(thread=True, exclusive=True, group="decisions", exit_on_error=False)
    def _write_decisions(self, task_ids: list[str], decision: Decision | None) -> None:
        try:
            document = ConfigDocument.load(self.session.config_path)
            for task_id in task_ids:
                document.set_task_decision(task_id, decision)
            document.save()
        except BugboutError as exc:
            self.post_message(self.Decided(len(task_ids), decision, str(exc)))
        else:
            self.post_message(self.Decided(len(task_ids), decision, None))

    @on(Decided)
    def _decided(self, message: Decided) -> None:
        if message.error is not None:
            self.notify(message.error, title="Not saved", severity="error", markup=False)
            return
        what = {"accepted": "accepted", "excluded": "excluded", None: "back to the defaults"}
        self.notify(
            f"{look.plural(message.count, 'task')} {what[message.decision]} in bugbout.toml."
        )
        self.selected.clear()
        self.session.config_saved()

    def action_mine(self) -> None:
        self.bugbout_app.start_bout(until="mine")
