"""The usage windows of quota lanes, kept across runs in the store's `lanes.json`.

A lane that parks on a limit with a stated reset time is written down; a run started
before that time knows the window is closed without starting an agent to find out. A
window is forgotten once a lane resumes, and when it is read after its reset time.
"""

from __future__ import annotations

from datetime import datetime

from bugbout_tui.core.models import LaneWindow, LaneWindows
from bugbout_tui.core.store import Store
from bugbout_tui.engine.scheduler import ClosedWindow


class WindowBook:
    """One store's record of closed lane windows."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def closed(self, now: datetime) -> dict[str, ClosedWindow]:
        """The windows still closed at `now`; the record drops the ones that passed."""
        record = self._read()
        still = {quota: w for quota, w in record.lanes.items() if w.resets_at > now}
        if still != record.lanes:
            self._write(LaneWindows(lanes=still))
        return {quota: ClosedWindow(w.message, w.resets_at) for quota, w in still.items()}

    def close(self, quota: str, message: str, resets_at: datetime, said_at: datetime) -> None:
        record = self._read()
        record.lanes[quota] = LaneWindow(message=message, resets_at=resets_at, said_at=said_at)
        self._write(record)

    def reopen(self, quota: str) -> None:
        record = self._read()
        if record.lanes.pop(quota, None) is not None:
            self._write(record)

    def _read(self) -> LaneWindows:
        return self.store.read(self.store.lanes_path, LaneWindows) or LaneWindows()

    def _write(self, record: LaneWindows) -> None:
        if record.lanes or self.store.lanes_path.exists():
            self.store.write(self.store.lanes_path, record)
