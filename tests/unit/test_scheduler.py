"""Quota lanes: parallel across quotas, bounded within one, parked on a usage limit."""

from __future__ import annotations

import asyncio
import time

import pytest

from bugbout_tui.engine.scheduler import Job, QuotaParkedError, run_in_lanes


def _recording_job(quota: str, name: str, spans: dict[str, tuple[float, float]]) -> Job:
    async def run() -> None:
        start = time.monotonic()
        await asyncio.sleep(0.05)
        spans[name] = (start, time.monotonic())

    return Job(quota=quota, run=run)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_two_quotas_run_in_parallel_and_one_quota_takes_turns() -> None:
    spans: dict[str, tuple[float, float]] = {}
    jobs = [
        _recording_job("codex", "c1", spans),
        _recording_job("claude", "a1", spans),
        _recording_job("codex", "c2", spans),
        _recording_job("claude", "a2", spans),
    ]
    asyncio.run(run_in_lanes(jobs, {}))
    assert _overlap(spans["c1"], spans["a1"])
    assert not _overlap(spans["c1"], spans["c2"])
    assert not _overlap(spans["a1"], spans["a2"])
    assert spans["c1"][1] <= spans["c2"][0]


def test_capacity_two_allows_two_at_once_and_never_three() -> None:
    in_flight = 0
    peak = 0

    async def run() -> None:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1

    asyncio.run(run_in_lanes([Job("codex", run) for _ in range(7)], {"codex": 2}))
    assert peak == 2


def test_a_parked_lane_starts_nothing_more_but_others_go_on() -> None:
    ran: list[str] = []
    parked: list[tuple[str, str]] = []

    def job(quota: str, name: str, *, limit: bool = False) -> Job:
        async def run() -> None:
            ran.append(name)
            if limit:
                raise QuotaParkedError("You've hit your usage limit")

        return Job(quota, run)

    left = asyncio.run(
        run_in_lanes(
            [job("q", "q1", limit=True), job("q", "q2"), job("r", "r1"), job("r", "r2")],
            {},
            on_parked=lambda quota, message: parked.append((quota, message)),
        )
    )
    assert ran == ["q1", "r1", "r2"] or sorted(ran) == ["q1", "r1", "r2"]
    assert [j.quota for j in left] == ["q"]
    assert parked == [("q", "You've hit your usage limit")]


def test_a_failing_job_cancels_the_rest() -> None:
    async def boom() -> None:
        raise RuntimeError("broken")

    async def slow() -> None:
        await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(ExceptionGroup):
        asyncio.run(run_in_lanes([Job("a", boom), Job("b", slow)], {}))
    assert time.monotonic() - started < 10
