"""bugbout-tui: the app, the engine it runs as one worker, and the command line.

The engine never waits for the screen. Its events go into a feed the moment they
happen; ten times a second the app folds whatever arrived into one `BoutState` (the
same reducer the CLI's live display uses) and asks the visible screen, and only it, to
redraw. Stored records are read in a thread and handed to screens as a whole.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from time import monotonic, perf_counter
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import HelpPanel
from textual.worker import Worker, WorkerState, get_current_worker

from bugbout_tui.core.config import CONFIG_NAME
from bugbout_tui.core.config_errors import ConfigError
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import (
    STAGES,
    AttemptFinished,
    AttemptOutput,
    BoutFinished,
    Event,
    Stage,
    StageFinished,
)
from bugbout_tui.core.store import Store
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.demo.project import check_pytest, prepare_demo
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.state import BoutState
from bugbout_tui.infra.detect import write_initial_config
from bugbout_tui.report import Report
from bugbout_tui.tui.commands import ActionsProvider
from bugbout_tui.tui.feed import EventFeed, JournalRestarted, OutputBook
from bugbout_tui.tui.records import Records, load_records
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.screens.config import ConfigScreen
from bugbout_tui.tui.screens.matrix import MatrixScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.screens.report import ReportScreen
from bugbout_tui.tui.screens.tasks import TasksScreen
from bugbout_tui.tui.screens.verdicts import VerdictsScreen
from bugbout_tui.tui.watch import JournalReader
from bugbout_tui.tui.widgets.badges import clock_text
from bugbout_tui.tui.widgets.dialogs import Choice, unsaved_changes
from bugbout_tui.tui.widgets.status import MODES as MODE_INFO
from bugbout_tui.tui.widgets.status import EngineStatus, StatusHeader, stage_chips

TICK = 0.1
"""Seconds between two passes over the feed: ten redraws a second at most."""
PUMP_BUDGET = 0.015
"""Seconds one pass may spend applying events before it lets the screen draw."""
FOLLOW_INTERVAL = 0.2
"""Seconds between two reads of a journal being followed."""
GC_THRESHOLDS = (1_000, 5, 1_000_000)
"""Allocations before a young collection, and young (then middle) collections before an
old one; the last is out of reach, so the app collects the old generation itself (Python's
defaults are 700, 10, 10). Small young and middle generations keep every pass short:
in a chatty race, young passes took 1-2 ms and middle ones 3-5 ms, against 5-13 and
12-28 ms with 5,000 allocations per young pass, and less time in all."""
FULL_COLLECTION_EVERY = 30.0
"""Seconds between two full collections, each taking a tick of its own so that it never
adds to a redraw: a full pass can take most of a hundred milliseconds on a busy machine."""
RECORDS_INTERVAL = 1.0
"""Seconds between two re-reads of the store while records keep changing."""

Clock = Callable[[], datetime]

_SCREENS = Binding.Group("screens", compact=True)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Launch:
    """How the app was asked to start."""

    watch: bool = False
    """Follow another process's run, read-only."""
    start: bool = False
    """Start the bout at once."""


class BugboutApp(App[int]):
    """The whole product in one terminal: config, tasks, race, matrix, verdicts, report."""

    CSS_PATH = "app.tcss"
    TITLE = "bugbout"
    COMMANDS = App.COMMANDS | {ActionsProvider}
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "config": ConfigScreen,
        "tasks": TasksScreen,
        "race": RaceScreen,
        "matrix": MatrixScreen,
        "verdicts": VerdictsScreen,
        "report": ReportScreen,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(
                mode.key,
                f"goto('{mode.name}')",
                mode.title,
                group=_SCREENS,
                id=f"screen-{mode.name}",
                tooltip=mode.tooltip,
            )
            for mode in MODE_INFO
        ),
        Binding("s", "start", "Start", id="start", tooltip="Run the pipeline; it resumes"),
        Binding("s", "stop", "Stop", id="stop", tooltip="Stop every agent; nothing is lost"),
        Binding("question_mark", "keys", "Keys", id="keys", tooltip="Show or hide every key"),
        Binding("q", "quit", "Quit", id="quit", tooltip="Leave bugbout-tui"),
    ]

    class RecordsLoaded(Message):
        """The store was read."""

        def __init__(self, records: Records) -> None:
            super().__init__()
            self.records = records

    class JournalRead(Message):
        """Events read from the journal, for the run `generation` they belong to."""

        def __init__(self, events: list[Event], restarted: bool, generation: int) -> None:
            super().__init__()
            self.events = events
            self.restarted = restarted
            self.generation = generation

    class ConfigWritten(Message):
        """The first bugbout.toml was written, or could not be."""

        def __init__(self, error: str | None) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        config_path: Path,
        *,
        launch: Launch = Launch(),
        clock: Clock = _utc_now,
    ) -> None:
        super().__init__()
        self.config_path = config_path
        """The bugbout.toml this app edits (it may not exist yet)."""
        self.launch = launch
        self.clock = clock
        """The wall clock; tests replace it so snapshots never move."""
        self.project: Project | None = None
        """The loaded project; None while bugbout.toml is missing or invalid."""
        self.state = BoutState()
        """The live view of the current (or last) run, folded from events."""
        self.feed = EventFeed()
        self.outputs = OutputBook()
        self.records = Records()
        self.records_version = 0
        """Bumped on every new reading of the store (or save of the config)."""
        self.watching = launch.watch
        """Following another process's run: read-only, no engine here."""
        self.watched_pid: int | None = None
        self.engine: Worker[Report | None] | None = None
        self.running_bout: Bout | None = None
        """The bout the engine worker runs, while it runs."""
        self.engine_started_at: datetime | None = None
        self.last_event_at: datetime | None = None
        self._journal_generation = 0
        self._records_stale = False
        self._records_loading = False
        self._quitting = False
        self._last_second = -1
        self._collected = monotonic()

    # --- paths -------------------------------------------------------------------------

    @property
    def project_dir(self) -> Path:
        return self.config_path.parent

    @property
    def store(self) -> Store:
        return Store(self.project_dir)

    @property
    def engine_running(self) -> bool:
        return self.engine is not None

    @property
    def live(self) -> bool:
        """Whether the state describes a run that is still going."""
        return self.engine_running or (self.watching and self.state.outcome is None)

    def now(self) -> datetime:
        """The time clocks on screen count to: the wall clock while a run is live, else the
        moment of the last event, so a finished run's timings stand still."""
        if self.live or self.last_event_at is None:
            return self.clock()
        return self.last_event_at

    # --- start-up ----------------------------------------------------------------------

    def on_mount(self) -> None:
        # Everything alive now (modules, widgets, styles) lives as long as the app, so it is
        # moved out of the collector's sight; the old generation is collected by `tick`, in
        # a tick of its own, so a full pass never lands on top of a redraw.
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        self.set_interval(TICK, self.tick, name="tick")
        self.set_interval(RECORDS_INTERVAL, self._reload_if_stale, name="records")
        if not self.config_path.exists():
            self.push_screen(
                Choice(
                    f"No {CONFIG_NAME} in {self.project_dir}",
                    "bugbout keeps its settings in bugbout.toml beside your repository. "
                    "Write one now, as `bugbout init` would? It is commented, and you can "
                    "edit every key on the Config screen.",
                    [("write", "Write bugbout.toml", "primary"), ("cancel", "Quit", "default")],
                ),
                self._answered_init,
            )
            return
        self._open()

    def _answered_init(self, answer: str | None) -> None:
        if answer == "write":
            self._write_first_config()
        else:
            self.exit(2, message=f"bugbout-tui needs a {CONFIG_NAME}; `bugbout init` writes one.")

    @work(thread=True, exclusive=True, group="init", exit_on_error=False)
    def _write_first_config(self) -> None:
        try:
            write_initial_config(self.project_dir)
        except BugboutError as exc:
            self.post_message(self.ConfigWritten(str(exc)))
        else:
            self.post_message(self.ConfigWritten(None))

    @on(ConfigWritten)
    def _config_written(self, message: ConfigWritten) -> None:
        if message.error is not None:
            self.exit(2, message=message.error)
            return
        self.notify(f"Wrote {self.config_path}. Check it here, then press 2 to see the tasks.")
        self._open(first_mode="config")

    def _open(self, first_mode: str | None = None) -> None:
        try:
            self.project = Project.load(self.config_path)
        except ConfigError:
            self.project = None
            first_mode = "config"
            self.notify(
                f"{CONFIG_NAME} has problems; each is shown beside its field.",
                severity="warning",
            )
        except BugboutError as exc:
            self.exit(2, message=str(exc))
            return
        holder = self.store.lock_holder()
        if holder is not None and not self.watching:
            self.watching = True
            self.notify(
                f"Another bugbout run ({holder}) is using this project; following it read-only.",
                timeout=8,
            )
        if self.watching:
            self.watched_pid = holder.pid if holder is not None else None
        self._read_journal(follow=self.watching, generation=self._journal_generation)
        self.reload_records()
        if first_mode is None:
            first_mode = "race" if self.launch.start or self.watching else "tasks"
        self.switch_mode(first_mode)
        self.refresh_bindings()
        if self.launch.start and not self.watching:
            self.start_bout()

    # --- events ------------------------------------------------------------------------

    def pump(self) -> int:
        """Apply waiting events to the state, for at most `PUMP_BUDGET` seconds."""
        deadline = perf_counter() + PUMP_BUDGET
        applied = 0
        state, outputs, take = self.state, self.outputs, self.feed.take
        while (item := take()) is not None:
            if isinstance(item, JournalRestarted):
                self.state = state = BoutState()
                outputs.clear()
                self.last_event_at = None
                continue
            state.apply(item)
            applied += 1
            if isinstance(item, AttemptOutput):
                outputs.add(item.attempt, item.line)
            elif isinstance(item, AttemptFinished | StageFinished | BoutFinished):
                self._records_stale = True
            self.last_event_at = item.at
            if not applied & 255 and perf_counter() > deadline:
                break
        return applied

    def tick(self) -> None:
        """One redraw of the visible screen, when something changed or a second passed."""
        if not self.is_running:
            return
        if monotonic() - self._collected > FULL_COLLECTION_EVERY:
            self._collected = monotonic()
            gc.collect()
            return
        applied = self.pump()
        second = int(monotonic())
        if not applied and second == self._last_second:
            return
        self._last_second = second
        screen = self.screen
        if isinstance(screen, BoutScreen):
            screen.live_changed()

    @work(thread=True, exclusive=True, group="journal", exit_on_error=False)
    def _read_journal(self, *, follow: bool, generation: int) -> None:
        """Replay the journal from its start, then (when following) keep reading it."""
        reader = JournalReader(self.store.events_path)
        worker = get_current_worker()
        while not worker.is_cancelled:
            chunk = reader.read()
            if chunk.events or chunk.restarted:
                self.post_message(self.JournalRead(chunk.events, chunk.restarted, generation))
            if not follow:
                return
            time.sleep(FOLLOW_INTERVAL)

    @on(JournalRead)
    def _journal_read(self, message: JournalRead) -> None:
        if message.generation != self._journal_generation:
            return
        if message.restarted:
            self.feed.push(JournalRestarted())
            holder = self.store.lock_holder()
            self.watched_pid = holder.pid if holder is not None else None
        self.feed.extend(list(message.events))

    # --- records -----------------------------------------------------------------------

    def _reload_if_stale(self) -> None:
        if self._records_stale and not self._records_loading:
            self.reload_records()

    def reload_records(self) -> None:
        """Read the store again in a thread; screens redraw when it arrives."""
        self._records_stale = False
        self._records_loading = True
        self._load_records()

    @work(thread=True, exclusive=True, group="records", exit_on_error=False)
    def _load_records(self) -> None:
        self.post_message(self.RecordsLoaded(load_records(self.project_dir)))

    @on(RecordsLoaded)
    def _records_loaded(self, message: RecordsLoaded) -> None:
        self._records_loading = False
        known = set(self.records.problems)
        for problem in message.records.problems:
            if problem not in known:
                self.notify(problem, severity="error", markup=False, timeout=10)
        self.records = message.records
        self.records_changed()

    def records_changed(self) -> None:
        """Tell the visible screen that what it shows from records or config is stale."""
        self.records_version += 1
        if not self.is_running:
            return
        screen = self.screen
        if isinstance(screen, BoutScreen):
            screen.catch_up()

    def config_saved(self) -> None:
        """bugbout.toml was written by a screen: load the project again and redraw."""
        try:
            self.project = Project.load(self.config_path)
        except BugboutError as exc:
            self.project = None
            self.notify(str(exc), severity="error", markup=False)
        self.records_changed()

    # --- the engine --------------------------------------------------------------------

    def start_bout(self, *, retry_failed: bool = False, until: Stage | None = None) -> None:
        """Start the pipeline as the app's one engine worker; it resumes what is stored."""
        if self.watching:
            self.notify("Following another run: this view is read-only.", severity="warning")
            return
        if self.engine is not None:
            self.notify("The bout is already running.")
            return
        screen = self.screen_stack[0] if self.screen_stack else None
        if isinstance(screen, BoutScreen) and screen.has_unsaved_changes:
            self.notify("Save or discard the config changes first (ctrl+s saves).")
            return
        holder = self.store.lock_holder()
        if holder is not None:
            self.notify(
                f"Another bugbout run ({holder}) is using this project. "
                "Restart with --watch to follow it.",
                severity="error",
            )
            return
        try:
            project = Project.load(self.config_path)
        except BugboutError as exc:
            self.notify(str(exc), severity="error", markup=False)
            self.switch_mode("config")
            return
        self.project = project
        self._journal_generation += 1
        self.workers.cancel_group(self, "journal")
        self.feed.push(JournalRestarted())
        bout = Bout(project, retry_failed=retry_failed)
        bout.subscribe(self.feed.push)
        self.engine_started_at = self.clock()
        self.running_bout = bout
        self.engine = self.run_worker(
            bout.arun(until=until),
            name="engine",
            group="engine",
            description="the bout",
            exit_on_error=False,
            exclusive=True,
        )
        self.refresh_bindings()

    def stop_bout(self) -> None:
        """Cancel the engine worker: running agents are killed, finished work is kept."""
        if self.engine is not None:
            self.notify("Stopping: running agents are being stopped.")
            self.engine.cancel()

    def cancel_attempt(self, attempt: str) -> None:
        """Stop one queued or running attempt; the race goes on without it."""
        bout = self.running_bout
        if bout is not None and bout.cancel_attempt(attempt):
            self.notify(
                f"Cancelling {attempt}: it will be recorded as crashed (f retries).", markup=False
            )
        else:
            self.notify(
                f"{attempt} is not queued or running in this run.", severity="warning", markup=False
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "engine" or worker is not self.engine:
            return
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        self.engine = None
        self.running_bout = None
        self.refresh_bindings()
        self.reload_records()
        if event.state == WorkerState.ERROR:
            error = worker.error
            if isinstance(error, BugboutError):
                self.notify(str(error), title="The bout stopped", severity="error", markup=False)
            else:
                self.notify(
                    f"{type(error).__name__}: {error}",
                    title="The bout stopped on an unexpected error",
                    severity="error",
                    markup=False,
                )
        if self._quitting:
            self.exit(0)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification of every screen comes here. Messages quote errors, paths and
        agents, so they are made inert; those that quote them also turn markup off."""
        super().notify(
            inert(message), title=inert_line(title), severity=severity, timeout=timeout,
            markup=markup,
        )  # fmt: skip

    # --- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return not self.engine_running and not self.watching
        if action == "stop":
            return self.engine_running
        return True

    def action_start(self) -> None:
        self.start_bout()

    def action_stop(self) -> None:
        self.stop_bout()

    def action_goto(self, mode: str) -> None:
        """Switch screens; edits not yet saved are asked about first."""
        if mode == self.current_mode:
            return
        self._leave_then(lambda: self.switch_mode(mode))

    def _leave_then(self, then: Callable[[], object]) -> None:
        base = self.screen_stack[0] if self.screen_stack else None
        if not isinstance(base, BoutScreen) or not base.has_unsaved_changes:
            then()
            return
        screen = base

        def answered(answer: str | None) -> None:
            if answer == "save" and isinstance(screen, ConfigScreen):
                if screen.save():
                    then()
            elif answer == "discard" and isinstance(screen, ConfigScreen):
                screen.discard()
                then()

        self.push_screen(unsaved_changes("The Config screen"), answered)

    def action_keys(self) -> None:
        if self.screen.query(HelpPanel):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    async def action_quit(self) -> None:
        self._leave_then(self._quit)

    def _quit(self) -> None:
        if self.engine is None:
            self.exit(0)
            return
        self._quitting = True
        self.stop_bout()
        self.set_timer(15, lambda: self.exit(0))

    # --- the header --------------------------------------------------------------------

    def engine_status(self) -> EngineStatus:
        if self.engine is not None:
            elapsed = ""
            if self.engine_started_at is not None:
                elapsed = clock_text((self.now() - self.engine_started_at).total_seconds())
            return EngineStatus("● running", "bold green", elapsed)
        if self.watching:
            who = f" pid {self.watched_pid}" if self.watched_pid else ""
            if self.state.outcome is None:
                return EngineStatus(f"◉ following{who}", "bold cyan")
            return EngineStatus(f"◉ followed run {self.state.outcome}", "cyan")
        if self.state.outcome is not None:
            style = {"done": "green", "stopped": "yellow"}.get(self.state.outcome, "red")
            return EngineStatus(f"last run {self.state.outcome} · s starts", style)
        if self.state.planned:
            return EngineStatus("last run did not finish · s carries on", "yellow")
        return EngineStatus("idle · s starts the bout", "dim")

    def refresh_header(self, screen: BoutScreen) -> None:
        planned = self.state.planned or list(STAGES)
        note: Text | None = None
        if self.state.errors:
            count = len(self.state.errors)
            note = Text(f"⚠ {count} error{'s' if count != 1 else ''}", style="bold red")
        if self.watching:
            note = Text.assemble(note or "", ("  read-only", "dim"))
        for header in screen.query(StatusHeader):
            header.show(
                self.project_dir.name,
                self.engine_status(),
                stage_chips(self.state, planned),
                screen.MODE or self.current_mode,
                note,
            )


def config_path_for(path: Path) -> Path:
    """bugbout.toml in a directory, or the file itself."""
    return path if path.suffix == ".toml" else path / CONFIG_NAME


def make_app(
    path: Path,
    *,
    watch: bool = False,
    start: bool = False,
    clock: Clock = _utc_now,
) -> BugboutApp:
    """The app for the project at `path`; the command line and the tests both use it."""
    return BugboutApp(
        config_path_for(path.expanduser().absolute()),
        launch=Launch(watch=watch, start=start),
        clock=clock,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bugbout-tui",
        description="Race coding agents on bugs your repository already fixed, and watch "
        "it happen: config, tasks, the live race, the cross-examination matrix, verdicts "
        "and the report in one terminal app.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        help="the project (default: here); with --demo, where to build the demo",
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--demo", action="store_true", help="open a fresh demo bout and start it")
    how.add_argument(
        "--watch",
        action="store_true",
        help="follow a bout that `bugbout run` is running on this project (read-only)",
    )
    how.add_argument("--run", action="store_true", help="start the bout at once")
    args = parser.parse_args(argv)
    path: Path = args.path or Path()
    if args.demo:
        try:
            path = open_demo(args.path)
        except BugboutError as exc:
            print(f"bugbout-tui: {inert(str(exc))}", file=sys.stderr)
            return exc.exit_code
    app = make_app(path, watch=args.watch, start=args.run or args.demo)
    app.run()
    return app.return_code or 0


def open_demo(root: Path | None) -> Path:
    """A fresh demo project (its sample repository, issues and scripted agents)."""
    check_pytest()
    print("Building the demo project…", file=sys.stderr)
    demo, _ = prepare_demo(root, fresh=True)
    return demo.root


__all__ = ["BugboutApp", "Launch", "main", "make_app"]
