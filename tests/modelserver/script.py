"""What a scripted model says, independent of how any one API spells it.

A script is a list of turns. Each model call the agent makes consumes the next turn, and
the turn becomes that call's answer in the agent's own wire format: a call of the agent's
own read, shell, edit or write tool, then a closing message, or the provider's
usage-limit error instead of an answer. Paths are relative to the agent's working
directory; a dialect makes them absolute where the agent's tools need that, from the
working directory the agent itself announces in its first call.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Usage:
    """Tokens one answer reports, counted the way bugbout records them: `input` includes
    the `cached` prompt tokens; each dialect splits them as its API does."""

    input: int = 0
    output: int = 0
    cached: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input, self.output + other.output, self.cached + other.cached
        )


STEP_USAGE = Usage(input=1200, output=40, cached=800)
"""What a tool-calling answer reports unless its turn says otherwise."""


@dataclass(frozen=True)
class Read:
    """Read a file with the agent's file-reading tool (`cat` where it has none)."""

    path: str
    usage: Usage = STEP_USAGE


@dataclass(frozen=True)
class Shell:
    """Run a command with the agent's shell tool."""

    command: str
    usage: Usage = STEP_USAGE


@dataclass(frozen=True)
class Edit:
    """Replace `old` with `new` in a file, with the agent's editing tool."""

    path: str
    old: str
    new: str
    usage: Usage = STEP_USAGE


@dataclass(frozen=True)
class Write:
    """Create a file with the agent's file-writing tool."""

    path: str
    content: str
    usage: Usage = STEP_USAGE


@dataclass(frozen=True)
class Finish:
    """Stop, with a closing message."""

    message: str
    usage: Usage = field(default_factory=lambda: Usage(input=2500, output=120, cached=2000))


@dataclass(frozen=True)
class Limit:
    """Answer with the provider's usage-limit error, in its real shape."""


Turn = Read | Shell | Edit | Write | Finish | Limit
