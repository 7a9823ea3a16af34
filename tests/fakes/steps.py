"""The scripted behaviour the fake agent CLIs share.

A test writes a JSON list of steps and names it in `BUGBOUT_FAKE_SCRIPT`, or gives the list
itself in `BUGBOUT_FAKE_STEPS` (for a race, whose sandbox hides the test's temporary
files from the agent); each fake plays the steps as its real counterpart would report
them, in that CLI's own output format.
Every fake also appends one JSON line describing how it was started (argv, working
directory, complete environment, standard input and the files in its configuration home)
to the file named by `BUGBOUT_FAKE_LOG`, so tests can check exactly what an adapter ran.

Steps (any order, all optional):

- `{"say": TEXT}`: an assistant message.
- `{"write": PATH, "content": TEXT}` / `{"delete": PATH}`: a file edit through the
  agent's edit tool; PATH is relative to the agent's working root, or absolute.
- `{"run": COMMAND}`: a shell command through the agent's shell tool (`bash -c`).
- `{"web": URL}`: an attempt to use the agent's web tool.
- `{"sleep": SECONDS}`.
- `{"usage": {"input": N, "output": N, "cached": N}, "cost": USD}`: what the run reports.
- `{"limit": true}` or `{"limit": MESSAGE}`: stop on the agent's usage-limit error.
- `{"fail": MESSAGE}`: stop on some other API error.
- `{"stderr": TEXT}`: a line on standard error.
- `{"exit": CODE}`: exit at once with CODE.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

Step = dict[str, Any]


def load_script() -> list[Step]:
    inline = os.environ.get("BUGBOUT_FAKE_STEPS")
    path = os.environ.get("BUGBOUT_FAKE_SCRIPT")
    if inline:
        steps = json.loads(inline)
    elif path:
        steps = json.loads(Path(path).read_text(encoding="utf-8"))
    else:
        return [{"say": "Nothing to do."}]
    if not isinstance(steps, list):
        raise SystemExit(f"fake: {path or 'BUGBOUT_FAKE_STEPS'} must hold a JSON list of steps")
    return steps


def log_call(
    program: str, argv: list[str], *, prompt: str, stdin: str | None, home: str | None
) -> None:
    """Append how this fake was started to `BUGBOUT_FAKE_LOG`."""
    target = os.environ.get("BUGBOUT_FAKE_LOG")
    if not target:
        return
    files: list[str] = []
    if home and Path(home).is_dir():
        files = sorted(str(p.relative_to(home)) for p in Path(home).rglob("*") if p.is_file())
    record = {
        "program": program,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "prompt": prompt,
        "stdin": stdin,
        "home": home,
        "home_files": files,
    }
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def read_stdin() -> str | None:
    """Standard input when it is not a terminal (None when there is none at all)."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.read()


def resolve(root: Path, path: str) -> Path:
    return Path(os.path.normpath(root / path))


def inside(path: Path, roots: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(
        real == Path(os.path.realpath(r)) or Path(os.path.realpath(r)) in real.parents
        for r in roots
    )


def write(path: Path, content: str) -> str | None:
    """Write the file; the error text when the filesystem refuses."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    return None


def delete(path: Path) -> str | None:
    try:
        path.unlink()
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    return None


def run(command: str, cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[str, int]:
    env = dict(os.environ)
    env.update(extra_env or {})
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    return result.stdout + result.stderr, result.returncode


def pause(step: Step) -> None:
    time.sleep(float(step["sleep"]))


def usage_of(steps: list[Step]) -> tuple[dict[str, int], float]:
    """The last usage a script declares (a small default otherwise), and its cost."""
    usage = {"input": 1200, "output": 80, "cached": 200}
    cost = 0.0
    for step in steps:
        if "usage" in step:
            usage.update(step["usage"])
            cost = float(step.get("cost", cost))
    return usage, cost
