"""Quota lanes: agents are limited by their plans, not by this machine.

Jobs that share a quota take turns (up to that quota's capacity at once); different
quotas run side by side. Each lane is a queue drained by exactly `capacity` workers,
so a lane can never have more in flight than it is allowed, and the order jobs are
given in is the order each lane starts them — the caller interleaves tasks and agents
to make it fair.

A lane whose plan runs out parks. Given a time it may wait (`wait_for`), it waits for
its window to reopen instead, while the other lanes go on, and then runs again the
jobs that hit the limit before the ones it never started. Time comes from a `Clock`,
so a test can wait out a five-hour window in no time.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

PROBE_FIRST = timedelta(minutes=5)
"""How long a lane whose agent named no reset time waits before it tries again."""
PROBE_MOST = timedelta(hours=1)
"""The longest pause between two tries; each one that hits the limit again doubles it."""


class Clock(Protocol):
    """What the scheduler knows of time: the wall clock, and waiting for a moment of it."""

    def now(self) -> datetime: ...

    async def sleep_until(self, moment: datetime) -> None: ...


class SystemClock:
    """The machine's clock. A wait is slept in steps of at most a minute, so a machine
    that was suspended, or had its clock set, wakes by the wall clock and not late."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, moment: datetime) -> None:
        while (left := (moment - self.now()).total_seconds()) > 0:
            await asyncio.sleep(min(left, 60.0))


SYSTEM_CLOCK = SystemClock()


@dataclass(frozen=True)
class Job:
    quota: str
    run: Callable[[], Awaitable[None]]


class QuotaParkedError(Exception):
    """Raised by a job to stop its lane: the quota is spent, later jobs would only fail.

    `resets_at` is when the agent said its limit resets, None when it did not say.
    """

    def __init__(self, message: str, resets_at: datetime | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.resets_at = resets_at


@dataclass(frozen=True)
class ClosedWindow:
    """A lane's usage window known to be closed before the run starts (a run that ended
    while it was parked said so), so no job need be spent to find that out again."""

    message: str
    resets_at: datetime


@dataclass(frozen=True)
class Parking:
    """A lane stopping on a usage limit, as its watchers are told."""

    quota: str
    message: str
    resets_at: datetime | None
    """When the agent said the limit resets; None when it did not say."""
    resumes_at: datetime | None
    """When the lane tries again in this run: the reset, or a probe when no time was
    said. None: not in this run (no waiting allowed, or not for that long)."""
    stored: bool = False
    """Known closed before the run (`ClosedWindow`): no job of this run hit it."""


@dataclass
class _Lane:
    quota: str
    jobs: deque[Job] = field(default_factory=deque)
    open: asyncio.Event = field(default_factory=asyncio.Event)
    """Cleared while the lane waits for its window; its workers wait on it."""
    given_up: bool = False
    """Parked for the rest of the run: what is left is returned unstarted."""
    since: datetime | None = None
    """When the lane first hit the limit with no job getting through since."""
    hits: int = 0
    """Limits hit in a row since `since`."""


def next_try(resets_at: datetime | None, hits: int, now: datetime) -> datetime:
    """When a lane that hit its limit `hits` times in a row tries again.

    At the time the agent named. With no time, a probe: after `PROBE_FIRST`, doubling
    with each probe that hits the limit again, up to `PROBE_MOST`. A lane that hits the
    limit again right after its named time (a clock shown to the minute) waits like a
    probe too, so an agent that keeps naming a time already past is not asked again
    and again.
    """
    if resets_at is None:
        return now + _backoff(hits)
    if hits >= 2:
        return max(resets_at, now + _backoff(hits - 1))
    return max(resets_at, now)


def _backoff(probe: int) -> timedelta:
    """The pause before the `probe`-th probe (from 1): doubling, at most `PROBE_MOST`."""
    doubled: timedelta = PROBE_FIRST * 2 ** (probe - 1)
    return min(doubled, PROBE_MOST)


async def run_in_lanes(
    jobs: Iterable[Job],
    capacities: Mapping[str, int],
    *,
    on_parked: Callable[[Parking], None] | None = None,
    on_resumed: Callable[[str], None] | None = None,
    on_requeued: Callable[[Job], None] | None = None,
    wait_for: timedelta | None = None,
    closed: Mapping[str, ClosedWindow] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> list[Job]:
    """Run every job in its quota's lane; returns the jobs never started (parked lanes).

    A job that raises `QuotaParkedError` parks its lane. Without `wait_for`, or when
    the lane would have to wait longer than that since it first hit the limit, no
    further job of that quota starts in this run (they are returned so the caller can
    record them as waiting). Otherwise the lane waits (`next_try`) and resumes, the job
    that hit the limit first (`on_requeued`, then `on_resumed`). A lane in `closed`
    starts parked, waiting or given up by the same rule. Any other exception cancels
    everything and propagates, as does cancellation.
    """
    lanes: dict[str, _Lane] = {}
    for job in jobs:
        lanes.setdefault(job.quota, _Lane(job.quota)).jobs.append(job)
    not_started: list[Job] = []

    def park(group: asyncio.TaskGroup, lane: _Lane, parking: Parking) -> None:
        if parking.resumes_at is None:
            lane.given_up = True
        else:
            lane.open.clear()
            group.create_task(reopen(lane, parking.resumes_at))
        if on_parked is not None:
            on_parked(parking)

    async def reopen(lane: _Lane, moment: datetime) -> None:
        await clock.sleep_until(moment)
        lane.open.set()
        if on_resumed is not None:
            on_resumed(lane.quota)

    def hit(group: asyncio.TaskGroup, lane: _Lane, job: Job, exc: QuotaParkedError) -> None:
        if lane.given_up:
            return
        if lane.open.is_set():
            now = clock.now()
            lane.hits += 1
            lane.since = lane.since or now
            resumes = next_try(exc.resets_at, lane.hits, now)
            waits = wait_for is not None and resumes <= lane.since + wait_for
            park(group, lane, Parking(lane.quota, exc.message, exc.resets_at,
                                      resumes if waits else None))  # fmt: skip
            if not waits:
                return
        # Waiting, by this job or by another one in flight that hit the same limit.
        lane.jobs.appendleft(job)
        if on_requeued is not None:
            on_requeued(job)

    async def worker(group: asyncio.TaskGroup, lane: _Lane) -> None:
        while True:
            await lane.open.wait()
            if lane.given_up:
                not_started.extend(lane.jobs)
                lane.jobs.clear()
                return
            if not lane.jobs:
                return
            job = lane.jobs.popleft()
            try:
                await job.run()
            except QuotaParkedError as exc:
                hit(group, lane, job, exc)
            else:
                lane.hits, lane.since = 0, None

    async with asyncio.TaskGroup() as group:
        now = clock.now()
        for quota, lane in lanes.items():
            lane.open.set()
            window = (closed or {}).get(quota)
            if window is None or window.resets_at <= now:
                continue
            lane.since = now
            waits = wait_for is not None and window.resets_at <= now + wait_for
            resumes = window.resets_at if waits else None
            park(group, lane, Parking(quota, window.message, window.resets_at, resumes, True))
        for quota, lane in lanes.items():
            for _ in range(max(1, capacities.get(quota, 1))):
                group.create_task(worker(group, lane))
    return not_started
