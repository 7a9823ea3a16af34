"""A grid of short cells with a cell cursor, drawn one visible line at a time.

The cross-examination matrix can be 40 trees by 40 authors. Textual's `DataTable` draws
every cell of every visible row again whenever the cursor moves; this grid keeps each
row's drawn line and, on a move, redraws only the two rows (and the header) the cursor
left and entered. The first column (the row labels) stays put when the grid scrolls
sideways, and the header stays put when it scrolls down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

HEADER_HEIGHT = 2


class CellGrid(ScrollView, can_focus=True):
    """Rows × columns of `Text` cells; enter (or a second click) selects the cell."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "cellgrid--header",
        "cellgrid--label",
        "cellgrid--cursor",
        "cellgrid--cursor-header",
    }

    DEFAULT_CSS = """
    CellGrid {
        background: $surface;
    }
    CellGrid > .cellgrid--header {
        background: $panel;
        text-style: bold;
    }
    CellGrid > .cellgrid--label {
        background: $panel-darken-1;
    }
    CellGrid > .cellgrid--cursor {
        background: $block-cursor-blurred-background;
    }
    CellGrid:focus > .cellgrid--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: bold;
    }
    CellGrid > .cellgrid--cursor-header {
        background: $accent 40%;
        text-style: bold;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Open cell", id="open-cell",
                tooltip="Every test of that author on that tree, with its failure text"),
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("home", "jump(0)", "First column", show=False),
        Binding("end", "jump(-1)", "Last column", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]  # fmt: skip

    class CellSelected(Message):
        """A cell was chosen (enter, or a click on the cell under the cursor)."""

        def __init__(self, grid: CellGrid, row: str, column: str) -> None:
            super().__init__()
            self.grid = grid
            self.row = row
            self.column = column

        @property
        def control(self) -> CellGrid:
            return self.grid

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.row_keys: list[str] = []
        self.column_keys: list[str] = []
        self._labels: list[Text] = []
        self._headers: list[Text] = []
        self._cells: list[list[Text]] = []
        self._widths: list[int] = []
        self._starts: list[int] = []
        self._label_width = 0
        self._corner = Text("")
        self._lines: dict[tuple[int, int], tuple[list[Segment], Strip]] = {}
        self.cursor_row = 0
        self.cursor_column = 0

    # --- content ----------------------------------------------------------------------

    def set_grid(
        self,
        corner: Text,
        rows: Sequence[tuple[str, Text]],
        columns: Sequence[tuple[str, Text]],
        cells: Sequence[Sequence[Text]],
    ) -> None:
        """Replace the content, keeping the cursor on the same row and column keys."""
        keep_row = self.row_keys[self.cursor_row] if self.row_keys else None
        keep_column = self.column_keys[self.cursor_column] if self.column_keys else None
        self.row_keys = [key for key, _ in rows]
        self.column_keys = [key for key, _ in columns]
        self._labels = [label for _, label in rows]
        self._headers = [header for _, header in columns]
        self._cells = [list(row) for row in cells]
        self._label_width = max((label.cell_len for label in [corner, *self._labels]),
                                default=0) + 2  # fmt: skip
        self._corner = corner
        self._widths = [
            max([_width(header), *(row[index].cell_len for row in self._cells)]) + 2
            for index, header in enumerate(self._headers)
        ]
        self._starts = []
        offset = 0
        for width in self._widths:
            self._starts.append(offset)
            offset += width
        self._lines.clear()
        self.cursor_row = self.row_keys.index(keep_row) if keep_row in self.row_keys else 0
        self.cursor_column = (
            self.column_keys.index(keep_column) if keep_column in self.column_keys else 0
        )
        self.virtual_size = Size(self._label_width + offset, HEADER_HEIGHT + len(self.row_keys))
        self._show_cursor()
        self.refresh()

    def cell(self, row: str, column: str) -> Text:
        """The text of one cell, by its row and column keys."""
        return self._cells[self.row_keys.index(row)][self.column_keys.index(column)]

    @property
    def cursor_keys(self) -> tuple[str, str] | None:
        if not self.row_keys or not self.column_keys:
            return None
        return self.row_keys[self.cursor_row], self.column_keys[self.cursor_column]

    # --- drawing ------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        if y < HEADER_HEIGHT:
            label, body = self._header_line(y)
        else:
            row = scroll_y + y - HEADER_HEIGHT
            if row >= len(self.row_keys):
                return Strip.blank(width, self.rich_style)
            label, body = self._row_line(row)
        visible = max(0, width - self._label_width)
        line = Strip([*label, *body.crop(scroll_x, scroll_x + visible)])
        return line.adjust_cell_length(width, self.rich_style)

    def _header_line(self, y: int) -> tuple[list[Segment], Strip]:
        key = (-1 - y, self.cursor_column)
        if key not in self._lines:
            header = self.get_component_rich_style("cellgrid--header")
            current = header + self.get_component_rich_style("cellgrid--cursor-header")
            corner = _line_of(self._corner, y) if y == 0 else Text("")
            label = _cell(corner, self._label_width, header)
            parts: list[Segment] = []
            for index, text in enumerate(self._headers):
                style = current if index == self.cursor_column else header
                parts += _cell(_line_of(text, y), self._widths[index], style)
            self._lines[key] = (label, Strip(parts))
        return self._lines[key]

    def _row_line(self, row: int) -> tuple[list[Segment], Strip]:
        cursor = self.cursor_column if row == self.cursor_row else -1
        key = (row, cursor)
        if key not in self._lines:
            base = self.rich_style
            label_style = base + self.get_component_rich_style("cellgrid--label")
            cursor_style = self.get_component_rich_style("cellgrid--cursor")
            label = _cell(self._labels[row], self._label_width, label_style)
            parts: list[Segment] = []
            for index, text in enumerate(self._cells[row]):
                style = base + cursor_style if index == cursor else base
                parts += _cell(text, self._widths[index], style)
            self._lines[key] = (label, Strip(parts))
        return self._lines[key]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()

    # --- the cursor ---------------------------------------------------------------------

    def action_move(self, rows: int, columns: int) -> None:
        self._place(self.cursor_row + rows, self.cursor_column + columns)

    def action_jump(self, column: int) -> None:
        self._place(self.cursor_row, column % max(1, len(self.column_keys)))

    def action_page(self, pages: int) -> None:
        step = max(1, self.size.height - HEADER_HEIGHT - 1)
        self._place(self.cursor_row + pages * step, self.cursor_column)

    def action_select(self) -> None:
        keys = self.cursor_keys
        if keys is not None:
            self.post_message(self.CellSelected(self, *keys))

    def _place(self, row: int, column: int) -> None:
        if not self.row_keys or not self.column_keys:
            return
        row = min(max(row, 0), len(self.row_keys) - 1)
        column = min(max(column, 0), len(self.column_keys) - 1)
        if (row, column) == (self.cursor_row, self.cursor_column):
            return
        old_row, old_column = self.cursor_row, self.cursor_column
        self.cursor_row, self.cursor_column = row, column
        if not self._show_cursor():
            self.refresh_line(HEADER_HEIGHT + old_row)
            self.refresh_line(HEADER_HEIGHT + row)
            if column != old_column:
                self.refresh_lines(self.scroll_offset.y, HEADER_HEIGHT)

    def _show_cursor(self) -> bool:
        """Scroll so the cursor's cell is in view; True when that meant scrolling."""
        if not self.row_keys or not self.column_keys or not self.size.height:
            return False
        x, y = self.scroll_offset
        rows = max(1, self.size.height - HEADER_HEIGHT)
        columns = max(1, self.size.width - self._label_width)
        start = self._starts[self.cursor_column]
        end = start + self._widths[self.cursor_column]
        new_x = start if start < x else (end - columns if end > x + columns else x)
        row = self.cursor_row
        new_y = row if row < y else (row - rows + 1 if row >= y + rows else y)
        if (new_x, new_y) == (x, y):
            return False
        self.scroll_to(max(0, new_x), max(0, new_y), animate=False)
        self.refresh()
        return True

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        x, y = offset
        if y < HEADER_HEIGHT or x < self._label_width:
            return
        row = self.scroll_offset.y + y - HEADER_HEIGHT
        across = self.scroll_offset.x + x - self._label_width
        column = next(
            (i for i, start in enumerate(self._starts) if 0 <= across - start < self._widths[i]),
            None,
        )
        if row >= len(self.row_keys) or column is None:
            return
        if (row, column) == (self.cursor_row, self.cursor_column):
            self.action_select()
        else:
            self._place(row, column)


def _width(text: Text) -> int:
    return max((len(line) for line in text.plain.split("\n")), default=0)


def _line_of(text: Text, y: int) -> Text:
    lines = text.split("\n", allow_blank=True)
    return lines[y] if y < len(lines) else Text("")


def _cell(text: Text, width: int, style: Style) -> list[Segment]:
    """One cell: a space, the text, padding to `width`; `style` lies under the text's own
    colours, so a cursor's background shows through them."""
    content = Text(" ", no_wrap=True, end="")
    content.append_text(text)
    content.truncate(width, pad=True)
    content.style = style
    return list(content.render(_CONSOLE, end=""))


_CONSOLE = Console(width=10_000, color_system=None, legacy_windows=False)
"""Only measures and splits text into segments; nothing is printed with it."""
