"""What every sandbox backend offers, and the backend that confines nothing.

A backend turns a `Confinement` into a command line, so the subprocess layer stays the
same whichever one runs; each checks once per process, with a trial run, that it can
work on this machine.
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.infra.sandbox.confinement import Confinement

UNCONFINED_HINT = (
    "To run without any sandbox instead (not recommended: tests and agents could then write "
    'anywhere and reach the network), set sandbox = "none" under [run] in bugbout.toml.'
)


_PROBE_TIMEOUT = 30.0


class Sandbox(ABC):
    """A way of confining a process, chosen once per run with `select_sandbox`."""

    name: str
    separates_processes: bool = False
    """Each confined process starts in a PID namespace of its own, where it and what it
    starts are all there is: killing every process it can see ends a run's leftovers."""

    @abstractmethod
    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        """The command line to run instead of `argv`.

        The caller still passes `env=confinement.env` and `cwd` to the subprocess.
        """

    @abstractmethod
    def check(self) -> None:
        """Raise `BugboutError`, with the fix as its hint, when this backend cannot run here."""

    def trial_failure(self, program: str, true: str) -> str | None:
        """Why `true`, confined by this backend's `program`, fails here, or None.

        Tried once per sandbox program per process: a failing host fails every run the
        same way.
        """
        if program not in _TRIALS:
            argv = self.wrap([true], Confinement(writable=()), cwd=Path("/"))
            _TRIALS[program] = _trial_run(argv)
        return _TRIALS[program]


class NoSandbox(Sandbox):
    """Runs processes as they are, for users who opt out with `sandbox = "none"`."""

    name = "none"

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        require_command(argv)
        return list(argv)

    def check(self) -> None:
        return None


_TRIALS: dict[str, str | None] = {}


def _trial_run(argv: list[str]) -> str | None:
    """Why `argv` (a sandboxed `true`) fails, or None when it succeeds."""
    try:
        result = subprocess.run(
            argv,
            env={},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"a trial run did not finish within {_PROBE_TIMEOUT:.0f} seconds"
    except OSError as error:
        return str(error)
    if result.returncode == 0:
        return None
    return result.stderr.strip() or f"a trial run exited with status {result.returncode}"


def require_command(argv: Sequence[str]) -> None:
    if not argv:
        raise ValueError("cannot sandbox an empty command line")
