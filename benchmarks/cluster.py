"""What sending the test runs to a Dask cluster costs: the demo's test stages on this
machine alone, on a cold cluster of two workers, and on the same cluster warm.

The demo bout (its scripted agents, offline) is run once to the end of its race, so
every configuration tests the same tasks and the same patches. Then, each round, the
stages that run pytest (ground truth, the cross-examination, scoring with its gold
control) run from an empty store three ways:

- local: on this machine, as many runs at once as it has cores;
- cold: a fresh `dask scheduler` and two `dask worker` processes on 127.0.0.1, one
  thread each, each with an empty `BUGBOUT_HOME` (and uv cache) of its own, so the
  repository travels to each as a bundle and each makes its own trees and environment;
- warm: the same cluster again, as the next bout finds it, with all of that kept.

The demo as written runs its tests with the interpreter running it, which a worker
finds at the same path and need not build (`--environment interpreter`). By default
the project's environment is built instead (`--environment built`: pytest installed by
uv from a package index this benchmark serves on 127.0.0.1), as a project's usually is,
so that each cold worker builds its own from what the coordinator's holds.

It prints each configuration's time and its ratio to local (the target: warm at most
1.15 × local); where a cluster's time goes (connecting and bundling, the repository's
trip to each worker, the workers' setup of repository, trees and environment, the test
runs themselves, and the rest); and the cost model T(N) = F + W / (N · t) (F the
bout's fixed overhead, W the work the units spread over N workers of t threads) made
from those parts, its T(2) against the measured time. The workers share this machine's
cores with the coordinator: the figures show what the cluster path costs, not what
more machines would gain.

    python benchmarks/cluster.py [--repeat 3] [--tasks N] [--environment built] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from benchkit.options import parse_args

from bugbout_tui.core.events import BaseEvent, TestRunFinished
from bugbout_tui.core.models import Attempt, Matrix, OracleSet, ResolutionSet, Task
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.demo.project import build_demo
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.cluster import ENV_VAR, Cluster, distributed_api, scheduler_workers
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.environments import Environments
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.ground_truth import GroundTruth
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.score import Scoring
from bugbout_tui.infra.cluster_units import TestUnit, UnitResult
from bugbout_tui.infra.package_index import PackageIndex
from bugbout_tui.infra.sandbox import select_sandbox

T = TypeVar("T")

DASK = str(Path(sys.executable).with_name("dask"))
WORKERS = 2
THREADS = 1
"""Threads per worker: the workers share this machine's cores with the coordinator, and
the brief's machine has two."""
TARGET = 1.15
"""The warm cluster's time over the local one that the cluster path aims at."""
WINDOW = 5.0
"""The rationed agent's refill, shorter than the demo's, so the race it sets up waits less."""
STAGES = ("ground truth", "examine", "score")
CONFIGURATIONS = ("local", "cold", "warm")
ENVIRONMENTS = {"built": "an environment uv builds", "interpreter": "this interpreter"}


@dataclass(frozen=True)
class Demo:
    """The raced demo every configuration tests."""

    project: Project
    repo: Path
    tasks: list[Task]
    """The mined tasks, which ground truth runs."""
    scored: list[Task]
    """The tasks ground truth scored, which were raced and are examined and scored."""
    attempts: dict[str, list[Attempt]]
    vendors: dict[str, str]


@dataclass
class Unit:
    """One unit as the coordinator saw it; seconds throughout."""

    started: float
    worker: str = ""
    wall: float = 0.0
    """From its submission to its result, as the stage waited for it."""
    setup: float = 0.0
    """The worker's repository, tree and environment before pytest (`setup_seconds`)."""
    pytest: float = 0.0
    """Its test runs, as they timed themselves."""
    asked: float = 0.0
    """Lost to the round trip in which the worker asked for the repository (0: it had it)."""
    bundle: int = 0
    """Bytes of repository the unit carried."""


_UNIT: ContextVar[Unit | None] = ContextVar("unit", default=None)
"""The unit being sent in this task, so that the bundle it comes to carry is put to it."""


class TimedCluster(Cluster):
    """The bout's cluster, noting every unit's times as its result comes back: the
    result is where the worker's setup is told, and it is not stored anywhere."""

    def __init__(self, address: str, repo: Path, bus: EventBus) -> None:
        super().__init__(address, repo, bus)
        self.units: list[Unit] = []

    async def run(self, unit: TestUnit, *, on: str | None = None) -> UnitResult:
        noted = Unit(time.monotonic())
        token = _UNIT.set(noted)
        try:
            result = await super().run(unit, on=on)
        finally:
            _UNIT.reset(token)
        noted.wall = time.monotonic() - noted.started
        noted.worker = result.worker
        noted.setup = result.setup_seconds
        noted.pytest = sum(run.duration for run in result.runs.values())
        self.units.append(noted)
        return result

    async def bundle_bytes(self) -> bytes:
        data = await super().bundle_bytes()
        if (noted := _UNIT.get()) is not None:
            noted.asked = time.monotonic() - noted.started
            noted.bundle = len(data)
        return data


@dataclass
class Measurement:
    """One configuration's test stages."""

    stages: dict[str, float] = field(default_factory=dict)
    connect: float = 0.0
    """Connecting to the scheduler and bundling the repository (a cluster's only)."""
    runs: list[TestRunFinished] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    busy: float = 0.0
    """Thread-seconds the workers spent in the bout's tasks, by the scheduler's record of
    them: what the units cost the workers, without their wait for a free thread."""
    results: object = None

    @property
    def total(self) -> float:
        return self.connect + sum(self.stages.values())


def prepare(root: Path, tasks: int | None, environment: str) -> Demo:
    """The demo, raced once on this machine alone (`tasks`: how many to mine, or all),
    its tests run with this interpreter or in an `environment` it builds."""
    demo = build_demo(root / "demo", window=WINDOW)
    config = demo.config_path.read_text(encoding="utf-8")
    if environment == "built":
        # The sample's own packaging needs a build backend the index does not serve.
        built = 'environments = "tip"\ninstall-project = false\n'
        config, found = re.subn(r"^interpreter = .*\n", built, config, count=1, flags=re.M)
        if not found:
            raise SystemExit("the demo's bugbout.toml names no interpreter to build instead")
    if tasks is not None:
        config += f"\n[tasks]\nlimit = {tasks}\n"
    demo.config_path.write_text(config, encoding="utf-8")
    bout = Bout(Project.load(demo.root), cluster="")
    bout.run(until="race")
    vendors = {e.agent.name: e.agent.vendor or "unknown" for e in bout.entrants()}
    return Demo(
        bout.project,
        bout.repo(),
        bout.raceable_tasks(),
        bout.scored_tasks(),
        bout.attempts,
        vendors,
    )


def results(project: Project) -> object:
    """What the test stages stored, without what depends on where or when they ran: a
    configuration that stores anything else ran other tests, and its time says nothing."""
    store = project.store
    oracles = store.read(store.oracles_path, OracleSet) or OracleSet()
    scores = store.read(store.resolutions_path, ResolutionSet) or ResolutionSet()
    matrices = [store.read(path, Matrix) for path in sorted(store.matrices_dir.glob("*.json"))]
    return (
        {task: (o.fail_to_pass, o.pass_to_pass, o.scored) for task, o in oracles.oracles.items()},
        {
            m.task: {
                name: {
                    a: {t: c.outcome for t, c in cells.items()} for a, cells in run.cells.items()
                }
                for name, run in m.trees.items()
            }
            for m in matrices
            if m is not None
        },
        {task: {n: r.status for n, r in by.items()} for task, by in scores.patches.items()},
        {task: r.status for task, r in scores.controls.items()},
    )


async def time_test_stages(demo: Demo, address: str | None) -> Measurement:
    """The test stages from an empty store, on this machine or on the cluster at
    `address`, set up as a bout sets them up."""
    store = demo.project.store
    for path in (store.oracles_path, store.resolutions_path, store.ledger_path):
        path.unlink(missing_ok=True)  # the ledger too: each run starts from the same one
    shutil.rmtree(store.matrices_dir, ignore_errors=True)
    measured = Measurement()
    bus = EventBus()
    bus.subscribe(lambda e: _keep_run(e, measured.runs))
    environments = Environments(demo.repo, demo.project.config.project)
    await environments.shared()
    cluster = None
    if address is not None:
        started = time.monotonic()
        cluster = TimedCluster(address, demo.repo, bus)
        await cluster.open()
        measured.connect = time.monotonic() - started
    sandbox = select_sandbox(demo.project.config.run.sandbox)
    context = StageContext(demo.project, demo.repo, environments, sandbox, bus, cluster=cluster)

    async def stage(name: str, work: Awaitable[T]) -> T:
        started = time.monotonic()
        done = await work
        measured.stages[name] = time.monotonic() - started
        return done

    async with task_stream(address) as busy:
        try:
            oracles = await stage("ground truth", GroundTruth(context).run(demo.tasks))
            examination = CrossExamination(context, vendors=demo.vendors)
            await stage("examine", examination.run(demo.scored, demo.attempts))
            await stage("score", Scoring(context).run(demo.scored, oracles, demo.attempts))
        finally:
            if cluster is not None:
                await cluster.close()
                measured.units = cluster.units
    if measured.units and not busy:
        raise SystemExit(
            "the scheduler recorded none of the units as `bugbout-test-*` tasks: the cluster "
            "names them otherwise now, and the benchmark must follow it"
        )
    measured.busy = sum(busy)
    measured.results = results(demo.project)
    return measured


@contextlib.asynccontextmanager
async def task_stream(address: str | None) -> AsyncIterator[list[float]]:
    """The compute time of each of the bout's tasks the scheduler at `address` saw end
    within the block (none without a scheduler), filled in on the way out.

    The scheduler keeps that record (its task stream) only once asked for it, so it is
    asked before the block too.
    """
    busy: list[float] = []
    if address is None:
        yield busy
        return
    client_type, _ = distributed_api()
    client = await client_type(address, asynchronous=True, name="bugbout-bench")
    try:
        before = len(await client.get_task_stream())
        yield busy
        for record in (await client.get_task_stream())[before:]:
            if str(record["key"]).startswith("bugbout-test-"):
                busy.extend(
                    span["stop"] - span["start"]
                    for span in record["startstops"]
                    if span["action"] == "compute"
                )
    finally:
        await client.close()


def _keep_run(event: BaseEvent, runs: list[TestRunFinished]) -> None:
    if isinstance(event, TestRunFinished):
        runs.append(event)


# ---------------------------------------------------------------- the cluster


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A process in a session of its own, so ending its group ends what it started."""
    with log.open("ab") as output:
        return subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def end(process: subprocess.Popen[bytes]) -> None:
    """Ask `process` and its group to stop, then make them: a scheduler left running
    would take the next run's workers."""
    for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def local_cluster(root: Path) -> Iterator[str]:
    """A fresh scheduler on 127.0.0.1 and `WORKERS` workers of `THREADS` threads, each
    worker with an empty `BUGBOUT_HOME` of its own under `root`; its address. Every
    process is ended on the way out, however it goes."""
    root.mkdir(parents=True)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        argv = [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
        processes.append(spawn(argv, root / "scheduler.log", dict(os.environ)))
        for number in range(1, WORKERS + 1):
            name = f"w{number}"
            home = root / name
            home.mkdir()
            env = {**os.environ, "BUGBOUT_HOME": str(home), "UV_CACHE_DIR": str(home / "uv")}
            env.pop(ENV_VAR, None)
            argv = [DASK, "worker", address, "--name", name, "--nthreads", str(THREADS)]
            argv += ["--no-nanny", "--no-dashboard", "--local-directory", str(home / "dask")]
            processes.append(spawn(argv, root / f"{name}.log", env))
        asyncio.run(until_workers(address, WORKERS, root))
        yield address
    finally:
        for process in reversed(processes):
            end(process)


async def until_workers(address: str, count: int, logs: Path, timeout: float = 60.0) -> None:
    """Wait until the scheduler at `address` has `count` workers; if they never come,
    say what the processes' logs in `logs` said, since the directory goes with the run."""
    client_type, _ = distributed_api()
    client = await client_type(address, asynchronous=True, timeout=timeout)
    try:
        deadline = time.monotonic() + timeout
        while len(await scheduler_workers(client)) < count:
            if time.monotonic() > deadline:
                said = "\n".join(
                    f"{log.name}: ...{log.read_text(errors='replace')[-1000:]}"
                    for log in sorted(logs.glob("*.log"))
                )
                raise SystemExit(f"the workers never joined the scheduler:\n{said}")
            await asyncio.sleep(0.2)
    finally:
        await client.close()


# ---------------------------------------------------------------- the figures


def fmt_bytes(size: float) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def show_stages(label: str, figures: list[Measurement]) -> None:
    """One row of the stage table: the median of each column over the rounds."""
    cells = [statistics.median(m.stages[name] for m in figures) for name in STAGES]
    connect = statistics.median(m.connect for m in figures)
    total = statistics.median(m.total for m in figures)
    row = "".join(f"{cell:14.2f}" for cell in [*cells, connect])
    print(f"  {label:14}{row}{total:10.2f}")


def show_local(local: Measurement) -> None:
    pytest = sum(run.seconds for run in local.runs)
    cores = os.cpu_count() or 1
    print(
        f"  local: {len(local.runs)} test runs, {pytest:.2f} s of them over {cores} cores "
        f"({pytest / cores:.2f} s), {local.total:.2f} s in all"
    )


@dataclass(frozen=True)
class Model:
    """T(N) = F + W / (N · t), made from one cluster measurement's parts."""

    fixed: float
    """F: connecting and bundling, and each worker's first repository, trees and
    environment (the repository's round trip, and the setup beyond the warm run's),
    which the workers pay side by side, so about once in wall time."""
    work: float
    """W: the thread-seconds the units took on the workers, those first costs taken out."""

    def predict(self, workers: int) -> float:
        return self.fixed + self.work / (workers * THREADS)


def model(measured: Measurement, warm: Measurement) -> Model:
    """`measured` as F and W; `warm` (the same units on a warm cluster) tells how much
    of its workers' setup was the first time's."""
    units = measured.units
    asked = sum(u.asked for u in units)
    first = max(0.0, sum(u.setup for u in units) - sum(u.setup for u in warm.units))
    fixed = measured.connect + (asked + first) / (WORKERS * THREADS)
    return Model(fixed, measured.busy - first)


def show_cluster(label: str, measured: Measurement, slots: int) -> None:
    """Where a cluster's time went, in seconds of wall time (s) or of a worker thread's
    (thread-s): the units as the workers spent them, and what the coordinator saw
    around them."""
    units = measured.units
    here = sum(1 for run in measured.runs if run.worker is None)
    per_worker: dict[str, int] = {}
    for unit in units:
        per_worker[unit.worker] = per_worker.get(unit.worker, 0) + 1
    spread = ", ".join(f"{n} on {w}" for w, n in sorted(per_worker.items()))
    carried = [u for u in units if u.bundle]
    sent = max((u.bundle for u in carried), default=0)
    setup = sum(u.setup for u in units)
    pytest = sum(u.pytest for u in units)
    asked = sum(u.asked for u in units)
    waited = sum(u.wall for u in units) - asked - measured.busy
    print(f"  {label}: {len(measured.runs)} test runs, {len(units)} units ({spread}), {here} here")
    for name, value, scale, note in (
        ("connecting and bundling", measured.connect, "s", ""),
        (
            "asking for the repository",
            asked,
            "s",
            f"the units' round trips; {len(carried)} × {fmt_bytes(sent)} sent",
        ),
        (
            "on the workers",
            measured.busy,
            "thread-s",
            f"over {slots}: {measured.busy / slots:.2f} s",
        ),
        (
            "  setup: repository, trees, environment",
            setup,
            "thread-s",
            f"{sum(u.setup for u in carried):.2f} in the units that brought the repository",
        ),
        ("  test runs", pytest, "thread-s", "as the runs timed themselves"),
        ("  rest", measured.busy - setup - pytest, "thread-s", "warm-up, clean-up"),
        ("waiting for a thread, transport", waited, "s", "summed over the units"),
        (
            "beside the workers' time",
            measured.total - measured.connect - measured.busy / slots,
            "s",
            "the coordinator's own work, threads left idle",
        ),
    ):
        print(f"    {name:<40}{value:8.2f} {scale:<9}{f'({note})' if note else ''}".rstrip())


def show_model(label: str, measured: Measurement, fitted: Model) -> None:
    predicted = fitted.predict(WORKERS)
    gap = measured.total - predicted
    more = ", ".join(f"T({n}) = {fitted.predict(n):.2f} s" for n in (1, 4, 8))
    print(
        f"  {label}: F = {fitted.fixed:.2f} s, W = {fitted.work:.2f} thread-s; "
        f"T({WORKERS}) = {predicted:.2f} s predicted, {measured.total:.2f} s measured "
        f"({gap:+.2f} s, {gap / measured.total:+.0%}, not in the model)"
    )
    print(f"    {more}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the three runs")
    parser.add_argument("--tasks", type=int, default=None, help="tasks to mine (default: all)")
    parser.add_argument(
        "--environment",
        choices=("built", "interpreter"),
        default="built",
        help="the tests' environment: built by uv, or this interpreter as the demo has it",
    )
    args = parse_args(parser, has_target=False, repeat=1, tasks=1)
    figures: dict[str, list[Measurement]] = {name: [] for name in CONFIGURATIONS}
    with tempfile.TemporaryDirectory(prefix="bugbout-bench-") as tmp, PackageIndex() as index:
        os.environ["BUGBOUT_HOME"] = str(Path(tmp) / "home")
        os.environ.pop(ENV_VAR, None)
        if args.environment == "built":
            # uv, here and on the workers (which inherit this environment), reads this
            # index alone and keeps its cache in the benchmark's directory.
            index.publish_runner(Path(tmp) / "wheels")
            for name in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS"):
                os.environ.pop(name, None)
            os.environ["UV_DEFAULT_INDEX"] = index.url
            os.environ["UV_PYTHON_DOWNLOADS"] = "never"
            os.environ["UV_CACHE_DIR"] = str(Path(tmp) / "uv")
        started = time.monotonic()
        demo = prepare(Path(tmp), args.tasks, args.environment)
        print(
            f"the demo raced once, its tests in {ENVIRONMENTS[args.environment]}: "
            f"{len(demo.tasks)} tasks, {len(demo.scored)} scored, "
            f"{sum(len(a) for a in demo.attempts.values())} attempts "
            f"({time.monotonic() - started:.1f} s)"
        )
        for round_number in range(1, args.repeat + 1):
            local = asyncio.run(time_test_stages(demo, None))
            # A cold cluster is the first bout on it: the coordinator bundles anew too.
            shutil.rmtree(bugbout_home() / "cluster" / "bundles", ignore_errors=True)
            with local_cluster(Path(tmp) / f"cluster-{round_number}") as address:
                cold = asyncio.run(time_test_stages(demo, address))
                warm = asyncio.run(time_test_stages(demo, address))
            for name, measured in zip(CONFIGURATIONS, (local, cold, warm), strict=True):
                if measured.results != local.results:
                    raise SystemExit(f"round {round_number}: {name} stored other results")
                figures[name].append(measured)
            print(
                f"round {round_number}: local {local.total:.2f} s, cold {cold.total:.2f} s, "
                f"warm {warm.total:.2f} s; cold / local {cold.total / local.total:.2f}, "
                f"warm / local {warm.total / local.total:.2f}"
            )
    medians = {name: statistics.median(m.total for m in figures[name]) for name in figures}
    print(f"test stages, median of {args.repeat} round(s), seconds:")
    print(f"  {'':14}" + "".join(f"{h:>14}" for h in [*STAGES, "connect"]) + f"{'total':>10}")
    for name in CONFIGURATIONS:
        show_stages(name, figures[name])
    print(f"results: the same in every configuration and round ({len(demo.scored)} tasks scored)")
    print(f"cold / local: {medians['cold'] / medians['local']:.2f}")
    print(f"warm / local: {medians['warm'] / medians['local']:.2f} (target at most {TARGET:.2f})")
    local, cold, warm = (figures[name][-1] for name in CONFIGURATIONS)
    print(f"where the time goes, round {args.repeat}:")
    show_local(local)
    show_cluster("cold", cold, WORKERS * THREADS)
    show_cluster("warm", warm, WORKERS * THREADS)
    print(f"cost model T(N) = F + W / (N · t), t = {THREADS}, round {args.repeat}:")
    show_model("cold", cold, model(cold, warm))
    show_model("warm", warm, model(warm, warm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
