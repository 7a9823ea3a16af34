"""The traced run of an environment task: its command, confined, and D³, the distributions
whose files the run (and every Python it started) imported or opened.

The command runs in the tree, in the sandbox, the way every test run does
(`confinement_for_tests`): the environment readable, the tree writable, no network, no
credentials. Its interpreter is never run outside the sandbox, not even to ask what it
reads: an agent chose the packages, and their `.pth` files run at every start-up. The
view is read off the environment instead (`venv_paths`): the environment and the
installation of the Python it was made from. The tracer (`trace_hook.py`) is copied
into the environment's site-packages with a `.pth` file that starts it when
`TRACE_VARIABLE` is set; its `.pth` is named to sort last, so what other `.pth` files
import at every start-up (setuptools' `_distutils_hack`, say) is the environment's
doing, not the program's.

What the run touched is then mapped to distributions through each one's
`*.dist-info/RECORD`: a file opened or a module imported that a distribution installed
is a use of it. A distribution's metadata is not (pytest reads every distribution's
entry points), nor are its `.pth` files (read at start-up). The standard library and
the interpreter's own files are no distribution's, so they fall out by themselves; the
project's own distribution, installed from the tree, is left out by its
`direct_url.json`, and files of the tree are in no RECORD. The test runner bugbout
brought, when the tree declares none, is its own, not the repair's: left out too.

Imports are matched by name only for compiled extension modules, which are loaded
without an `open`; a pure-Python module is matched by the file that was read, so a
module of the tree never passes for an installed one of the same name.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from bugbout_tui.core.env_models import EnvTrace, normalize_name
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra import trace_hook
from bugbout_tui.infra.proc import ProcessResult, run_process
from bugbout_tui.infra.programs import venv_paths
from bugbout_tui.infra.pytest_run import PytestCommand, confinement_for_tests
from bugbout_tui.infra.sandbox import Sandbox

TRACER_MODULE = "_bugbout_trace"
TRACER_PTH = "~bugbout-trace.pth"
"""`site` reads `.pth` files in sorted order; `~` sorts after every letter and digit."""
_PTH_LINE = (
    f"import os; os.environ.get({trace_hook.TRACE_VARIABLE!r}) and "
    f"__import__({TRACER_MODULE!r}).start(os.environ[{trace_hook.TRACE_VARIABLE!r}])\n"
)
_COMPILED = (".so", ".pyd")


async def traced_run(
    tree: Path,
    command: Sequence[str],
    *,
    venv: Path,
    sandbox: Sandbox,
    log: Path,
    timeout: float,
    brought: Collection[str] = (),
) -> EnvTrace:
    """Run `command` (argv; a leading `python` is the environment's interpreter) in `tree`,
    confined and traced, its whole output into `log`.

    `brought` names what the install put there for bugbout's own test runner, which the
    tree does not declare (`EnvInstall.brought`): the run uses it, the repair need not
    declare it, so D³ leaves it out.

    `ok` is an exit status of 0 within `timeout`; D³ is read whatever the outcome, so a
    failed run still shows what it got as far as. A run that cannot start, fails or
    runs out of time is a record, not an exception (a sandbox that cannot work on this
    machine raises, as for every test run). The caller records where `log` is, relative
    to its store.
    """
    python = venv / "bin" / "python"
    if not command:
        return EnvTrace(ok=False, detail="the task has no command to run")
    if not os.access(python, os.X_OK):
        return EnvTrace(ok=False, detail=f"the environment has no interpreter at {python}")
    argv = [str(python) if command[0] == "python" else command[0], *command[1:]]
    install_tracer(venv)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")
    with tempfile.TemporaryDirectory(prefix="bugbout-trace-") as scratch:
        traces = Path(scratch) / "traces"
        home = Path(scratch) / "home"
        traces.mkdir()
        home.mkdir()
        settings = PytestCommand(
            python=python,
            tree=tree,
            paths=(),
            pythonpath=(),
            env={trace_hook.TRACE_VARIABLE: str(traces)},
            timeout=timeout,
        )
        try:
            confinement = confinement_for_tests(
                settings, writable=(tree, traces), home=home, interpreter=venv_paths(venv)
            )
        except BugboutError as error:  # no pyvenv.cfg says what the interpreter is
            return EnvTrace(ok=False, detail=error.message)
        try:
            result = await run_process(
                sandbox.wrap(argv, confinement, cwd=tree),
                cwd=tree,
                env=confinement.env,
                timeout=timeout,
                stdout_path=log,
                stderr_path=log,
            )
        except OSError as error:
            return EnvTrace(ok=False, detail=f"{command[0]} could not be started: {error}")
        used = used_distributions(_read_traces(traces), venv=venv, tree=tree)
    used = [name for name in used if name not in brought]
    ok = result.returncode == 0 and not result.timed_out
    return EnvTrace(
        ok=ok,
        exit_code=result.returncode,
        seconds=round(result.duration, 3),
        detail=None if ok else _why_failed(result, timeout),
        used=used,
    )


def install_tracer(venv: Path) -> None:
    """Put the tracer and the `.pth` that starts it in every site-packages of `venv`.

    Both stay: without `TRACE_VARIABLE` the `.pth` line imports nothing.
    """
    source = Path(trace_hook.__file__).read_text(encoding="utf-8")
    for site in site_packages(venv):
        module = site / f"{TRACER_MODULE}.py"
        if not module.is_file() or module.read_text(encoding="utf-8") != source:
            module.write_text(source, encoding="utf-8")
        (site / TRACER_PTH).write_text(_PTH_LINE, encoding="utf-8")


def site_packages(venv: Path) -> list[Path]:
    """The environment's site-packages directories, once each (`lib64` is often a link
    to `lib`), and only those inside it: the tracer is written there, and a link an
    install left pointing elsewhere must not lead that write out of the environment."""
    found = [*venv.glob("lib/python*/site-packages"), *venv.glob("lib64/python*/site-packages")]
    root = Path(os.path.realpath(venv))
    real = {os.path.realpath(path): path for path in found if path.is_dir()}
    return sorted(Path(path) for path in real if root in Path(path).parents)


@dataclass(frozen=True)
class Touched:
    """What the traced processes reported: files opened and modules imported."""

    files: frozenset[str]
    modules: frozenset[str]


def _read_traces(directory: Path) -> Touched:
    files: set[str] = set()
    modules: set[str] = set()
    for trace in directory.glob("*.txt"):
        for line in trace.read_bytes().splitlines():
            kind, _, value = line.partition(b" ")
            if kind == b"f":
                files.add(os.fsdecode(value))
            elif kind == b"m":
                modules.add(value.decode("utf-8", "replace"))
    return Touched(frozenset(files), frozenset(modules))


@dataclass(frozen=True)
class _Owners:
    """Which distribution installed each file, and each compiled module."""

    files: dict[str, str]
    """A file's real absolute path → the distribution's normalized name."""
    compiled: dict[str, str]
    """A compiled extension module's dotted name → the distribution's normalized name."""


def used_distributions(touched: Touched, *, venv: Path, tree: Path) -> list[str]:
    """D³: the distributions of `venv`, other than the project's, whose files were
    opened or whose compiled modules were imported."""
    owners = _owners(venv, tree)
    used = {owners.compiled[name] for name in touched.modules if name in owners.compiled}
    for path in touched.files:
        owner = _owner(path, owners.files)
        if owner is not None:
            used.add(owner)
    return sorted(used)


def _owner(path: str, files: dict[str, str]) -> str | None:
    """The distribution a path belongs to; a cached `.pyc` belongs with its source."""
    for candidate in (os.path.normpath(path), os.path.realpath(path)):
        directory, name = os.path.split(candidate)
        if os.path.basename(directory) == "__pycache__" and name.endswith(".pyc"):
            candidate = os.path.join(os.path.dirname(directory), name.split(".")[0] + ".py")
        if candidate in files:
            return files[candidate]
    return None


def _owners(venv: Path, tree: Path) -> _Owners:
    files: dict[str, str] = {}
    compiled: dict[str, str] = {}
    for site in site_packages(venv):
        root = os.path.realpath(site)
        for info in site.glob("*.dist-info"):
            if _installed_from_tree(info, tree):
                continue
            name = normalize_name(info.name.removesuffix(".dist-info").split("-")[0])
            for entry in _record(info):
                if ".dist-info/" in entry or entry.endswith(".pth") or "__pycache__" in entry:
                    continue
                files[os.path.normpath(os.path.join(root, entry))] = name
                if entry.endswith(_COMPILED):
                    *package, module = entry.split("/")
                    compiled[".".join([*package, module.split(".")[0]])] = name
    return _Owners(files, compiled)


def _record(info: Path) -> Iterable[str]:
    try:
        text = (info / "RECORD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [row[0] for row in csv.reader(text.splitlines()) if row]


def _installed_from_tree(info: Path, tree: Path) -> bool:
    """Whether a distribution was installed from the tree (the project, or a package of
    it): PEP 610's `direct_url.json` names a directory inside it."""
    try:
        url = json.loads((info / "direct_url.json").read_text(encoding="utf-8")).get("url")
    except (OSError, ValueError, AttributeError):
        return False
    if not isinstance(url, str) or not url.startswith("file:"):
        return False
    source = Path(os.path.realpath(unquote(urlparse(url).path)))
    root = Path(os.path.realpath(tree))
    return source == root or root in source.parents


def _why_failed(result: ProcessResult, timeout: float) -> str:
    if result.timed_out:
        return (
            f"the command did not finish within {timeout:g} seconds; it was stopped, with "
            "every process it started"
        )
    status = f"the command exited with status {result.returncode}"
    for tail in (result.stderr_tail, result.stdout_tail):  # a traceback ends on stderr
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        if lines:
            return f"{status}: {lines[-1][:300]}"
    return status
