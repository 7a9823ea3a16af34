"""The checks a cluster's worker runs on itself for `bugbout doctor --cluster`.

A worker makes test runs and starts agents with its own programs, its own PATH and its
own `BUGBOUT_HOME`, none of which the coordinator can see. So the checks a bout leans on
run there, the same functions `bugbout doctor` runs on this machine, and come back as
one `WorkerReport`.

Request and answer cross the network as JSON rather than pickles: a worker running
another version of bugbout must still be able to read the request or fail to in words,
which a pickle of a model that has changed since would not allow.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bugbout_tui import __version__
from bugbout_tui.core.config import ContestantConfig
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.doctor import Check, Checks, agent_check, git_check, sandbox_check, uv_check

__all__ = [
    "AGENT_RESOURCE",
    "WorkerCheckRequest",
    "WorkerReport",
    "check_worker",
    "install_fix",
]

AGENT_RESOURCE = "agent:"
"""The prefix of the Dask resources by which a worker declares the agents it can start
(`dask worker ADDRESS --resources "agent:codex=1"`): a contestant's name or an agent kind."""


class WorkerCheckRequest(BaseModel):
    """What a worker needs to check itself against the bout the coordinator would run."""

    model_config = ConfigDict(frozen=True)

    name: str
    address: str
    version: str
    """The coordinator's bugbout."""
    python: str
    """The coordinator's Python, e.g. `3.11.7`."""
    sandbox: str
    """`[run] sandbox`, which the worker's test runs use too."""
    interpreter: str | None
    """The path of `[project] interpreter` as the coordinator's units carry it, which the
    worker must have too; None when none is configured, or it is broken here (this
    machine's own check says why)."""
    uv: bool
    """Whether the worker builds environments, with uv: no `[project] interpreter`."""
    contestants: list[ContestantConfig]
    claims: list[str]
    """The agents the worker declares, without the `agent:` prefix."""


class WorkerReport(Checks):
    """One worker's checks."""

    name: str
    address: str
    bugbout: str | None = None
    """The worker's bugbout version; None when it could not run the checks."""
    python: str | None = None


def install_fix(version: str) -> str:
    """How to give a worker the coordinator's bugbout."""
    return (
        f"Install the coordinator's bugbout on that worker: pip install \"bugbout-tui[cluster]"
        f'=={version}" in the Python the worker runs, then restart the worker.'
    )


async def check_worker(request: str) -> str:
    """Check the worker this runs on (sent there with `Client.run`): a
    `WorkerCheckRequest` in, a `WorkerReport` out, both as JSON.

    Raises:
        BugboutError: this worker's bugbout cannot read the request (another version).
    """
    try:
        asked = WorkerCheckRequest.model_validate_json(request)
    except ValidationError as error:
        raise BugboutError(
            f"bugbout {__version__} on this worker cannot read the coordinator's request: "
            f"{error.error_count()} fields differ"
        ) from None
    python = platform.python_version()
    tools = asyncio.gather(
        git_check(),
        uv_check(needed=asked.uv),
        sandbox_check(asked.sandbox),
        asyncio.to_thread(_home_check),
    )
    agents = asyncio.gather(*(_claim_checks(claim, asked.contestants) for claim in asked.claims))
    (git, uv, sandbox, home), claims = await asyncio.gather(tools, agents)
    checks = [_version_check(asked.version), _python_check(python, asked.python), git, uv.check]
    if asked.interpreter is not None:
        checks.append(_interpreter_check(asked.interpreter))
    checks += [sandbox.check, home]
    checks += [check for listed in claims for check in listed] or [_no_agents()]
    report = WorkerReport(
        name=asked.name, address=asked.address, bugbout=__version__, python=python, checks=checks
    )
    return report.model_dump_json()


def _version_check(wanted: str) -> Check:
    name = "bugbout"
    if __version__ == wanted:
        return Check(
            name=name, status="ok", detail=f"bugbout {__version__}, the coordinator's version"
        )
    return Check(
        name=name,
        status="problem",
        detail=f"bugbout {__version__} here, {wanted} on the coordinator: a unit of one "
        "version may mean something else to the other",
        fix=install_fix(wanted),
    )


def _python_check(here: str, coordinator: str) -> Check:
    """Another Python is a warning: units cross as pickles of bugbout's own models, which
    minor versions read alike, but Dask itself advises against mixing them."""
    name = "python"
    detail = f"Python {here} at {sys.executable}"
    if here.split(".")[:2] == coordinator.split(".")[:2]:
        return Check(name=name, status="ok", detail=detail)
    return Check(
        name=name,
        status="warning",
        detail=f"{detail}; the coordinator runs Python {coordinator}",
        fix=f"Run the worker on Python {'.'.join(coordinator.split('.')[:2])}, as the coordinator.",
    )


def _interpreter_check(interpreter: str) -> Check:
    """The worker's test runs use [project] interpreter at the same path as here."""
    name = "interpreter"
    if os.access(interpreter, os.X_OK) and Path(interpreter).is_file():
        return Check(name=name, status="ok", detail=f"{interpreter}, which [project] names")
    return Check(
        name=name,
        status="problem",
        detail=f"no interpreter at {interpreter}, which [project] interpreter names",
        fix="Install the same Python at that path on every worker, or remove [project] "
        "interpreter so bugbout builds environments on the workers.",
    )


def _home_check() -> Check:
    """Repositories, trees and environments are kept in the worker's own home."""
    name = "BUGBOUT_HOME"
    home = bugbout_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=home, prefix=".doctor-"):
            pass
    except OSError as error:
        return Check(
            name=name,
            status="problem",
            detail=f"{home} cannot be written: {error.strerror or error}",
            fix=f"Let the worker's user write {home}, or start the worker with BUGBOUT_HOME "
            "set to a directory it can write.",
        )
    return Check(name=name, status="ok", detail=f"{home} is writable")


async def _claim_checks(claim: str, contestants: list[ContestantConfig]) -> list[Check]:
    """The agent the resource `agent:<claim>` names, checked as `bugbout doctor` checks a
    contestant's: the contestant of that name, or every contestant of that kind."""
    resource = AGENT_RESOURCE + claim
    named = [entry for entry in contestants if entry.name == claim]
    entries = named or [entry for entry in contestants if entry.agent == claim]
    if not entries:
        known = ", ".join(AGENT_RESOURCE + entry.name for entry in contestants)
        return [
            Check(
                name=resource,
                status="warning",
                detail=f"no contestant in bugbout.toml is called {claim!r} or is a {claim} "
                "agent, so no attempt comes here for it",
                fix=f"Declare a contestant of bugbout.toml instead: {known}."
                if known
                else "Add a [[contestants]] table to bugbout.toml.",
            )
        ]
    return list(
        await asyncio.gather(
            *(
                agent_check(
                    resource if entry.name == claim else f"{resource} ({entry.name})", entry
                )
                for entry in entries
            )
        )
    )


def _no_agents() -> Check:
    return Check(
        name="agents",
        status="ok",
        detail=f"none declared (no {AGENT_RESOURCE}NAME resource): this worker makes test "
        "runs only",
    )
