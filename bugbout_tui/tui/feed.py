"""Between the engine and the screens: events wait here for the UI's next tick.

The engine (or the journal tailer's thread) pushes every event the moment it happens;
the app takes them in batches on a timer, so a chatty race costs the UI one pass per
tick however many events arrived. `deque.append` and `popleft` are atomic, so a thread
may push while the UI takes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from bugbout_tui.core.events import BaseEvent


@dataclass(frozen=True)
class JournalRestarted:
    """The journal being followed was started afresh by a new run: forget the old one."""


FeedItem = BaseEvent | JournalRestarted


class EventFeed:
    """A queue of events not yet applied to the app's state."""

    def __init__(self) -> None:
        self._items: deque[FeedItem] = deque()

    def push(self, item: FeedItem) -> None:
        self._items.append(item)

    def extend(self, items: list[FeedItem]) -> None:
        self._items.extend(items)

    def __len__(self) -> int:
        return len(self._items)

    def take(self) -> FeedItem | None:
        """The oldest waiting item, or None when the feed is empty."""
        try:
            return self._items.popleft()
        except IndexError:
            return None


class OutputBook:
    """The most recent output lines of every attempt, for the lane logs.

    Lines are numbered from the attempt's first, so a log that has shown `n` of them asks
    for the rest; lines that fell out of the window are simply gone from the view (the
    attempt's log file keeps them all). Lines are kept as the agent printed them; the
    widget that shows them makes them inert.
    """

    def __init__(self, keep: int = 400) -> None:
        self._keep = keep
        self._lines: dict[str, deque[str]] = {}
        self._counts: dict[str, int] = {}

    def add(self, attempt: str, line: str) -> None:
        lines = self._lines.get(attempt)
        if lines is None:
            lines = self._lines[attempt] = deque(maxlen=self._keep)
        lines.append(line)
        self._counts[attempt] = self._counts.get(attempt, 0) + 1

    def count(self, attempt: str) -> int:
        """How many lines the attempt has sent so far."""
        return self._counts.get(attempt, 0)

    def since(self, attempt: str, seen: int) -> list[str]:
        """The lines after the first `seen`, as far as they are still kept."""
        lines = self._lines.get(attempt)
        if lines is None:
            return []
        new = self._counts[attempt] - seen
        if new <= 0:
            return []
        if new >= len(lines):
            return list(lines)
        return list(lines)[-new:]

    def clear(self) -> None:
        self._lines.clear()
        self._counts.clear()
