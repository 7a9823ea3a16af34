"""A small project whose ground truth is known, and `command` contestants to race on it.

Ground truth runs pytest three times per task in the sandbox, which costs seconds, so
one template project is built and taken through ground truth once per test session;
every race test works on a copy of it (the stored tasks and oracles come along, so the
copy goes straight to the race) with a fresh `BUGBOUT_HOME` and its own contestants.

Agents are Python scripts in `tests/agents/`, run with this interpreter. The sandbox
gives each process a private `/tmp`, so the scripts must not live there. The projects
and `BUGBOUT_HOME` may: agents work in copies under `BUGBOUT_HOME`, which the sandbox
binds back in (the project itself stays out of their sight, wherever it is).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues

from bugbout_tui.core.events import BaseEvent, parse_event
from bugbout_tui.core.models import Attempt
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import attempt_path

AGENTS = Path(__file__).resolve().parent / "agents"
PYTHON = sys.executable

TASKS = ("calc-1", "calc-2", "calc-3", "calc-4")
"""Tasks with issue text; `calc-5` has none (its issue is not in the issues file)."""
NO_TEXT = "calc-5"

_OPS = "".join(f"def f{n}():\n    return 0\n\n\n" for n in range(1, 6)).rstrip() + "\n"


_TEMPLATE: dict[str, Path] = {}


def template(factory: pytest.TempPathFactory) -> Path:
    """The session's template project, built on first use."""
    if "project" not in _TEMPLATE:
        base = factory.mktemp("race-template")
        _TEMPLATE["project"] = build_template(base / "proj", base / "home")
    return _TEMPLATE["project"]


def build_template(root: Path, home: Path) -> Path:
    """The template project, mined and through ground truth, under `root`."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": _OPS,
            "tests/test_ops.py": "from calc.ops import f1\n\n\ndef test_f1_runs():\n    f1()\n",
        },
    )
    ops = _OPS
    for n in range(1, 6):
        ops = ops.replace(f"def f{n}():\n    return 0", f"def f{n}():\n    return {n}")
        repo.commit(
            f"Fix f{n} returning zero (#{n})",
            files={
                "src/calc/ops.py": ops,
                f"tests/test_f{n}.py": f"from calc.ops import f{n}\n\n\n"
                f"def test_f{n}():\n    assert f{n}() == {n}\n",
            },
        )
    configure(root)
    write_issues(root, {n: (f"f{n} returns 0", f"f{n}() should return {n}.") for n in range(1, 5)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        Bout(Project.load(root)).run(until="ground-truth")
    oracles = json.loads((root / ".bugbout" / "oracles.json").read_text())
    assert all(oracles[f"calc-{n}"]["scored"] for n in range(1, 6)), oracles
    return root


def copy_project(
    template: Path, dest: Path, *, tasks: Iterable[str], run: str = "", extra: str = ""
) -> Path:
    """A copy of the template, set up with `reconfigure`."""
    shutil.copytree(
        template,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns("events.jsonl", "lock", "attempts"),
    )
    reconfigure(dest, tasks=tasks, run=run, extra=extra)
    return dest


def reconfigure(
    project: Path,
    *,
    tasks: Iterable[str],
    run: str = "",
    extra: str = "",
    interpreter: str = PYTHON,
) -> None:
    """Race only `tasks`; `run` holds keys for `[run]`, `extra` (contestants) ends the file."""
    chosen = ", ".join(f'"{t}"' for t in tasks)
    tables = f"\n[tasks]\nrequire-review = true\ninclude = [{chosen}]\n"
    configure(project, run + tables + extra, interpreter=interpreter)


def configure(root: Path, extra: str = "", *, interpreter: str = PYTHON) -> None:
    """`bugbout.toml` from `write_config`, with pytest's plugin autoloading off (the
    plugins installed beside this test suite cost a second or more per test run) and
    `interpreter` as the project's test interpreter."""
    path = write_config(root, "calc", extra=extra)
    text = path.read_text().replace(f"interpreter = {json.dumps(PYTHON)}", "", 1)
    settings = f"interpreter = {json.dumps(interpreter)}\n"
    settings += 'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n\n[run]\n'
    path.write_text(text.replace("\n[run]\n", "\n" + settings, 1))


def toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def contestant(
    name: str,
    command: Sequence[str],
    *,
    quota: str | None = None,
    state_dirs: Sequence[str] = (),
    env: dict[str, str] | None = None,
    view: str | None = None,
) -> str:
    """A `[[contestants]]` entry for a `command` agent."""
    lines = [
        "\n[[contestants]]",
        'agent = "command"',
        f"name = {json.dumps(name)}",
        f"command = {toml_list(command)}",
    ]
    if quota is not None:
        lines.append(f"quota = {json.dumps(quota)}")
    if state_dirs:
        lines.append(f"state-dirs = {toml_list(state_dirs)}")
    if env:
        table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
        lines.append(f"env = {{ {table} }}")
    if view is not None:
        lines.append(f"view = {json.dumps(view)}")
    return "\n".join(lines) + "\n"


def script(name: str, *args: str) -> list[str]:
    """The command line running `tests/agents/<name>.py` with `args`."""
    return [PYTHON, str(AGENTS / f"{name}.py"), *args]


def edit_agent(name: str, state: Path, *, quota: str | None = None, sleep: float = 0.0) -> str:
    """A contestant running `agents/edit.py`, which makes a one-line fix after `sleep`
    seconds and counts its starts in `state`."""
    command = script("edit", "--count", str(state / "count"), "--sleep", str(sleep), "{workdir}")
    return contestant(name, command, quota=quota, state_dirs=[str(state)])


def race(project: Path, *, retry_failed: bool = False) -> list[BaseEvent]:
    """Run the bout up to the race in this process; the events it emitted, in order."""
    bout = Bout(Project.load(project), retry_failed=retry_failed)
    events: list[BaseEvent] = []
    bout.subscribe(events.append)
    bout.run(until="race")
    return events


def attempt(project: Path, task: str, name: str) -> Attempt:
    path = attempt_path(project / ".bugbout" / "attempts", task, name)
    return Attempt.model_validate_json(path.read_text())


def records(project: Path) -> dict[Path, bytes]:
    """Every stored attempt record of the project, as bytes."""
    root = project / ".bugbout" / "attempts"
    if not root.is_dir():
        return {}
    return {path: path.read_bytes() for path in sorted(root.rglob("*.json"))}


def report(record: Attempt) -> dict[str, Any]:
    """The `REPORT <json>` line an agent from `tests/agents/` printed last."""
    log = Path(record.logdir) / "stdout.log"
    last = log.read_text().rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("REPORT "), last
    found: dict[str, Any] = json.loads(last.removeprefix("REPORT "))
    return found


def journal(project: Path) -> list[BaseEvent]:
    """The events of the project's last run, from its journal."""
    lines = (project / ".bugbout" / "events.jsonl").read_text().splitlines()
    return [parse_event(line) for line in lines if line]


def starts(count_file: Path) -> list[tuple[str, str]]:
    """(task, agent) of every start an agent noted, from the working copies' paths."""
    if not count_file.exists():
        return []
    found = []
    for line in count_file.read_text().splitlines():
        parts = Path(line).parts  # .../attempts/<repo>/<task>/<agent>/workdir
        found.append((parts[-3], parts[-2]))
    return found


def eventually(condition: Callable[[], bool], *, timeout: float, step: float = 0.05) -> bool:
    """Whether `condition` holds within `timeout` seconds, polled every `step`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    if not eventually(condition, timeout=timeout):
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def lock_is_free(store: Path) -> bool:
    """Whether no process holds the lock of the store directory `store`, found by taking
    it (exclusive, never waited for) and letting go at once: a check of its own, not
    Store's, so a test does not trust the code it tests."""
    try:
        fd = os.open(store / "lock", os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def alive(token: str) -> list[int]:
    """Live (not zombie) processes carrying `token` in their command line. Command lines,
    unlike pids, read the same from inside and outside a sandbox's PID namespace."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if token.encode() not in (proc / "cmdline").read_bytes():
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(proc.name))
    return found
