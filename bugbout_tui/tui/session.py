"""The project the app shows: its config, its records, the run it follows and the engine.

The engine never waits for the screen. Its events go into a feed the moment they
happen; on each of the app's ticks `pump` folds whatever arrived into one `BoutState`
(the same reducer the CLI's live display uses). Stored records are read in a thread and
handed over as a whole. A run of another process is followed through its journal,
read-only, and a run of this one through its events; either way the state is rebuilt
from the top when a new run begins.

The session draws nothing. Its workers run under the app, so that they end with it, and
it speaks to the person through the app's notifications.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING

from textual.worker import Worker, WorkerState, get_current_worker

from bugbout_tui.core.config import CONFIG_NAME
from bugbout_tui.core.config_errors import ConfigError
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    BoutFinished,
    Event,
    Stage,
    StageFinished,
)
from bugbout_tui.core.store import Store
from bugbout_tui.demo.sandbox import demo_sandbox
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.state import AttemptView, BoutState
from bugbout_tui.infra.detect import write_initial_config
from bugbout_tui.infra.sandbox import Sandbox
from bugbout_tui.report import Report
from bugbout_tui.tui.feed import EventFeed, JournalRestarted, OutputBook
from bugbout_tui.tui.records import Records, load_records
from bugbout_tui.tui.watch import JournalReader
from bugbout_tui.tui.widgets.dialogs import stopped

if TYPE_CHECKING:
    from bugbout_tui.tui.app import BugboutApp

PUMP_BUDGET = 0.015
"""Seconds one pass may spend applying events before it lets the screen draw."""
FOLLOW_INTERVAL = 0.2
"""Seconds between two reads of a journal being followed."""
RECORDS_INTERVAL = 1.0
"""Seconds between two re-reads of the store while records keep changing."""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class Session:
    """One project, as the app sees it while it runs."""

    def __init__(self, app: BugboutApp, config_path: Path, *, watch: bool, clock: Clock) -> None:
        self._app = app
        self.config_path = config_path
        """The bugbout.toml this session edits (it may not exist yet)."""
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
        self.watching = watch
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

    # --- opening -----------------------------------------------------------------------

    def write_first_config(self, then: Callable[[BugboutError | None], object]) -> None:
        """Write the first bugbout.toml in a thread; `then` gets the error, or None."""
        self._app.run_worker(
            partial(self._write_first_config, then),
            name="write-first-config",
            group="init",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _write_first_config(self, then: Callable[[BugboutError | None], object]) -> None:
        error: BugboutError | None = None
        try:
            write_initial_config(self.project_dir)
        except BugboutError as exc:
            error = exc
        self._app.call_later(then, error)

    def open(self) -> bool:
        """Load the project, then read what is stored; a run holding the store is followed.

        False when bugbout.toml has problems (the Config screen shows each); any other
        error loading it is raised.
        """
        valid = True
        try:
            self.project = Project.load(self.config_path)
        except ConfigError:
            self.project = None
            valid = False
            self._app.notify(
                f"{CONFIG_NAME} has problems; each is shown beside its field.",
                severity="warning",
            )
        holder = self.store.lock_holder()
        if holder is not None and not self.watching:
            self.watching = True
            self._app.notify(
                f"Another bugbout run ({holder}) is using this project; following it read-only.",
                timeout=8,
            )
        if self.watching:
            self.watched_pid = holder.pid if holder is not None else None
        self._read_journal(follow=self.watching, generation=self._journal_generation)
        self.reload_records()
        return valid

    # --- events ------------------------------------------------------------------------

    def pump(self) -> int:
        """Apply waiting events to the state, for at most `PUMP_BUDGET` seconds."""
        deadline = perf_counter() + PUMP_BUDGET
        applied = 0
        state, outputs, take = self.state, self.outputs, self.feed.take
        while (item := take()) is not None:
            if isinstance(item, JournalRestarted):
                self.state = state = BoutState()
                state.set_stored(self.stored_attempts())
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

    def _read_journal(self, *, follow: bool, generation: int) -> None:
        self._app.run_worker(
            partial(self._follow_journal, follow=follow, generation=generation),
            name="read-journal",
            group="journal",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _follow_journal(self, *, follow: bool, generation: int) -> None:
        """Replay the journal from its start, then (when following) keep reading it."""
        reader = JournalReader(self.store.events_path)
        worker = get_current_worker()
        while not worker.is_cancelled:
            # The lock is let go after the run's last event is written: seen free before
            # a read, that read holds the whole run.
            ended = follow and self.store.lock_holder() is None
            chunk = reader.read()
            if chunk.events or chunk.restarted:
                self._app.call_later(self._journal_read, chunk.events, chunk.restarted, generation)
            if not follow:
                return
            if ended:
                self._app.call_later(self._followed_run_ended, generation)
                return
            time.sleep(FOLLOW_INTERVAL)

    def _followed_run_ended(self, generation: int) -> None:
        """The followed process has ended and the store is free: this app may write it
        again, and start runs of its own."""
        if generation != self._journal_generation or not self.watching:
            return
        self.watching = False
        self.watched_pid = None
        self._app.notify("The run being followed has ended; you can start runs here again.")
        self.reload_records()
        self._app.refresh_bindings()

    def _journal_read(self, events: list[Event], restarted: bool, generation: int) -> None:
        """Events read from the journal, for the run `generation` they belong to."""
        if generation != self._journal_generation:
            return
        if restarted:
            self.feed.push(JournalRestarted())
            holder = self.store.lock_holder()
            self.watched_pid = holder.pid if holder is not None else None
        self.feed.extend(list(events))

    # --- records -----------------------------------------------------------------------

    def reload_if_stale(self) -> None:
        if self._records_stale and not self._records_loading:
            self.reload_records()

    def reload_records(self) -> None:
        """Read the store again in a thread; screens redraw when it arrives."""
        self._records_stale = False
        self._records_loading = True
        self._app.run_worker(
            self._load_records,
            name="load-records",
            group="records",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _load_records(self) -> None:
        self._app.call_later(self._records_loaded, load_records(self.project_dir))

    def _records_loaded(self, records: Records) -> None:
        self._records_loading = False
        known = set(self.records.problems)
        for problem in records.problems:
            if problem not in known:
                self._app.notify(problem, severity="error", markup=False, timeout=10)
        self.records = records
        self.state.set_stored(self.stored_attempts())
        self._records_changed()

    def stored_attempts(self) -> list[AttemptView]:
        """The store's attempts of the bout's entrants, as the race board shows them, in
        the order they ended; an agent no longer in the config is no longer in the bout."""
        if self.project is None:
            return []
        quotas = {agent.name: agent.quota for agent in self.project.config.agents}
        stored = [
            attempt
            for attempts in self.records.attempts.values()
            for attempt in attempts
            if attempt.contestant in quotas
        ]
        stored.sort(key=lambda attempt: attempt.ended_at)
        return [
            AttemptView(
                attempt=attempt.id,
                task=attempt.task,
                contestant=attempt.contestant,
                role=attempt.role,
                quota=quotas[attempt.contestant],
                phase=attempt.status,
                started_at=attempt.started_at,
                seconds=attempt.seconds,
                detail=attempt.detail,
                input_tokens=attempt.tokens.input,
                output_tokens=attempt.tokens.output,
                logdir=attempt.logdir or None,
                worker=attempt.worker,
            )
            for attempt in stored
        ]

    def _records_changed(self) -> None:
        self.records_version += 1
        self._app.records_changed()

    def config_saved(self) -> None:
        """bugbout.toml was written by a screen: load the project again and redraw."""
        try:
            self.project = Project.load(self.config_path)
        except BugboutError as exc:
            self.project = None
            self._app.notify(str(exc), severity="error", markup=False)
        self.state.set_stored(self.stored_attempts())
        self._records_changed()

    # --- the engine --------------------------------------------------------------------

    def start_bout(self, *, retry_failed: bool = False, until: Stage | None = None) -> None:
        """Start the pipeline as the app's one engine worker; it resumes what is stored.

        A bugbout.toml that cannot be loaded raises its error.
        """
        if self.watching:
            self._app.notify("Following another run: this view is read-only.", severity="warning")
            return
        if self.engine is not None:
            self._app.notify("The bout is already running.")
            return
        holder = self.store.lock_holder()
        if holder is not None:
            self._app.notify(
                f"Another bugbout run ({holder}) is using this project. "
                "Restart with --watch to follow it.",
                severity="error",
            )
            return
        self.project = project = Project.load(self.config_path)
        self._journal_generation += 1
        self._app.workers.cancel_group(self._app, "journal")
        self.feed.push(JournalRestarted())
        sandbox: Sandbox | None = None
        if self._app.launch.demo:
            sandbox, unconfined = demo_sandbox(project.config.run.sandbox)
            if unconfined is not None:
                self._app.notify(unconfined, severity="warning", timeout=30, markup=False)
        bout = Bout(project, retry_failed=retry_failed, sandbox=sandbox)
        bout.subscribe(self.feed.push)
        self.engine_started_at = self.clock()
        self.running_bout = bout
        self.engine = self._app.run_worker(
            bout.arun(until=until),
            name="engine",
            group="engine",
            description="the bout",
            exit_on_error=False,
            exclusive=True,
        )

    def stop_bout(self) -> None:
        """Cancel the engine worker: running agents are killed, finished work is kept."""
        if self.engine is not None:
            self._app.notify("Stopping: running agents are being stopped.")
            self.engine.cancel()

    def cancel_attempt(self, attempt: str) -> None:
        """Stop one queued or running attempt; the race goes on without it."""
        bout = self.running_bout
        if bout is not None and bout.cancel_attempt(attempt):
            self._app.notify(
                f"Cancelling {attempt}: it will be recorded as crashed (f retries).", markup=False
            )
        else:
            self._app.notify(
                f"{attempt} is not queued or running in this run.", severity="warning", markup=False
            )

    def engine_changed(self, worker: Worker[object], state: WorkerState) -> bool:
        """A worker changed state; True when it was the engine, and it has ended."""
        if worker.name != "engine" or worker is not self.engine:
            return False
        if state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return False
        self.engine = None
        self.running_bout = None
        self.reload_records()
        if state == WorkerState.ERROR:
            # A toast fades while the stage it stopped stays undone: the error stays on
            # screen until the person dismisses it.
            error = worker.error
            if isinstance(error, BugboutError):
                self._app.push_screen(stopped("The bout stopped", str(error)))
            else:
                self._app.push_screen(
                    stopped(
                        "The bout stopped on an unexpected error",
                        f"{type(error).__name__}: {error}",
                    )
                )
        return True
