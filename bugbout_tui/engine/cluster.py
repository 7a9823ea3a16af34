"""A bout's test runs on a Dask cluster: the coordinator's side.

The coordinator keeps everything it keeps on one machine (the store, the journal, the
judge, the report) and builds each tree as it would; only running pytest moves. A run
becomes a unit (`infra/cluster_units.py`): the commit the tree was copied from, the files
that differ, the environment as what it holds. A worker makes the tree and the
environment from its own caches and runs the unit (`infra/cluster_worker.py`).

The repository goes to a worker only when the worker asks: a unit is first sent without
it, and a worker that has no repository of that content answers so; the unit is then
sent again to it with the bundle, which the worker keeps by the digest of its refs. A worker
lost during a unit costs nothing but time: the scheduler gives the unit to another
(Dask's `allowed-failures`).

`distributed` is an optional dependency (`bugbout-tui[cluster]`): nothing here imports
it before a bout asks for a cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import subprocess
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.core.events import ClusterChanged
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.infra.cluster_units import EnvRecipe, TestUnit, UnitResult, recipe_for
from bugbout_tui.infra.cluster_worker import run_test_unit
from bugbout_tui.infra.env import Environment, find_uv
from bugbout_tui.infra.git import git_env

ENV_VAR = "BUGBOUT_CLUSTER"
"""The scheduler's address, when neither `--cluster` nor `[run] cluster` gives one."""
INSTALL_HINT = 'Install the cluster extra: pip install "bugbout-tui[cluster]"'
_WATCH_SECONDS = 2.0
"""How often the cluster's state is looked at for the race board."""
_DELIVERIES = 3
"""How many workers may leave, each with the repository just sent to it, before a
unit gives up."""


class Answer(Protocol):
    """What a worker answers any unit with, as far as the repository's trip goes."""

    @property
    def needs_repository(self) -> bool: ...

    @property
    def address(self) -> str: ...


A = TypeVar("A", bound=Answer)


def cluster_address(flag: str | None, configured: str | None) -> str | None:
    """The scheduler to use: `--cluster`, else `BUGBOUT_CLUSTER`, else `[run] cluster`;
    an empty value anywhere means one machine."""
    for value in (flag, os.environ.get(ENV_VAR), configured):
        if value is not None:
            return value.strip() or None
    return None


def bundle(repo: Path, home: Path | None = None) -> tuple[str, Path]:
    """The repository as one git bundle of every ref, with its digest; made once per state
    of the refs and kept under `BUGBOUT_HOME/cluster/bundles`.

    The digest is of the refs and the objects they name, not of the bundle's bytes: git
    packs the same history into other bytes after a repack or in another clone, and a
    worker that keeps the history must know it by the same name, whoever bundled it.

    Raises:
        BugboutError: git could not write the bundle.
    """
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(objectname) %(refname)"],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        check=False,
    ).stdout
    digest = hashlib.sha256(refs).hexdigest()
    folder = (home or bugbout_home()) / "cluster" / "bundles"
    path = folder / f"{digest[:24]}.bundle"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
        made = subprocess.run(
            ["git", "bundle", "create", "--quiet", str(staging), "--all"],
            cwd=repo,
            env=git_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            staging.unlink(missing_ok=True)
            said = made.stderr.strip()
            raise BugboutError(f"git could not bundle {repo} for the cluster: {said}")
        os.replace(staging, path)
    return digest, path


@dataclass(frozen=True)
class WorkerInfo:
    """One worker as the scheduler describes it."""

    address: str
    name: str
    threads: int
    resources: dict[str, float]


class Cluster:
    """One bout's connection to a scheduler: units out, results back, the state told."""

    def __init__(self, address: str, repo: Path, bus: EventBus) -> None:
        self.address = address
        self.repo = repo
        self.bus = bus
        self.stop_name = f"bugbout-stop-{uuid.uuid4().hex}"
        self._client: Any = None
        self._stop: Any = None
        self._digest = ""
        self._bundle_path: Path | None = None
        self._seen: set[str] = set()
        self._lost: set[str] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._last: ClusterChanged | None = None
        self._current: list[WorkerInfo] = []
        self._recipes: dict[str, EnvRecipe] = {}
        self._recipes_lock = asyncio.Lock()
        self._placed: dict[str, Any] = {}
        self._placing = asyncio.Lock()
        self.threads = 1
        """How many units the cluster runs at once: its workers' threads, as last seen."""

    async def open(self) -> None:
        """Connect, and bundle the repository (sent only to workers that lack it). How
        long connecting may take is Dask's `distributed.comm.timeouts.connect`.

        Raises:
            ToolMissingError: `distributed` is not installed.
            BugboutError: the scheduler cannot be reached, or has no worker.
        """
        client_type, event_type = distributed_api()
        try:
            client = await client_type(self.address, asynchronous=True, name="bugbout")
        except Exception as exc:  # unreachable, refused, or a scheme without its setup
            raise BugboutError(
                f"Cannot reach the cluster's scheduler at {self.address}: {exc}",
                hint="Start one with `dask scheduler` (it listens on tcp://HOST:8786) and "
                "workers with `dask worker ADDRESS`, or run on this machine alone by "
                "leaving out --cluster, BUGBOUT_CLUSTER and [run] cluster.",
            ) from None
        self._client = client
        self._stop = event_type(self.stop_name, client=client)
        self._digest, self._bundle_path = await asyncio.to_thread(bundle, self.repo)
        workers = await self.workers()
        if not workers:
            await self.close()
            raise BugboutError(
                f"The cluster at {self.address} has no worker.",
                hint="Start one with `dask worker " + self.address + "` on each machine.",
            )
        self._seen = {w.address for w in workers}
        self._current = workers
        self.threads = sum(worker.threads for worker in workers)
        self._announce(workers, [])
        self._watcher = asyncio.create_task(self._watch())

    @property
    def repository(self) -> str:
        """The digest of the repository's refs and the objects they name, which units name."""
        return self._digest

    async def workers(self) -> list[WorkerInfo]:
        return await scheduler_workers(self._connected())

    def resources(self) -> set[str]:
        """The resources the workers declare, as last seen (`agent:codex`, ...)."""
        return {key for worker in self._current for key in worker.resources}

    def gone(self, worker: str) -> bool:
        """Whether the worker named `worker` has left the cluster, as last seen."""
        return all(worker not in (w.name, w.address) for w in self._current)

    def subscribe(self, topic: str, handler: Callable[[tuple[float, Any]], None]) -> None:
        """Call `handler` with each message workers send on `topic` (`log_event`)."""
        self._connected().subscribe_topic(topic, handler)

    async def set_event(self, name: str) -> None:
        """Set the cluster-wide event `name` (a stop, a claim)."""
        _, event_type = distributed_api()
        await event_type(name, client=self._connected()).set()

    async def bundle_bytes(self) -> bytes:
        """The repository's bundle, for a worker that has no copy of it."""
        assert self._bundle_path is not None, "open() bundles the repository"
        return await asyncio.to_thread(self._bundle_path.read_bytes)

    async def bundle_on(self, address: str) -> Any:
        """A future of the repository's bundle, held by the worker at `address`.

        However many of its units ask at once, a cold worker is sent one copy, as data
        rather than inside a task (the scheduler warns of, and keeps, large tasks);
        the units that asked are then sent to it. The copy is let go once one of them
        has laid the repository down there (`release`).

        Raises:
            BugboutError: the worker left the cluster.
        """
        async with self._placing:
            placed = self._placed.get(address)
            if placed is None:
                data = await self.bundle_bytes()
                try:
                    placed = await self._connected().scatter(data, workers=[address], hash=False)
                except Exception as exc:  # the worker is gone
                    raise BugboutError(f"Worker {address} left: {exc!r}") from None
                self._placed[address] = placed
            return placed

    def release(self, address: str) -> None:
        """Let the copy placed on the worker at `address` go: a unit has laid the
        repository down there, or the worker left with it."""
        self._placed.pop(address, None)

    async def holds(self, address: str) -> bool:
        """Whether the worker at `address` is in the cluster now (asked, not as last seen)."""
        return address in {worker.address for worker in await self.workers()}

    def submit(self, function: Callable[..., Any], *args: Any, kind: str, **where: Any) -> Any:
        """A Dask future of `function(*args)` on a worker; `where` restricts which
        (`workers=`, `resources=`)."""
        return self._connected().submit(
            function, *args, key=f"bugbout-{kind}-{uuid.uuid4().hex}", pure=False, **where
        )

    async def recipe(self, environment: Environment) -> EnvRecipe:
        """What a worker needs to make `environment`, found once per bout."""
        async with self._recipes_lock:
            if environment.key not in self._recipes:
                self._recipes[environment.key] = await recipe_for(environment, find_uv())
            return self._recipes[environment.key]

    async def run(self, unit: TestUnit, *, on: str | None = None) -> UnitResult:
        """`unit`'s result, made on any worker (on worker `on` when given and still there).

        A unit cancelled here is cancelled on the cluster; one already running there
        goes on until it ends or the bout's stop is set (see `close`).
        """
        return await self.with_repository(lambda data, where: self._submit(unit, data, where or on))

    async def with_repository(self, send: Callable[[Any, str | None], Awaitable[A]]) -> A:
        """The answer to `send(None, None)`: a unit sent with no repository, to any
        worker. A worker with no copy of it answers so, and is sent the unit again with
        the bundle placed on it (`send(bundle, address)`, see `bundle_on`); a worker
        that leaves with its copy sends the unit back to the cluster, up to
        `_DELIVERIES` times.

        Raises:
            BugboutError: the workers kept leaving, or sending failed on a worker that
                is still there.
        """
        answer = await send(None, None)
        for _ in range(_DELIVERIES):
            if not answer.needs_repository:
                return answer
            on = answer.address
            try:
                answer = await send(await self.bundle_on(on), on)
            except BugboutError:
                if await self.holds(on):
                    raise
                answer = await send(None, None)  # it left with its copy: ask the cluster again
            finally:
                self.release(on)
        if not answer.needs_repository:
            return answer
        raise BugboutError(
            f"The workers of the cluster at {self.address} kept leaving before they "
            "had the repository.",
            hint="`bugbout doctor --cluster ADDRESS` checks every worker.",
        )

    async def _submit(self, unit: TestUnit, data: Any, on: str | None) -> UnitResult:
        # Worker `on` if it is still there; a unit is never left waiting for a lost one.
        where: dict[str, Any] = (
            {"workers": [on], "allow_other_workers": True} if on is not None else {}
        )
        future = None
        try:
            future = self.submit(run_test_unit, unit, data, kind="test", **where)
            result = await future
        except asyncio.CancelledError:
            if future is not None:
                future.cancel()
            raise
        except BugboutError:
            raise
        except Exception as exc:  # the worker's or the scheduler's failure, not the tests'
            raise BugboutError(
                f"The cluster could not make a test run: {type(exc).__name__}: {exc}",
                hint="`bugbout doctor --cluster ADDRESS` checks every worker; the scheduler "
                "and the workers need the bugbout version of this machine.",
            ) from None
        if not isinstance(result, UnitResult):
            raise BugboutError(f"A worker answered a unit with {type(result).__name__}.")
        return result

    async def close(self, *, stopping: bool = False) -> None:
        """End the connection; `stopping` (the bout was stopped) first tells every worker
        to end what it runs for this bout."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(BaseException):
                await self._watcher
        self._placed.clear()
        client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(Exception):
            if stopping and self._stop is not None:
                await self._stop.set()
        with contextlib.suppress(Exception):
            await client.close()

    async def _watch(self) -> None:
        """Tell the bus when workers join, leave or get busy."""
        while True:
            await asyncio.sleep(_WATCH_SECONDS)
            with contextlib.suppress(Exception):
                workers = await self.workers()
                self._current = workers
                current = {w.address for w in workers}
                self.threads = sum(worker.threads for worker in workers) or self.threads
                self._lost |= self._seen - current
                self._seen |= current
                processing = await self._connected().processing()
                busy = [
                    address
                    for address, keys in processing.items()
                    if any(str(key).startswith("bugbout-") for key in keys)
                ]
                self._announce(workers, busy)

    def _announce(self, workers: Sequence[WorkerInfo], busy: Sequence[str]) -> None:
        event = ClusterChanged(
            address=self.address,
            workers=len(workers),
            busy=len(busy),
            lost=len(self._lost),
        )
        last = self._last
        if last is None or (last.workers, last.busy, last.lost) != (
            event.workers,
            event.busy,
            event.lost,
        ):
            self._last = event
            self.bus.emit(event)

    def _connected(self) -> Any:
        if self._client is None:
            raise BugboutError("The cluster is not connected.")
        return self._client


async def scheduler_workers(client: Any) -> list[WorkerInfo]:
    """The workers of the scheduler `client` is connected to, as it describes them."""
    info = await client.scheduler.identity(n_workers=-1)
    return [
        WorkerInfo(
            address=address,
            name=str(worker.get("name", address)),
            threads=int(worker.get("nthreads", 1)),
            resources=dict(worker.get("resources") or {}),
        )
        for address, worker in info.get("workers", {}).items()
    ]


def distributed_api() -> tuple[Any, Any]:
    """Dask's client and event types, or the error that says how to install them."""
    try:
        from distributed import Client, Event
    except ImportError:
        raise ToolMissingError(
            "Running on a cluster needs Dask's `distributed` package.", hint=INSTALL_HINT
        ) from None
    return Client, Event


def check_address(address: str) -> str:
    """`address` as Dask takes it, or a usage error saying what one looks like."""
    if "://" not in address and ":" not in address:
        raise UsageError(
            f"{address!r} is not a scheduler address.",
            hint='Give one such as "tcp://10.0.0.5:8786".',
        )
    return address


__all__ = [
    "Answer",
    "Cluster",
    "WorkerInfo",
    "bundle",
    "check_address",
    "cluster_address",
    "distributed_api",
    "scheduler_workers",
]
