"""Delivering events: to in-process subscribers, and to the journal other processes tail."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from bugbout_tui.core.events import AttemptOutput, BaseEvent
from bugbout_tui.core.store import store_error

Subscriber = Callable[[BaseEvent], None]

LINE_LIMIT = 500
"""Characters of one output line an event carries; the log file keeps the whole line."""
KEPT_JOURNALS = 20
"""Earlier runs' journals kept beside the current one; the oldest go first."""
_HEAD_LIMIT = 4096
"""Bytes of a journal read for its first event, which names when its run started."""


def keep_journal(journal: Path) -> Path | None:
    """Move the last run's journal aside as `events-<its start>.jsonl`, so a run that
    does nothing never costs the journal of one that did. Returns where it went (None
    when there was none), and drops the oldest beyond `KEPT_JOURNALS`.

    A run following the journal (`bugbout-tui --watch`) sees the file begun afresh.
    """
    try:
        if not stat.S_ISREG(os.lstat(journal).st_mode):
            return None  # not a journal this store wrote; opening it says what is wrong
        with journal.open("rb") as handle:
            first = handle.readline(_HEAD_LIMIT)
    except FileNotFoundError:
        return None
    if not first.strip():
        return None
    try:
        started = datetime.fromisoformat(json.loads(first)["at"]).astimezone(UTC)
    except (ValueError, KeyError, TypeError):
        started = datetime.fromtimestamp(journal.stat().st_mtime, UTC)
    stamp = started.strftime("%Y%m%dT%H%M%S%fZ")
    target = journal.with_name(f"{journal.stem}-{stamp}{journal.suffix}")
    count = 1
    while target.exists():
        count += 1
        target = journal.with_name(f"{journal.stem}-{stamp}-{count}{journal.suffix}")
    os.replace(journal, target)
    kept = sorted(journal.parent.glob(f"{journal.stem}-*{journal.suffix}"))
    for old in kept[:-KEPT_JOURNALS]:
        old.unlink(missing_ok=True)
    return target


class EventBus:
    """Fan-out of events, with output lines thinned per attempt.

    An agent can print thousands of lines a second; every line is in its log file, so
    the bus passes on at most `lines_per_second` per attempt and keeps the newest
    skipped line for its next slot, which keeps "last line" displays truthful. The slot
    is a timer on the loop that printed the line, so a burst followed by silence still
    shows its last line a moment later, not when the attempt ends.
    """

    def __init__(self, journal: Path | None = None, *, lines_per_second: float = 20.0) -> None:
        self._subscribers: list[Subscriber] = []
        self._journal: IO[str] | None = None
        self._journal_path: Path | None = None
        if journal is not None:
            self.open_journal(journal)
        self._interval = 1.0 / lines_per_second
        self._last_sent: dict[str, float] = {}
        self._held: dict[str, tuple[Literal["stdout", "stderr"], str]] = {}
        self._skipped: dict[str, int] = {}
        self._slots: dict[str, asyncio.TimerHandle] = {}
        """attempt → the timer that sends its held line when its slot comes."""
        self._failure: Exception | None = None
        """What a timer's delivery raised, for the next event to raise (see `_send_held`)."""

    def open_journal(self, journal: Path) -> None:
        """Start the journal afresh, the last run's kept beside it (`keep_journal`); only
        the holder of the store's lock may do this."""
        try:
            journal.parent.mkdir(parents=True, exist_ok=True)
            keep_journal(journal)
            self._journal = journal.open("w", encoding="utf-8")
        except OSError as exc:
            raise store_error(exc, journal) from None
        self._journal_path = journal

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def emit(self, event: BaseEvent) -> None:
        if isinstance(event, AttemptOutput):
            self.output(event.attempt, event.stream, event.line)
            return
        self._deliver(event)

    def output(self, attempt: str, stream: Literal["stdout", "stderr"], line: str) -> None:
        """One line an agent printed; the event is built only for lines that get through,
        so a flood of output costs a counter per line, not an object."""
        now = time.monotonic()
        last = self._last_sent.get(attempt)
        wait = 0.0 if last is None else last + self._interval - now
        if wait <= 0:
            skipped = self._skipped.pop(attempt, 0)
            self._held.pop(attempt, None)
            self._last_sent[attempt] = now
            self._deliver(
                AttemptOutput(
                    attempt=attempt, stream=stream, line=line[:LINE_LIMIT], skipped=skipped
                )
            )
        else:
            self._held[attempt] = (stream, line)
            self._skipped[attempt] = self._skipped.get(attempt, 0) + 1
            if attempt not in self._slots:
                self._hold_until_slot(attempt, wait)

    def flush_output(self, attempt: str) -> None:
        """Send the newest held line of an attempt, e.g. just before it finishes."""
        slot = self._slots.pop(attempt, None)
        if slot is not None:
            slot.cancel()
        held = self._held.pop(attempt, None)
        if held is not None:
            skipped = self._skipped.pop(attempt, 0)
            stream, line = held
            self._deliver(
                AttemptOutput(
                    attempt=attempt,
                    stream=stream,
                    line=line[:LINE_LIMIT],
                    skipped=max(skipped - 1, 0),
                )
            )
            self._last_sent[attempt] = time.monotonic()

    def _hold_until_slot(self, attempt: str, wait: float) -> None:
        """Have the loop send `attempt`'s held line in `wait` seconds. Outside a loop (a
        caller feeding the bus by hand) the line waits for `flush_output` instead."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._slots[attempt] = loop.call_later(wait, self._send_held, attempt)

    def _send_held(self, attempt: str) -> None:
        """The timer's delivery. Nobody awaits a timer, so what it raises (a journal that
        cannot be written) is kept and raised by the bus's next event instead of being
        lost to the loop's log: the run stops on it as if the line had come in time."""
        self._slots.pop(attempt, None)
        try:
            self.flush_output(attempt)
        except Exception as exc:  # kept for the next event to raise
            self._failure = exc

    def close(self) -> None:
        """Stop the timers, send every held line and close the journal."""
        for slot in self._slots.values():
            slot.cancel()
        self._slots.clear()
        for attempt in list(self._held):
            self.flush_output(attempt)
        if self._journal is not None:
            journal, self._journal = self._journal, None
            try:
                journal.close()
            except OSError as exc:
                assert self._journal_path is not None
                raise store_error(exc, self._journal_path) from None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _deliver(self, event: BaseEvent) -> None:
        """To the journal, then to every subscriber.

        A journal that cannot be written (a full disk) is closed, the subscribers still
        get the event, and a `StoreError` naming the file stops the run: once; the
        events after it, the run's ending among them, reach the subscribers alone.
        """
        failure, self._failure = self._failure, None
        if self._journal is not None:
            try:
                self._journal.write(event.model_dump_json() + "\n")
                self._journal.flush()
            except OSError as exc:
                assert self._journal_path is not None
                failure = store_error(exc, self._journal_path)
                with contextlib.suppress(OSError):  # it closes even when its flush fails
                    self._journal.close()
                self._journal = None
        for subscriber in list(self._subscribers):
            subscriber(event)
        if failure is not None:
            raise failure
