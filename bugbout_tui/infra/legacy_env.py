"""Python 2 environments, which uv neither resolves nor creates.

Much of a long history is Python 2 code: on sqlparse, a third of the mined tasks. Their
environment is made with the interpreter's own pip, in a folder of its own given to
Python as its user base (`PYTHONUSERBASE`): `bin/python` is a two-line launcher that
sets it and starts the interpreter, so what pip installed there is importable and
nothing of it touches the interpreter's installation. pip has no date limit; it is
pointed at a date-limited view of the index (`infra.dated_index`).

The test runner comes first, from today: the newest pytest for Python 2 (4.6) and what it
needs. A dated one is older than every option bugbout's runs give (`--rootdir` came in
pytest 3.5), and with the runner in place the rest resolves as of the date around it.
The packages the interpreter itself holds (pip, setuptools) stay visible, as in a
virtual environment that sees its system's packages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bugbout_tui.infra.dated_index import DatedIndex, upstream_index

LEGACY_TIMEOUT_SECONDS = 30 * 60.0
"""How long one pip command may take: as long as one uv command (`UV_TIMEOUT_SECONDS`)."""
_PIP = ["--isolated", "--disable-pip-version-check", "--no-input"]
"""The user's pip configuration is not read: the view is the only index."""


class LegacyFailed(Exception):
    """pip could not make the environment; `output` is what it said."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output

    @property
    def said(self) -> str:
        """pip's errors, without the notices around them (Python 2's end of life)."""
        lines = self.output.splitlines()
        errors = [line for line in lines if line.startswith(("ERROR:", "error:"))]
        return "\n".join(errors or lines[-6:])


@dataclass(frozen=True)
class LegacyInstall:
    pins: list[str]
    runner: list[str]
    """The runner's packages, taken from today."""
    undated: list[str]
    """Projects whose index gave a file no upload time."""


def is_legacy(version: str) -> bool:
    """Whether `version` (`2.7.18`) is a Python uv cannot make environments for."""
    return version.split(".")[0] == "2"


def write_launcher(root: Path, python: Path) -> Path:
    """`root/bin/python`: the interpreter with `root` as its user base. The interpreter
    is named by its real path, which a sandbox shows where it may not show a link."""
    launcher = root / "bin" / "python"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text(
        "#!/bin/sh\n"
        f"PYTHONUSERBASE={shlex.quote(str(root))} PYTHONNOUSERSITE= "
        f'exec {shlex.quote(str(python.resolve()))} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    return launcher


async def install_legacy(
    python: Path,
    root: Path,
    *,
    requirements: Sequence[str],
    runner: Sequence[str],
    date: datetime,
    lifted: Sequence[str],
    log: Path,
    project: Path | None = None,
) -> LegacyInstall:
    """Install `runner` as of today, then `requirements` as of `date` (but `lifted`), in
    `root`; with `project` (a copy of the project, whose `setup.py` declares its
    dependencies), the project too, which is then uninstalled to keep what it needed.

    Raises:
        LegacyFailed: pip failed.
    """
    launcher = write_launcher(root, python)
    upstream = upstream_index(os.environ)
    with DatedIndex(upstream, None) as today:
        await _pip(launcher, ["install", "--user", *_PIP, "--index-url", today.url, *runner], log)
    taken = [_name(pin) for pin in await _frozen(launcher, log)]
    wanted = [*requirements, *([str(project)] if project is not None else [])]
    with DatedIndex(upstream, date, lifted=[*taken, *lifted]) as dated:
        args = ["install", "--user", *_PIP, "--index-url", dated.url, *wanted]
        await _pip(launcher, args, log)
        undated = sorted(dated.undated)
    if project is not None:
        name = await _run(launcher, ["setup.py", "--name"], log, cwd=project)
        await _pip(launcher, ["uninstall", "--yes", *_PIP, name.strip().splitlines()[-1]], log)
    return LegacyInstall(pins=await _frozen(launcher, log), runner=taken, undated=undated)


async def install_pins(python: Path, root: Path, pins: Sequence[str], *, log: Path) -> None:
    """Install exactly `pins` in `root`, for a resolution made before.

    Raises:
        LegacyFailed: pip failed.
    """
    launcher = write_launcher(root, python)
    with DatedIndex(upstream_index(os.environ), None) as index:
        args = ["install", "--user", "--no-deps", *_PIP, "--index-url", index.url, *pins]
        await _pip(launcher, args, log)


async def _frozen(launcher: Path, log: Path) -> list[str]:
    output = await _pip(launcher, ["list", "--user", "--format=freeze", *_PIP], log)
    return sorted(line.strip() for line in output.splitlines() if "==" in line)


def _name(pin: str) -> str:
    return re.sub(r"[-_.]+", "-", pin.split("==")[0]).lower()


async def _pip(launcher: Path, args: list[str], log: Path) -> str:
    """Run the environment's pip (see `_run`)."""
    return await _run(launcher, ["-m", "pip", *args], log, cwd=log.parent)


async def _run(launcher: Path, args: list[str], log: Path, *, cwd: Path) -> str:
    """Run the environment's Python, append what it said to `log`, stop it if it takes
    too long (and what it started with it).

    Raises:
        LegacyFailed: it failed or took too long.
    """
    process = await asyncio.create_subprocess_exec(
        str(launcher), *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env={"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", **os.environ},
        start_new_session=True,
    )  # fmt: skip
    try:
        raw, _ = await asyncio.wait_for(process.communicate(), LEGACY_TIMEOUT_SECONDS)
    except (TimeoutError, asyncio.CancelledError) as error:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if not isinstance(error, TimeoutError):
            raise
        raw = f"error: it did not finish in {LEGACY_TIMEOUT_SECONDS:.0f} s\n".encode()
    output = raw.decode("utf-8", "replace")
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ python {' '.join(args)}\n{output}[exit {process.returncode}]\n\n")
    if process.returncode != 0:
        raise LegacyFailed(output)
    return output
