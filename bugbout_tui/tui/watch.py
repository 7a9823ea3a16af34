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


class JournalReader:
    """Reads the complete lines added to a journal since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._pending = b""
        self._head = b""

    def read(self) -> JournalChunk:
        chunk = JournalChunk()
        try:
            with self.path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                head = handle.read(min(HEAD_BYTES, size))
                if self._offset and (size < self._offset or not head.startswith(self._head)):
                    self._offset, self._pending = 0, b""
                    chunk.restarted = True
                self._head = head
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            if self._offset:
                self._offset, self._pending, self._head = 0, b"", b""
                chunk.restarted = True
            return chunk
        self._offset += len(data)
        data = self._pending + data
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            try:
                chunk.events.append(parse_event(line))
            except ValidationError:
                chunk.unreadable += 1
        return chunk
