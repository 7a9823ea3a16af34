"""The two lines at the top of every screen, and the footer of keys at the bottom."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

from bugbout_tui.core.text import inert_line


@dataclass(frozen=True)
class ModeInfo:
    """One of the six screens, as the header's tabs and the bindings name it."""

    name: str
    title: str
    key: str
    tooltip: str


MODES: tuple[ModeInfo, ...] = (
    ModeInfo("config", "Config", "1", "Edit bugbout.toml, validated as you type"),
    ModeInfo("tasks", "Tasks", "2", "Review the mined bugs: accept or exclude them"),
    ModeInfo("race", "Race", "3", "Watch every agent work, lane by lane"),
    ModeInfo("matrix", "Matrix", "4", "Every author's tests on every patch"),
    ModeInfo("verdicts", "Verdicts", "5", "The judge's pick per bug, rule by rule"),
    ModeInfo("report", "Report", "6", "The report, and its export"),
)


@dataclass(frozen=True)
class EngineStatus:
    """What the header says about the engine, worked out by the app."""

    label: str
    style: str
    elapsed: str = ""


def mode_tabs(current: str) -> Text:
    """The six screens with their keys; the current one highlighted, each clickable."""
    tabs = Text()
    for mode in MODES:
        click = Style.from_meta({"@click": f"app.goto('{mode.name}')"})
        if mode.name == current:
            tabs.append(f" {mode.key} {mode.title} ", style=Style(bold=True, reverse=True) + click)
        else:
            tabs.append(f" {mode.key} ", style=Style(bold=True, color="cyan") + click)
            tabs.append(f"{mode.title} ", style=click)
        tabs.append(" ")
    return tabs


class StatusHeader(Static):
    """Project, engine, stages on the first line; the screens as tabs on the second."""

    DEFAULT_CSS = """
    StatusHeader {
        dock: top;
        height: 2;
        background: $panel;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    _shown: tuple[str, EngineStatus, Text, str, Text | None, Text | None] | None = None
    """What was last shown, to show again at a new width."""

    def show(
        self,
        project: str,
        engine: EngineStatus,
        chips: Text,
        mode: str,
        note: Text | None = None,
        *,
        compact_chips: Text | None = None,
    ) -> None:
        """`compact_chips` stand in for `chips` when the full line would not fit: the
        stages are the line's end, and the part an ellipsis would take."""
        self._shown = (project, engine, chips, mode, note, compact_chips)
        first = self._first_line(project, engine, chips, brand=True)
        room = self.content_size.width
        if compact_chips is not None and room and first.cell_len > room:
            first = self._first_line(project, engine, compact_chips, brand=False)
        second = mode_tabs(mode)
        if note is not None:
            second.append("  ")
            second.append_text(note)
        second.no_wrap = True
        second.overflow = "ellipsis"
        lines = Text("\n").join([first, second])
        lines.no_wrap = True
        lines.overflow = "ellipsis"
        self.update(lines, layout=False)  # docked, two lines: its size never changes

    def on_resize(self) -> None:
        if self._shown is not None:
            project, engine, chips, mode, note, compact_chips = self._shown
            self.show(project, engine, chips, mode, note, compact_chips=compact_chips)

    @staticmethod
    def _first_line(project: str, engine: EngineStatus, chips: Text, *, brand: bool) -> Text:
        first = Text("bugbout ", style="bold") if brand else Text()
        first.append(inert_line(project), style="bold cyan")
        first.append("  ")
        first.append(f"{engine.label}", style=engine.style)
        if engine.elapsed:
            first.append(f" {engine.elapsed}", style="dim")
        if chips.plain:
            first.append("  │  " if brand else " │ ", style="dim")
            first.append_text(chips)
        first.no_wrap = True
        first.overflow = "ellipsis"
        return first


ALWAYS_SHOWN = frozenset({"start", "stop", "keys", "quit"})
"""The app's own actions the footer never drops: how to start or stop the bout, where
every other key is listed, and the way out."""


class BoutFooter(Footer):
    """Textual's compact footer, made to fit its width rather than cut at it.

    When the keys do not fit, the footer gives up what matters least first: the screens'
    numbers (the header's tabs show them), then the palette's word (its key stays), then
    the screen's own keys from the last. Start or stop, keys and quit always stay; the
    keys help (?) lists everything.
    """

    def __init__(self) -> None:
        super().__init__(compact=True)
        self._palette_word = ""
        """The palette key's word, kept while the footer is too narrow for it."""

    async def recompose(self) -> None:
        await super().recompose()
        self._fit()

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        room = self.content_size.width
        if not room or not self.is_attached:
            return
        flow: list[Widget] = []
        palette: FooterKey | None = None
        for child in self.children:
            child.display = True
            if isinstance(child, FooterKey) and child.has_class("-command-palette"):
                palette = child
            else:
                flow.append(child)
        if palette is not None:
            self._palette_word = palette.description or self._palette_word
            palette.description = self._palette_word
        used = sum(map(_width, flow)) + (_width(palette) if palette is not None else 0)
        room += 1  # the last key's margin may fall under the palette's: it is blank
        for give_up in self._least_needed(flow, palette):
            if used <= room:
                break
            used -= give_up()
        word = 1 + cell_len(self._palette_word)
        if palette is not None and not palette.description and used + word <= room:
            palette.description = self._palette_word  # a dropped key left room for it
        self.refresh(layout=True)

    def _least_needed(
        self, flow: list[Widget], palette: FooterKey | None
    ) -> list[Callable[[], int]]:
        """What may go, least needed first; each call hides one thing and says how many
        cells that freed."""
        steps: list[Callable[[], int]] = []
        grouped = [w for w in flow if isinstance(w, (KeyGroup, FooterLabel))]
        steps.extend(_hider(widget) for widget in grouped)
        if palette is not None and palette.description:

            def shorten(key: FooterKey = palette) -> int:
                freed = 1 + cell_len(key.description)
                key.description = ""
                key.refresh(layout=True)
                return freed

            steps.append(shorten)
        own = [w for w in flow if isinstance(w, FooterKey) and w.action not in ALWAYS_SHOWN]
        steps.extend(_hider(widget) for widget in reversed(own))
        return steps


def _hider(widget: Widget) -> Callable[[], int]:
    def hide() -> int:
        freed = _width(widget)
        widget.display = False
        return freed

    return hide


def _width(widget: Widget) -> int:
    """Cells a footer item takes, margin included, worked out without a layout pass."""
    if isinstance(widget, KeyGroup):
        inner = sum(_width(child) for child in widget.children)
    elif isinstance(widget, FooterKey):
        inner = cell_len(widget.key_display)
        if widget.description:
            inner += 1 + cell_len(widget.description)
    else:
        inner = widget.get_content_width(widget.app.size, widget.app.size)
    return inner + widget.styles.gutter.width + widget.styles.margin.width
