"""What a program needs to read to run: the paths a deny-by-default sandbox must grant.

A confined process sees only what it is granted, so each program it runs must come with
its installation. For a Python interpreter the interpreter itself is asked (a tiny `-c`
script, run unconfined: the interpreter is ours or the user's configured one), once per
process until something is installed into it: its environment, its base installation,
the real location of its executable, every directory on its `sys.path` (those `.pth`
files add for editable installs included) and the directories of the shared libraries
it loads. For any other program, its installation is read off the file system: the real
location of the executable, the interpreter its `#!` line names, and the directories of
the files its command line names.

Whatever would bring something hidden into view is left out: a path that is, contains
or lies inside a bugbout home, the repository or the store. The interpreter's own
environment is the one exception for paths inside: a test environment lives under a
bugbout home, and a project's `.venv` under the project.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import known_homes

__all__ = ["interpreter_paths", "is_python", "program_paths", "venv_paths"]

_PROBE_TIMEOUT = 60.0

# Runs in the interpreter under test, of any version from 2.7 on, with the standard
# library only. It imports the extension modules a test suite commonly loads so that
# their shared libraries are mapped, then lists every mapped file. A Python 2
# environment is the interpreter's user base (`infra/legacy_env.py`): that is its prefix.
_PROBE = r"""
import json, os, site, sys
found = {
    "prefix": os.environ.get("PYTHONUSERBASE") or sys.prefix,
    "prefixes": [sys.prefix, getattr(sys, "base_prefix", sys.prefix), sys.exec_prefix,
                 getattr(sys, "base_exec_prefix", sys.exec_prefix)],
    "executable": sys.executable,
    "path": [p for p in sys.path if p],
    "editable": [],
    "libraries": [],
}
if site.ENABLE_USER_SITE:
    found["path"].append(site.getusersitepackages())
for name, module in list(sys.modules.items()):
    mapping = getattr(module, "MAPPING", None)
    if name.startswith("__editable__") and isinstance(mapping, dict):
        found["editable"] += [str(v) for v in mapping.values()]
for name in ("ssl", "sqlite3", "ctypes", "lzma", "bz2", "zlib", "decimal", "readline",
             "hashlib", "pyexpat", "curses", "dbm", "uuid"):
    try:
        __import__(name)
    except Exception:
        pass
try:
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                found["libraries"].append(fields[5].strip())
except OSError:
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc._dyld_get_image_name.restype = ctypes.c_char_p
        for index in range(libc._dyld_image_count()):
            found["libraries"].append(os.fsdecode(libc._dyld_get_image_name(index)))
    except Exception:
        pass
print(json.dumps(found))
"""

_PYTHON_NAME = re.compile(r"^python(?:\d+(?:\.\d+)*t?)?(?:\.exe)?$")


@dataclass(frozen=True)
class _Footprint:
    """What an interpreter said about itself, as real paths."""

    prefix: Path
    """Its environment: a virtual environment's directory, or its installation."""
    paths: tuple[Path, ...]
    stamps: tuple[tuple[Path, int], ...]
    """Each directory of its `sys.path` with its modification time: an install or an
    uninstall (a `.pth` file added or removed) changes one, and the answer is stale."""

    def is_current(self) -> bool:
        return all(_mtime(path) == mtime for path, mtime in self.stamps)


_FOOTPRINTS: dict[str, _Footprint] = {}


def is_python(program: str) -> bool:
    """Whether `program` is named like a Python interpreter (`python`, `python3.12`)."""
    return bool(_PYTHON_NAME.match(os.path.basename(program)))


def interpreter_paths(python: Path, *, hidden: Iterable[Path] = ()) -> tuple[Path, ...]:
    """What the interpreter `python` needs to run, as real paths, none nested in another.

    Its environment (`sys.prefix`), its base installation, the real directory of its
    executable, its `sys.path` (site-packages and what `.pth` files add), the sources of
    editable installs made through an import hook, and the directories of its shared
    libraries. Nothing that is, contains or lies inside a bugbout home or a path of
    `hidden` (the repository, the store), except what lies inside the interpreter's own
    environment, which may itself sit in a bugbout home (a test environment) or in the
    repository (a project's `.venv`).

    Raises:
        BugboutError: the interpreter cannot be run or does not answer.
    """
    footprint = _FOOTPRINTS.get(str(python))
    if footprint is None or not footprint.is_current():
        footprint = _FOOTPRINTS[str(python)] = _footprint(str(python))
    guarded = _guarded(hidden)
    # An "environment" holding the repository or a home has nothing of its own to show.
    own: Path | None = footprint.prefix
    if any(_inside(g, footprint.prefix) for g in guarded):
        own = None
    kept = [
        path
        for path in footprint.paths
        if not any(_inside(g, path) for g in guarded)
        and ((own is not None and _inside(path, own)) or not any(_inside(path, g) for g in guarded))
    ]
    return _outermost(kept)


def venv_paths(venv: Path, *, hidden: Iterable[Path] = ()) -> tuple[Path, ...]:
    """What the interpreter of the virtual environment `venv` needs to run, learned
    without running it: the environment, and the installation of the Python it was
    made from, which its `pyvenv.cfg` (`home`, the base interpreter's directory) and its
    `bin/python` link name.

    For an environment whose packages an agent chose: its interpreter runs each `.pth`
    file of its site-packages at start-up, so asking it (`interpreter_paths`) would run
    them outside any sandbox. What this cannot see, it does not show: directories that
    `.pth` files add outside the environment, and shared libraries the base interpreter
    loads from outside its installation and the system directories. The answer is only
    as sound as the two files it reads: whoever may have rewritten them (a build that
    ran unconfined) could have them name any directory. Nothing that is, contains or
    lies inside a bugbout home or a path of `hidden` is shown, but the environment.

    Raises:
        BugboutError: `venv` has no `pyvenv.cfg` naming its base interpreter's directory.
    """
    home = _pyvenv_home(venv / "pyvenv.cfg")
    if home is None:
        raise BugboutError(
            f"{venv} is not a virtual environment: no pyvenv.cfg names the Python it was "
            "made from.",
            hint="Create it again with `uv venv`.",
        )
    guarded = _guarded(hidden)
    bases = [_root(_real(home) / "python")]
    if os.path.lexists(venv / "bin" / "python"):
        bases.append(_root(_real(str(venv / "bin" / "python"))))
    return _outermost([_real(str(venv)), *(b for b in bases if _visible(b, guarded))])


def _pyvenv_home(config: Path) -> str | None:
    """The absolute `home` of a `pyvenv.cfg`, or None."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip().lower() == "home" and os.path.isabs(value.strip()):
            return value.strip()
    return None


def program_paths(
    argv: Sequence[str], *, env: Mapping[str, str], hidden: Iterable[Path] = ()
) -> tuple[Path, ...]:
    """What running `argv` reads besides the system directories, as real paths.

    The program's installation: a Python interpreter's paths (`interpreter_paths`), or
    the installation around the real location of the executable (a Node package's
    `node_modules`, a virtual environment, the directory above `bin/`, a version
    manager's root for its shims) plus, for a script, the same for the interpreter its
    `#!` line names (`env node` is looked up on the process's `PATH`). Then the directory
    of every file the command line names by absolute path: a `command` agent's script
    and the modules beside it. Nothing that is, contains or lies inside a bugbout home or
    a path of `hidden`, apart from an interpreter's own environment.
    """
    hidden = tuple(hidden)
    guarded = _guarded(hidden)
    found: list[Path] = []
    program = _locate(argv[0], env)
    if program is not None:
        found += _installation(program, env, hidden, guarded, depth=0)
    for argument in argv[1:]:
        if os.path.isabs(argument) and os.path.isfile(argument):
            folder = Path(os.path.realpath(argument)).parent
            if _visible(folder, guarded):
                found.append(folder)
    return _outermost(found)


def _installation(
    program: str,
    env: Mapping[str, str],
    hidden: tuple[Path, ...],
    guarded: list[Path],
    *,
    depth: int,
) -> list[Path]:
    real = Path(os.path.realpath(program))
    root = _root(real)
    found = [root] if _visible(root, guarded) else []
    if is_python(program) or is_python(str(real)):
        with contextlib.suppress(BugboutError):  # not an interpreter after all
            found += interpreter_paths(Path(program), hidden=hidden)
    interpreter = _shebang(real, env)
    if interpreter is not None and depth < 2:
        found += _installation(interpreter, env, hidden, guarded, depth=depth + 1)
    return found


def _root(real: Path) -> Path:
    """Where the installation of the file at `real` begins. A link to it (npm's
    `<prefix>/bin/tool`) is not followed back: the sandbox recreates the link itself."""
    parts = real.parts
    if "node_modules" in parts:
        # Node resolves a package's dependencies in the node_modules above it.
        return Path(*parts[: parts.index("node_modules") + 1])
    folder = real.parent
    if folder.name == "shims":
        return folder.parent  # pyenv, rbenv, asdf: the shim runs the version manager
    if folder.name == "bin" and not _is_shared(folder.parent):
        return folder.parent  # a prefix: bin/, lib/, share/ of one installation
    return folder


def _shebang(script: Path, env: Mapping[str, str]) -> str | None:
    """The interpreter a script's `#!` line runs, found on PATH for `/usr/bin/env name`."""
    try:
        with script.open("rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    try:
        words = shlex.split(first[2:].decode("utf-8", "replace"))
    except ValueError:
        return None
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return _locate(names[0], env) if names else None
    return words[0] if os.path.isabs(words[0]) else None


def _locate(program: str, env: Mapping[str, str]) -> str | None:
    if os.path.isabs(program):
        return program if os.path.exists(program) else None
    return shutil.which(program, path=env.get("PATH", os.defpath))


def _footprint(python: str) -> _Footprint:
    """Ask the interpreter; its answer holds until something is installed into it.

    The probe runs without bugbout's own `PYTHON*` variables (`PYTHONPATH`) from `/`, so
    only what the interpreter itself puts on its path is reported; not with `-E`, which
    would also drop what a Python 2 environment's launcher sets.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    try:
        result = subprocess.run(
            [python, "-c", _PROBE],
            cwd="/",
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
        answer = json.loads(result.stdout) if result.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        answer = None
    if not isinstance(answer, dict):
        raise BugboutError(
            f"The Python interpreter {python} could not say where it is installed.",
            hint=f"Check that `{python} -c 'import sys'` runs.",
        )
    prefix = _real(answer["prefix"])
    candidates = [
        prefix,
        *map(_real, answer["prefixes"]),
        _real(answer["executable"]).parent,
        *map(_real, answer["path"]),
        *map(_real, answer["editable"]),
        *(_real(library).parent for library in answer["libraries"]),
    ]
    existing = [path for path in candidates if path.exists()]
    folders = dict.fromkeys(path for path in map(_real, answer["path"]) if path.is_dir())
    return _Footprint(
        prefix=prefix,
        paths=tuple(dict.fromkeys(existing)),
        stamps=tuple((folder, _mtime(folder)) for folder in folders),
    )


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _guarded(hidden: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys([*known_homes(), *(_real(str(h)) for h in hidden)]))


def _visible(path: Path, guarded: Sequence[Path]) -> bool:
    return not any(_inside(path, g) or _inside(g, path) for g in guarded)


def _is_shared(prefix: Path) -> bool:
    """Whether `prefix` holds far more than one installation: the root, a home directory,
    or a home's `.local` (where `~/.local/bin` sits beside every application's data)."""
    if prefix.name == ".local":
        prefix = prefix.parent
    return prefix == Path(prefix.anchor) or prefix == Path.home() or prefix.parent.name == "home"


def _real(path: str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The paths without those inside another, in their first order."""
    unique = list(dict.fromkeys(paths))
    return tuple(p for p in unique if not any(o != p and _inside(p, o) for o in unique))
