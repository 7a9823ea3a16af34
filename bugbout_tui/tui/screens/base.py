"""What every screen of the app shares: the status header, the footer, and refresh hooks.

The app owns the state and the records and tells only the visible screen about changes
("attributes down"); a screen that was hidden catches up when it is shown again, so
nothing is drawn for a screen nobody sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from bugbout_tui.tui.widgets.status import StatusHeader

if TYPE_CHECKING:
    from bugbout_tui.tui.app import BugboutApp


class BoutScreen(Screen[None]):
    """A screen of bugbout-tui. Subclasses compose `body` and override the hooks."""

    MODE = ""
    """The mode the screen belongs to, for the header's tabs."""

    def __init__(self) -> None:
        super().__init__()
        self._records_seen = -1
        self._ready = False
        """Composed and mounted: before that there is nothing to draw into."""

    @property
    def bout(self) -> BugboutApp:
        """The app, typed: screens read its state and records and call its actions."""
        return cast("BugboutApp", self.app)

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield from self.body()
        yield Footer(compact=True)

    def body(self) -> ComposeResult:
        """The screen's own widgets, between header and footer."""
        yield from ()

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
        self.bout.refresh_header(self)
        if self._records_seen != self.bout.records_version:
            self._records_seen = self.bout.records_version
            self.show_records()
        self.show_live()

    def live_changed(self) -> None:
        """Called by the app on its tick while this screen is visible."""
        if self.drawable:
            self.bout.refresh_header(self)
            self.show_live()

    def show_records(self) -> None:
        """The store was read again: redraw what comes from records."""

    def show_live(self) -> None:
        """Events arrived (or a second passed): redraw what comes from the live state."""

    @property
    def has_unsaved_changes(self) -> bool:
        """Whether leaving this screen would lose edits (the config form overrides it)."""
        return False
