"""Choosing the sandbox a run uses, and telling `bugbout doctor` how that went."""

from __future__ import annotations

import sys

from pydantic import BaseModel, ConfigDict

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.infra.sandbox.backend import UNCONFINED_HINT, NoSandbox, Sandbox
from bugbout_tui.infra.sandbox.bubblewrap import BubblewrapSandbox
from bugbout_tui.infra.sandbox.seatbelt import SeatbeltSandbox

SANDBOX_KINDS = ("auto", "bubblewrap", "seatbelt", "none")


_BACKENDS: dict[str, type[Sandbox]] = {
    "bubblewrap": BubblewrapSandbox,
    "seatbelt": SeatbeltSandbox,
    "none": NoSandbox,
}


class SandboxReport(BaseModel):
    """What `bugbout doctor` says about the sandbox a run would use."""

    model_config = ConfigDict(frozen=True)

    requested: str
    backend: str | None
    """The backend that runs (or would run, once fixed); None for an unknown kind."""
    ok: bool
    confined: bool
    detail: str
    fix: str | None = None


def select_sandbox(kind: str) -> Sandbox:
    """The backend for `[run] sandbox`, checked to work here, or a `BugboutError` saying why not."""
    if kind == "auto":
        return _select_automatically()
    backend = _BACKENDS.get(kind)
    if backend is None:
        raise UsageError(
            f"Unknown sandbox {kind!r}.",
            hint="Set [run] sandbox to one of: " + ", ".join(f'"{k}"' for k in SANDBOX_KINDS) + ".",
        )
    sandbox = backend()
    sandbox.check()
    return sandbox


def describe_sandbox(kind: str) -> SandboxReport:
    """Which sandbox `kind` resolves to here, and whether it works; never raises."""
    try:
        sandbox = select_sandbox(kind)
    except BugboutError as error:
        return SandboxReport(
            requested=kind,
            backend=_intended_backend(kind),
            ok=False,
            confined=False,
            detail=error.message,
            fix=error.hint,
        )
    if isinstance(sandbox, NoSandbox):
        return SandboxReport(
            requested=kind,
            backend=sandbox.name,
            ok=True,
            confined=False,
            detail="Tests and agents run unconfined: they can write anywhere you can and "
            "reach the network (credentials are still kept out of their environment).",
            fix='Set [run] sandbox = "auto" to confine them.',
        )
    where = sandbox.executable() if isinstance(sandbox, BubblewrapSandbox) else sandbox.name
    return SandboxReport(
        requested=kind,
        backend=sandbox.name,
        ok=True,
        confined=True,
        detail=f"{sandbox.name} ({where}) confines tests and agents: tests see only their "
        "tree, their interpreter and the system directories, agents never see bugbout's "
        "data, the store or the repository; writes only in their checkout and temp dirs, "
        "no network for tests, credential stores hidden.",
    )


def _select_automatically() -> Sandbox:
    candidate: Sandbox
    if sys.platform.startswith("linux"):
        candidate = BubblewrapSandbox()
    elif sys.platform == "darwin":
        candidate = SeatbeltSandbox()
    else:
        raise BugboutError(
            f'sandbox = "auto" knows no sandbox for {sys.platform}: bugbout confines '
            "processes with bubblewrap on Linux and seatbelt on macOS.",
            hint=UNCONFINED_HINT,
        )
    try:
        candidate.check()
    except BugboutError as error:
        raise type(error)(
            f'sandbox = "auto" picked {candidate.name}, which cannot run: {error.message}',
            hint=error.hint,
        ) from error
    return candidate


def _intended_backend(kind: str) -> str | None:
    if kind in _BACKENDS:
        return kind
    if kind == "auto":
        if sys.platform.startswith("linux"):
            return "bubblewrap"
        if sys.platform == "darwin":
            return "seatbelt"
    return None
