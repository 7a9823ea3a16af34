"""The clean install of an environment task: a fresh environment, filled from what the
tree declares, as of the task's date, from one index; and D², what it then holds.

"Clean" means nothing but the tree decides: uv reads no configuration of the user's
(`--no-config`) and no index settings from the environment, the index is the one given,
`--exclude-newer` hides every file uploaded after the task's date, and the project's own
uv settings (`[tool.uv.sources]`, which may name other indexes) are ignored
(`--no-sources`), as pip would. What is installed is what the tree declares for its
tests' run, read by the function that also lists D¹ (`infra/run_declaration.py`), so
the two cannot drift: the project as a user would install it, not editable, so its own
dependencies resolve as it declares them, with its test extras; its `tests_require`;
its test dependency groups (`--group`); and its requirement files of the tests and the
runtime (`-r`), all in one resolution. A task's command runs the tests, so pytest and
what else the tests need must be there whether the tree declares them in an extra, a
group or a `requirements-dev.txt`; a tree that declares no pytest gets bugbout's, which
is its runner, not the repair's. The build tools, and that runner, are taken as of the
interpreter's release when the task's date is older (`infra/brought_tools.py`).

The tree is an agent's, so installing it runs an agent's code: its `setup.py` or
in-tree build backend, and the build of any sdist it names. Everything after the
environment's creation therefore runs in the sandbox (see `_Uv`): the host's view
read-only, no home directory, no bugbout home, no credentials, writes only to the
environment, the tree (the scoring's own copy) and a scratch directory, and at the
deadline the whole process tree is ended. The network stays on, since the index must be
reached. An install must leave the environment's interpreter as uv made it, since the
traced run's view is read off it.

A repair may not change where packages come from: a requirements file installed with
an option that does (`--index-url`, `--extra-index-url`, `--find-links`, `--no-index`,
`--trusted-host`, an editable or included URL; see `core/requirement_sources.py`), or
that includes a file outside the tree, is refused before uv runs. What a date cannot
limit is recorded as `unenforced`: a distribution installed from a direct URL, a VCS or
a local path, and any file whose index gives no upload time (uv then leaves it out and
says so, which usually fails the install).

Everything ends as a record, never an exception: a refused repair, an interpreter uv
cannot find, a resolution that fails, a step that runs out of time. Only a missing uv
raises.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from bugbout_tui.core.env_models import EnvInstall, normalize_name
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import known_homes
from bugbout_tui.core.requirement_sources import SOURCE_OPTIONS, requirement_options
from bugbout_tui.infra.brought_tools import (
    BroughtTools,
    brought_tools,
    build_tools_of,
    interpreter_version,
)
from bugbout_tui.infra.dated_env import _INDEX_SETTINGS, _NO_UPLOAD_DATE, _package, _stamp
from bugbout_tui.infra.env import _installed_from, _UvRun, find_uv
from bugbout_tui.infra.env_declared import declared_packages
from bugbout_tui.infra.manifests import _escapes
from bugbout_tui.infra.proc import run_process
from bugbout_tui.infra.programs import venv_paths
from bugbout_tui.infra.run_declaration import RunDeclaration, run_declaration
from bugbout_tui.infra.sandbox import Confinement, NoSandbox, Sandbox, scrub_environment

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
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")
"""The line a Python traceback ends on (`ImportError: cannot import name …`)."""
_OUTPUT_CAP = 16 * 1024 * 1024
"""How much of one uv command's output is kept: a build may print without end."""
_PERSONAL_DIRS = frozenset(
    {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"}
)
"""Variables naming the user's own directories, which the sandbox hides: the builds'
defaults go under their own `HOME` instead."""
_UNCONFINED = (
    '[unconfined: sandbox = "none", so uv and the builds it runs work on this machine as '
    "you, with your network]\n"
)
_INTERPRETER_CHANGED = (
    "the install changed what names the environment's interpreter (pyvenv.cfg or "
    "bin/python), so its run could not be confined"
)


async def clean_install(
    tree: Path,
    *,
    python: str,
    date: datetime,
    index: str,
    venv: Path,
    log: Path,
    timeout: float,
    sandbox: Sandbox,
    hidden: Sequence[Path] = (),
    runner: Sequence[str] = (),
) -> EnvInstall:
    """Create `venv` afresh with `python` and install what `tree` declares into it, as of
    `date`, from `index` alone, uv and every build it runs confined by `sandbox`; uv's
    whole output goes to `log`.

    The caller records where `log` is, relative to its store. `python` is what
    `uv venv --python` takes: a version (`3.11`) or an interpreter's path. `hidden`
    is what the builds must not read besides every home directory and bugbout home (the
    store, the project, the repository). With `NoSandbox` (the user's `sandbox =
    "none"`) the builds run on this machine as the user, which the log's first line
    says; the caller says it where it records the repair (`Repair.network`).

    `runner` is what the task's command needs of bugbout's test runner
    (`brought_tools.runner_requirements`): added to the install when the tree declares
    no pytest, and named in `brought`. The build tools, and a runner so added, are
    taken as of the interpreter's release when the task's date is older, and named in
    `unenforced` (see `infra/brought_tools.py`).

    Raises:
        ToolMissingError: uv cannot be found.
    """
    uv_bin = find_uv()
    started = time.monotonic()
    tree = tree.absolute()  # uv runs in it, and is given paths inside it
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(_UNCONFINED if isinstance(sandbox, NoSandbox) else "", encoding="utf-8")
    tools: BroughtTools | None = None
    build: list[str] = []

    def ended(
        run: _UvRun | None,
        detail: str | None,
        *,
        installed: Sequence[str] = (),
        unenforced: Sequence[str] = (),
    ) -> EnvInstall:
        names = [_installed_name(line) for line in installed]
        lifted = tools.words(build=build, installed=names) if tools is not None else []
        return EnvInstall(
            ok=detail is None,
            exit_code=None if run is None else run.returncode,
            seconds=round(time.monotonic() - started, 3),
            detail=detail,
            installed=list(installed),
            unenforced=[*unenforced, *lifted],
            brought=tools.brought(names) if tools is not None else [],
        )

    if venv.exists():
        shutil.rmtree(venv)
    declared = run_declaration(tree)
    refused = _source_change(tree, declared.files)
    if refused is not None:
        _append(log, f"[not installed: {refused}]\n")
        return ended(None, refused)
    python_of_venv = venv / "bin" / "python"
    run: _UvRun | None = None
    with tempfile.TemporaryDirectory(prefix="bugbout-install-") as scratch:
        uv = _Uv(uv_bin, Path(scratch), log, deadline=started + timeout)
        try:
            run = await uv.run(["venv", "--no-config", "--no-project", "--python", python,
                                str(venv)])  # fmt: skip
            if run.returncode != 0:
                return ended(run, f"uv could not create a Python {python} environment: "
                             + _first_error(run))  # fmt: skip
            tools = brought_tools(
                runner=runner,
                declared={d.name for d in declared_packages(tree)},
                python=interpreter_version(venv),
                date=date,
            )
            build = build_tools_of(tree) if declared.project else []
            wanted = [*_install_arguments(tree, declared), *tools.runner]
            if not wanted:
                return ended(run, None)
            made = _interpreter_marks(venv)
            uv.confine(sandbox, tree=tree, venv=venv, hidden=hidden)
            run = await uv.run(
                ["pip", "install", "--no-config", "--no-sources", "--python", str(python_of_venv),
                 "--exclude-newer", _stamp(date), *tools.arguments(), "--index-url", index,
                 *wanted]
            )  # fmt: skip
            undated = [
                f"{name} (the index gives no upload time, not limited by date)"
                for name in dict.fromkeys(_package(f) for f in _NO_UPLOAD_DATE.findall(run.output))
            ]
            if run.returncode != 0:
                return ended(run, _first_error(run), unenforced=undated)
            if _interpreter_marks(venv) != made:
                return ended(run, _INTERPRETER_CHANGED, unenforced=undated)
            frozen = await uv.run(["pip", "freeze", "--no-config", "--python", str(python_of_venv)])
        except TimeoutError:
            _append(log, f"[stopped: the install took longer than {timeout:g} seconds]\n")
            return ended(None, f"the install did not finish within {timeout:g} seconds")
        except BugboutError as error:  # the new environment names no interpreter
            return ended(run, error.message)
    if frozen.returncode != 0:
        return ended(run, "uv could not list what it installed: " + _first_error(frozen))
    installed, escaped = _installed(frozen.output, tree)
    return ended(run, None, installed=installed, unenforced=[*escaped, *undated])


class _Uv:
    """uv's commands of one install, against one deadline, each appended to the log.

    The first creates the environment unconfined: it runs nothing of the tree (which it
    is not given) and may need to find or fetch the interpreter among the user's own.
    Once `confine` is called, every command runs in the sandbox: the host's view,
    read-only, with the home directories, every bugbout home and `hidden` masked, and
    the network on, for the index. Writable are the environment, the tree (the
    scoring's own copy) and a scratch directory holding uv's cache and `HOME`. The
    cache is this install's alone: a build that can write to it could change what a
    later install takes from it, so no two installs share one. Each command runs in a
    process group of its own, and the group, with everything that left it, is ended
    when the deadline passes.
    """

    def __init__(self, uv_bin: Path, scratch: Path, log: Path, *, deadline: float) -> None:
        self.uv_bin = Path(os.path.realpath(uv_bin))
        self.log = log
        self.deadline = deadline
        self.output = scratch / "output"
        self.inside = scratch / "sandbox"
        """What the sandbox may write besides the environment and the tree."""
        self.cwd = self.inside
        """Where uv runs: the tree once confined (see `confine`)."""
        home = self.inside / "home"
        cache = self.inside / "cache"
        home.mkdir(parents=True)
        cache.mkdir()
        self.env = {**_clean_environment(scrub_environment(os.environ)), "UV_CACHE_DIR": str(cache)}
        self.home = home
        self.sandbox: Sandbox | None = None
        self.confinement: Confinement | None = None

    def confine(self, sandbox: Sandbox, *, tree: Path, venv: Path, hidden: Sequence[Path]) -> None:
        """Run every later command in `sandbox`, in the tree: a relative path in its
        requirement files (`-e .[test]`) is read from where a user runs pip, the tree.

        Raises:
            BugboutError: the environment names no interpreter (`venv_paths`).
        """
        env = {k: v for k, v in self.env.items() if k not in _PERSONAL_DIRS}
        homes = _home_directories()
        self.sandbox = sandbox
        self.cwd = tree
        self.confinement = Confinement(
            writable=(venv, tree, self.inside),
            network=True,
            env={**env, "HOME": str(self.home)},
            readable=(self.uv_bin, *venv_paths(venv, hidden=hidden)),
            hidden=(*homes, *known_homes(), *hidden),
        )

    async def run(self, args: list[str]) -> _UvRun:
        """Run uv with `args` and append what it said to the log.

        Raises:
            TimeoutError: the deadline passed, before or while it ran.
        """
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        argv = [str(self.uv_bin), *args]
        env = self.env
        if self.sandbox is not None and self.confinement is not None:
            argv = self.sandbox.wrap(argv, self.confinement, cwd=self.cwd)
            env = dict(self.confinement.env)
        result = await run_process(
            argv,
            cwd=self.cwd,
            env=env,
            timeout=remaining,
            stdout_path=self.output,
            stderr_path=self.output,
            cap_bytes=_OUTPUT_CAP,
        )
        output = self.output.read_bytes().decode("utf-8", errors="replace")
        returncode = -1 if result.returncode is None else result.returncode
        ending = "" if result.timed_out else f"[exit {returncode}]\n\n"
        _append(self.log, f"$ uv {' '.join(args)}\n{output}{ending}")
        if result.timed_out:
            raise TimeoutError
        return _UvRun(returncode=returncode, output=output)


def _append(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(text)


def _home_directories() -> list[Path]:
    """The user's home directory, as `HOME` and the password database name it."""
    homes = [os.environ.get("HOME")]
    with contextlib.suppress(KeyError):  # a uid without a passwd entry, as in some containers
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return [Path(os.path.realpath(h)) for h in dict.fromkeys(homes) if h and os.path.isabs(h)]


def _interpreter_marks(venv: Path) -> dict[str, str]:
    """What names the environment's interpreter: `pyvenv.cfg` and the `bin/python*`
    links. An install must leave them as uv made them; the traced run reads its view
    from them (`venv_paths`)."""
    marks: dict[str, str] = {}
    for path in [venv / "pyvenv.cfg", *sorted((venv / "bin").glob("python*"))]:
        try:
            marks[path.name] = (
                "-> " + os.readlink(path) if path.is_symlink() else path.read_bytes().hex()
            )
        except OSError:
            marks[path.name] = "unreadable"
    return marks


def _source_change(tree: Path, files: Sequence[Path]) -> str | None:
    """Why the tree's requirements `files` may not be installed, or None: an option that
    changes where packages come from, in one of them or a file it includes, or a file
    outside the tree."""
    root = Path(os.path.realpath(tree))
    pending = [(path, path.relative_to(tree).as_posix()) for path in files]
    seen: set[Path] = set()
    while pending:
        path, shown = pending.pop(0)
        real = Path(os.path.realpath(path))
        if root not in real.parents:
            return f"{shown} lies outside the tree; a repair is installed from its own files"
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        try:
            text = real.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # uv says what is wrong with it
        for option in requirement_options(text):
            where = f"{shown}, line {option.line}"
            if option.changes_source:
                what = option.name if option.name in SOURCE_OPTIONS else f"{option.name} with a URL"
                return (
                    f"{where}: {what} changes where packages come from; a repair is "
                    "installed from the task's index alone"
                )
            if option.included is not None:
                included = real.parent / option.included
                pending.append((included, f"{option.included} (included from {where})"))
    return None


def _clean_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment uv runs in: the caller's, without settings that choose what gets
    installed. A project that takes its version from git (setuptools-scm, pbr) is told
    one, since the tree is a checkout without history."""
    kept = {k: v for k, v in environ.items() if not k.startswith(_RESOLUTION_SETTINGS)}
    return {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", "PBR_VERSION": "0.0.0", **kept}


def _install_arguments(tree: Path, declared: RunDeclaration) -> list[str]:
    """uv's arguments for what the tree declares for its run: the project with its test
    extras, `tests_require`, each test dependency group of its `pyproject.toml`, and
    `-r` for each requirement file. Extras and groups are names `TEST_EXTRA` matched,
    and `tests_require` holds PEP 508 requirements alone, so none reads as an option."""
    wanted: list[str] = []
    if declared.project:
        extras = f"[{','.join(declared.extras)}]" if declared.extras else ""
        wanted.append(f"{tree}{extras}")
    wanted += declared.tests_require
    for group in declared.groups:
        wanted += ["--group", f"{tree / 'pyproject.toml'}:{group}"]
    for path in declared.files:
        wanted += ["-r", str(path)]
    return wanted


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


def _installed_name(line: str) -> str:
    """The PEP 503 name of one line of D² (`name==1.0`, `name @ url`)."""
    return normalize_name(re.split(r"==| @ ", line, maxsplit=1)[0].strip())


def _first_error(run: _UvRun) -> str:
    """uv's first error in one line, with the indented line under it that gives its
    cause (`No solution found…: Because there is no version of x==9…`), and, when a
    build failed, what the build itself said last (`Failed to build…: The build backend
    returned an error: ImportError: cannot import name 'Mapping'…`)."""
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
        build = _build_said(lines[number + 1 :])
        if build is not None:
            said = f"{said}: {build}"
        return said[:_DETAIL_CHARS]
    kept = [line.strip() for line in lines if line.strip() and not line.startswith("warning:")]
    return kept[-1][:_DETAIL_CHARS] if kept else f"uv exited with status {run.returncode}"


def _build_said(block: list[str]) -> str | None:
    """What a failed build printed last that says why, from the indented `[stderr]` of
    uv's error (`block`, the lines below it): its last `error:` line or exception, else
    its last line; None when no build output is quoted."""
    quoted: list[str] | None = None
    for line in block:
        if not line[:1].isspace() and line.strip():
            break  # the next of uv's own lines (`hint:`)
        if quoted is None:
            quoted = [] if line.strip() == "[stderr]" else None
        elif line.strip():
            quoted.append(line.strip())
    if not quoted:
        return None
    telling = [line for line in quoted if line.startswith("error:") or _EXCEPTION.match(line)]
    return (telling or quoted)[-1].removeprefix("error:").strip()
