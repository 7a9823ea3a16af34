"""An attempt whose agent runs on a cluster's worker.

The race keeps its lanes, its budget and its records on the coordinator; what moves is
the agent's run (`agent_run.py`): the worker makes the checkout from its copy of the
repository, the test environment from the unit's recipe, starts the agent with its own
logins (nothing of the coordinator's environment is sent), and sends back the patch, the
agent's report and its logs. Only workers that declare the agent (the Dask resource
`agent:<name>`) are given its attempts.

An attempt is never run twice by the cluster on its own: the first worker to start it
claims it (a Dask event), and a copy the scheduler would start again after losing that
worker finds the claim and ends at once as lost. The race records it crashed, so the
quota it spent is not spent again before `--retry-failed` asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from bugbout_tui.agents.base import STDERR_LOG, STDOUT_LOG, RunReport
from bugbout_tui.core.config import Config
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import Task
from bugbout_tui.core.patch import Patch
from bugbout_tui.core.paths import bugbout_home, known_homes
from bugbout_tui.engine.agent_run import AgentRun, Entrant, launch_problem
from bugbout_tui.engine.cluster import Cluster
from bugbout_tui.infra.cluster_units import EnvRecipe
from bugbout_tui.infra.cluster_worker import (
    environment_for,
    repository,
    repository_path,
    watch_stops,
    worker_context,
)
from bugbout_tui.infra.sandbox import select_sandbox

LOGS_LIMIT = 16 * 1024 * 1024
"""The most of an attempt's log file that comes back from a worker: its end."""
LOGS_TOTAL = 64 * 1024 * 1024
"""The most of an attempt's logs that comes back at all; files past it stay behind."""
_LINES_EVERY = 0.25
"""Seconds the worker gathers an agent's lines for before sending them on."""
_FIRST = (STDOUT_LOG, STDERR_LOG, "prompt.md")
"""What of a log directory comes back first, before any file the agent wrote there."""
WORKER_LOST = "worker lost"
"""How the detail of an attempt whose worker left the cluster begins."""


class AttemptUnit(BaseModel):
    """One attempt to run on a worker that declares its agent."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    repository: str
    attempt: str
    task: Task
    entrant: Entrant
    statement: str
    config: Config
    hidden_files: list[str]
    environment: EnvRecipe
    sandbox: str
    topic: str
    """Where the worker says it started and what the agent prints."""
    claim: str
    """The event the worker that starts the attempt sets, so no other starts it again."""
    stop: str
    """The bout's stop event."""
    cancel: str
    """This attempt's own stop event."""


class AttemptResult(BaseModel):
    """How an attempt ended on its worker, with what it left."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    worker: str
    address: str = ""
    needs_repository: bool = False
    lost: bool = False
    """Another worker started this attempt and was lost: nothing ran here."""
    failed: str | None = None
    """Why the cluster could not run the attempt at all (the worker's error)."""
    not_started: str | None = None
    returncode: int | None = None
    timed_out: bool = False
    cancelled: bool = False
    duration: float = 0.0
    patch: Patch | None = None
    report: RunReport | None = None
    unread: str | None = None
    """Why what the agent left could not be read."""
    logs: bytes = b""
    """The attempt's log directory, a compressed tar."""


def run_attempt_unit(unit: AttemptUnit, bundle: bytes | None) -> AttemptResult:
    """Run `unit` here, in the worker's task thread; `bundle` only for a worker that
    said it has no copy of the repository."""
    (name, address), stop = worker_context(unit.stop)
    home = bugbout_home()
    if bundle is None and not repository_path(unit.repository, home).is_dir():
        return AttemptResult(worker=name, address=address, needs_repository=True)
    claim, cancel, say = _cluster_hooks(unit)
    if claim is not None:
        if claim.is_set():
            return AttemptResult(worker=name, address=address, lost=True)
        claim.set()
    say({"attempt": unit.attempt, "started": name})
    result = asyncio.run(_attempt(unit, bundle, name, (stop, cancel), say))
    return result.model_copy(update={"address": address})


def _cluster_hooks(unit: AttemptUnit) -> tuple[Any, Any, Callable[[dict[str, Any]], None]]:
    """The attempt's claim and stop events, and how to tell the coordinator something."""
    try:
        from distributed import Event, get_client, get_worker

        worker = get_worker()
        client = get_client()
    except (ImportError, ValueError):  # outside a cluster (a test of the unit alone)
        return None, None, lambda message: None
    event: Any = Event
    return (
        event(unit.claim, client=client),
        event(unit.cancel, client=client),
        lambda message: worker.log_event(unit.topic, message),
    )


async def _attempt(
    unit: AttemptUnit,
    bundle: bytes | None,
    worker: str,
    stops: tuple[Any, Any],
    say: Callable[[dict[str, Any]], None],
) -> AttemptResult:
    home = bugbout_home()
    repo = await asyncio.to_thread(repository, unit.repository, bundle, home)
    root = home / "cluster" / "attempts"
    root.mkdir(parents=True, exist_ok=True)
    workspace = Path(tempfile.mkdtemp(dir=root, prefix="attempt-"))
    logdir = workspace / "logs"
    for folder in (logdir, workspace / "home"):
        folder.mkdir()
    ended = AttemptResult(worker=worker)
    try:
        ended = await _run_agent(unit, repo, workspace, worker, stops, say)
    finally:
        logs = await asyncio.to_thread(_pack, logdir)
        await asyncio.to_thread(shutil.rmtree, workspace, True)
    return ended.model_copy(update={"logs": logs})


async def _run_agent(
    unit: AttemptUnit,
    repo: Path,
    workspace: Path,
    worker: str,
    stops: tuple[Any, Any],
    say: Callable[[dict[str, Any]], None],
) -> AttemptResult:
    """The agent's run in `workspace`, from its checkout to what it left."""
    home = bugbout_home()
    agents = AgentRun(
        unit.config, select_sandbox(unit.sandbox), hidden=known_homes(), guarded=(repo,)
    )
    try:
        environment = await environment_for(unit.environment, home)
        copy = await agents.checkout(repo, unit.task, workspace, unit.hidden_files)
        prompt, command = agents.bug_brief(
            unit.entrant, unit.task, copy, environment, unit.statement
        )
        launch = await agents.launch(
            unit.entrant, copy, workspace, prompt, command, environment.python
        )
    except BugboutError as exc:
        return AttemptResult(worker=worker, not_started=exc.message)
    argv = agents.argv(unit.entrant, launch)
    too_long = launch_problem(argv, launch)
    if too_long is not None:
        return AttemptResult(worker=worker, not_started=too_long)
    lines = _Lines(unit.attempt, say)
    stop = asyncio.Event()
    watched = watch_stops(stops, stop.set)
    flusher = asyncio.create_task(lines.every(_LINES_EVERY))
    try:
        result = await agents.run(launch, argv, on_line=lines.add, stop=stop)
    except OSError as exc:
        return AttemptResult(worker=worker, not_started=f"{argv[0]}: {exc.strerror or exc}")
    finally:
        watched()
        flusher.cancel()
        with contextlib.suppress(BaseException):
            await flusher
        lines.flush()
    ran = AttemptResult(
        worker=worker,
        returncode=result.returncode,
        timed_out=result.timed_out,
        cancelled=result.cancelled,
        duration=result.duration,
    )
    if result.cancelled:
        return ran
    try:
        patch, report = await agents.collect(unit.entrant, launch, result)
    except (BugboutError, OSError) as exc:
        problem = exc.message if isinstance(exc, BugboutError) else str(exc)
        return ran.model_copy(update={"unread": problem})
    return ran.model_copy(update={"patch": patch, "report": report})


class _Lines:
    """An agent's lines, sent to the coordinator in batches rather than one by one."""

    def __init__(self, attempt: str, say: Callable[[dict[str, Any]], None]) -> None:
        self.attempt = attempt
        self.say = say
        self._held: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def add(self, stream: str, line: str) -> None:
        with self._lock:
            self._held.append((stream, line))

    def flush(self) -> None:
        with self._lock:
            held, self._held = self._held, []
        if held:
            self.say({"attempt": self.attempt, "lines": held})

    async def every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.flush()


def _pack(logdir: Path) -> bytes:
    """The log directory as a compressed tar, each file cut to its last `LOGS_LIMIT`
    bytes and all to `LOGS_TOTAL`, the standard streams first; only regular files and
    directories (the agent may have written there)."""
    buffer = io.BytesIO()
    room = LOGS_TOTAL
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(logdir.rglob("*"), key=lambda p: (p.name not in _FIRST, p)):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            name = path.relative_to(logdir).as_posix()
            if path.is_dir():
                tar.add(path, arcname=name, recursive=False)
                continue
            size = path.stat().st_size
            keep = min(size, LOGS_LIMIT, room)
            if keep <= 0:
                continue
            with path.open("rb") as handle:
                handle.seek(size - keep)
                data = handle.read(keep)
            room -= len(data)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack_logs(data: bytes, logdir: Path) -> None:
    """Lay a worker's log directory into `logdir`: plain files and folders only, none
    outside it (tar's data filter refuses links, devices and paths that climb out)."""
    if not data:
        return
    logdir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(logdir, filter="data")


class RemoteAttempts:
    """The coordinator's side: attempts sent to the cluster, their news told here."""

    def __init__(
        self,
        cluster: Cluster,
        on_started: Callable[[str, str], None],
        on_lines: Callable[[str, list[tuple[str, str]]], None],
    ) -> None:
        self.cluster = cluster
        self.topic = f"bugbout-attempts-{uuid.uuid4().hex}"
        self._on_started = on_started
        self._on_lines = on_lines
        self._where: dict[str, str] = {}
        """The worker each attempt under way started on, by attempt."""
        cluster.subscribe(self.topic, self._heard)

    def resource(self, entrant: Entrant) -> str | None:
        """The resource of the workers that may run `entrant`'s attempts: its name when
        a worker declares that, else its kind; None when no worker declares either (the
        attempts run on this machine)."""
        declared = self.cluster.resources()
        for key in (f"agent:{entrant.agent.name}", f"agent:{entrant.agent.harness}"):
            if key in declared:
                return key
        return None

    def unit(self, attempt: str, **fields: Any) -> AttemptUnit:
        """The unit of `attempt`, with this bout's events named."""
        tag = uuid.uuid4().hex
        return AttemptUnit(
            repository=self.cluster.repository,
            attempt=attempt,
            topic=self.topic,
            claim=f"bugbout-claim-{tag}",
            stop=self.cluster.stop_name,
            cancel=f"bugbout-cancel-{tag}",
            **fields,
        )

    async def run(self, unit: AttemptUnit, resource: str, stop: asyncio.Event) -> AttemptResult:
        """`unit` run by a worker that has `resource`; `stop` set ends it there."""
        try:
            return await self.cluster.with_repository(
                lambda data, on: self._until_ended(unit, data, resource, stop, on=on)
            )
        except BugboutError as exc:  # said before any worker claimed it: nothing ran
            return AttemptResult(worker="", failed=exc.message)
        finally:
            self._where.pop(unit.attempt, None)

    async def _until_ended(
        self,
        unit: AttemptUnit,
        data: Any,
        resource: str,
        stop: asyncio.Event,
        *,
        on: str | None = None,
    ) -> AttemptResult:
        """The worker's answer (from worker `on`, which holds `data`, when it is still
        there); or lost, when its worker leaves the cluster; or cancelled, when `stop` is
        set before any worker started it."""
        from distributed import KilledWorker

        where: dict[str, Any] = {"resources": {resource: 1}}
        if on is not None:
            where |= {"workers": [on], "allow_other_workers": True}
        try:
            future = self.cluster.submit(run_attempt_unit, unit, data, kind="attempt", **where)
        except Exception as exc:  # the cluster's connection is gone
            return AttemptResult(worker="", failed=_said(exc))
        answer = asyncio.ensure_future(_awaited(future))
        stopped = asyncio.ensure_future(stop.wait())
        told = False
        try:
            while True:
                await asyncio.wait({answer, stopped}, timeout=1.0, return_when="FIRST_COMPLETED")
                worker = self._where.get(unit.attempt)
                if answer.done():
                    try:
                        result = answer.result()
                    except KilledWorker:
                        return AttemptResult(worker=worker or "", lost=True)
                    except Exception as exc:  # the cluster's failure, not the agent's
                        return AttemptResult(worker=worker or "", failed=_said(exc))
                    if result.lost and worker is not None:  # named by the one that lost it
                        return result.model_copy(update={"worker": worker})
                    return result
                if stopped.done() and not told:
                    told = True
                    await self.cluster.set_event(unit.cancel)
                    if worker is None:  # not begun: it never will
                        future.cancel()
                        return AttemptResult(worker="", cancelled=True)
                if worker is not None and self.cluster.gone(worker):
                    future.cancel()
                    return AttemptResult(worker=worker, lost=True)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.cluster.set_event(unit.cancel))
            future.cancel()
            raise
        finally:
            for waiting in (answer, stopped):
                waiting.cancel()

    def _heard(self, event: tuple[float, Any]) -> None:
        _, message = event
        if not isinstance(message, dict):
            return
        attempt = str(message.get("attempt", ""))
        if "started" in message:
            worker = str(message["started"])
            self._where[attempt] = worker
            self._on_started(attempt, worker)
        elif "lines" in message:
            self._on_lines(attempt, [(str(s), str(line)) for s, line in message["lines"]])


def _said(exc: Exception) -> str:
    return f"the cluster could not run it: {type(exc).__name__}: {exc}".splitlines()[0]


async def _awaited(future: Any) -> AttemptResult:
    result = await future
    if not isinstance(result, AttemptResult):
        raise BugboutError(f"A worker answered an attempt with {type(result).__name__}.")
    return result


__all__ = [
    "WORKER_LOST",
    "AttemptResult",
    "AttemptUnit",
    "RemoteAttempts",
    "run_attempt_unit",
    "unpack_logs",
]
