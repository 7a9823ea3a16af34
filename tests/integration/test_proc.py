"""run_process against real child processes: output, limits, and nothing left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from racekit import eventually

from bugbout_tui.infra import proc
from bugbout_tui.infra.proc import TAIL_BYTES, ProcessResult, run_process

PY = sys.executable
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONUNBUFFERED": "1"}

# A grandchild that ignores SIGTERM, records its pid, announces itself and sleeps; with
# argv[3] "setsid" it first leaves the process group, as a sandbox's init or a detached
# shell does. The child then either sleeps too or exits at once, depending on argv[2].
FORKING_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    pid_file = sys.argv[1]
    if os.fork() == 0:
        if sys.argv[3:] == ["setsid"]:
            os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open(pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(pid_file + ".tmp", pid_file)
        print("ready", flush=True)
        while True:
            time.sleep(1)
    while not os.path.exists(pid_file):
        time.sleep(0.01)
    if sys.argv[2] == "sleep":
        while True:
            time.sleep(1)
    """
)


def running(pid: int) -> bool:
    """Whether `pid` still runs code; a zombie does not (this machine's init never
    reaps orphans, so a killed orphan stays a zombie here)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int) -> bool:
    """The kernel delivers SIGKILL asynchronously: allow it a brief moment."""
    return eventually(lambda: not running(pid), timeout=2.0, step=0.01)


def run(argv: list[str], tmp_path: Path, **kwargs: object) -> ProcessResult:
    return asyncio.run(
        run_process(argv, cwd=tmp_path, env=ENV, **kwargs)  # type: ignore[arg-type]
    )


def test_output_streams_to_files_lines_and_tails(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "print('one'); print('two\\r')\n"
        "sys.stderr.write('warn\\n'); sys.stderr.flush()\n"
        "sys.stdout.buffer.write(b'bad \\xff byte\\n')\n"
        "sys.stdout.write('no newline at end')\n"
    )
    lines: list[tuple[str, str]] = []
    result = run(
        [PY, "-c", script],
        tmp_path,
        timeout=30,
        stdout_path=tmp_path / "logs" / "out.txt",
        stderr_path=tmp_path / "logs" / "err.txt",
        on_line=lambda stream, line: lines.append((stream, line)),
    )
    assert result.returncode == 0
    assert not (result.timed_out or result.cancelled or result.truncated)
    assert (tmp_path / "logs" / "out.txt").read_bytes() == (
        b"one\ntwo\r\nbad \xff byte\nno newline at end"
    )
    assert (tmp_path / "logs" / "err.txt").read_text() == "warn\n"
    assert [line for stream, line in lines if stream == "stdout"] == [
        "one",
        "two",
        "bad \ufffd byte",
        "no newline at end",
    ]
    assert [line for stream, line in lines if stream == "stderr"] == ["warn"]
    assert result.stdout_tail.endswith("bad \ufffd byte\nno newline at end")
    assert result.stderr_tail == "warn\n"
    assert result.duration > 0


def test_both_streams_can_share_one_log(tmp_path: Path) -> None:
    script = "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr, flush=True)"
    log = tmp_path / "both.log"
    result = run([PY, "-c", script], tmp_path, timeout=30, stdout_path=log, stderr_path=log)
    assert result.returncode == 0
    assert sorted(log.read_text().splitlines()) == ["err", "out"]


def test_tail_only_without_files(tmp_path: Path) -> None:
    result = run([PY, "-c", "print('x' * 10000 + 'END')"], tmp_path, timeout=30)
    assert len(result.stdout_tail.encode()) <= TAIL_BYTES
    assert result.stdout_tail.endswith("END\n")
    assert list(tmp_path.iterdir()) == []


def test_cap_writes_marker_once_and_keeps_draining(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "line = b'y' * 1023 + b'\\n'\n"
        "for _ in range(20 * 1024):\n"
        "    sys.stdout.buffer.write(line)\n"
        "sys.stdout.buffer.write(b'LAST\\n')\n"
    )
    cap = 1024 * 1024
    lines: list[str] = []
    log = tmp_path / "out.log"
    result = run(
        [PY, "-c", script],
        tmp_path,
        timeout=60,
        stdout_path=log,
        cap_bytes=cap,
        on_line=lambda _stream, line: lines.append(line),
    )
    assert result.returncode == 0  # the child was never blocked on a full pipe
    assert result.truncated
    data = log.read_bytes()
    marker = f"\n[bugbout: output truncated after {cap} bytes]\n".encode()
    assert data.endswith(marker)
    assert len(data) == cap + len(marker)
    assert data.count(b"truncated after") == 1
    assert len(lines) == 1024 + 1  # the 1024 kept lines, then the marker
    assert lines[-1] == f"[bugbout: output truncated after {cap} bytes]"
    assert result.stdout_tail.endswith("LAST\n")


def test_very_long_line_reaches_on_line_in_pieces(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run(
        [PY, "-c", "print('z' * 200_000)"],
        tmp_path,
        timeout=30,
        on_line=lambda _stream, line: lines.append(line),
    )
    assert result.returncode == 0
    assert "".join(lines) == "z" * 200_000
    assert max(len(line) for line in lines) < 200_000


def test_nonzero_exit_and_stderr_tail(tmp_path: Path) -> None:
    script = "import sys\nprint('something broke', file=sys.stderr)\nsys.exit(3)"
    result = run([PY, "-c", script], tmp_path, timeout=30)
    assert result.returncode == 3
    assert result.stderr_tail == "something broke\n"
    assert not result.timed_out


def test_large_stdin_does_not_deadlock(tmp_path: Path) -> None:
    payload = os.urandom(4 * 1024 * 1024)
    script = "import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read())"
    log = tmp_path / "echo.bin"
    result = run([PY, "-c", script], tmp_path, timeout=60, stdin=payload, stdout_path=log)
    assert result.returncode == 0
    assert log.read_bytes() == payload


def test_stdin_not_read_is_fine(tmp_path: Path) -> None:
    result = run([PY, "-c", "pass"], tmp_path, timeout=30, stdin=b"x" * (4 * 1024 * 1024))
    assert result.returncode == 0


def test_stdin_defaults_to_empty(tmp_path: Path) -> None:
    script = "import sys\nprint(repr(sys.stdin.read()))"
    result = run([PY, "-c", script], tmp_path, timeout=30)
    assert result.stdout_tail == "''\n"


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run(
        [PY, "-c", FORKING_CHILD, str(pid_file), "sleep"], tmp_path, timeout=1.5, kill_grace=0.3
    )
    assert result.timed_out
    assert result.returncode is None
    assert not result.cancelled
    assert "ready" in result.stdout_tail
    assert time.monotonic() - started < 10
    assert gone_soon(int(pid_file.read_text()))


@pytest.mark.skipif(sys.platform != "linux", reason="descendants are tracked on Linux")
def test_a_helper_that_left_the_group_is_ended_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    result = run(
        [PY, "-c", FORKING_CHILD, str(pid_file), "sleep", "setsid"],
        tmp_path, timeout=1.5, kill_grace=0.3,
    )  # fmt: skip
    assert result.timed_out
    assert gone_soon(int(pid_file.read_text()))


def test_stray_helpers_are_ended_after_a_normal_exit(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    result = run(
        [PY, "-c", FORKING_CHILD, str(pid_file), "exit"], tmp_path, timeout=30, kill_grace=0.3
    )
    assert result.returncode == 0
    assert not result.timed_out
    assert gone_soon(int(pid_file.read_text()))


async def started_forking_child(
    tmp_path: Path, pid_file: Path, kill_grace: float
) -> asyncio.Task[ProcessResult]:
    """A run of the sleeping FORKING_CHILD as a task, once its grandchild is ready."""
    ready = asyncio.Event()
    task = asyncio.create_task(
        run_process(
            [PY, "-c", FORKING_CHILD, str(pid_file), "sleep"],
            cwd=tmp_path,
            env=ENV,
            timeout=60,
            kill_grace=kill_grace,
            on_line=lambda _stream, line: ready.set() if line == "ready" else None,
        )
    )
    await ready.wait()
    return task


async def test_cancellation_kills_then_reraises(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    task = await started_forking_child(tmp_path, pid_file, kill_grace=0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The kill completed before the cancellation reached us.
    pid = int(pid_file.read_text())
    assert gone_soon(pid)


async def test_second_cancellation_does_not_abandon_the_kill(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    task = await started_forking_child(tmp_path, pid_file, kill_grace=0.5)
    task.cancel()
    await asyncio.sleep(0.05)  # let the first cancellation start the kill
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone_soon(int(pid_file.read_text()))


async def test_stop_event_ends_the_run_with_a_result(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    stop = asyncio.Event()
    result = await run_process(
        [PY, "-c", FORKING_CHILD, str(pid_file), "sleep"],
        cwd=tmp_path,
        env=ENV,
        timeout=60,
        kill_grace=0.3,
        stop=stop,
        on_line=lambda _stream, line: stop.set() if line == "ready" else None,
    )
    assert result.cancelled
    assert not result.timed_out
    assert result.returncode is None
    assert gone_soon(int(pid_file.read_text()))


def test_failing_line_callback_ends_the_group_and_propagates(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    def explode(_stream: str, line: str) -> None:
        if line == "ready":
            raise RuntimeError("display broke")

    with pytest.raises(RuntimeError, match="display broke"):
        run(
            [PY, "-c", FORKING_CHILD, str(pid_file), "sleep"],
            tmp_path,
            timeout=60,
            kill_grace=0.3,
            on_line=explode,
        )
    assert gone_soon(int(pid_file.read_text()))


def test_missing_program_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "no-such-program")], tmp_path, timeout=5)


async def test_many_runs_at_once(tmp_path: Path) -> None:
    results = await asyncio.gather(
        *(
            run_process(
                [PY, "-c", f"import sys\nprint('run {i}')\nsys.exit({i})"],
                cwd=tmp_path,
                env=ENV,
                timeout=60,
                stdout_path=tmp_path / f"{i}.log",
            )
            for i in range(8)
        )
    )
    assert [r.returncode for r in results] == list(range(8))
    assert [(tmp_path / f"{i}.log").read_text() for i in range(8)] == [
        f"run {i}\n" for i in range(8)
    ]


def test_environment_is_exactly_what_was_given(tmp_path: Path) -> None:
    script = "import os\nprint(sorted(k for k in os.environ if k != 'LC_CTYPE'))"
    result = asyncio.run(
        run_process([PY, "-c", script], cwd=tmp_path, env={"ONLY": "1"}, timeout=30)
    )
    assert result.stdout_tail == "['ONLY']\n"


def test_no_process_is_started_with_a_preexec_fn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python code between fork and exec can deadlock a program that runs threads."""
    started: list[object] = []

    class Spy(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(kwargs.get("preexec_fn"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    assert run([PY, "-c", "print('hello')"], tmp_path, timeout=30).stdout_tail == "hello\n"
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "no-such-program")], tmp_path, timeout=5)
    assert started
    assert all(preexec is None for preexec in started)


@pytest.fixture(params=["setpriv", "python"])
def launcher(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way of asking for the parent-death signal: setpriv, or Python where it is missing."""
    if request.param == "setpriv" and proc._setpriv() is None:
        pytest.skip("setpriv with --pdeathsig is not installed here")
    if request.param == "python":
        monkeypatch.setattr(proc, "_setpriv", lambda: None)
    return str(request.param)


# Runs `run_process` on a child that records its pid and sleeps; argv[2] "unprotected"
# starts the child without the launcher, the control.
BUGBOUT_STAND_IN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from bugbout_tui.infra import proc
    pid_file, how = Path(sys.argv[1]), sys.argv[2]
    if how == "python":
        proc._setpriv = lambda: None
    elif how == "unprotected":
        proc._dying_with_us = lambda argv, cwd, env: list(argv)
    child = "import os, sys, time\\nopen(sys.argv[1], 'w').write(str(os.getpid()))\\ntime.sleep(99)"
    argv = [sys.executable, "-c", child, str(pid_file)]
    asyncio.run(proc.run_process(argv, cwd=pid_file.parent, env={}, timeout=600))
    """
)


@pytest.mark.parametrize("how", ["setpriv", "python", "unprotected"])
def test_a_program_dies_with_bugbout_even_by_kill_9(tmp_path: Path, how: str) -> None:
    if how == "setpriv" and proc._setpriv() is None:
        pytest.skip("setpriv with --pdeathsig is not installed here")
    pid_file = tmp_path / "child.pid"
    stand_in = subprocess.Popen([PY, "-c", BUGBOUT_STAND_IN, str(pid_file), how])
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert stand_in.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        child = int(pid_file.read_text())
        stand_in.kill()
        stand_in.wait()
        if how == "unprotected":  # the control: without the launcher the child lives on
            time.sleep(0.5)
            assert running(child)
            os.kill(child, signal.SIGKILL)
        else:
            assert gone_soon(child)
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()


def test_the_launcher_passes_the_environment_exactly(tmp_path: Path, launcher: str) -> None:
    for env in ({"ONLY": "1"}, {"ONLY": "1", "LC_CTYPE": "C"}):
        result = asyncio.run(run_process(["/usr/bin/env"], cwd=tmp_path, env=env, timeout=30))
        assert result.stdout_tail.splitlines() == [f"{k}={v}" for k, v in env.items()]


def test_the_launcher_keeps_how_a_program_is_found_and_refused(
    tmp_path: Path, launcher: str
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "hello").write_text("#!/bin/sh\necho hello\n")
    (tools / "hello").chmod(0o755)
    (tools / "plain").write_text("#!/bin/sh\necho never\n")
    env = {"PATH": f"{tools}:/usr/bin:/bin"}
    found = asyncio.run(run_process(["hello"], cwd=tmp_path, env=env, timeout=30))
    assert found.stdout_tail == "hello\n"
    relative = asyncio.run(run_process(["./tools/hello"], cwd=tmp_path, env=env, timeout=30))
    assert relative.stdout_tail == "hello\n"
    with pytest.raises(FileNotFoundError):
        asyncio.run(run_process(["no-such-tool"], cwd=tmp_path, env=env, timeout=30))
    with pytest.raises(PermissionError):
        asyncio.run(run_process(["./tools/plain"], cwd=tmp_path, env=env, timeout=30))
    with pytest.raises(PermissionError):
        asyncio.run(run_process([str(tools)], cwd=tmp_path, env=env, timeout=30))
