"""One attempt in full: what it was asked, what it printed, what it changed, what it cost.

An attempt on an environment task shows its repair too: how it ended, the logs of its
clean install and of its traced run, what it declares, installs and uses, and the audit.

Everything shown here comes from the agent (or from the packages it chose), so it is
made inert and drawn as plain text (or as a syntax-highlighted diff), never read as
markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Log, Static, TabbedContent, TabPane
from textual.worker import Worker

from bugbout_tui.agents.base import STDERR_LOG, STDOUT_LOG
from bugbout_tui.core import look
from bugbout_tui.core.env_models import EnvStep, Repair
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.rules.env_files import split_repair
from bugbout_tui.tui.env_view import ENV_MARK, NOT_SCORED, repair_view
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.watch import LineTail
from bugbout_tui.tui.widgets.lane import shown_phase

LOG_LIMIT = 20_000
"""Lines of a log file shown; a longer file shows its end (the file keeps everything)."""
FOLLOW_EVERY = 0.5
"""Seconds between two looks at a running attempt's log files."""
STDERR_MARK = "stderr│ "
"""Before each standard-error line while the log follows a running attempt."""


def split_attempt(attempt: str) -> tuple[str, str]:
    """`<task>/<contestant>`: task ids never hold `/`, contestant names may."""
    task, _, contestant = attempt.partition("/")
    return task, contestant


@dataclass(frozen=True)
class AttemptFiles:
    """The attempt's files, as far as they exist."""

    prompt: str | None
    stdout: list[str]
    stderr: list[str]
    dropped: int
    """Lines left out at the start of a log longer than `LOG_LIMIT`."""


def read_attempt_files(logdir: str | None, prompt_file: str | None) -> AttemptFiles:
    prompt = None
    folder = Path(logdir) if logdir else None
    prompt_path = Path(prompt_file) if prompt_file else (folder / "prompt.md" if folder else None)
    if prompt_path is not None:
        prompt = _read(prompt_path)
    logs: list[list[str]] = []
    for name in (STDOUT_LOG, STDERR_LOG):
        text = _read(folder / name) if folder is not None else None
        logs.append([inert_line(line) for line in (text or "").splitlines()])
    stdout, stderr = logs
    dropped = max(0, len(stdout) + len(stderr) - LOG_LIMIT)
    return AttemptFiles(prompt, stdout, stderr, dropped)


def follow_logs(tails: tuple[LineTail, LineTail]) -> list[str]:
    """New lines of both streams, as plain text; standard error's are marked."""

    def new_lines(tail: LineTail) -> list[str]:
        return [inert_line(line.decode("utf-8", errors="replace")) for line in tail.read()]

    out, err = tails
    return new_lines(out) + [STDERR_MARK + line for line in new_lines(err)]


def read_step_log(store_root: Path, step: EnvStep | None) -> list[str]:
    """The whole output of a repair's install or traced run, as plain lines, its end
    when it is longer than `LOG_LIMIT` (the file keeps everything)."""
    if step is None:
        return ["(this step did not run)"]
    if step.log is None:
        return ["(no output was kept)"]
    path = store_root / step.log
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return [f"(the log {inert_line(step.log)} could not be read: {exc.strerror or exc})"]
    lines = [inert_line(line) for line in text.splitlines()]
    head = f"── {inert_line(step.log)} ──"
    if len(lines) > LOG_LIMIT:
        dropped = len(lines) - LOG_LIMIT
        head += (
            f"  … {look.plural(dropped, 'earlier line')} "
            f"{look.verb(dropped, 'is', 'are')} in the file"
        )
    return [head, *(lines[-LOG_LIMIT:] or ["(no output)"])]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


ENV_PATCH_HEADING = "the repair — environment files are installed clean; any other file rejects it"


def patch_view(attempt: Attempt, *, env: bool = False) -> RenderableType:
    """The patch's three parts, each as a highlighted diff under a heading saying how it
    is treated (only `source` is ever applied). A repair of an environment task (`env`)
    is the other way round: only environment files are taken, so each file says
    whether it is one."""
    patch = attempt.patch
    notes = [Text(f"note: {inert_line(note)}", style="yellow") for note in patch.notes]
    if patch.oversized is not None:
        too_large = f"Too large to keep: {inert_line(patch.oversized)}."
        return Group(Text(too_large, style="red"), *notes)
    if patch.is_empty:
        return Group(Text("The attempt changed no file.", style="dim"), *notes)
    parts: list[RenderableType] = []
    files = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for column in ("file", "part", "change", "+", "-"):
        files.add_column(column)
    env_files = set(split_repair(patch)[0]) if env else set()
    for change in patch.files:
        shown_part = Text(change.part)
        if env:
            shown_part = (
                Text("environment", style="green")
                if change.path in env_files
                else Text("not an environment file", style="red")
            )
        files.add_row(
            Text(inert_line(change.path)),
            shown_part,
            change.status,
            Text(str(change.added_lines), style="green"),
            Text(str(change.removed_lines), style="red"),
        )
    parts.append(files)
    headings = {
        "source": "source — applied when scoring and cross-examining",
        "tests": "tests — run as this author's evidence, never applied",
        "other": "other files — shown and flagged, never applied",
    }
    if env:
        parts.append(Text(f"\n{ENV_PATCH_HEADING}", style="bold"))
    for part, heading in headings.items():
        diff = getattr(patch, part)
        if diff:
            if not env:
                parts.append(Text(f"\n{heading}", style="bold"))
            parts.append(Syntax(inert(diff), "diff", theme="ansi_dark", word_wrap=False))
    return Group(*parts, *notes)


def summary_view(
    attempt: Attempt | None, phase: str, seconds: float | None, worker: str | None = None
) -> RenderableType:
    """The attempt's facts: from its record once it ended, before that from the run
    (`worker`: the cluster's worker its agent runs on, None on this machine)."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("status", look.phase(attempt.status if attempt else phase).badge())
    if attempt is not None and attempt.detail:
        facts.add_row("why", Text(inert(attempt.detail)))
    if seconds is not None:
        facts.add_row("time", look.clock(seconds))
    ran_on = attempt.worker if attempt is not None else worker
    if ran_on is not None:
        facts.add_row("ran on" if attempt is not None else "runs on", look.place(ran_on))
    if attempt is None:
        facts.add_row("record", Text("written when the attempt ends", style="dim"))
        return facts
    facts.add_row("role", attempt.role)
    facts.add_row("exit code", str(attempt.exit_code) if attempt.exit_code is not None else "–")
    tokens = look.tokens_text(attempt.tokens.input, attempt.tokens.output)
    if attempt.tokens.cached:
        tokens += f" ({attempt.tokens.cached} cached)"
    facts.add_row("tokens", tokens or Text("not reported by the agent", style="dim"))
    cost = f"${attempt.cost_usd:.4f}" if attempt.cost_usd is not None else None
    facts.add_row("cost", cost or Text("not reported by the agent", style="dim"))
    changed = len(attempt.patch.files)
    facts.add_row("changed", look.plural(changed, "file"))
    facts.add_row("logs", Text(inert_line(attempt.logdir or "–"), style="dim"))
    summary = Text(inert(attempt.summary or "The agent left no closing message."))
    heading = Text("\nThe agent's closing message (its own words, not evidence):", style="bold")
    return Group(facts, heading, summary)


class AttemptScreen(BoutScreen):
    """Pushed from the Race screen; escape returns to it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Back", id="back"),
        Binding("l", "reload", "Reload logs", id="reload-logs",
                tooltip="Read the attempt's log files again"),
    ]  # fmt: skip

    class FilesRead(Message):
        def __init__(self, files: AttemptFiles) -> None:
            super().__init__()
            self.files = files

    class EnvLogsRead(Message):
        """The repair's install and trace logs, read from the store."""

        def __init__(self, repair: Repair, install: list[str], trace: list[str]) -> None:
            super().__init__()
            self.repair = repair
            self.install = install
            self.trace = trace

    class LinesFollowed(Message):
        def __init__(self, lines: list[str], tails: tuple[LineTail, LineTail]) -> None:
            super().__init__()
            self.lines = lines
            self.tails = tails

    def __init__(self, attempt: str) -> None:
        super().__init__()
        self.attempt = attempt
        self.task_id, self.contestant = split_attempt(attempt)
        self._shown_record: Attempt | None = None
        self._summary_for: tuple[str, bool] = ("", False)
        """The phase and whether the record was there when the summary was drawn."""
        self._tails: tuple[LineTail, LineTail] | None = None
        """Set while the log follows a running attempt; the record's arrival ends it."""
        self._looking: Worker[None] | None = None
        self._env = False
        """An attempt on an environment task: its repair has tabs of its own."""
        self._shown_repair: Repair | None = None

    def body(self) -> ComposeResult:
        self._env = self.session.records.is_env(self.task_id)
        yield Static(id="attempt-title")
        with TabbedContent(id="attempt-tabs"):
            with TabPane("Summary", id="tab-summary"), VerticalScroll():
                yield Static(id="attempt-summary")
            with TabPane("Patch", id="tab-patch"), VerticalScroll():
                yield Static(id="attempt-patch")
            with TabPane("Log", id="tab-log"):
                yield Log(id="attempt-log", max_lines=LOG_LIMIT)
            with TabPane("Prompt", id="tab-prompt"), VerticalScroll():
                yield Static(id="attempt-prompt")
            if self._env:
                with TabPane("Repair", id="tab-repair"), VerticalScroll():
                    yield Static(Text(NOT_SCORED, style="dim"), id="attempt-repair")
                with TabPane("Install log", id="tab-install-log"):
                    yield Log(id="attempt-install-log", max_lines=LOG_LIMIT + 1)
                with TabPane("Trace log", id="tab-trace-log"):
                    yield Log(id="attempt-trace-log", max_lines=LOG_LIMIT + 1)

    def on_mount(self) -> None:
        if self._env:
            for selector in ("#attempt-install-log", "#attempt-trace-log"):
                self.query_one(selector, Log).write_line("(written when the repair is scored)")
        self.action_reload()
        self.set_interval(FOLLOW_EVERY, self._follow)

    def _record(self) -> Attempt | None:
        return self.session.records.attempt(self.task_id, self.contestant)

    def show_records(self) -> None:
        record = self._record()
        if record is not None and record is not self._shown_record:
            self._shown_record = record
            self.query_one("#attempt-patch", Static).update(patch_view(record, env=self._env))
            self.action_reload()
        elif record is None:
            self.query_one("#attempt-patch", Static).update(
                Text("The patch is harvested when the attempt ends.", style="dim")
            )
        if self._env:
            self._show_repair()
        self.show_live()

    def show_live(self) -> None:
        view = self.session.state.attempts.get(self.attempt)
        record = self._shown_record
        started = view is not None and view.phase == "running" and bool(view.logdir)
        if record is None and self._tails is None and started:  # since this screen opened
            self.action_reload()
        ended = self.session.state.outcome is not None
        phase = record.status if record else (shown_phase(view, ended) if view else "queued")
        seconds = record.seconds if record else None
        if seconds is None and view is not None and view.started_at is not None:
            seconds = (self.session.now() - view.started_at).total_seconds()
        title = Text(f"{ENV_MARK} ", style="magenta") if self._env else Text()
        title.append(inert_line(self.task_id), style="bold")
        title.append(" · ")
        title.append(inert_line(self.contestant), style="bold cyan")
        title.append("  ")
        repair = self._shown_repair
        if repair is not None and repair.status != "not-run":  # its result, as on the board
            title.append_text(look.repair(repair.status).badge())
        else:
            title.append_text(look.phase(phase).badge())
        if seconds is not None:
            title.append(f"  {look.clock(seconds)}", style="dim")
        title.append("   esc returns", style="dim")
        self.query_one("#attempt-title", Static).update(title)
        shown = (phase, record is not None)
        if shown != self._summary_for or record is None:
            self._summary_for = shown
            worker = view.worker if view is not None else None
            summary = summary_view(record, phase, seconds, worker)
            self.query_one("#attempt-summary", Static).update(summary)

    def _show_repair(self) -> None:
        """The repair once scored, and its logs read again when it changed."""
        repair = self.session.records.repair(self.task_id, self.contestant)
        if repair is None or repair == self._shown_repair:
            return
        self._shown_repair = repair
        self.query_one("#attempt-repair", Static).update(repair_view(repair))
        self._read_env_logs(repair)

    @work(thread=True, exclusive=True, group="attempt-env-logs", exit_on_error=False)
    def _read_env_logs(self, repair: Repair) -> None:
        root = self.session.store.root
        install = read_step_log(root, repair.install)
        trace = read_step_log(root, repair.trace)
        self.post_message(self.EnvLogsRead(repair, install, trace))

    @on(EnvLogsRead)
    def _env_logs_read(self, message: EnvLogsRead) -> None:
        if message.repair is not self._shown_repair:
            return
        for selector, lines in (
            ("#attempt-install-log", message.install),
            ("#attempt-trace-log", message.trace),
        ):
            log = self.query_one(selector, Log)
            log.clear()
            log.write_lines(lines)

    def action_reload(self) -> None:
        if self._shown_repair is not None:
            self._read_env_logs(self._shown_repair)
        view = self.session.state.attempts.get(self.attempt)
        record = self._record()
        logdir = record.logdir if record else (view.logdir if view else None)
        self._tails = None
        self._read_files(logdir, record.prompt_file if record else None)
        if record is None and view is not None and view.phase == "running" and logdir:
            folder = Path(logdir)
            self._tails = (LineTail(folder / STDOUT_LOG), LineTail(folder / STDERR_LOG))
            self.query_one("#attempt-log", Log).clear()
            self._follow()

    def _follow(self) -> None:
        """One look at the files, unless the last is still reading (a tail is not shared)."""
        if self._tails is not None and (self._looking is None or self._looking.is_finished):
            self._looking = self._read_more(self._tails)

    @work(thread=True, group="attempt-follow", exit_on_error=False)
    def _read_more(self, tails: tuple[LineTail, LineTail]) -> None:
        lines = follow_logs(tails)
        if lines:
            self.post_message(self.LinesFollowed(lines, tails))

    @on(LinesFollowed)
    def _lines_followed(self, message: LinesFollowed) -> None:
        if message.tails is self._tails:  # not a look taken before the full log was read
            self.query_one("#attempt-log", Log).write_lines(message.lines)

    @work(thread=True, exclusive=True, group="attempt-files", exit_on_error=False)
    def _read_files(self, logdir: str | None, prompt_file: str | None) -> None:
        self.post_message(self.FilesRead(read_attempt_files(logdir, prompt_file)))

    @on(FilesRead)
    def _files_read(self, message: FilesRead) -> None:
        files = message.files
        prompt = files.prompt
        shown = Text("No prompt was written.", style="dim")
        if prompt is not None:
            shown = Text(inert(prompt))
        self.query_one("#attempt-prompt", Static).update(shown)
        if self._tails is not None:
            return  # running: the log fills as it grows, from its first line
        log = self.query_one("#attempt-log", Log)
        log.clear()
        lines: list[str] = []
        if files.dropped:
            lines.append(
                f"… {look.plural(files.dropped, 'earlier line')} "
                f"{look.verb(files.dropped, 'is', 'are')} in the log file"
            )
        lines += files.stdout
        if files.stderr:
            lines += ["", "── standard error ──", *files.stderr]
        if not files.stdout and not files.stderr:
            lines.append("(no output yet)")
        log.write_lines(lines[-LOG_LIMIT:])
