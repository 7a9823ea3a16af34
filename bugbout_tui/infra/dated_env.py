"""Environments resolved as of a date: one `uv pip compile` per set of inputs, one build
per resolved set.

A commit's requirements are resolved with `--exclude-newer` at the fix's date, for the
interpreter chosen for that commit. The result, a list of pins, is what names the
environment (with the interpreter), not the date: commits whose resolutions agree share
one environment, built once and reused by every later bout. Resolutions are kept under
`envs/resolutions/`, keyed by everything that went into them, so a second bout asks uv
nothing it asked before.

When the dated resolution fails because of one package, the version old enough does
not exist (uv says "`x` was filtered by `exclude-newer`") or cannot be built with
today's tools (uv says "Failed to build `x==1.0`"), the limit is lifted for that package alone
(`--exclude-newer-package x=<now>`) and the resolution tried again; the packages lifted
are recorded. A package whose index gives no upload time cannot be dated at all: uv
leaves it out and says so, and it is lifted the same way and listed as unenforced.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bugbout_tui.core.fs import write_model
from bugbout_tui.infra.env import (
    _COPY_IGNORED,
    MARKER_NAME,
    Environment,
    _exclusive,
    _run_uv,
    _uv_said,
)
from bugbout_tui.infra.legacy_env import (
    LegacyFailed,
    install_legacy,
    install_pins,
    is_legacy,
    write_launcher,
)
from bugbout_tui.infra.manifests import requirement_name
from bugbout_tui.infra.pytest_run import run_options
from bugbout_tui.infra.pythons import Python

RUNNER_NEEDS = ("pluggy", "py", "iniconfig", "attrs", "more-itertools", "atomicwrites")
"""What pytests of every age needed besides themselves."""
RUNNER = re.compile(rf"^(pytest([-_].*)?|{'|'.join(map(re.escape, RUNNER_NEEDS))})$")
"""The test runner's packages: pytest, its plugins and what old pytests needed."""
RUNNER_CORE = ("pytest", *RUNNER_NEEDS, "packaging", "exceptiongroup", "tomli")
"""What a later pytest needs that a dated one may not have had: lifted with it. Left
dated, any of them holds pytest back to a release that did without it: a 2015 date keeps
`packaging` at a version today's pytest refuses, and uv settles on pytest 3; a 2016 date
keeps `attrs` older than pytest 3.3 needs, and uv settles on pytest 3.2, which refuses
`--rootdir`."""
BUILD_TOOLS = ("setuptools", "wheel")
"""Lifted together: a dated `wheel` next to a lifted setuptools can be one of 2013, which
needs `distribute`, an sdist whose build needs `wheel` again, and uv waits on that build
for ever."""
MAX_RELAXED = 8
"""How many packages the ladder lifts the date for before it stops trying."""
_FILTERED = re.compile(r"`([^`]+)` was filtered by `exclude-newer`")
_NO_UPLOAD_DATE = re.compile(r"`([^`]+)` is missing an upload date")
_UNBUILDABLE = re.compile(r"[Ff]ailed to (?:download and )?build `([A-Za-z0-9._-]+)==")
"""An old version that today's build tools cannot build (an sdist of its day): a later
version of it, with a wheel, is what lifting its date brings."""
_SMOKE_TIMEOUT_SECONDS = 120.0
_INDEX_SETTINGS = (
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_NO_INDEX",
)
"""uv settings that change what a resolution sees, so they key its cached result."""


class Resolution(BaseModel):
    """A resolved set, kept so the next bout reuses it without asking uv."""

    model_config = ConfigDict(frozen=True)

    packages: list[str]
    python: str
    interpreter: str | None
    relaxed: list[str] = []
    no_upload_time: list[str] = []
    runner_later: list[str] = []
    checked: bool = False
    """The runner was tried on the built environment (and lifted if it could not run)."""
    build_error: str | None = None
    """The environment could not be built from these pins (uv's words)."""
    runner_problem: str | None = None
    """The dated runner could not run on the interpreter, and no later one resolved."""
    dropped: list[str] = []
    """pytest plugins the commit asked for, left out because no pytest that runs on the
    interpreter can load them (a plugin of a pytest long gone)."""
    date: datetime | None = None
    """The date the pins were resolved as of, which the build tools of any sdist among
    them are taken as of too when the environment is built (None only in resolutions
    kept by a bugbout that did not record it; `resolve` fills it in)."""

    def lifted(self) -> list[str]:
        """The packages whose pins were taken past `date`: the install lifts them too."""
        return list(dict.fromkeys([*self.relaxed, *self.runner_later, *self.no_upload_time]))

    def key(self) -> str:
        digest = hashlib.sha256(
            "\n".join([self.python, self.interpreter or "", *self.packages]).encode()
        ).hexdigest()[:12]
        return f"dated-py{self.python}-{digest}"


@dataclass(frozen=True)
class Failed:
    """A resolution uv could not make, with what it said."""

    output: str
    log: Path

    def quoted(self) -> str:
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        keep = [line for line in lines if not line.startswith("warning:")] or lines
        return " ".join(keep[:6])[:600] or "uv gave no reason"


@dataclass(frozen=True)
class Inputs:
    """Everything a resolution depends on."""

    requirements: list[str]
    python: Python
    date: datetime
    build: Path | None
    """A packaging file uv must build to learn the dependencies (in a pristine tree)."""

    def digest(self, environ: Mapping[str, str]) -> str:
        parts = [*self.requirements, self.python.text, str(self.python.path), _stamp(self.date)]
        if self.build is not None:
            parts.append(_tree_digest(self.build.parent))
        parts += [f"{name}={environ.get(name, '')}" for name in _INDEX_SETTINGS]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _tree_digest(tree: Path) -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        path = tree / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _package(filename: str) -> str:
    """A distribution's name from a wheel's or an sdist's file name."""
    stem = re.split(r"-\d", filename, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", stem).lower()


async def resolve(
    uv_bin: Path,
    inputs: Inputs,
    *,
    envs: Path,
    extra_relaxed: Sequence[str] = (),
    carried: Sequence[str] = (),
    reuse: bool = True,
) -> Resolution | Failed:
    """The pins for `inputs` as of their date, lifting the date for what blocks them.

    `extra_relaxed` are lifted from the start (the runner, when the dated one could not
    run), and so are `carried` (what the dated resolution had to lift already). A cached
    resolution is returned when `reuse` allows it.
    """
    digest = inputs.digest(os.environ)
    if extra_relaxed:
        lifted = "\0".join([*extra_relaxed, "", *carried])
        digest += "-" + hashlib.sha256(lifted.encode()).hexdigest()[:8]
    cache = envs / "resolutions" / f"{digest}.json"
    if reuse:
        with contextlib.suppress(OSError, ValidationError):
            kept = Resolution.model_validate_json(cache.read_bytes())
            return kept if kept.date else kept.model_copy(update={"date": inputs.date})
    cache.parent.mkdir(parents=True, exist_ok=True)
    log = envs / "logs" / f"resolve-{digest}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    source = cache.with_suffix(".in")
    source.write_text("\n".join(inputs.requirements) + "\n", encoding="utf-8")
    relaxed = list(dict.fromkeys([*extra_relaxed, *carried]))
    if is_legacy(inputs.python.text):
        found = await _resolve_legacy(inputs, envs=envs, lifted=relaxed, log=log)
        if isinstance(found, Resolution):
            write_model(cache, found)
        return found
    no_date: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bugbout-resolve-") as scratch:
        build = None
        if inputs.build is not None:
            copy = Path(scratch) / "project"
            shutil.copytree(inputs.build.parent, copy, symlinks=True, ignore=_COPY_IGNORED)
            build = copy / inputs.build.name
        while True:
            run = await _compile(uv_bin, source, build, inputs, relaxed, log)
            no_date += [
                _package(name) for name in _NO_UPLOAD_DATE.findall(run.output)
                if _package(name) not in no_date
            ]  # fmt: skip
            if run.returncode == 0:
                break
            named = [*_FILTERED.findall(run.output), *_UNBUILDABLE.findall(run.output)]
            blocking = list(dict.fromkeys(_package(n) for n in named if _package(n) not in relaxed))
            if not blocking or len(relaxed) - len(extra_relaxed) - len(carried) >= MAX_RELAXED:
                return Failed(run.output, log)
            relaxed += [name for name in lifted_with(blocking) if name not in relaxed]
    pins = _pins(run.output)
    held = {_package(pin.split("==")[0]) for pin in pins}
    resolution = Resolution(
        packages=pins,
        python=inputs.python.text,
        interpreter=str(inputs.python.path) if inputs.python.path else None,
        relaxed=[name for name in relaxed if name not in extra_relaxed],
        no_upload_time=no_date,
        runner_later=[name for name in extra_relaxed if _package(name) in held],
        date=inputs.date,
    )
    write_model(cache, resolution)
    return resolution


async def _resolve_legacy(
    inputs: Inputs, *, envs: Path, lifted: Sequence[str], log: Path
) -> Resolution | Failed:
    """A Python 2 resolution, which pip makes by installing (`infra.legacy_env`): the
    environment it leaves is the one its pins name, so it is kept."""
    if inputs.python.path is None:
        return Failed(f"Python {inputs.python.text} cannot be installed by uv", log)
    scratch = Path(tempfile.mkdtemp(prefix=".legacy-", dir=envs))
    runner = [r for r in inputs.requirements if RUNNER.match(requirement_name(r))]
    with tempfile.TemporaryDirectory(prefix="bugbout-resolve-") as copies:
        project = None
        if inputs.build is not None:
            project = Path(copies) / "project"
            shutil.copytree(inputs.build.parent, project, symlinks=True, ignore=_COPY_IGNORED)
        try:
            made = await install_legacy(
                inputs.python.path,
                scratch,
                requirements=inputs.requirements,
                runner=runner or ["pytest"],
                date=inputs.date,
                lifted=[*lifted, *RUNNER_CORE],
                log=log,
                project=project,
            )
        except LegacyFailed as failed:
            shutil.rmtree(scratch, ignore_errors=True)
            return Failed(failed.said, log)
    resolution = Resolution(
        packages=made.pins,
        python=inputs.python.text,
        interpreter=str(inputs.python.path),
        relaxed=made.relaxed,
        runner_later=made.runner,
        no_upload_time=made.undated,
        date=inputs.date,
    )
    await _settle(scratch, resolution, envs=envs)
    return resolution


async def _settle(scratch: Path, resolution: Resolution, *, envs: Path) -> None:
    """Put a Python 2 environment made in `scratch` where its pins name it, unless one
    is there already."""
    key = resolution.key()
    root = envs / key
    (envs / ".locks").mkdir(parents=True, exist_ok=True)
    async with _exclusive(envs / ".locks" / f"{key}.lock"):
        if _ready(root, resolution):
            shutil.rmtree(scratch, ignore_errors=True)
            return
        if root.exists():
            shutil.rmtree(root)
        scratch.rename(root)
        assert resolution.interpreter is not None
        write_launcher(root, Path(resolution.interpreter))
        write_model(root / MARKER_NAME, resolution)


def lifted_with(blocking: list[str]) -> list[str]:
    """The packages whose date is lifted when uv names `blocking`: them, and the build
    tools together when it names one of them."""
    if set(blocking) & set(BUILD_TOOLS):
        return list(dict.fromkeys([*blocking, *BUILD_TOOLS]))
    return blocking


def remember(resolution: Resolution, inputs: Inputs, *, envs: Path) -> None:
    """Keep what was learnt by building (the runner lifted, a build that failed) in the
    cache entry of the dated resolution, so the next bout does not learn it again."""
    cache = envs / "resolutions" / f"{inputs.digest(os.environ)}.json"
    write_model(cache, resolution)


async def _compile(
    uv_bin: Path, source: Path, build: Path | None, inputs: Inputs, relaxed: list[str], log: Path
) -> _Run:
    now = _stamp(datetime.now(UTC))
    args = ["pip", "compile", str(source)]
    if build is not None:
        args.append(str(build))
    args += ["--exclude-newer", _stamp(inputs.date), "--python-version", inputs.python.text]
    if inputs.python.path is not None:
        args += ["--python", str(inputs.python.path)]
    for name in relaxed:
        args += ["--exclude-newer-package", f"{name}={now}"]
    args += ["--no-header", "--no-annotate", "--color", "never"]
    env = {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", **os.environ}
    run = await _run_uv(uv_bin, args, log, env=env)
    return _Run(run.returncode, run.output)


@dataclass(frozen=True)
class _Run:
    returncode: int
    output: str


def _pins(output: str) -> list[str]:
    """The requirement lines of `uv pip compile`'s output (uv writes its notes to stderr,
    which the log mixes in, so only lines that pin something are kept)."""
    pins = []
    for line in output.splitlines():
        text = line.strip()
        if not text or text.startswith("#") or line[:1].isspace():
            continue
        if "==" in text or " @ " in text or text.startswith("-e "):
            pins.append(text)
    return sorted(set(pins), key=str.lower)


async def ensure_pinned(uv_bin: Path, resolution: Resolution, *, envs: Path) -> Environment:
    """The environment holding exactly `resolution`'s pins, built on first use.

    The pins are installed with `--no-deps`: they are already a whole resolution, so
    installing them asks nothing of the index but the files. An sdist among them is built
    with the build tools of the resolution's date (`--exclude-newer` limits the build
    environments uv makes as it limits the resolution), the packages whose pins were
    lifted past it excepted; an environment shared by tasks of several dates is built as
    of the date of the one that built it.

    Raises:
        BuildFailed: uv could not create or fill the environment.
    """
    key = resolution.key()
    root = envs / key
    environment = Environment(python=root / "bin" / "python", root=root, key=key, built=False)
    if _ready(root, resolution):
        return environment
    if is_legacy(resolution.python) and resolution.interpreter is not None:
        await _rebuild_legacy(resolution, envs=envs)
        return Environment(python=environment.python, root=root, key=key, built=True)
    (envs / ".locks").mkdir(parents=True, exist_ok=True)
    async with _exclusive(envs / ".locks" / f"{key}.lock"):
        if _ready(root, resolution):
            return environment
        if root.exists():
            shutil.rmtree(root)
        log = envs / "logs" / f"{key}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("", encoding="utf-8")
        python = resolution.interpreter or resolution.python
        run = await _run_uv(uv_bin, ["venv", "--no-project", "--python", python, str(root)], log)
        if run.returncode != 0:
            raise BuildFailed(f"uv could not create a Python {resolution.python} environment. "
                              + _uv_said(run, log))  # fmt: skip
        pins = log.with_suffix(".txt")
        pins.write_text("\n".join(resolution.packages) + "\n", encoding="utf-8")
        venv_python = root / "bin" / "python"
        if resolution.packages:
            args = ["pip", "install", "--python", str(venv_python), "--no-deps", "-r", str(pins)]
            run = await _run_uv(uv_bin, [*args, *_dated(resolution)], log)
            if run.returncode != 0:
                raise BuildFailed("uv could not install the resolved packages. "
                                  + _uv_said(run, log))  # fmt: skip
        write_model(root / MARKER_NAME, resolution)
    return Environment(python=environment.python, root=root, key=key, built=True)


async def _rebuild_legacy(resolution: Resolution, *, envs: Path) -> None:
    """A Python 2 environment made again from its pins (its folder was deleted).

    Raises:
        BuildFailed: pip could not install them.
    """
    assert resolution.interpreter is not None
    log = envs / "logs" / f"{resolution.key()}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".legacy-", dir=envs))
    try:
        await install_pins(Path(resolution.interpreter), scratch, resolution.packages, log=log)
    except LegacyFailed as failed:
        shutil.rmtree(scratch, ignore_errors=True)
        said = " ".join(failed.said.split())
        raise BuildFailed(f"pip could not install the resolved packages: {said}") from None
    await _settle(scratch, resolution, envs=envs)


def _dated(resolution: Resolution) -> list[str]:
    """uv's options that hold an install of `resolution`'s pins, and the builds it makes,
    to the resolution's date, past which only its lifted packages are taken."""
    if resolution.date is None:
        return []
    now = _stamp(datetime.now(UTC))
    args = ["--exclude-newer", _stamp(resolution.date)]
    for name in resolution.lifted():
        args += ["--exclude-newer-package", f"{name}={now}"]
    return args


def _ready(root: Path, resolution: Resolution) -> bool:
    try:
        recorded = Resolution.model_validate_json((root / MARKER_NAME).read_bytes())
    except (OSError, ValidationError):
        return False
    return recorded.packages == resolution.packages and (root / "bin" / "python").exists()


class BuildFailed(Exception):
    """A resolved environment that uv could not build."""


async def runner_needs(
    uv_bin: Path, runner: Sequence[str], inputs: Inputs, *, envs: Path
) -> list[str]:
    """The packages today's release of `runner` (pytest and the commit's plugins) holds on
    the commit's interpreter: each is lifted with it. Any one left dated can hold uv to
    an old pytest without a word, by backtracking: on Python 3.6 a 2013 `six` rules out
    pytest 3.3 to 4.5, and the missing `importlib-metadata` of 2013 every later one.
    Empty when uv cannot resolve them (the caller then lifts what it knows of)."""
    digest = hashlib.sha256("\0".join([*runner, inputs.python.text]).encode()).hexdigest()[:12]
    log = envs / "logs" / f"runner-needs-{digest}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bugbout-runner-needs-") as scratch:
        wanted = Path(scratch) / "runner.in"
        wanted.write_text("\n".join(runner) + "\n", encoding="utf-8")
        args = ["pip", "compile", str(wanted), "--python-version", inputs.python.text]
        if inputs.python.path is not None:
            args += ["--python", str(inputs.python.path)]
        run = await _run_uv(
            uv_bin, [*args, "--no-header", "--no-annotate", "--color", "never"], log
        )
    if run.returncode != 0:
        return []
    return [_package(pin.split("==")[0]) for pin in _pins(run.output)]


def runner_pins(resolution: Resolution) -> list[str]:
    """The pins of `resolution`'s test runner (pytest, its plugins, what old pytests
    needed); empty when it holds no pytest."""
    pins = [pin for pin in resolution.packages if "==" in pin and " @ " not in pin]
    runner = [pin for pin in pins if RUNNER.match(pin.split("==")[0].strip().lower())]
    named = {_package(pin.split("==")[0]) for pin in runner}
    return runner if "pytest" in named else []


async def probe_runner(uv_bin: Path, resolution: Resolution, *, envs: Path) -> str | None:
    """What pytest said when `resolution`'s test runner, installed alone in a scratch
    environment, could not run one trivial test; None when it ran, or when the probe
    could not be made (the environment itself then tells).

    Whether an old pytest runs on a newer Python is learnt only by running it. The runner
    is installed with what it needs and nothing else of the resolution, each at the
    resolution's pin (`-c`), so a dead one is found without building the environment it
    would have been in: the environment is built once, with the runner it keeps.
    """
    runner = runner_pins(resolution)
    if not runner or is_legacy(resolution.python):
        return None  # nothing to try, or an interpreter uv makes no environment for
    digest = hashlib.sha256("\n".join([resolution.key(), *runner]).encode()).hexdigest()[:12]
    log = envs / "logs" / f"runner-{digest}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bugbout-runner-probe-") as scratch:
        root = Path(scratch) / "venv"
        python = resolution.interpreter or resolution.python
        run = await _run_uv(uv_bin, ["venv", "--no-project", "--python", python, str(root)], log)
        if run.returncode != 0:
            return None
        wanted, pinned = Path(scratch) / "runner.txt", Path(scratch) / "pins.txt"
        wanted.write_text("\n".join(runner) + "\n", encoding="utf-8")
        pins = [pin for pin in resolution.packages if "==" in pin and " @ " not in pin]
        pinned.write_text("\n".join(pins) + "\n", encoding="utf-8")
        venv_python = root / "bin" / "python"
        args = [
            "pip",
            "install",
            "--python",
            str(venv_python),
            "-r",
            str(wanted),
            "-c",
            str(pinned),
        ]
        run = await _run_uv(uv_bin, [*args, *_dated(resolution)], log)
        if run.returncode != 0:
            return None
        return await runner_works(Environment(python=venv_python, root=root, key="", built=True))


def plugin_name(requirement: str) -> str | None:
    """The distribution a requirement names when it is a pytest plugin, else None."""
    name = re.split(r"[\s<>=!~;\[@(]", requirement.strip(), maxsplit=1)[0]
    normalised = re.sub(r"[-_.]+", "-", name).lower()
    return normalised if normalised.startswith("pytest-") else None


async def runner_works(environment: Environment) -> str | None:
    """None when pytest runs one trivial test in `environment`, else what it said.

    Installed plugins load, as they do in every run bugbout makes: an old plugin that
    breaks a newer pytest breaks every test run, and is found here, once. The test runs
    with the options every run gives and writes its report as every run does: a pytest
    that runs a test yet refuses `--rootdir` (those before 3.5) is of no use either.
    """
    with tempfile.TemporaryDirectory(prefix="bugbout-runner-") as scratch:
        test = Path(scratch) / "test_runner.py"
        test.write_text("def test_runner():\n    assert True\n", encoding="utf-8")
        report = Path(scratch) / "report.xml"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        process = await asyncio.create_subprocess_exec(
            str(environment.python), "-m", "pytest", *run_options(Path(scratch)),
            f"--junitxml={report}", str(test),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=scratch,
            env=env,
        )  # fmt: skip
        try:
            raw, _ = await asyncio.wait_for(process.communicate(), _SMOKE_TIMEOUT_SECONDS)
        except (TimeoutError, asyncio.CancelledError) as error:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            if isinstance(error, TimeoutError):
                return f"pytest did not finish one trivial test in {_SMOKE_TIMEOUT_SECONDS:.0f} s"
            raise
        report_written = report.is_file()
    if process.returncode == 0 and report_written:
        return None
    lines = [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {process.returncode}, and no report"
