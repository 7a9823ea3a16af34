"""The newest lines of a stream, as many as fit: a lane's live view of its agent.

A `Log` grows its virtual size with every line, and every change of size is a layout
pass over the whole screen; with eight chatty lanes that is most of what the app does.
This widget's size is set by the layout alone, so new lines cost a repaint of its own
region. Scrolling back is for the attempt's own screen, which reads the log file.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.widget import Widget

KEPT = 200
"""Lines held: more than any lane is tall."""


class OutputTail(Widget):
    """The last lines written, bottom-aligned once they fill the widget."""

    DEFAULT_CSS = """
    OutputTail {
        height: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._lines: deque[str] = deque(maxlen=KEPT)

    @property
    def lines(self) -> list[str]:
        return list(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def clear(self) -> None:
        self._lines.clear()
        self.refresh()

    def write_line(self, line: str) -> None:
        self.write_lines([line])

    def write_lines(self, lines: list[str]) -> None:
        self._lines.extend(lines)
        self.refresh()

    def render(self) -> Text:
        height = self.content_size.height
        shown = list(self._lines)[-height:] if height > 0 else []
        return Text("\n".join(shown))
