"""A clock for the scheduler whose waits take milliseconds: a lane can wait out a
five-hour usage window in a test, and the test can see what it waited for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """Stands still until something sleeps; a sleep lasts `pause` real seconds (so the
    other lanes' work goes on meanwhile), then the clock jumps to the moment waited for.

    `on_wake` is called with that moment as the clock gets there: a test resets an
    agent's plan there, as its vendor would at that time.
    """

    def __init__(
        self,
        start: datetime = START,
        *,
        pause: float = 0.05,
        on_wake: Callable[[datetime], None] | None = None,
    ) -> None:
        self.moment = start
        self.pause = pause
        self.on_wake = on_wake
        self.slept: list[datetime] = []
        """Every moment a sleep was for, in order."""

    def now(self) -> datetime:
        return self.moment

    async def sleep_until(self, moment: datetime) -> None:
        self.slept.append(moment)
        await asyncio.sleep(self.pause)
        if moment > self.moment:
            self.moment = moment
            if self.on_wake is not None:
                self.on_wake(moment)
