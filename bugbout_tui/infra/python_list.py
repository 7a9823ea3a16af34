"""Which Pythons this machine has: what `uv python list` knows, with the installations of
version managers (pyenv, asdf, mise) shown to it, and the Python 2.7 interpreters uv
cannot list, each with its path (`infra.pythons` chooses among them).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from bugbout_tui.core.fs import write_atomic
from bugbout_tui.infra.env import find_uv
from bugbout_tui.infra.pythons import Python, is_shim, parse_list, version_manager_dirs

PYTHONS_KEPT_SECONDS = 24 * 3600
_LISTING = "uv and python2.7"
"""What a kept list holds: a list kept by a bugbout that looked for less is not reused."""
_PYTHON_SETTINGS = (
    "UV_PYTHON_DOWNLOADS",
    "UV_PYTHON_INSTALL_DIR",
    "UV_MANAGED_PYTHON",
    "UV_NO_MANAGED_PYTHON",
    "UV_PYTHON_PREFERENCE",
)


async def available_pythons(envs: Path) -> list[Python]:
    """What `uv python list` knows, with the version managers' installations on its PATH,
    kept for a day: uv probes every interpreter on PATH, which takes seconds on a machine
    with many shims, and a bout asks once. The list is asked again when PATH, uv's Python
    settings or the installed versions change, or an interpreter is gone."""
    search = os.pathsep.join(
        [os.environ.get("PATH", ""), *map(str, version_manager_dirs(os.environ, Path.home()))]
    )
    settings = [_LISTING, search, *(os.environ.get(name, "") for name in _PYTHON_SETTINGS)]
    digest = hashlib.sha256("\0".join(settings).encode()).hexdigest()[:16]
    cache = envs / f"pythons-{digest}.json"
    with contextlib.suppress(OSError):
        if time.time() - cache.stat().st_mtime < PYTHONS_KEPT_SECONDS:
            found = parse_list(cache.read_text(encoding="utf-8"))
            if all(p.path is None or p.path.exists() for p in found):
                return found
    process = await asyncio.create_subprocess_exec(
        str(find_uv()), "python", "list", "--output-format", "json",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PATH": search},
    )  # fmt: skip
    raw, _ = await process.communicate()
    text = raw.decode("utf-8", "replace")
    if process.returncode == 0:
        with contextlib.suppress(ValueError):
            text = json.dumps([*json.loads(text), *await _legacy_pythons(search)])
        with contextlib.suppress(OSError):
            envs.mkdir(parents=True, exist_ok=True)
            write_atomic(cache, text)
    return parse_list(text)


async def _legacy_pythons(search: str) -> list[dict[str, str]]:
    """The Python 2.7 interpreters in the folders of `search` (a PATH), listed as uv lists
    its own: uv knows nothing older than 3.6, and a Python 2 commit needs one."""
    found: list[dict[str, str]] = []
    seen: set[Path] = set()
    for folder in filter(None, search.split(os.pathsep)):
        candidate = Path(folder) / "python2.7"
        if is_shim(candidate) or not os.access(candidate, os.X_OK):
            continue
        if (real := candidate.resolve()) in seen:
            continue
        seen.add(real)
        process = await asyncio.create_subprocess_exec(
            str(candidate), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            raw, _ = await asyncio.wait_for(process.communicate(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()
            continue
        version = raw.decode("utf-8", "replace").strip()
        if process.returncode == 0 and version.startswith("2."):
            entry = {"key": f"cpython-{version}-legacy", "version": version}
            found.append({**entry, "implementation": "cpython", "path": str(candidate)})
    return found
