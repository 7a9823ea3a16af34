"""Starting an adapter's invocation the way the engine does, for tests of real runs.

The engine wraps a confined invocation with the run's sandbox, starts it in the checkout
with exactly the invocation's environment, feeds and closes standard input, and writes
`stdout.log` and `stderr.log` into the attempt's log directory; so does `run`.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bugbout_tui.agents import STDERR_LOG, STDOUT_LOG, CodingAgent, Session
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.sandbox import BubblewrapSandbox, Sandbox

FAKES = Path(__file__).resolve().parent
TIMEOUT = 120


def bubblewrap() -> Sandbox:
    """The bubblewrap backend, checked; the calling test is skipped where bwrap cannot
    run on this machine."""
    sandbox = BubblewrapSandbox()
    try:
        sandbox.check()
    except BugboutError as error:
        pytest.skip(f"bubblewrap cannot run here: {error.message}")
    return sandbox


def make_session(
    root: Path,
    sandbox: Sandbox,
    *,
    base_env: Mapping[str, str],
    prompt: str = "Fix the bug in calc.py and add a regression test.",
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Session:
    """A session with its own checkout, log directory and empty home under `root`."""
    workdir = root / "work"
    logdir = root / "logs"
    home = root / "home"
    for directory in (workdir, logdir, home):
        directory.mkdir(parents=True, exist_ok=True)
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    return Session(
        prompt=prompt,
        workdir=workdir,
        logdir=logdir,
        home=home,
        sandbox=sandbox,
        model=model,
        options=dict(options or {}),
        test_command="python -m pytest -q",
        base_env=dict(base_env),
    )


def run(agent: CodingAgent, session: Session) -> int:
    """Start the agent on the session; its exit status (logs land in `session.logdir`)."""
    invocation = agent.invocation(session)
    argv = invocation.argv
    if invocation.confinement is not None:
        assert dict(invocation.confinement.env) == invocation.env
        argv = session.sandbox.wrap(argv, invocation.confinement, cwd=session.workdir)
    with (
        open(session.logdir / STDOUT_LOG, "wb") as stdout,
        open(session.logdir / STDERR_LOG, "wb") as stderr,
    ):
        result = subprocess.run(
            argv,
            cwd=session.workdir,
            env=invocation.env,
            input=None if invocation.stdin is None else invocation.stdin.encode(),
            stdin=subprocess.DEVNULL if invocation.stdin is None else None,
            stdout=stdout,
            stderr=stderr,
            timeout=TIMEOUT,
            check=False,
        )
    return result.returncode


def write_script(session: Session, steps: list[dict[str, Any]]) -> Path:
    """The fake's script, in the log directory so a sandboxed fake can read it."""
    path = session.logdir / "fake-script.json"
    path.write_text(json.dumps(steps), encoding="utf-8")
    return path


def calls(log: Path) -> list[dict[str, Any]]:
    """What each fake recorded about how it was started."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def fake_env(session_root: Path, **extra: str) -> dict[str, str]:
    """A user environment with the fakes first on PATH and a few credentials of every kind."""
    env = {
        "PATH": f"{FAKES}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(session_root / "user"),
        "LANG": "C.UTF-8",
        "BUGBOUT_FAKE_LOG": str(session_root / "logs" / "fake-calls.jsonl"),
        "BUGBOUT_FAKE_SCRIPT": str(session_root / "logs" / "fake-script.json"),
        "OPENAI_API_KEY": "sk-openai-test",
        "CODEX_API_KEY": "codex-test",
        "ANTHROPIC_API_KEY": "anthropic-test",
        "GEMINI_API_KEY": "gemini-test",
        "GITHUB_TOKEN": "ghp_test",
        "AWS_SECRET_ACCESS_KEY": "aws-test",
    }
    env.update(extra)
    return env
