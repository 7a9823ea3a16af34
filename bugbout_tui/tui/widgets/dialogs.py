"""Small modal questions: a message and a row of buttons, answered by the button's id.

Titles and messages may quote paths and names, so they are shown inert, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from bugbout_tui.core.text import inert, inert_line


class Choice(ModalScreen[str]):
    """Asks one question; dismisses with the id of the button pressed, or `cancel`."""

    DEFAULT_CSS = """
    Choice {
        align: center middle;
    }
    Choice > Vertical {
        width: 72;
        height: auto;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    Choice VerticalScroll {
        height: auto;
        max-height: 50vh;
    }
    Choice .title {
        text-style: bold;
        margin-bottom: 1;
    }
    Choice Horizontal {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    Choice Button {
        margin-left: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss('cancel')", "Cancel", id="dialog-cancel")
    ]

    def __init__(
        self, title: str, message: Text | str, buttons: Sequence[tuple[str, str, ButtonVariant]]
    ) -> None:
        """`buttons` are (id, label, variant); the first one has the focus."""
        super().__init__()
        self._title = inert_line(title)
        self._message = Text(inert(message)) if isinstance(message, str) else message
        self._buttons = buttons

    @property
    def heading(self) -> str:
        return self._title

    @property
    def text(self) -> str:
        return self._message.plain

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            # A long message (the estimate of a bout with many agents) scrolls; the
            # buttons stay on screen at 80x24.
            with VerticalScroll():
                yield Static(self._message)
            with Horizontal():
                for ident, label, variant in self._buttons:
                    yield Button(label, id=ident, variant=variant)

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id or "cancel")


def stopped(title: str, message: str) -> Choice:
    """The error that stopped the bout, on screen until it is dismissed."""
    return Choice(title, message, [("dismiss", "Dismiss", "error")])


def unsaved_changes(where: str) -> Choice:
    """The question asked before edits to bugbout.toml would be lost."""
    return Choice(
        "Unsaved changes",
        f"{where} has changes that are not saved to bugbout.toml yet.",
        [
            ("save", "Save", "primary"),
            ("discard", "Discard", "error"),
            ("cancel", "Stay", "default"),
        ],
    )


def confirmation(title: str, message: str, yes: tuple[str, str], no: str) -> Choice:
    """A question before a key that spends quota or stops agents takes effect: `yes` is
    the (id, label) of the button that goes ahead, which has the focus (so `enter`
    confirms); `no` labels the one that leaves everything as it is, as `escape` does."""
    ident, label = yes
    return Choice(title, message, [(ident, label, "warning"), ("cancel", no, "default")])
