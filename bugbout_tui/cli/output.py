"""Where and how the CLI writes: results to stdout, messages to stderr.

A terminal gets output fitted to its width: tables fold or leave out columns (see
`report/fitting.py`). A file or a pipe has no width, and a line broken at 80 columns
there breaks `grep` and cuts what a script reads, so nothing written to one is
hard-wrapped: every line of text stays whole, and every table is laid out at its
natural width, however wide that is. Only what fills whatever it is given (a rule)
takes the width rich would have used (`COLUMNS`, else 80).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.rule import Rule
from rich.segment import Segments
from rich.text import Text

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.text import inert
from bugbout_tui.report.fitting import UNBOUNDED


class Output(Console):
    """A console that wraps only for a person at a terminal."""

    def print(self, *objects: Any, **options: Any) -> None:
        """As `Console.print`; to a file or a pipe, without wrapping anything."""
        if self.is_terminal or "width" in options or "soft_wrap" in options:
            super().print(*objects, **options)
        elif all(isinstance(item, str | Text) for item in objects):
            super().print(*objects, soft_wrap=True, **options)
        else:
            for part in chain.from_iterable(_parts(item) for item in objects):
                self._print_whole(part, options)

    def _print_whole(self, part: RenderableType, options: dict[str, Any]) -> None:
        if isinstance(part, str | Text):
            super().print(part, soft_wrap=True, **options)
            return
        natural = Measurement.get(self, self.options.update_width(UNBOUNDED), part).maximum
        fills = isinstance(part, Rule) or natural >= UNBOUNDED  # a rule measures 1 cell
        width = self.width if fills else natural
        lines = self.render_lines(part, self.options.update_width(width), pad=False, new_lines=True)
        super().print(Segments(chain.from_iterable(lines)), crop=False)


def _parts(renderable: Any) -> Iterator[Any]:
    """A group's members one by one, so each is laid out at its own natural width."""
    if isinstance(renderable, Group):
        for member in renderable.renderables:
            yield from _parts(member)
    else:
        yield renderable


stdout = Output(highlight=False)
stderr = Output(stderr=True, highlight=False)


def print_error(exc: BugboutError) -> None:
    """One clear message, then the hint if there is one; never a traceback. Messages
    quote paths, git and agents, so they are made inert first."""
    stderr.print(Text("error: ", style="bold red") + Text(inert(exc.message)), soft_wrap=True)
    if exc.hint:
        stderr.print(Text(inert(exc.hint), style="dim"), soft_wrap=True)
