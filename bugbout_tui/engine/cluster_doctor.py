"""`bugbout doctor` with a cluster: this machine's checks, and every worker's on itself.

A bout on a cluster fails on a worker as it fails here, only later and where nobody
looks: a missing sandbox, no uv, an agent's program absent from that worker's PATH, or a
worker still running last month's bugbout. Each worker runs the checks on itself
(`worker_checks.check_worker`, sent with `Client.run`, which runs beside whatever the
worker is busy with instead of queueing behind a bout's units) and answers with its
report. A worker that cannot run them, because bugbout is missing there or the worker
died or hangs, still gets a report, saying so.

The scheduler is reached first: when it cannot be, nothing else is worth checking, and
the user hears so at once rather than after this machine's checks. How long the client
tries is Dask's own `distributed.comm.timeouts.connect` (30 s unless configured).
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from bugbout_tui import __version__
from bugbout_tui.core.config import Config
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.engine.cluster import WorkerInfo, distributed_api, scheduler_workers
from bugbout_tui.engine.doctor import Check, DoctorReport, Progress, diagnose
from bugbout_tui.engine.environment import environment_at
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.worker_checks import (
    AGENT_RESOURCE,
    WorkerCheckRequest,
    WorkerReport,
    check_worker,
    install_fix,
)

__all__ = ["ClusterReport", "diagnose_with_cluster"]

_NO_MODULE = re.compile(r"No module named '([\w.]+)'")

WORKER_SECONDS = 120.0
"""How long a worker may take over its checks; each has its own shorter limit, so past
this the worker is stuck."""


class ClusterReport(BaseModel):
    """Every worker's report, by the workers' names; `ok` unless one has a problem."""

    model_config = ConfigDict(frozen=True)

    address: str
    workers: list[WorkerReport]

    @property
    def ok(self) -> bool:
        return all(worker.ok for worker in self.workers)


async def diagnose_with_cluster(
    project: Project, address: str, *, progress: Progress | None = None
) -> tuple[DoctorReport, ClusterReport]:
    """This machine's checks and those of every worker of the scheduler at `address`.

    Raises:
        ToolMissingError: `distributed` is not installed.
        BugboutError: the scheduler cannot be reached, or has no worker.
    """
    client = await _connect(address)
    try:
        workers = sorted(await scheduler_workers(client), key=lambda w: (w.name, w.address))
        if not workers:
            raise BugboutError(
                f"The cluster at {address} has no worker.",
                hint=f"Start one with `dask worker {address}` on each machine.",
            )
        interpreter = await _interpreter(project)
        local, reports = await asyncio.gather(
            diagnose(project, progress=progress),
            asyncio.gather(
                *(_check(client, worker, project.config, interpreter) for worker in workers)
            ),
        )
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    return local, ClusterReport(address=address, workers=list(reports))


async def _connect(address: str) -> Any:
    client_type, _ = distributed_api()
    try:
        return await client_type(address, asynchronous=True, name="bugbout-doctor")
    except (OSError, TimeoutError, ValueError) as exc:
        raise BugboutError(
            f"Cannot reach the cluster's scheduler at {address}: {exc}",
            hint="Check the address (--cluster, BUGBOUT_CLUSTER or [run] cluster) and that "
            "`dask scheduler` runs there and lets this machine in; a slow network may need "
            "a longer DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT.",
        ) from None


async def _interpreter(project: Project) -> str | None:
    """`[project] interpreter` found as a bout finds it, so a worker is asked for the
    path the units will name; None when none is set or it is broken on this machine."""
    if project.config.project.interpreter is None:
        return None
    root = project.config.project.repository_dir(project.dir) or project.dir
    try:
        return str((await environment_at(root, project.config.project)).python)
    except BugboutError:
        return None


async def _check(
    client: Any, worker: WorkerInfo, config: Config, interpreter: str | None
) -> WorkerReport:
    """`worker`'s report on itself, or one saying why it gave none."""
    request = WorkerCheckRequest(
        name=worker.name,
        address=worker.address,
        version=__version__,
        python=platform.python_version(),
        sandbox=config.run.sandbox,
        interpreter=interpreter,
        uv=config.project.interpreter is None,
        contestants=config.contestants,
        claims=sorted(
            resource.removeprefix(AGENT_RESOURCE)
            for resource in worker.resources
            if resource.startswith(AGENT_RESOURCE)
        ),
    )
    try:
        answers = await asyncio.wait_for(
            client.run(
                check_worker,
                request.model_dump_json(),
                workers=[worker.address],
                on_error="return",
            ),
            WORKER_SECONDS,
        )
    except TimeoutError:
        return _unchecked(
            worker,
            f"no answer within {WORKER_SECONDS:.0f} s",
            "Look at the worker's log, and restart the worker if it is stuck.",
        )
    answer = answers.get(worker.address)
    if isinstance(answer, str):
        try:
            return WorkerReport.model_validate_json(answer)
        except ValueError:
            return _unchecked(
                worker, "its answer cannot be read by this bugbout", install_fix(__version__)
            )
    return _failed(worker, answer)


def _failed(worker: WorkerInfo, error: object) -> WorkerReport:
    """A worker that could not run the checks. Dask hands back an import error that
    happened before the function ran as text only, hence the module read from the words."""
    missing = _NO_MODULE.search(str(error))
    module = missing.group(1) if missing is not None else ""
    if module == "bugbout_tui":
        return _unchecked(
            worker,
            "bugbout is not installed in the Python this worker runs, so it can run nothing "
            "of a bout",
            install_fix(__version__),
        )
    if module.startswith("bugbout_tui."):
        return _unchecked(
            worker,
            f"the worker's bugbout has no {module}: it is another version than "
            f"this machine's {__version__}",
            install_fix(__version__),
        )
    said = f"{type(error).__name__}: {error}" if error is not None else "no answer"
    return _unchecked(
        worker,
        f"the checks failed on this worker: {said}",
        f"Look at the worker's log. {install_fix(__version__)}",
    )


def _unchecked(worker: WorkerInfo, detail: str, fix: str) -> WorkerReport:
    return WorkerReport(
        name=worker.name,
        address=worker.address,
        checks=[Check(name="bugbout", status="problem", detail=detail, fix=fix)],
    )
