"""Running a tree's tests with pytest, confined, and reading back every test's outcome.

Every run of the project's tests goes through `run_pytest`: the ground truth, each
agent's patch and each cross-examination cell. The tests may be an agent's, so they run
in the sandbox without network or credentials, see nothing but their tree, their
interpreter and the system (`confinement_for_tests`), may write only in their tree and a
scratch directory, and are stopped at a timeout together with everything they started.
Outcomes come from pytest's JUnit report, checked against its exit status, never from
what the tests print.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable, Mapping, Sequence
from configparser import Error as ConfigParserError
from configparser import RawConfigParser
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import known_homes
from bugbout_tui.infra.junit import JUnitError, Outcome, TestResult, parse_junit
from bugbout_tui.infra.proc import ProcessResult, run_process
from bugbout_tui.infra.programs import interpreter_paths
from bugbout_tui.infra.sandbox import Confinement, Sandbox, scrub_environment

__all__ = [
    "Outcome",
    "PytestCommand",
    "TestResult",
    "TestRun",
    "confinement_for_tests",
    "expand_collection_errors",
    "interpret_run",
    "pytest_options",
    "run_options",
    "run_pytest",
]

JUNIT_FILE = "junit.xml"
_ERROR_TAIL_CHARS = 3000

# Variables of the developer's shell that would change how Python or pytest behave, and
# so make a result depend on who ran it. Whatever a project needs goes in [project] env.
_UNINHERITED_PREFIXES = ("PYTHON", "PYTEST_")
_UNINHERITED_NAMES = frozenset({"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PWD"})
# Variables naming the user's own directories: they would lead a test back to them, and
# the test's view does not hold them anyway.
_PERSONAL_DIRS = frozenset(
    {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"}
)
_PRIVATE_HOME = "/tmp"
"""HOME of a test that is given none: the sandbox's private temp dir."""

_EXIT_MEANINGS = {
    2: "was interrupted",
    3: "hit an internal error",
    4: "rejected its command line (an unknown option in pytest-args, a missing path, or "
    "a plugin the test environment lacks)",
}


@dataclass(frozen=True)
class PytestCommand:
    """What to test, with which interpreter, and how.

    Attributes:
        python: The test environment's interpreter.
        tree: The tree under test: the working directory and pytest's rootdir, so node
            ids are relative to it.
        paths: Test files, directories or node ids, relative to `tree`; empty runs what
            the project's configuration collects by default.
        pythonpath: The import roots, in order (the tree, or its `src` directory for a
            src layout). The caller knows the layout; nothing is guessed here.
        pytest_args: The project's extra arguments, after bugbout's own.
        env: The project's variables, set on top of the scrubbed environment.
        timeout: Seconds before the run and everything it started are killed.
        hidden: What the interpreter's paths must not bring into view though it names
            them: the project's repository and directory (an editable install of the
            project points into the repository, at the fixed code). Every bugbout home
            is left out without being listed.
    """

    python: Path
    tree: Path
    paths: Sequence[str]
    pythonpath: Sequence[Path]
    pytest_args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 600
    hidden: Sequence[Path] = ()


class TestRun(BaseModel):
    """One pytest run: every test's outcome, or why the run as a whole failed."""

    __test__: ClassVar[bool] = False  # a pydantic model, not a pytest test class
    model_config = ConfigDict(frozen=True)

    outcomes: dict[str, TestResult]
    """Keyed by pytest node id, e.g. `tests/test_x.py::TestY::test_z[param]`. A module or
    directory that failed to collect is one entry keyed by its path, without `::`; see
    `expand_collection_errors`."""
    collected: int
    """Tests that ran (entries with `::`); collection-level entries are not counted."""
    exit_code: int | None
    """pytest's exit status; None when it was killed at the timeout."""
    duration: float
    error: str | None
    """Set when the run as a whole cannot be trusted: pytest crashed, timed out, was
    misconfigured, wrote no usable report, or its exit status contradicts the report.
    Ends with the tail of pytest's output."""
    timed_out: bool = False
    worker: str | None = Field(default=None, exclude=True)
    """The address of the cluster's worker that made the run; None on this machine.
    Never stored: where a run was made is not part of its answer."""


def confinement_for_tests(
    cmd: PytestCommand,
    *,
    writable: Sequence[Path],
    readable: Sequence[Path] = (),
    home: Path | None = None,
    interpreter: Sequence[Path] | None = None,
) -> Confinement:
    """The view of a test process: the one place that decides it, for every test run.

    Deny by default (the minimal view): the system directories, the interpreter's paths
    (`interpreter_paths`), the tree, the import roots, `readable`, and `writable` (which
    the caller creates), with fresh `/dev` and `/proc` and private temp dirs. No network,
    not even the host's loopback. Nothing of any bugbout home but the test environment
    and what is granted, no other tree, no store, no repository and no home directory:
    the tests cannot reach the fix from anywhere bugbout keeps it. `HOME` is `home`
    (writable; the caller creates it) or the private `/tmp`, so nothing personal is read.

    `interpreter` is for an interpreter that must not be run outside the sandbox (an
    environment whose packages an agent chose: its `.pth` files run at every start):
    the interpreter's paths as the caller learned them without running it
    (`venv_paths`). Then nothing is asked of the interpreter, nor of the program the
    run starts, and the view holds nothing of them but these paths.
    """
    hidden = (*known_homes(), *cmd.hidden)
    imports = [p for p in cmd.pythonpath if os.path.exists(p)]
    env = _environment(cmd, os.environ)
    env["HOME"] = str(home) if home is not None else _PRIVATE_HOME
    granted = list(writable)
    if home is not None and not any(home == w or w in home.parents for w in granted):
        granted.append(home)
    python = (
        interpreter if interpreter is not None else interpreter_paths(cmd.python, hidden=cmd.hidden)
    )
    return Confinement(
        writable=tuple(granted),
        readable=(*python, cmd.tree, *imports, *readable),
        network=False,
        env=env,
        hidden=hidden,
        view="minimal",
        grant_program=interpreter is None,
    )


def _environment(cmd: PytestCommand, base: Mapping[str, str]) -> dict[str, str]:
    """The complete environment of a test run, built from `base` (normally `os.environ`).

    Credentials are scrubbed, and so are the shell's `PYTHON*` and `PYTEST_*` variables
    (a developer's `PYTEST_ADDOPTS` must not change a run). The interpreter's directory
    goes first on PATH, as in an activated environment, so tests that start `python` or
    a console script get the test environment's. `PYTHONHASHSEED=0` fixes the order of
    sets of strings, so a test that depends on it behaves the same on the base, on the
    fix and on every patch rather than flipping between runs; `PYTHONDONTWRITEBYTECODE`
    keeps `__pycache__` out of the tree, whose files are compared and diffed later.
    The project's `env` comes last and wins.
    """
    env = {
        name: value
        for name, value in scrub_environment(base).items()
        if not name.startswith(_UNINHERITED_PREFIXES)
        and name not in _UNINHERITED_NAMES
        and name not in _PERSONAL_DIRS
    }
    path = env.get("PATH", os.defpath)
    env["PATH"] = os.pathsep.join([str(cmd.python.parent), path])
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in cmd.pythonpath)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env.update(cmd.env)
    return env


def pytest_options(cmd: PytestCommand, rootdir: Path) -> list[str]:
    """pytest's options for a run of `cmd`, without the report's path and the paths."""
    return [*run_options(rootdir), *cmd.pytest_args]


def run_options(rootdir: Path) -> list[str]:
    """The options every run bugbout makes gives pytest, so also those a test runner must
    understand to be of any use (`runner_works`).

    The project's `addopts` are dropped (they often need plugins the test environment
    lacks); the cache plugin is off so a run leaves the tree as it found it;
    `--continue-on-collection-errors` lets one module that fails to import cost only its
    own tests; `--rootdir` pins node ids to the tree whatever paths are given; output
    capture stays out of the report so it stays small.
    """
    return [
        *legacy_setup_cfg(rootdir),
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "-o",
        "junit_family=xunit1",
        "-o",
        "junit_logging=no",
        f"--rootdir={rootdir}",
        "--continue-on-collection-errors",
        "--color=no",
        "-q",
    ]


def legacy_setup_cfg(tree: Path) -> list[str]:
    """Options that give pytest the settings of `tree`'s setup.cfg `[pytest]` section, when
    that is the configuration pytest would read there.

    pytest 4 and later refuse that section (it wants `[tool:pytest]`) before running a
    single test, and a task's environment may hold a pytest newer than its commit (a
    runner taken from a later date). The file is left as it is: an empty ini replaces it
    (`-c`) and each setting comes as an override (`-o`), which every pytest since 3.0
    reads; bugbout's own overrides come after, so they still win.
    """
    if (tree / "pytest.ini").is_file() or _has_section(tree / "tox.ini", "pytest"):
        return []
    try:
        if "[tool.pytest.ini_options]" in (tree / "pyproject.toml").read_text(errors="replace"):
            return []
    except OSError:
        pass
    setup = RawConfigParser()
    try:
        setup.read(tree / "setup.cfg", encoding="utf-8")
    except (ConfigParserError, UnicodeDecodeError):
        return []
    if not setup.has_section("pytest") or setup.has_section("tool:pytest"):
        return []
    options = ["-c", os.devnull]
    for key, value in setup.items("pytest"):
        options += ["-o", f"{key}={value.strip()}"]
    return options


def _has_section(path: Path, section: str) -> bool:
    parser = RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (ConfigParserError, UnicodeDecodeError):
        return False
    return parser.has_section(section)


def _argv(cmd: PytestCommand, junit: Path) -> list[str]:
    return [
        str(cmd.python),
        "-m",
        "pytest",
        *pytest_options(cmd, cmd.tree),
        f"--junitxml={junit}",
        *cmd.paths,
    ]


async def run_pytest(
    cmd: PytestCommand, sandbox: Sandbox, *, workdir: Path, log_path: Path | None = None
) -> TestRun:
    """Run `cmd` in `sandbox` and read every test's outcome.

    `workdir` is this run's scratch directory: the JUnit report goes there rather than in
    the tree, where a test's own files could collide with it, and so does the tests'
    `HOME`. It is writable inside the sandbox, as is the tree; nothing else is, and
    there is no network (see `confinement_for_tests`). The whole output, both streams, goes
    to `log_path` when given.

    Raises:
        BugboutError: the interpreter or the tree does not exist.
    """
    if not os.access(cmd.python, os.X_OK):
        raise BugboutError(
            f"The test interpreter {cmd.python} does not exist or cannot be run.",
            hint="Point [project] interpreter in bugbout.toml at an existing Python, "
            "or remove it so bugbout builds the test environment itself.",
        )
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    junit = workdir / JUNIT_FILE
    junit.unlink(missing_ok=True)  # a report left by an earlier run must not pass for this one
    confinement = confinement_for_tests(cmd, writable=(cmd.tree, workdir), home=home)
    argv = sandbox.wrap(_argv(cmd, junit), confinement, cwd=cmd.tree)
    result = await run_process(
        argv,
        cwd=cmd.tree,
        env=confinement.env,
        timeout=cmd.timeout,
        stdout_path=log_path,
        stderr_path=log_path,
    )
    return interpret_run(result, junit, cmd)


def interpret_run(result: ProcessResult, junit: Path, cmd: PytestCommand) -> TestRun:
    """A run's outcomes from its JUnit report, checked against how the process ended."""

    def failed_run(reason: str, outcomes: dict[str, TestResult] | None = None) -> TestRun:
        found = outcomes or {}
        return TestRun(
            outcomes=found,
            collected=_count_tests(found),
            exit_code=result.returncode,
            duration=result.duration,
            error=f"{reason}\n{_output_tail(result)}".rstrip(),
            timed_out=result.timed_out,
        )

    if result.timed_out:
        return failed_run(
            f"pytest did not finish within {cmd.timeout:g} seconds; it was stopped, "
            "with every process it started."
        )
    if not junit.is_file():
        return failed_run(
            f"pytest {_describe_exit(result.returncode)} without writing a JUnit report."
        )
    try:
        outcomes = parse_junit(junit, rootdir=cmd.tree)
    except JUnitError as error:
        return failed_run(f"pytest {_describe_exit(result.returncode)}, but {error}.")
    contradiction = _contradiction(result.returncode, outcomes)
    if contradiction is not None:
        return failed_run(contradiction, outcomes)
    return TestRun(
        outcomes=outcomes,
        collected=_count_tests(outcomes),
        exit_code=result.returncode,
        duration=result.duration,
        error=None,
    )


def _contradiction(code: int | None, outcomes: Mapping[str, TestResult]) -> str | None:
    """Why the exit status and the report disagree, or None when they agree.

    0 means everything passed, 1 that something failed or errored, 5 that nothing was
    collected. Anything else means pytest itself did not complete normally, whatever the
    report holds.
    """
    broken = sum(1 for r in outcomes.values() if r.outcome in ("failed", "error"))
    if code == 0 and broken:
        return f"pytest exited with status 0, but its report has {broken} failed or errored."
    if code == 1 and not broken:
        return "pytest exited with status 1, but its report has no failure or error."
    if code == 5 and _count_tests(outcomes):
        return "pytest exited with status 5 (no tests collected), but its report has tests."
    if code in (0, 1, 5):
        return None
    return f"pytest {_describe_exit(code)}."


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "was stopped"
    if code < 0:
        return f"was killed by {_signal_name(-code)}"
    meaning = _EXIT_MEANINGS.get(code)
    if meaning is not None:
        return f"{meaning} (exit status {code})"
    if code > 128:  # how a shell, or the sandbox, reports a child killed by a signal
        return f"exited with status {code} (killed by {_signal_name(code - 128)})"
    return f"exited with status {code}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _count_tests(outcomes: Iterable[str]) -> int:
    return sum(1 for node_id in outcomes if "::" in node_id)


def _output_tail(result: ProcessResult) -> str:
    """What pytest printed, each stream cut to its head and tail when long: a crash
    report lists the frame that crashed first (faulthandler's most recent call), and a
    summary comes last."""
    streams = [t.rstrip() for t in (result.stdout_tail, result.stderr_tail) if t.strip()]
    if not streams:
        return "(pytest printed nothing)"
    budget = _ERROR_TAIL_CHARS // len(streams)
    return "Output tail:\n" + "\n".join(_clip(text, budget) for text in streams)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "\n…\n" + text[-(limit - head) :]


def expand_collection_errors(run: TestRun, known_ids: Iterable[str]) -> TestRun:
    """`run` with each collection-level entry spread over the tests it stands for.

    A module that fails to import cannot say which tests it holds; pytest reports it as
    one entry keyed by its path (`tests/test_x.py`, or a directory when a conftest
    broke). The caller that knows the test names, from another run of the same tests,
    passes them as `known_ids`: each known test under such a path that has no outcome
    of its own gets that entry's outcome and message (an error, or a skip when the
    module skipped itself at import). The spread entries are dropped, so every key is a
    test; an entry that covers no known test is kept, so its error is not lost.
    """
    entries = sorted(
        ((node_id, result) for node_id, result in run.outcomes.items() if "::" not in node_id),
        key=lambda item: len(item[0]),
        reverse=True,  # the most specific path wins
    )
    if not entries:
        return run
    outcomes = {k: v for k, v in run.outcomes.items() if "::" in k}
    used: set[str] = set()
    for known in known_ids:
        path, sep, _ = known.partition("::")
        if not sep or known in outcomes:
            continue
        for entry, result in entries:
            if path == entry or path.startswith(entry + "/"):
                outcomes[known] = result
                used.add(entry)
                break
    outcomes.update((entry, result) for entry, result in entries if entry not in used)
    return run.model_copy(update={"outcomes": outcomes})
