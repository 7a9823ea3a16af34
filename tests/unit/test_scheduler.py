"""Quota lanes: parallel across quotas, bounded within one, parked on a usage limit,
waiting out a usage window and resuming, under a clock whose hours take milliseconds."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

import pytest
from fakeclock import START, FakeClock

from bugbout_tui.engine.scheduler import (
    ClosedWindow,
    Job,
    Parking,
    QuotaParkedError,
    next_try,
    run_in_lanes,
)


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
            on_parked=lambda p: parked.append((p.quota, p.message, p.resumes_at)),
        )
    )
    assert ran == ["q1", "r1", "r2"] or sorted(ran) == ["q1", "r1", "r2"]
    assert [j.quota for j in left] == ["q"]
    assert parked == [("q", "You've hit your usage limit", None)]


def test_a_failing_job_cancels_the_rest() -> None:
    async def boom() -> None:
        raise RuntimeError("broken")

    async def slow() -> None:
        await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(ExceptionGroup):
        asyncio.run(run_in_lanes([Job("a", boom), Job("b", slow)], {}))
    assert time.monotonic() - started < 10


# --- waiting out a usage window ----------------------------------------------------------


class Plan:
    """Lane q's plan as its vendor keeps it: spent until `resets_at`, if that is set;
    lane r's is not. Each job run on it is logged by name with the (fake) time it started at."""

    def __init__(self, clock: FakeClock, resets_at: datetime | None, *, says: bool = True):
        self.clock = clock
        self.resets_at = resets_at
        self.says = says
        """Whether its limit message names the reset time."""
        self.log: list[tuple[str, datetime]] = []

    def job(self, quota: str, name: str) -> Job:
        async def run() -> None:
            self.log.append((name, self.clock.now()))
            await asyncio.sleep(0.001)
            spent = self.resets_at is not None and self.clock.now() < self.resets_at
            if quota == "q" and spent:
                resets = self.resets_at if self.says else None  # lane q's plan is spent
                raise QuotaParkedError("You've hit your usage limit", resets)

        return Job(quota, run)

    def ran(self, quota_prefix: str) -> list[str]:
        return [name for name, _ in self.log if name.startswith(quota_prefix)]


class Watch:
    def __init__(self) -> None:
        self.parked: list[Parking] = []
        self.resumed: list[str] = []
        self.requeued: list[Job] = []

    def run(
        self,
        jobs: list[Job],
        capacities: dict[str, int],
        clock: FakeClock,
        *,
        wait_for: timedelta | None = None,
        closed: dict[str, ClosedWindow] | None = None,
    ) -> list[Job]:
        return asyncio.run(
            run_in_lanes(
                jobs,
                capacities,
                on_parked=self.parked.append,
                on_resumed=self.resumed.append,
                on_requeued=self.requeued.append,
                wait_for=wait_for,
                closed=closed,
                clock=clock,
            )
        )


def lanes(
    plan: Plan,
    watch: Watch,
    *,
    clock: FakeClock,
    wait_for: timedelta | None = None,
    closed: dict[str, ClosedWindow] | None = None,
) -> list[Job]:
    jobs = [plan.job("q", "q1"), plan.job("r", "r1"), plan.job("q", "q2"),
            plan.job("r", "r2"), plan.job("q", "q3")]  # fmt: skip
    return watch.run(jobs, {}, clock, wait_for=wait_for, closed=closed)


def test_a_lane_waits_for_the_stated_reset_and_resumes_with_the_job_that_hit_it() -> None:
    clock = FakeClock()
    resets = START + timedelta(hours=3)
    plan = Plan(clock, resets)
    watch = Watch()
    started = time.monotonic()
    left = lanes(plan, watch, wait_for=timedelta(hours=6), clock=clock)
    assert time.monotonic() - started < 5, "three hours of waiting took real time"
    assert left == []
    # q1 hit the limit, ran again once the window reopened, then the rest of the lane
    assert plan.ran("q") == ["q1", "q1", "q2", "q3"]
    assert [at for name, at in plan.log if name.startswith("q")][1:] == [resets] * 3
    # the other lane went on meanwhile, at the time the limit was hit
    assert [at for name, at in plan.log if name.startswith("r")] == [START, START]
    (parked,) = watch.parked
    assert (parked.quota, parked.resets_at, parked.resumes_at) == ("q", resets, resets)
    assert watch.resumed == ["q"]
    assert len(watch.requeued) == 1
    assert clock.slept == [resets]


def test_a_reset_further_off_than_wait_for_parks_the_lane_for_the_run() -> None:
    clock = FakeClock()
    resets = START + timedelta(hours=7)
    plan = Plan(clock, resets)
    watch = Watch()
    left = lanes(plan, watch, wait_for=timedelta(hours=6), clock=clock)
    assert plan.ran("q") == ["q1"]
    assert [job.quota for job in left] == ["q", "q"]
    (parked,) = watch.parked
    assert (parked.resets_at, parked.resumes_at) == (resets, None)
    assert watch.resumed == [] and watch.requeued == [] and clock.slept == []


def test_without_wait_for_a_stated_reset_changes_nothing() -> None:
    clock = FakeClock()
    plan = Plan(clock, START + timedelta(minutes=1))
    watch = Watch()
    left = lanes(plan, watch, clock=clock)
    assert plan.ran("q") == ["q1"] and len(left) == 2
    assert watch.parked[0].resumes_at is None and clock.slept == []


def test_a_lane_told_no_reset_time_probes_with_a_doubling_backoff_within_wait_for() -> None:
    clock = FakeClock()
    plan = Plan(clock, START + timedelta(minutes=20), says=False)
    watch = Watch()
    left = lanes(plan, watch, wait_for=timedelta(hours=1), clock=clock)
    # probes after 5 min, then 10 more: at 5 min and 15 min still spent, at 35 min open
    assert clock.slept == [START + timedelta(minutes=m) for m in (5, 15, 35)]
    assert plan.ran("q") == ["q1", "q1", "q1", "q1", "q2", "q3"]
    assert left == [] and watch.resumed == ["q"] * 3
    assert [p.resumes_at for p in watch.parked] == clock.slept


def test_probing_gives_up_once_the_next_probe_would_pass_wait_for() -> None:
    clock = FakeClock()
    plan = Plan(clock, START + timedelta(hours=5), says=False)
    watch = Watch()
    left = lanes(plan, watch, wait_for=timedelta(minutes=30), clock=clock)
    # 5 and 15 minutes in it is still spent; the next probe, at 35, is past 30
    assert clock.slept == [START + timedelta(minutes=5), START + timedelta(minutes=15)]
    assert plan.ran("q") == ["q1", "q1", "q1"]
    assert [job.quota for job in left] == ["q", "q"]
    assert watch.parked[-1].resumes_at is None


def test_jobs_in_flight_that_hit_the_limit_while_the_lane_waits_run_again_too() -> None:
    clock = FakeClock()
    resets = START + timedelta(hours=1)
    plan = Plan(clock, resets)
    watch = Watch()
    jobs = [plan.job("q", f"q{i}") for i in range(1, 5)]
    left = watch.run(jobs, {"q": 2}, clock, wait_for=timedelta(hours=2))
    assert left == []
    assert sorted(plan.ran("q")[:2]) == ["q1", "q2"]
    assert sorted(plan.ran("q")[2:4]) == ["q1", "q2"] and plan.ran("q")[4:] == ["q3", "q4"]
    assert len(watch.parked) == 1 and len(watch.requeued) == 2 and watch.resumed == ["q"]


def test_a_window_known_closed_waits_before_starting_anything() -> None:
    clock = FakeClock()
    resets = START + timedelta(hours=2)
    plan = Plan(clock, None)
    watch = Watch()
    closed = {"q": ClosedWindow("You've hit your usage limit", resets)}
    left = lanes(plan, watch, wait_for=timedelta(hours=3), closed=closed, clock=clock)
    assert left == []
    assert [at for name, at in plan.log if name.startswith("q")] == [resets] * 3
    assert [at for name, at in plan.log if name.startswith("r")] == [START, START]
    (parked,) = watch.parked
    assert parked.stored and parked.resumes_at == resets
    assert watch.resumed == ["q"]


def test_a_window_known_closed_beyond_wait_for_starts_none_of_its_lane() -> None:
    clock = FakeClock()
    plan = Plan(clock, None)
    watch = Watch()
    closed = {"q": ClosedWindow("limit", START + timedelta(hours=2))}
    for wait_for in (None, timedelta(hours=1)):
        left = lanes(plan, watch, wait_for=wait_for, closed=closed, clock=clock)
        assert plan.ran("q") == [] and [job.quota for job in left] == ["q"] * 3
    assert [p.resumes_at for p in watch.parked] == [None, None]


def test_a_window_that_has_passed_is_forgotten() -> None:
    clock = FakeClock()
    plan = Plan(clock, None)
    watch = Watch()
    closed = {"q": ClosedWindow("limit", START - timedelta(seconds=1))}
    assert lanes(plan, watch, closed=closed, clock=clock) == []
    assert plan.ran("q") == ["q1", "q2", "q3"] and watch.parked == []


def test_the_next_try_after_a_reset_already_past_backs_off() -> None:
    now = START
    assert next_try(now + timedelta(hours=1), 1, now) == now + timedelta(hours=1)
    assert next_try(now - timedelta(seconds=30), 1, now) == now  # due: try at once
    # hit again right after: that clock shows minutes; wait like a probe
    assert next_try(now - timedelta(seconds=30), 2, now) == now + timedelta(minutes=5)
    assert next_try(now + timedelta(hours=1), 3, now) == now + timedelta(hours=1)
    assert next_try(None, 1, now) == now + timedelta(minutes=5)
    assert next_try(None, 9, now) == now + timedelta(hours=1)
