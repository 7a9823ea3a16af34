"""bugbout-tui's app: its screens, its keys, and the tick that redraws the visible one.

What the screens show comes from the app's `Session` (the project, its records, the run
and the engine). Ten times a second the app has the session fold the events that
arrived, then asks the visible screen, and only it, to redraw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import HelpPanel
from textual.worker import Worker

from bugbout_tui.cli.estimate_view import estimate_lines
from bugbout_tui.core.config import CONFIG_NAME
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import Stage
from bugbout_tui.core.look import plural
from bugbout_tui.core.preferences import Preferences, load_preferences, save_preferences
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.cluster import cluster_address
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import RETRYABLE
from bugbout_tui.engine.state import BoutState
from bugbout_tui.report import Report
from bugbout_tui.tui.collector import Collector
from bugbout_tui.tui.commands import ActionsProvider
from bugbout_tui.tui.feed import EventFeed, OutputBook
from bugbout_tui.tui.records import Records
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.screens.config import ConfigScreen
from bugbout_tui.tui.screens.matrix import MatrixScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.screens.report import ReportScreen
from bugbout_tui.tui.screens.tasks import TasksScreen
from bugbout_tui.tui.screens.verdicts import VerdictsScreen
from bugbout_tui.tui.session import RECORDS_INTERVAL, Clock, Session, utc_now
from bugbout_tui.tui.widgets.dialogs import Choice, confirmation, unsaved_changes
from bugbout_tui.tui.widgets.status import MODES as MODE_INFO

TICK = 0.1
"""Seconds between two passes over the feed: ten redraws a second at most."""

_SCREENS = Binding.Group("screens", compact=True)


@dataclass(frozen=True)
class Launch:
    """How the app was asked to start."""

    watch: bool = False
    """Follow another process's run, read-only."""
    start: bool = False
    """Start the bout at once."""
    demo: bool = False
    """The project is the demo, which runs unconfined when this machine has no sandbox."""


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

    def __init__(
        self,
        config_path: Path,
        *,
        launch: Launch = Launch(),
        clock: Clock = utc_now,
    ) -> None:
        super().__init__()
        self.launch = launch
        self.session = Session(self, config_path, watch=launch.watch, clock=clock)
        self._collector = Collector()
        self._quitting = False
        self._last_second = -1
        self._preferences = Preferences()

    # --- the session, as whoever holds the app reads it --------------------------------

    @property
    def project(self) -> Project | None:
        return self.session.project

    @property
    def state(self) -> BoutState:
        return self.session.state

    @property
    def records(self) -> Records:
        return self.session.records

    @property
    def feed(self) -> EventFeed:
        return self.session.feed

    @property
    def outputs(self) -> OutputBook:
        return self.session.outputs

    @property
    def engine(self) -> Worker[Report | None] | None:
        return self.session.engine

    def reload_records(self) -> None:
        self.session.reload_records()

    # --- start-up ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self._collector.take_over()
        self._apply_preferences()
        self.set_interval(TICK, self.tick, name="tick")
        self.set_interval(RECORDS_INTERVAL, self.session.reload_if_stale, name="records")
        if not self.session.config_path.exists():
            self.push_screen(
                Choice(
                    f"No {CONFIG_NAME} in {self.session.project_dir}",
                    "bugbout keeps its settings in bugbout.toml beside your repository. "
                    "Write one now, as `bugbout init` would? It is commented, and you can "
                    "edit every key on the Config screen.",
                    [("write", "Write bugbout.toml", "primary"), ("cancel", "Quit", "default")],
                ),
                self._answered_init,
            )
            return
        self._open()

    def _apply_preferences(self) -> None:
        """Put back the theme chosen before; from then on every change is remembered."""
        self._preferences, problem = load_preferences()
        if problem is not None:
            self.notify(problem, severity="warning", markup=False)
        theme = self._preferences.theme
        if theme is not None and theme in self.available_themes:
            self.theme = theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name == self._preferences.theme:
            return
        self._preferences = self._preferences.model_copy(update={"theme": theme.name})
        problem = save_preferences(self._preferences)
        if problem is not None:
            self.notify(problem, severity="warning", markup=False)

    def _answered_init(self, answer: str | None) -> None:
        if answer == "write":
            self.session.write_first_config(self._config_written)
        else:
            self.exit(
                return_code=2,
                message=f"bugbout-tui needs a {CONFIG_NAME}; `bugbout init` writes one.",
            )

    def _config_written(self, error: BugboutError | None) -> None:
        if error is not None:
            self.exit(return_code=error.exit_code, message=str(error))
            return
        self.notify(
            f"Wrote {self.session.config_path}. Check it here, then press 2 to see the tasks."
        )
        self._open(first_mode="config")

    def _open(self, first_mode: str | None = None) -> None:
        try:
            valid = self.session.open()
        except BugboutError as exc:
            self.exit(return_code=exc.exit_code, message=str(exc))
            return
        if not valid:
            first_mode = "config"
        if first_mode is None:
            first_mode = "race" if self.launch.start or self.session.watching else "tasks"
        self.switch_mode(first_mode)
        self.refresh_bindings()
        if self.launch.start and not self.session.watching:
            self.start_bout()

    # --- redrawing ---------------------------------------------------------------------

    def tick(self) -> None:
        """One redraw of the visible screen, when something changed or a second passed."""
        if not self.is_running:
            return
        if self._collector.collect_if_due():
            return
        applied = self.session.pump()
        second = int(monotonic())
        if not applied and second == self._last_second:
            return
        self._last_second = second
        screen = self.screen
        if isinstance(screen, BoutScreen):
            screen.live_changed()

    def records_changed(self) -> None:
        """Tell the visible screen that what it shows from records or config is stale."""
        if not self.is_running:
            return
        screen = self.screen
        if isinstance(screen, BoutScreen):
            screen.catch_up()

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

    # --- the engine --------------------------------------------------------------------

    @property
    def has_unsaved_changes(self) -> bool:
        """Whether the screen of the current mode holds edits not yet saved."""
        base = self.screen_stack[0] if self.screen_stack else None
        return isinstance(base, BoutScreen) and base.has_unsaved_changes

    def start_bout(self, *, retry_failed: bool = False, until: Stage | None = None) -> None:
        """Start the engine, unless edits wait to be saved; a bugbout.toml that does not
        load is shown on the Config screen."""
        if self.has_unsaved_changes:
            self.notify("Save or discard the config changes first (ctrl+s saves).")
            return
        try:
            self.session.start_bout(retry_failed=retry_failed, until=until)
        except BugboutError as exc:
            self.notify(str(exc), severity="error", markup=False)
            self.switch_mode("config")
            return
        self.refresh_bindings()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if not self.session.engine_changed(event.worker, event.state):
            return
        self.refresh_bindings()
        if self._quitting:
            self.exit(0)

    # --- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return not self.session.engine_running and not self.session.watching
        if action == "stop":
            return self.session.engine_running
        return True

    def action_start(self) -> None:
        self.confirm_start()

    def action_stop(self) -> None:
        question = confirmation(
            "Stop the bout?",
            "Every running agent is killed. Finished attempts are kept, and the next start "
            "carries on from there; attempts in flight run again.",
            ("stop", "Stop the bout"),
            "Keep running",
        )
        self._ask_then(question, "stop", self.session.stop_bout)

    def confirm_start(self, *, retry_failed: bool = False) -> None:
        """Start the engine once the user says so: a start may spend the agents' quota,
        so one stray key never does. A start that cannot go (edits not saved, a
        bugbout.toml with problems, a bout already running or followed) is refused at
        once, with its reason, unasked."""
        session = self.session
        if (
            self.has_unsaved_changes
            or self.project is None
            or session.engine_running
            or session.watching
        ):
            self.start_bout(retry_failed=retry_failed)
            return
        if retry_failed:
            failed = sum(1 for view in self.state.attempts.values() if view.phase in RETRYABLE)
            which = "the attempts" if not failed else plural(failed, "attempt")
            question = confirmation(
                "Retry the failed attempts?",
                f"The bout starts again, and {which} that crashed, timed out or hit a quota "
                "run again, spending their agents' quota.",
                ("start", "Retry them"),
                "Not now",
            )
        else:
            question = confirmation(
                "Start the bout?",
                "bugbout carries on from what the store holds: agents run on every task "
                "still to race, spending their plans' quota."
                + self._cluster_text()
                + self._estimate_text(),
                ("start", "Start"),
                "Not now",
            )
        self._ask_then(question, "start", lambda: self.start_bout(retry_failed=retry_failed))

    def _cluster_text(self) -> str:
        """Where the bout will run, when not on this machine alone."""
        project = self.project
        if project is None:
            return ""
        address = cluster_address(None, project.config.run.cluster)
        if address is None:
            return ""
        return (
            f" The test runs, and the agents the workers declare, run on the cluster at "
            f"{inert_line(address)}."
        )

    def _estimate_text(self) -> str:
        """The race's estimate from the store, for the question before a start: it reads
        records only, so it is quick; a store it cannot read leaves it out."""
        project = self.project
        if project is None:
            return ""
        try:
            estimate = Bout(project).estimate()
        except BugboutError:
            return ""
        return "\n\n" + "\n".join(estimate_lines(estimate))

    def _ask_then(self, question: Choice, yes: str, then: Callable[[], object]) -> None:
        """Ask `question`; on the answer `yes`, do `then`. The app's keys still reach it
        over a question, so while one is open another is not stacked on it."""
        if isinstance(self.screen, Choice):
            return

        def answered(answer: str | None) -> None:
            if answer == yes:
                then()

        self.push_screen(question, answered)

    def action_goto(self, mode: str) -> None:
        """Switch screens; edits not yet saved are asked about first."""
        if mode == self.current_mode:
            return
        self._leave_then(lambda: self.switch_mode(mode))

    def _leave_then(self, then: Callable[[], object]) -> None:
        if not self.has_unsaved_changes:
            then()
            return
        screen = self.screen_stack[0]

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
        if self.session.engine is None:
            self.exit(0)
            return
        question = confirmation(
            "Stop the bout and quit?",
            "The bout is running: quitting kills every running agent. Finished attempts "
            "are kept, and the next start carries on from there.",
            ("quit", "Stop and quit"),
            "Keep running",
        )
        self._ask_then(question, "quit", self._stop_and_quit)

    def _stop_and_quit(self) -> None:
        if self.session.engine is None:
            self.exit(0)
            return
        self._quitting = True
        self.session.stop_bout()
        self.set_timer(15, lambda: self.exit(0))
