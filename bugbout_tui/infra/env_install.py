"""The clean install of an environment task: a fresh environment, filled from what the
tree declares, as of the task's date, from one index; and D², what it then holds.

"Clean" means nothing but the tree decides: uv reads no configuration of the user's
(`--no-config`) and no index settings from the environment, the index is the one given,
and `--exclude-newer` hides every file uploaded after the task's date. The project is
installed as a user would install it, not editable, so its own dependencies resolve as
it declares them, together with every `requirements*.txt` at its root, in one
resolution. Build backends may write into the tree as they do for a user (setuptools'
`build/` and `*.egg-info`): the tree is the scoring's own checkout.

What a date cannot limit is recorded as `unenforced`: a distribution installed from a
direct URL, a VCS or a local path, and any file whose index gives no upload time (uv
then leaves it out and says so, which usually fails the install).

Everything ends as a record, never an exception: an interpreter uv cannot find, a
resolution that fails, a step that runs out of time. Only a missing uv raises.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import tomllib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from bugbout_tui.core.env_models import EnvInstall
from bugbout_tui.infra.dated_env import _INDEX_SETTINGS, _NO_UPLOAD_DATE, _package, _stamp
from bugbout_tui.infra.env import _installed_from, _run_uv, _UvRun, find_uv
from bugbout_tui.infra.manifests import _escapes

_RESOLUTION_SETTINGS = (
    *_INDEX_SETTINGS,
    "UV_EXCLUDE_NEWER",
    "UV_CONSTRAINT",
    "UV_OVERRIDE",
    "UV_BUILD_CONSTRAINT",
    "UV_PRERELEASE",
    "UV_RESOLUTION",
    "UV_NO_BUILD",
    "UV_NO_BINARY",
    "UV_NO_SOURCES",
    "UV_TORCH_BACKEND",
    "UV_CONFIG_FILE",
)
"""Prefixes of uv's variables that change what an install resolves to: a clean install
is decided by the tree, the date and the index alone. (`UV_INDEX` covers every
`UV_INDEX_<NAME>_…` too.)"""
_DETAIL_CHARS = 400


async def clean_install(
    tree: Path,
    *,
    python: str,
    date: datetime,
    index: str,
    venv: Path,
    log: Path,
    timeout: float,
) -> EnvInstall:
    """Create `venv` afresh with `python` and install what `tree` declares into it, as of
    `date`, from `index` alone; uv's whole output goes to `log`.

    The caller records where `log` is, relative to its store. `python` is what
    `uv venv --python` takes: a version (`3.11`) or an interpreter's path.

    Raises:
        ToolMissingError: uv cannot be found.
    """
    uv_bin = find_uv()
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    env = _clean_environment(os.environ)

    async def uv(args: list[str]) -> _UvRun:
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            raise TimeoutError
        return await asyncio.wait_for(_run_uv(uv_bin, args, log, env=env), remaining)

    def ended(run: _UvRun | None, detail: str | None, **found: list[str]) -> EnvInstall:
        return EnvInstall(
            ok=detail is None,
            exit_code=None if run is None else run.returncode,
            seconds=round(time.monotonic() - started, 3),
            detail=detail,
            **found,
        )

    python_of_venv = venv / "bin" / "python"
    wanted = _declared(tree)
    run: _UvRun | None = None
    try:
        if venv.exists():
            shutil.rmtree(venv)
        run = await uv(["venv", "--no-config", "--no-project", "--python", python, str(venv)])
        if run.returncode != 0:
            return ended(run, f"uv could not create a Python {python} environment: "
                         + _first_error(run))  # fmt: skip
        if not wanted:
            return ended(run, None)
        run = await uv(
            ["pip", "install", "--no-config", "--python", str(python_of_venv),
             "--exclude-newer", _stamp(date), "--index-url", index, *wanted]
        )  # fmt: skip
        undated = [
            f"{name} (the index gives no upload time, not limited by date)"
            for name in dict.fromkeys(_package(f) for f in _NO_UPLOAD_DATE.findall(run.output))
        ]
        if run.returncode != 0:
            return ended(run, _first_error(run), unenforced=undated)
        frozen = await uv(["pip", "freeze", "--python", str(python_of_venv)])
    except TimeoutError:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"[stopped: the install took longer than {timeout:g} seconds]\n")
        return ended(None, f"the install did not finish within {timeout:g} seconds")
    if frozen.returncode != 0:
        return ended(run, "uv could not list what it installed: " + _first_error(frozen))
    installed, escaped = _installed(frozen.output, tree)
    return ended(run, None, installed=installed, unenforced=[*escaped, *undated])


def _clean_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment uv runs in: the caller's, without settings that choose what gets
    installed. A project that takes its version from git (setuptools-scm) is told one,
    since the tree is a checkout without history."""
    kept = {k: v for k, v in environ.items() if not k.startswith(_RESOLUTION_SETTINGS)}
    return {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", **kept}


def _declared(tree: Path) -> list[str]:
    """uv's arguments for what the tree declares: the project, when the tree is one, and
    `-r` for each `requirements*.txt` at its root."""
    wanted = [str(tree)] if _is_project(tree) else []
    for path in sorted(tree.glob("requirements*.txt")):
        if path.is_file():
            wanted += ["-r", str(path)]
    return wanted


def _is_project(tree: Path) -> bool:
    """A `setup.py`, or a `pyproject.toml` that says how to build or what the project is;
    one that only configures tools makes no project. One that cannot be read is tried,
    so uv says what is wrong with it."""
    if (tree / "setup.py").is_file():
        return True
    pyproject = tree / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True
    return "project" in data or "build-system" in data


def _installed(freeze_output: str, tree: Path) -> tuple[list[str], list[str]]:
    """D² from `uv pip freeze`, without the project itself, and what escaped the date."""
    project = _installed_from(freeze_output, tree)
    installed: list[str] = []
    escaped: list[str] = []
    for line in freeze_output.splitlines():
        text = line.strip()
        if not text or text.startswith("#") or ("==" not in text and " @ " not in text):
            continue
        name, at, url = text.partition(" @ ")
        if at and name.strip() == project:
            continue
        installed.append(text)
        kind = _escapes(url.strip()) if at else None
        if kind is not None:
            escaped.append(f"{text} ({'a local path' if kind == 'local' else kind}, "
                           "not limited by date)")  # fmt: skip
    return sorted(installed, key=str.lower), escaped


def _first_error(run: _UvRun) -> str:
    """uv's first error in one line, with the indented line under it that gives its
    cause (`No solution found…: Because there is no version of x==9…`)."""
    lines = run.output.splitlines()
    for number, line in enumerate(lines):
        text = line.strip()
        if not text.startswith(("error:", "×")):
            continue
        said = text.removeprefix("error:").removeprefix("×").strip()
        below = lines[number + 1] if number + 1 < len(lines) else ""
        if below[:1].isspace() and below.strip():
            cause = below.strip()
            for prefix in ("cause:", "Caused by:", "╰─▶"):
                cause = cause.removeprefix(prefix).strip()
            said = f"{said.rstrip(':')}: {cause}"
        return said[:_DETAIL_CHARS]
    kept = [line.strip() for line in lines if line.strip() and not line.startswith("warning:")]
    return kept[-1][:_DETAIL_CHARS] if kept else f"uv exited with status {run.returncode}"
