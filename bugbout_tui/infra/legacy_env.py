"""Python 2 environments, which uv neither resolves nor creates.

Much of a long history is Python 2 code: on sqlparse, a third of the mined tasks. Their
environment is made with the interpreter's own pip, in a folder of its own given to
Python as its user base (`PYTHONUSERBASE`): `bin/python` is a two-line launcher that
sets it and starts the interpreter, so what pip installed there is importable and
nothing of it touches the interpreter's installation. pip has no date limit; it is
pointed at a date-limited view of the index (`infra.dated_index`).

The test runner comes from today: the newest pytest for Python 2 (4.6), since a dated one
is older than the options bugbout's runs give (`--rootdir` came in pytest 3.5), with what
it needs, but for what the commit requires itself, which stays as of its date where a
release of the date will do (`install_legacy`).
The packages the interpreter itself holds (pip, setuptools) stay visible, as in a
virtual environment that sees its system's packages.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bugbout_tui.infra.dated_index import DatedIndex, upstream_index
from bugbout_tui.infra.env import run_logged
from bugbout_tui.infra.manifests import requirement_name

LEGACY_TIMEOUT_SECONDS = 30 * 60.0
"""How long one pip command may take: as long as one uv command (`UV_TIMEOUT_SECONDS`)."""
MAX_LIFTED = 16
"""How many packages the date is lifted for before the resolution is given up: each costs
a run of pip, and a 2009 commit's runner of today needs a dozen."""
_NO_RELEASE = re.compile(r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*)")
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
    relaxed: list[str]
    """Packages whose date was lifted because pip found no release of them by it."""
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
    """Install `runner` and `requirements` in `root` as of `date`, but for the runner and
    what today's release of it needs, which come from today (`lifted` too); lift the date
    for each package pip then finds no release of. With `project` (a copy of the project,
    whose `setup.py` declares its dependencies), the project too, which is then
    uninstalled to keep what it needed.

    What the commit itself requires stays dated even when the runner needs it, where a
    release of the date will do: a `six` of today would hide the Python 2 bugs an old
    `six` had. The rest of the runner's needs come from today whole, since their old
    releases can satisfy pytest's loose requirements and still lack what it imports (a
    2013 `contextlib2` has no `suppress`).

    Raises:
        LegacyFailed: pip failed, or still failed with `MAX_LIFTED` packages lifted.
    """
    upstream = upstream_index(os.environ)
    needs = await _needs_today(python, root.parent, runner, upstream, log)
    declared = {requirement_name(r) for r in requirements}
    launcher = write_launcher(root, python)
    wanted = [*merged([*runner, *requirements]), *([str(project)] if project else [])]
    first = {requirement_name(r) for r in [*runner, *lifted]} | (needs - declared)
    relaxed: list[str] = []
    while True:
        with DatedIndex(upstream, date, lifted=[*first, *relaxed]) as dated:
            args = ["install", "--user", *_PIP, "--index-url", dated.url, *wanted]
            try:
                await _pip(launcher, args, log)
            except LegacyFailed as failed:
                found = {requirement_name(n) for n in _NO_RELEASE.findall(failed.output)}
                blocking = sorted(found - first - set(relaxed))
                if not blocking or len(relaxed) >= MAX_LIFTED:
                    raise
                relaxed += blocking
                continue
            undated = sorted(dated.undated)
            break
    if project is not None:
        name = await _run(launcher, ["setup.py", "--name"], log, cwd=project)
        await _pip(launcher, ["uninstall", "--yes", *_PIP, name.strip().splitlines()[-1]], log)
    pins = await _frozen(launcher, log)
    held = {requirement_name(pin) for pin in pins}
    return LegacyInstall(
        pins=pins,
        runner=sorted(held & first),
        relaxed=[name for name in relaxed if name in held],
        undated=undated,
    )


async def _needs_today(
    python: Path, scratch: Path, runner: Sequence[str], upstream: str, log: Path
) -> set[str]:
    """The packages today's release of `runner` holds, learnt by installing it alone in a
    scratch folder that is then deleted."""
    folder = Path(tempfile.mkdtemp(prefix=".runner-", dir=scratch))
    try:
        launcher = write_launcher(folder, python)
        with DatedIndex(upstream, None) as today:
            args = ["install", "--user", *_PIP, "--index-url", today.url, *runner]
            await _pip(launcher, args, log)
        return {requirement_name(pin) for pin in await _frozen(launcher, log)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_PLAIN = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*((?:[<>=!~]=?|===)[^;\[@]*)?\s*")


def merged(requirements: Sequence[str]) -> list[str]:
    """`requirements` with those of one name (and no marker, extra or URL) made one:
    the pip of Python 2 refuses a name given twice ("Double requirement given")."""
    order: list[str] = []
    shown: dict[str, str] = {}
    specs: dict[str, list[str]] = {}
    for requirement in requirements:
        match = _PLAIN.fullmatch(requirement)
        if match is None:
            order.append(requirement)
            continue
        name = requirement_name(match[1])
        if name not in shown:
            order.append(name)
            shown[name], specs[name] = match[1], []
        if match[2] and match[2].strip() not in specs[name]:
            specs[name].append(match[2].strip())
    return [shown[k] + ",".join(specs[k]) if k in shown else k for k in order]


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


async def _pip(launcher: Path, args: list[str], log: Path) -> str:
    """Run the environment's pip (see `_run`)."""
    return await _run(launcher, ["-m", "pip", *args], log, cwd=log.parent)


async def _run(launcher: Path, args: list[str], log: Path, *, cwd: Path) -> str:
    """Run the environment's Python as `run_logged` runs a command.

    Raises:
        LegacyFailed: it failed or took too long.
    """
    environ = {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", **os.environ}
    run = await run_logged(
        [str(launcher), *args],
        log,
        label="python",
        cwd=cwd,
        env=environ,
        timeout=LEGACY_TIMEOUT_SECONDS,
    )
    if run.returncode != 0:
        raise LegacyFailed(run.output)
    return run.output
