"""A list of one-line rows to move through and open: a lane's attempts.

An `OptionList` measures every option's height on each change and reorders by
rebuilding itself, a few milliseconds per lane; a race reorders every lane each time
an attempt starts or ends, all in one frame. Rows here are one line each, so the list
needs no measuring and no scrolling machinery: its size comes from the layout alone, a
change costs a repaint of its own region, and a row's text is turned into segments once.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget


class PickList(Widget, can_focus=True):
    """Rows of (id, text); enter or a click posts `Picked` with the id of the row under
    the cursor. A cursor the person put on a row keeps that row across reorders; one
    never moved stays on the first row (a lane's running attempt), rather than following
    whatever row happened to be first when the list was drawn."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pick-list--cursor"}
    DEFAULT_CSS = """
    PickList {
        height: 1fr;
    }
    PickList > .pick-list--cursor {
        background: $block-cursor-blurred-background;
    }
    PickList:focus > .pick-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("home", "move(-1_000_000)", "First", show=False),
        Binding("end", "move(1_000_000)", "Last", show=False),
        Binding("enter", "pick", "Open", show=False),
    ]

    class Picked(Message):
        """A row was opened (enter, or a click)."""

        def __init__(self, row_id: str) -> None:
            super().__init__()
            self.row_id = row_id

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._ids: list[str] = []
        self._texts: list[Text] = []
        self._segments: dict[str, tuple[str, list[Segment]]] = {}
        """Row id -> (plain text, its segments), reused while the text stays the same."""
        self._cursor: int | None = None
        self._placed = False
        """Whether the person put the cursor where it is (keys, a click, `highlight`)."""
        self._top = 0
        """The first row shown."""
        self._frame = (0, Style(), Style())
        """Width, style and cursor style for the rows being drawn, looked up once."""

    @property
    def row_ids(self) -> list[str]:
        return list(self._ids)

    @property
    def row_texts(self) -> list[Text]:
        return list(self._texts)

    @property
    def highlighted(self) -> str | None:
        return None if self._cursor is None else self._ids[self._cursor]

    def highlight(self, row_id: str) -> None:
        """Put the cursor on `row_id`; an unknown id leaves it where it is."""
        if row_id in self._ids:
            self._cursor = self._ids.index(row_id)
            self._placed = True
            self.refresh()

    def set_rows(self, rows: list[tuple[str, Text]]) -> None:
        """Show `rows`, in order. A placed cursor stays on its row if the row is still
        there; otherwise the cursor is on the first row."""
        ids = [row_id for row_id, _ in rows]
        texts = [text for _, text in rows]
        if ids == self._ids and [t.plain for t in texts] == [t.plain for t in self._texts]:
            return
        keep = self.highlighted
        self._ids, self._texts = ids, texts
        for gone in self._segments.keys() - set(ids):
            del self._segments[gone]
        if self._placed and keep in ids:
            self._cursor = ids.index(keep)
        else:
            self._placed = False
            self._cursor = 0 if ids else None
        self.refresh()

    def action_move(self, step: int) -> None:
        if self._cursor is None:
            return
        self._cursor = max(0, min(len(self._ids) - 1, self._cursor + step))
        self._placed = True
        self.refresh()

    def action_pick(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Picked(self.highlighted))

    def on_click(self, event: events.Click) -> None:
        index = self._top + event.y
        if 0 <= index < len(self._ids):
            self._cursor = index
            self._placed = True
            self.refresh()
            self.action_pick()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.action_move(1)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.action_move(-1)

    def render_lines(self, crop: Region) -> list[Strip]:
        height = self.size.height
        if self._cursor is not None and height:
            # Scroll only as far as it takes to keep the cursor in view.
            self._top = min(self._top, self._cursor)
            self._top = max(self._top, self._cursor - height + 1)
        self._top = max(0, min(self._top, len(self._ids) - height))
        self._frame = (self.size.width, self.rich_style,
                       self.get_component_rich_style("pick-list--cursor"))  # fmt: skip
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width, style, cursor = self._frame
        index = self._top + y
        if index >= len(self._ids):
            return Strip.blank(width, style)
        row_id, text = self._ids[index], self._texts[index]
        cached = self._segments.get(row_id)
        if cached is None or cached[0] != text.plain:
            cached = (text.plain, list(text.render(self.app.console)))
            self._segments[row_id] = cached
        base = style + cursor if index == self._cursor else style
        return Strip(cached[1]).apply_style(base).crop_extend(0, width, base)
