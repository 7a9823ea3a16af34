"""The config form's editor: one line at the bottom that edits the highlighted key.

The editor only turns what is typed into a value and says so (`Edited`, on every key
press, so the form validates as you type); the screen owns the document, applies each
edit, and puts it back if the edit is abandoned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import Click
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from bugbout_tui.core.config_errors import Loc, dotted
from bugbout_tui.tui.config_form import FieldSpec, parse_field, show_value


class ChoiceBox(Widget, can_focus=True):
    """One line that steps through a few choices (←/→, space or a click); the first choice,
    None, leaves the key out so the default applies."""

    DEFAULT_CSS = """
    ChoiceBox {
        height: 1;
        background: $boost;
        padding: 0 1;
    }
    ChoiceBox:focus {
        background: $accent 40%;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,space", "step(1)", "Next choice"),
        Binding("left", "step(-1)", "Previous choice"),
    ]

    class Changed(Message):
        def __init__(self, box: ChoiceBox, value: Any) -> None:
            super().__init__()
            self.box = box
            self.value = value

        @property
        def control(self) -> ChoiceBox:
            return self.box

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.choices: list[tuple[str, Any]] = [("", None)]
        self.index = 0

    def reset(self, choices: Sequence[tuple[str, Any]], value: Any, blank: str) -> None:
        """Offer `choices` (and `blank` for None), starting at `value`."""
        self.choices = [(blank, None), *choices]
        values = [choice for _, choice in self.choices]
        self.index = values.index(value) if value in values else 0
        self.refresh()

    @property
    def value(self) -> Any:
        return self.choices[self.index][1]

    def render(self) -> Text:
        label, value = self.choices[self.index]
        return Text.assemble(("◂ ", "dim"), (label, "dim" if value is None else ""), (" ▸", "dim"))

    def action_step(self, step: int) -> None:
        self.index = (self.index + step) % len(self.choices)
        self.refresh()
        self.post_message(self.Changed(self, self.value))

    def on_click(self, event: Click) -> None:
        self.action_step(1)


class FieldEditor(Vertical):
    """Edits one key: a text box, or a choice for keys with a few possible values."""

    DEFAULT_CSS = """
    FieldEditor {
        height: auto;
        display: none;
        border-top: solid $accent;
        padding: 0 1;
        background: $surface;
    }
    FieldEditor.-open {
        display: block;
    }
    FieldEditor #editor-input, FieldEditor ChoiceBox {
        width: 60;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "finish(True)", "Done", id="edit-done"),
        Binding("escape", "finish(False)", "Cancel edit", id="edit-cancel"),
    ]

    class Edited(Message):
        """The value being edited changed."""

        def __init__(self, editor: FieldEditor, loc: Loc, value: Any, error: str | None) -> None:
            super().__init__()
            self.editor = editor
            self.loc = loc
            self.value = value
            """The new value; None removes the key so its default applies."""
            self.error = error
            """Set when the text cannot be a value at all."""

        @property
        def control(self) -> FieldEditor:
            return self.editor

    class Finished(Message):
        """Editing ended: kept (enter) or abandoned (escape)."""

        def __init__(self, editor: FieldEditor, loc: Loc, kept: bool) -> None:
            super().__init__()
            self.editor = editor
            self.loc = loc
            self.kept = kept

        @property
        def control(self) -> FieldEditor:
            return self.editor

    def __init__(self) -> None:
        super().__init__(id="field-editor")
        self.loc: Loc = ()
        self.spec: FieldSpec | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="editor-label")
        yield Input(id="editor-input", compact=True, select_on_focus=False)
        yield ChoiceBox(id="editor-choice")

    def open(self, loc: Loc, spec: FieldSpec, value: Any) -> None:
        self.loc, self.spec = loc, spec
        choice = spec.kind in ("bool", "choice")
        label = Text.assemble(("editing ", "dim"), (dotted(loc), "bold"), "  ", spec.help)
        hint = "←/→ choose" if choice else "type"
        label.append(f"   {hint} · enter keeps · esc puts it back", style="dim")
        self.query_one("#editor-label", Static).update(label)
        box = self.query_one(ChoiceBox)
        field = self.query_one(Input)
        box.display, field.display = choice, not choice
        if choice:
            options = (
                [("true", True), ("false", False)]
                if spec.kind == "bool"
                else [(item, item) for item in spec.choices]
            )
            box.reset(options, value, f"default ({spec.default})" if spec.default else "–")
            self.add_class("-open")
            box.focus()
        else:
            with field.prevent(Input.Changed):
                field.value = show_value(spec.kind, value)
            field.placeholder = f"blank: {spec.default}" if spec.default else ""
            field.cursor_position = len(field.value)
            self.add_class("-open")
            field.focus()

    def close(self) -> None:
        self.remove_class("-open")

    @on(Input.Changed, "#editor-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self.spec is None:
            return
        value, error = parse_field(self.spec.kind, event.value)
        self.post_message(self.Edited(self, self.loc, value, error))

    @on(Input.Submitted, "#editor-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_finish(True)

    @on(ChoiceBox.Changed)
    def _chosen(self, event: ChoiceBox.Changed) -> None:
        event.stop()
        self.post_message(self.Edited(self, self.loc, event.value, None))

    def action_finish(self, kept: bool) -> None:
        self.post_message(self.Finished(self, self.loc, kept))
