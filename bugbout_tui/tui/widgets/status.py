"""The two lines at the top of every screen: where the bout is, and where you are."""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

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

    def show(
        self,
        project: str,
        engine: EngineStatus,
        chips: Text,
        mode: str,
        note: Text | None = None,
    ) -> None:
        first = Text.assemble(("bugbout ", "bold"), (inert_line(project), "bold cyan"), "  ")
        first.append(f"{engine.label}", style=engine.style)
        if engine.elapsed:
            first.append(f" {engine.elapsed}", style="dim")
        if chips.plain:
            first.append("  │  ", style="dim")
            first.append_text(chips)
        first.no_wrap = True
        first.overflow = "ellipsis"
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
