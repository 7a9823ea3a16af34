"""The newest lines of a stream, as many as fit: a lane's live view of its agent.

A `Log` grows its virtual size with every line, and every change of size is a layout
pass over the whole screen; with eight chatty lanes that is most of what the app does.
This widget's size is set by the layout alone, so new lines cost a repaint of its own
region, and each row is one plain segment cropped to the width. Scrolling back is for
the attempt's own screen, which reads the log file. Every line is an agent's, so each is
made inert on its way in: no colour, no control, nothing the terminal would obey.
"""

from __future__ import annotations

from collections import deque

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from bugbout_tui.core.text import inert_line

KEPT = 200
"""Lines held: more than any lane is tall."""


class OutputTail(Widget):
    """The last lines written: from the top while they fit, then the newest at the bottom."""

    DEFAULT_CSS = """
    OutputTail {
        height: 1fr;
    }
    """

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._lines: deque[str] = deque(maxlen=KEPT)
        self._frame = (0, 0, Style())
        """Width, height and style for the rows being drawn: each costs a walk up the
        widget tree, too much to repeat for every row."""

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
        self._lines.extend(map(inert_line, lines))
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        width, height = self.size
        self._frame = (width, height, self.rich_style)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width, height, style = self._frame
        index = y + max(0, len(self._lines) - height)
        if index >= len(self._lines):
            return Strip.blank(width, style)
        return Strip([Segment(fitted(self._lines[index], width), style)]).extend_cell_length(
            width, style
        )


def fitted(line: str, width: int) -> str:
    """`line` as it fits in `width` cells: a line cut short ends with `…`, so a reader
    knows there is more (the attempt's own screen shows all of it)."""
    if cell_len(line) <= width:
        return line
    if width <= 0:
        return ""
    return set_cell_size(line, width - 1) + "…"
