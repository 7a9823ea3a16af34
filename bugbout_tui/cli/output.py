"""Where and how the CLI writes: results to stdout, messages to stderr."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from bugbout_tui.core.errors import BugboutError

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def print_error(exc: BugboutError) -> None:
    """One clear message, then the hint if there is one; never a traceback."""
    stderr.print(Text("error: ", style="bold red") + Text(exc.message), soft_wrap=True)
    if exc.hint:
        stderr.print(Text(exc.hint, style="dim"), soft_wrap=True)
