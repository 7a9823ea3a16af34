"""Running `bugbout` as a person does: in its own process, with what a shell would pass
it and nothing of the machine running the tests; seen at an 80-column terminal, or
through a pipe.

A pseudo-terminal is the real thing for rich: it asks the terminal its size, and draws
for it. Standard error stays a pipe in both, so a spinner never mixes into what is read.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from rich.cells import cell_len

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\r")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """`home` as BUGBOUT_HOME and HOME, the system PATH, and `extra` (which may give
    another HOME or PATH)."""
    return {"BUGBOUT_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home), **extra}


def bugbout(
    *args: str, cwd: Path | None = None, home: Path, timeout: float = 300, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """`bugbout args` in its own process with `clean_env(home, **extra_env)`; its output
    captured as text, whatever its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "bugbout_tui", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_env(home, **extra_env),
        timeout=timeout,
        check=False,
    )


def piped(args: list[str], *, cwd: Path, home: Path, columns: int = 80) -> str:
    """What `bugbout args` writes to a pipe, with COLUMNS set as a shell would."""
    result = bugbout(*args, cwd=cwd, home=home, COLUMNS=str(columns), TERM="xterm-256color")
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def run_on_a_terminal(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    columns: int,
    rows: int = 50,
    stderr_too: bool = False,
    timeout: float = 300,
) -> tuple[int, str]:
    """Run `bugbout args` on a pseudo-terminal `columns` × `rows` (standard error too when
    `stderr_too`, else a pipe): its exit code and every byte it wrote there, as it was."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bugbout_tui", *args],
        cwd=cwd,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave if stderr_too else subprocess.PIPE,
        start_new_session=True,
    )
    os.close(slave)
    written = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            written += chunk
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(master)
    return code, written.decode("utf-8", errors="replace")


def on_a_terminal(args: list[str], *, cwd: Path, home: Path, columns: int = 80) -> str:
    """What `bugbout args` shows on a pseudo-terminal `columns` wide, controls removed."""
    code, written = run_on_a_terminal(
        args,
        cwd=cwd,
        env=clean_env(home, COLUMNS=str(columns), TERM="xterm-256color"),
        columns=columns,
    )
    assert code in (0, 1)
    return _CONTROL.sub("", written)


def widest(text: str) -> int:
    """The widest line, in terminal cells."""
    return max((cell_len(line) for line in text.splitlines()), default=0)


def one_line(text: str, value: str) -> bool:
    """Whether `value` appears whole on some line of `text`."""
    return any(value in line for line in text.splitlines())
