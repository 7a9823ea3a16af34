"""Following the journal (`.bugbout/events.jsonl`) that another run writes.

A run appends one event per line and flushes each one, so a reader only ever has to
hold back an unfinished last line. A new run truncates the file and writes it afresh;
the reader notices because the file shrank or its first line changed, and says so,
so the view can start over instead of mixing two runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from bugbout_tui.core.events import Event, parse_event

HEAD_BYTES = 256
"""How much of the file's start identifies a run (its `bout-started` line)."""


@dataclass
class JournalChunk:
    """What one read found."""

    events: list[Event] = field(default_factory=list)
    restarted: bool = False
    """The file was begun afresh since the last read; `events` start from its top."""
    unreadable: int = 0
    """Lines that were not events (skipped)."""


class LineTail:
    """What a growing file gained since the last look, in whole lines.

    A line still being written waits for its newline, so no line is ever seen in two
    pieces. Used for the journal and for a running attempt's log files.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        """How far the file has been read."""
        self._pending = b""

    def restart(self) -> None:
        """Read from the top again: the file was begun afresh."""
        self.offset, self._pending = 0, b""

    def take(self, handle: BinaryIO) -> list[bytes]:
        """The lines completed since the last look, read from `handle`, open on the file."""
        handle.seek(self.offset)
        data = handle.read()
        self.offset += len(data)
        *lines, self._pending = (self._pending + data).split(b"\n")
        return lines

    def read(self) -> list[bytes]:
        """Open the file and take its new lines; none while it cannot be read."""
        try:
            with self.path.open("rb") as handle:
                return self.take(handle)
        except OSError:
            return []


class JournalReader:
    """Reads the complete lines added to a journal since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tail = LineTail(path)
        self._head = b""

    def read(self) -> JournalChunk:
        chunk = JournalChunk()
        tail = self._tail
        try:
            with self.path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                head = handle.read(min(HEAD_BYTES, size))
                if tail.offset and (size < tail.offset or not head.startswith(self._head)):
                    tail.restart()
                    chunk.restarted = True
                self._head = head
                lines = tail.take(handle)
        except FileNotFoundError:
            if tail.offset:
                tail.restart()
                self._head = b""
                chunk.restarted = True
            return chunk
        for line in lines:
            if not line.strip():
                continue
            try:
                chunk.events.append(parse_event(line))
            except ValidationError:
                chunk.unreadable += 1
        return chunk
