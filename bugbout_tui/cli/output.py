"""Where and how the CLI writes: results to stdout, messages to stderr."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.text import inert

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def print_error(exc: BugboutError) -> None:
    """One clear message, then the hint if there is one; never a traceback. Messages
    quote paths, git and agents, so they are made inert first."""
    stderr.print(Text("error: ", style="bold red") + Text(inert(exc.message)), soft_wrap=True)
    if exc.hint:
        stderr.print(Text(inert(exc.hint), style="dim"), soft_wrap=True)
