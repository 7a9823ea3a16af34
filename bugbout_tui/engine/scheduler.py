"""Quota lanes: agents are limited by their plans, not by this machine.

Jobs that share a quota take turns (up to that quota's capacity at once); different
quotas run side by side. Each lane is a queue drained by exactly `capacity` workers,
so a lane can never have more in flight than it is allowed, and the order jobs are
given in is the order each lane starts them — the caller interleaves tasks and agents
to make it fair.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    quota: str
    run: Callable[[], Awaitable[None]]


class QuotaParkedError(Exception):
    """Raised by a job to stop its lane: the quota is spent, later jobs would only fail."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def run_in_lanes(
    jobs: Iterable[Job],
    capacities: Mapping[str, int],
    *,
    on_parked: Callable[[str, str], None] | None = None,
) -> list[Job]:
    """Run every job in its quota's lane; returns the jobs never started (parked lanes).

    A job that raises `QuotaParkedError` parks its lane: no further job of that quota
    starts in this run (they are returned so the caller can record them as waiting).
    Any other exception cancels everything and propagates, as does cancellation.
    """
    queues: dict[str, asyncio.Queue[Job]] = {}
    for job in jobs:
        queues.setdefault(job.quota, asyncio.Queue()).put_nowait(job)
    parked: set[str] = set()
    not_started: list[Job] = []

    async def worker(quota: str, queue: asyncio.Queue[Job]) -> None:
        while not queue.empty():
            job = queue.get_nowait()
            if quota in parked:
                not_started.append(job)
                continue
            try:
                await job.run()
            except QuotaParkedError as exc:
                if quota not in parked:
                    parked.add(quota)
                    if on_parked is not None:
                        on_parked(quota, exc.message)

    async with asyncio.TaskGroup() as group:
        for quota, queue in queues.items():
            for _ in range(max(1, capacities.get(quota, 1))):
                group.create_task(worker(quota, queue))
    return not_started
