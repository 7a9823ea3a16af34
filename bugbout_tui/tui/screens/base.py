"""What every screen of the app shares: the status header, the footer, and refresh hooks.

The app's session owns the state and the records, and the app tells only the visible
screen about changes ("attributes down"); a screen that was hidden catches up when it is
shown again, so nothing is drawn for a screen nobody sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen

from bugbout_tui.core import look
from bugbout_tui.core.events import STAGES
from bugbout_tui.tui.session import Session
from bugbout_tui.tui.widgets.status import BoutFooter, EngineStatus, StatusHeader

if TYPE_CHECKING:
    from bugbout_tui.tui.app import BugboutApp


def engine_status(session: Session) -> EngineStatus:
    """The header's word on the engine: running here, following another run, or idle
    (and how the last run ended)."""
    if session.engine is not None:
        elapsed = ""
        if session.engine_started_at is not None:
            elapsed = look.clock((session.now() - session.engine_started_at).total_seconds())
        return EngineStatus("● running", "bold green", elapsed)
    state = session.state
    if session.watching:
        who = f" pid {session.watched_pid}" if session.watched_pid else ""
        if state.outcome is None:
            return EngineStatus(f"◉ following{who}", "bold cyan")
        return EngineStatus(f"◉ followed run {state.outcome}", "cyan")
    if state.outcome is not None:
        style = {"done": "green", "stopped": "yellow"}.get(state.outcome, "red")
        return EngineStatus(f"last run {state.outcome} · s starts", style)
    if state.planned:
        return EngineStatus("last run did not finish · s carries on", "yellow")
    return EngineStatus("idle · s starts the bout", "dim")


class BoutScreen(Screen[None]):
    """A screen of bugbout-tui. Subclasses compose `body` and override the hooks."""

    MODE = ""
    """The mode the screen belongs to, for the header's tabs."""
    WRITES: ClassVar[frozenset[str]] = frozenset()
    """The screen's actions that write the project or start work: hidden (not merely
    refused) while the app follows another process's run, read-only."""

    def __init__(self) -> None:
        super().__init__()
        self._records_seen = -1
        self._ready = False
        """Composed and mounted: before that there is nothing to draw into."""

    @property
    def bugbout_app(self) -> BugboutApp:
        """The app, typed: screens call its actions."""
        return cast("BugboutApp", self.app)

    @property
    def session(self) -> Session:
        """What screens show: the project, its records, the run and the engine."""
        return self.bugbout_app.session

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield from self.body()
        yield BoutFooter()

    def body(self) -> ComposeResult:
        """The screen's own widgets, between header and footer."""
        yield from ()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Writing keys are not offered while read-only (False hides them from the footer)."""
        return not (action in self.WRITES and self.session.watching)

    def on_mount(self) -> None:
        """Runs after a subclass's own `on_mount` (handlers run most derived first)."""
        self._ready = True
        self.catch_up()

    def on_screen_resume(self) -> None:
        self.catch_up()

    @property
    def drawable(self) -> bool:
        """Composed, mounted and not being taken down (the app may be closing)."""
        return self._ready and self.is_running and self.app.is_running

    def catch_up(self) -> None:
        """Show the current records and state, if they changed while hidden."""
        if not self.drawable:
            return
        self._show_header()
        if self._records_seen != self.session.records_version:
            self._records_seen = self.session.records_version
            self.show_records()
        self.show_live()

    def live_changed(self) -> None:
        """Called by the app on its tick while this screen is visible."""
        if self.drawable:
            self._show_header()
            self.show_live()

    def _show_header(self) -> None:
        session = self.session
        state = session.state
        note: Text | None = None
        if state.errors:
            note = Text(f"⚠ {look.plural(len(state.errors), 'error')}", style="bold red")
        if session.watching:
            note = Text.assemble(note or "", ("  read-only", "dim"))
        planned = state.planned or list(STAGES)
        for header in self.query(StatusHeader):
            header.show(
                session.project_dir.name,
                engine_status(session),
                look.stage_chips(planned, state.stages),
                self.MODE or self.app.current_mode,
                note,
                compact_chips=look.stage_chips(planned, state.stages, compact=True),
            )

    def show_records(self) -> None:
        """The store was read again: redraw what comes from records."""

    def show_live(self) -> None:
        """Events arrived (or a second passed): redraw what comes from the live state."""

    @property
    def has_unsaved_changes(self) -> bool:
        """Whether leaving this screen would lose edits (the config form overrides it)."""
        return False
