"""Test environments built with uv: once per project, Python version and dependency set.

Tests run thousands of times during a bout, so the environment they run in is built once
and reused. It holds the test dependencies and the project's runtime dependencies, never
the project itself: every checkout is put on `PYTHONPATH`, so the code a test imports is
always the tree being tested, not a copy installed when the environment was built.

An environment's directory name carries a digest of everything that went into it (Python
version, dependency lists, install-project), so a change to any of them selects a fresh
environment instead of silently reusing a stale one. A marker file holding that spec is
written last: a build that died half-way has no marker and is rebuilt, not trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
import tomllib
from collections.abc import AsyncIterator, Mapping, Sequence
from configparser import ConfigParser
from configparser import Error as ConfigParserError
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import uv
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.core.fs import write_model
from bugbout_tui.core.paths import bugbout_home

MARKER_NAME = "bugbout-env.json"
"""The file, inside an environment, whose presence means the build finished."""

PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
"""Files that make a directory installable; with `requirements*.txt` they feed the digest
that keys an environment when the dependencies are not declared statically."""

_COPY_IGNORED = shutil.ignore_patterns(
    ".git", ".hg", ".svn", ".bugbout", ".venv", ".tox", ".nox", "node_modules",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
)  # fmt: skip
_LOCK_POLL_SECONDS = 0.1
_INTERPRETER_TIMEOUT_SECONDS = 60.0
_TAIL_LINES = 12
UV_TIMEOUT_SECONDS = 30 * 60.0
"""How long one uv command may take. Resolving and building old packages can wait on
itself for ever (a 2013 `wheel` needs `distribute`, an sdist whose build needs `wheel`),
using no CPU and saying nothing; a bout must go on. Builds of large sdists take
minutes, never this long."""
_FOUND_INTERPRETER = re.compile(r"^Using \S+ \S+ interpreter at", re.MULTILINE)
"""How `uv venv` says it found the Python it was asked for, before any later failure."""


class EnvSpec(BaseModel):
    """Everything that goes into an environment; its digest names the environment."""

    model_config = ConfigDict(frozen=True)

    python: str
    test_dependencies: list[str]
    runtime_dependencies: list[str]
    """The project's `[project] dependencies` when pyproject.toml declares them statically."""
    metadata_digest: str | None = None
    """Digest of the packaging files when the dependencies are only known by building the
    project (setup.py, dynamic metadata); `None` when they are declared or not wanted."""
    install_project: bool

    @field_validator("test_dependencies", "runtime_dependencies")
    @classmethod
    def _normalise(cls, requirements: list[str]) -> list[str]:
        """Order and spacing must not change the digest, or equal specs would rebuild."""
        cleaned = {" ".join(requirement.split()) for requirement in requirements}
        return sorted(requirement for requirement in cleaned if requirement)

    def digest(self) -> str:
        """A short, stable hash of the spec, used in the environment's directory name."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Environment:
    """An interpreter ready to run the project's tests."""

    python: Path
    """The interpreter to run `python -m pytest` with."""
    root: Path | None
    """The environment's directory; `None` when an existing interpreter is used."""
    key: str
    """The environment's directory name (or the interpreter's path): stable per spec."""
    built: bool
    """True when this call built the environment; False when it was reused."""


@dataclass(frozen=True)
class _ProjectMetadata:
    name: str | None
    dependencies: list[str] | None
    """`None` when they are dynamic or no pyproject.toml declares them."""
    files_digest: str | None
    """`None` when the directory has no packaging file at all."""


@dataclass(frozen=True)
class _UvRun:
    returncode: int
    output: str


def find_uv() -> Path:
    """The uv binary: the one our own `uv` dependency ships, else the first on `PATH`."""
    with contextlib.suppress(FileNotFoundError):
        return Path(uv.find_uv_bin())
    found = shutil.which("uv")
    if found is not None:
        return Path(found)
    raise ToolMissingError(
        "uv is not installed; bugbout needs it to build test environments.",
        hint="Install it with: pip install uv",
    )


def spec_for(
    project_root: Path, *, python: str, test_dependencies: Sequence[str], install_project: bool
) -> EnvSpec:
    """What an environment for this project would hold, without building anything.

    Raises:
        BugboutError: the project's packaging files cannot be read, or `install_project`
            is set for a directory that has nothing to install.
    """
    metadata = _read_project(project_root) if install_project else None
    return _spec(project_root, metadata, python, test_dependencies)


def _spec(
    project_root: Path,
    metadata: _ProjectMetadata | None,
    python: str,
    test_dependencies: Sequence[str],
) -> EnvSpec:
    """The spec; `metadata` is `None` when the project is not to be installed."""
    if not python.strip():
        raise UsageError("[project] python is empty.", hint='Set it to a version such as "3.12".')
    if metadata is None:
        return EnvSpec(
            python=python,
            test_dependencies=list(test_dependencies),
            runtime_dependencies=[],
            install_project=False,
        )
    if metadata.files_digest is None:
        raise BugboutError(
            f"{project_root} has no pyproject.toml, setup.cfg or setup.py, so there is no "
            "project to take runtime dependencies from.",
            hint="Set [project] install-project = false and list what the tests need in "
            "test-dependencies.",
        )
    static = metadata.dependencies is not None
    return EnvSpec(
        python=python,
        test_dependencies=list(test_dependencies),
        runtime_dependencies=metadata.dependencies or [],
        metadata_digest=None if static else metadata.files_digest,
        install_project=True,
    )


async def ensure_environment(
    project_root: Path,
    *,
    python: str,
    test_dependencies: Sequence[str],
    install_project: bool,
    interpreter: str | None,
    home: Path | None = None,
    log_dir: Path | None = None,
) -> Environment:
    """The environment to run this project's tests in, built on first use.

    uv runs as asyncio subprocesses, so the caller's event loop keeps running during a
    build and cancelling the caller kills uv. Builders of the same environment, in this
    process or another, take turns on a file lock; the later one reuses the result.

    Raises:
        BugboutError: the interpreter is unusable, the Python version is unavailable, or
            uv failed (the message names the log holding uv's full output).
        ToolMissingError: uv cannot be found.
    """
    if interpreter is not None:
        return await _existing_interpreter(interpreter, project_root)
    metadata = _read_project(project_root) if install_project else None
    name = metadata.name if metadata is not None else _project_name_if_readable(project_root)
    spec = _spec(project_root, metadata, python, test_dependencies)
    key = f"{_slug(name or project_root.resolve().name)}-py{_slug(python)}-{spec.digest()}"
    envs = (home or bugbout_home()).resolve() / "envs"
    root = envs / key
    environment = Environment(python=root / "bin" / "python", root=root, key=key, built=False)
    if _is_ready(root, spec):
        return environment
    (envs / ".locks").mkdir(parents=True, exist_ok=True)
    async with _exclusive(envs / ".locks" / f"{key}.lock"):
        if _is_ready(root, spec):
            return environment
        log = (log_dir or envs / "logs").resolve() / f"{key}.log"
        await _build(find_uv(), project_root.resolve(), spec, root, log)
    return Environment(python=environment.python, root=root, key=key, built=True)


def _read_project(project_root: Path) -> _ProjectMetadata:
    """Name and static dependencies from pyproject.toml, else from setup.cfg's name.

    Dependencies computed by a build backend (setup.py, `dynamic = ["dependencies"]`)
    cannot be read without building, so the environment is keyed by a digest of the
    files they come from instead.
    """
    digest = hashlib.sha256()
    present = [project_root / name for name in PACKAGING_FILES if (project_root / name).is_file()]
    requirements = sorted(project_root.glob("requirements*.txt"))
    for path in [*present, *requirements]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    files_digest = digest.hexdigest()[:16] if present else None

    pyproject = project_root / "pyproject.toml"
    table: Mapping[str, object] = {}
    if pyproject.is_file():
        try:
            loaded = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise BugboutError(f"{pyproject} is not valid TOML: {error}") from error
        table = loaded if isinstance(loaded, dict) else {}
    name = table.get("name")
    dependencies = table.get("dependencies", [])
    dynamic = table.get("dynamic", [])
    static = bool(table) and isinstance(dynamic, list) and "dependencies" not in dynamic
    if not (isinstance(dependencies, list) and all(isinstance(d, str) for d in dependencies)):
        raise BugboutError(f"{pyproject}: [project] dependencies must be a list of strings.")
    if not isinstance(name, str):
        name = _setup_cfg_name(project_root / "setup.cfg")
    return _ProjectMetadata(
        name=name, dependencies=list(dependencies) if static else None, files_digest=files_digest
    )


def _project_name_if_readable(project_root: Path) -> str | None:
    """The name, for the environment's directory only, so an unreadable file is no error."""
    try:
        return _read_project(project_root).name
    except (BugboutError, OSError):
        return None


def _setup_cfg_name(path: Path) -> str | None:
    if not path.is_file():
        return None
    parser = ConfigParser()
    with contextlib.suppress(ConfigParserError, UnicodeDecodeError):
        parser.read(path, encoding="utf-8")
        return parser.get("metadata", "name", fallback=None)
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-.") or "project"


def _is_ready(root: Path, spec: EnvSpec) -> bool:
    marker = root / MARKER_NAME
    try:
        recorded = EnvSpec.model_validate_json(marker.read_bytes())
    except (OSError, ValidationError):
        return False
    return recorded == spec and (root / "bin" / "python").exists()


@contextlib.asynccontextmanager
async def _exclusive(lock_path: Path) -> AsyncIterator[None]:
    """Hold an flock on `lock_path`, polling so the event loop is never blocked.

    flock belongs to the open file, so two builders in one process exclude each other
    just as two processes do; the kernel drops the lock if the holder dies.
    """
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(_LOCK_POLL_SECONDS)
        yield
    finally:
        os.close(fd)


async def _build(uv_bin: Path, project_root: Path, spec: EnvSpec, root: Path, log: Path) -> None:
    if root.exists():
        shutil.rmtree(root)  # a half-built environment: no marker, so start over
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    run = await _run_uv(uv_bin, ["venv", "--no-project", "--python", spec.python, str(root)], log)
    if run.returncode != 0 and _FOUND_INTERPRETER.search(run.output):
        raise BugboutError(
            f"uv found Python {spec.python} but could not create the environment at {root}.",
            hint=_uv_said(run, log),
        )
    if run.returncode != 0:
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise BugboutError(
            f"Python {spec.python} is not available: uv could not find or download it; "
            f"install it, or set [project] python to one you have ({running} is running "
            "bugbout).",
            hint=_uv_said(run, log),
        )
    venv_python = root / "bin" / "python"
    if spec.install_project and spec.metadata_digest is not None:
        await _install_through_build(uv_bin, project_root, spec, venv_python, log)
    else:
        wanted = [*spec.test_dependencies, *spec.runtime_dependencies]
        if wanted:
            await _install(uv_bin, venv_python, wanted, log, what=", ".join(wanted))
    write_model(root / MARKER_NAME, spec)


async def _install_through_build(
    uv_bin: Path, project_root: Path, spec: EnvSpec, venv_python: Path, log: Path
) -> None:
    """Install the project to pull in its dependencies, then remove the project itself.

    The build runs on a copy because build backends write into the source tree (build/,
    *.egg-info), and the tree may be a checkout under test. The copy has no `.git`, so
    setuptools-scm and hatch-vcs are told a version instead of failing to find one.
    """
    with tempfile.TemporaryDirectory(prefix="bugbout-build-") as scratch:
        copy = Path(scratch) / (project_root.resolve().name or "project")
        shutil.copytree(project_root, copy, symlinks=True, ignore=_COPY_IGNORED)
        env = {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", **os.environ}
        await _install(
            uv_bin,
            venv_python,
            [*spec.test_dependencies, str(copy)],
            log,
            what=f"the project in {project_root} (built to learn its dependencies)",
            env=env,
        )
        frozen = await _run_uv(uv_bin, ["pip", "freeze", "--python", str(venv_python)], log)
        installed = _installed_from(frozen.output, copy)
        if frozen.returncode != 0 or installed is None:
            raise BugboutError(
                f"uv installed the project in {project_root} but bugbout could not tell "
                "under which name, so it cannot remove it from the test environment.",
                hint=_uv_said(frozen, log),
            )
        removed = await _run_uv(
            uv_bin, ["pip", "uninstall", "--python", str(venv_python), installed], log
        )
        if removed.returncode != 0:
            raise BugboutError(
                f"uv could not remove {installed} from the test environment after "
                "installing it for its dependencies.",
                hint=_uv_said(removed, log),
            )


def _installed_from(freeze_output: str, source: Path) -> str | None:
    """The distribution `uv pip freeze` reports as installed from `source`."""
    for line in freeze_output.splitlines():
        name, separator, url = line.partition(" @ ")
        if separator and url.startswith("file:"):
            path = Path(unquote(urlparse(url.strip()).path))
            if path.resolve() == source.resolve():
                return name.strip()
    return None


async def _install(
    uv_bin: Path,
    venv_python: Path,
    requirements: list[str],
    log: Path,
    *,
    what: str,
    env: Mapping[str, str] | None = None,
) -> None:
    """One `uv pip install` for everything, so a single resolution keeps them consistent."""
    run = await _run_uv(
        uv_bin, ["pip", "install", "--python", str(venv_python), *requirements], log, env=env
    )
    if run.returncode != 0:
        raise BugboutError(
            f"Could not build the test environment: uv failed to install {what}.",
            hint=_uv_said(run, log),
        )


async def _run_uv(
    uv_bin: Path, args: list[str], log: Path, *, env: Mapping[str, str] | None = None
) -> _UvRun:
    """Run uv, append the command and its output to `log`, kill uv and the builds it
    started if we are cancelled or it takes too long (`UV_TIMEOUT_SECONDS`).

    The working directory is the log's folder, so no project configuration found around
    the caller's current directory changes what uv does; the user's own uv settings
    (index URL, cache, Python downloads) still apply.
    """
    return await run_logged(
        [str(uv_bin), *args],
        log,
        label="uv",
        cwd=log.parent,
        env=env if env is not None else os.environ,
        timeout=UV_TIMEOUT_SECONDS,
    )


async def run_logged(
    argv: list[str],
    log: Path,
    *,
    label: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
) -> _UvRun:
    """Run `argv`, append `$ label args`, its output and its exit status to `log`; kill
    it and what it started (its process group) if we are cancelled or it takes longer
    than `timeout`, which its output then says."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    try:
        raw, _ = await asyncio.wait_for(process.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as error:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if not isinstance(error, TimeoutError):
            raise
        raw = f"error: {label} did not finish in {timeout:.0f} s, and was stopped\n".encode()
    output = raw.decode("utf-8", errors="replace")
    returncode = process.returncode if process.returncode is not None else -1
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {label} {' '.join(argv[1:])}\n{output}[exit {returncode}]\n\n")
    return _UvRun(returncode=returncode, output=output)


def _uv_said(run: _UvRun, log: Path) -> str:
    lines = [line for line in run.output.splitlines() if line.strip()][-_TAIL_LINES:]
    quoted = "\n".join(f"  {line}" for line in lines) or "  (no output)"
    return f"uv said:\n{quoted}\nFull output: {log}"


async def _existing_interpreter(interpreter: str, project_root: Path) -> Environment:
    """Check that the configured interpreter exists, runs, and can import pytest.

    A bare name is looked up on `PATH`; a relative path is taken from the project root.
    The path is kept as given, not resolved, because resolving a virtualenv's `python`
    symlink would escape the virtualenv.
    """
    given = interpreter.strip()
    if os.sep in given or (os.altsep and os.altsep in given):
        candidate = Path(given).expanduser()
        path = candidate if candidate.is_absolute() else project_root / candidate
    else:
        found = shutil.which(given)
        path = Path(found) if found is not None else project_root / given
    fix = "Set [project] interpreter to a Python executable, or remove it to build one."
    if not path.is_file():
        raise BugboutError(f"The interpreter {path} does not exist.", hint=fix)
    if not os.access(path, os.X_OK):
        raise BugboutError(f"The interpreter {path} is not executable.", hint=fix)
    try:
        process = await asyncio.create_subprocess_exec(
            str(path),
            "-c",
            "import pytest",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as error:
        raise BugboutError(f"The interpreter {path} cannot be run: {error}", hint=fix) from error
    try:
        raw, _ = await asyncio.wait_for(process.communicate(), _INTERPRETER_TIMEOUT_SECONDS)
    except (asyncio.CancelledError, TimeoutError) as error:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        if isinstance(error, TimeoutError):
            raise BugboutError(
                f"The interpreter {path} did not finish `import pytest` within "
                f"{_INTERPRETER_TIMEOUT_SECONDS:.0f} seconds.",
                hint=fix,
            ) from error
        raise
    if process.returncode != 0:
        output = raw.decode("utf-8", errors="replace").strip()
        if "No module named 'pytest'" in output:
            raise BugboutError(
                f"The interpreter {path} cannot import pytest.",
                hint=f"Install pytest into {path}: {path} -m pip install pytest",
            )
        last = output.splitlines()[-1] if output else f"exit status {process.returncode}"
        raise BugboutError(f"The interpreter {path} failed to start: {last}", hint=fix)
    return Environment(python=path, root=None, key=str(path), built=False)
