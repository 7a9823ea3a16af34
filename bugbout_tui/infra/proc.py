"""Running one external program to completion, whatever it does.

Test runs and agent attempts start programs bugbout does not control: they may print
gigabytes, never read their input, fork helpers that ignore SIGTERM, or hang. Each
program therefore runs in its own process group, and the whole group is ended when the
program exits, times out, is stopped or its caller is cancelled, together with every
descendant that left the group, so nothing it started outlives the run. Output is
drained concurrently in chunks, so a chatty child never blocks on a full pipe and
memory stays bounded however much it prints.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from bugbout_tui.infra.descendants import Family

TAIL_BYTES = 4096
"""How much of the end of each stream a result keeps in memory."""

_CHUNK = 64 * 1024
_LONGEST_LINE = 64 * 1024
"""A line longer than this reaches `on_line` in pieces, so memory stays bounded."""
_DRAIN_AFTER_KILL = 2.0
"""How long the pipes may stay open after SIGKILL: only a process that escaped the
family (one re-parented before it was seen) can still hold them, and it is not worth
waiting for."""

MAX_ARG_STRLEN = 32 * 4096
"""Linux's limit on one argument or environment string, its closing NUL included."""

LineCallback = Callable[[str, str], None]
_Ending = Literal["exited", "timeout", "stopped", "io-failed"]


@dataclass(frozen=True)
class ProcessResult:
    """How a program ended and the end of what it printed."""

    returncode: int | None
    """The exit status (negative: killed by that signal); None when bugbout ended it."""
    timed_out: bool
    cancelled: bool
    """Stopped through the `stop` event before it finished."""
    duration: float
    """Seconds from start until the process was reaped, on the monotonic clock."""
    stdout_tail: str
    """Roughly the last 4 KB of standard output, decoded with replacement characters.
    It is taken from everything the program printed, also past the cap, so it shows how
    the run ended even when the log file was cut short."""
    stderr_tail: str
    truncated: bool
    """A stream passed `cap_bytes` and the rest of it was dropped."""


class _Stream:
    """One output stream: the capped copy in a file, the live lines and the tail."""

    def __init__(
        self,
        name: str,
        sink: BinaryIO | None,
        cap: int,
        on_line: LineCallback | None,
    ) -> None:
        self.name = name
        self.sink = sink
        self.cap = cap
        self.on_line = on_line
        self.kept = 0
        self.truncated = False
        self.saw_tail_cut = False
        self.tail = bytearray()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.partial = ""

    def feed(self, chunk: bytes) -> None:
        self.tail += chunk
        if len(self.tail) > TAIL_BYTES:
            del self.tail[:-TAIL_BYTES]
            self.saw_tail_cut = True
        if self.truncated:
            return
        room = self.cap - self.kept
        kept = chunk[:room]
        if kept:
            self.kept += len(kept)
            if self.sink is not None:
                self.sink.write(kept)
            self._lines(self.decoder.decode(kept))
        if len(chunk) > room:
            self.truncated = True
            marker = f"[bugbout: output truncated after {self.cap} bytes]"
            if self.sink is not None:
                self.sink.write(f"\n{marker}\n".encode())
            self._flush_partial()
            self._emit(marker)

    def close(self) -> None:
        if not self.truncated:
            self._lines(self.decoder.decode(b"", final=True))
        self._flush_partial()

    def tail_text(self) -> str:
        raw = bytes(self.tail)
        if self.saw_tail_cut:
            # The cut may fall inside a UTF-8 sequence; skip its continuation bytes.
            start = 0
            while start < min(3, len(raw)) and 0x80 <= raw[start] <= 0xBF:
                start += 1
            raw = raw[start:]
        return raw.decode("utf-8", errors="replace")

    def _lines(self, text: str) -> None:
        if self.on_line is None or not text:
            return
        *complete, self.partial = (self.partial + text).split("\n")
        for line in complete:
            self._emit(line.removesuffix("\r"))
        while len(self.partial) > _LONGEST_LINE:
            self._emit(self.partial[:_LONGEST_LINE])
            self.partial = self.partial[_LONGEST_LINE:]

    def _flush_partial(self) -> None:
        if self.partial:
            self._emit(self.partial.removesuffix("\r"))
            self.partial = ""

    def _emit(self, line: str) -> None:
        if self.on_line is not None:
            self.on_line(self.name, line)


async def _pump(reader: asyncio.StreamReader, stream: _Stream) -> None:
    while chunk := await reader.read(_CHUNK):
        stream.feed(chunk)


async def _feed_stdin(writer: asyncio.StreamWriter, data: bytes) -> None:
    # A child that exits without reading its input is not an error of ours.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        writer.write(data)
        await writer.drain()
    writer.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await writer.wait_closed()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Tells when the program has exited, whoever still holds its pipes.

    `Process.wait()` also waits for the pipes to close, which a stray helper holding
    them can put off forever; the group must be ended as soon as the program is gone.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _await_ending(
    exited: asyncio.Future[None],
    io: Sequence[asyncio.Task[None]],
    deadline: float | None,
    stop: asyncio.Event | None,
) -> _Ending:
    loop = asyncio.get_running_loop()
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    watched: set[asyncio.Future[Any]] = {exited, *io}
    if stopped is not None:
        watched.add(stopped)
    try:
        while True:
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return "timeout"
            done, watched = await asyncio.wait(
                watched, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            if exited in done:
                return "exited"
            if stopped is not None and stopped in done:
                return "stopped"
            if any(not task.cancelled() and task.exception() is not None for task in done):
                return "io-failed"
    finally:
        if stopped is not None:
            stopped.cancel()


async def _end_group(
    pgid: int,
    exited: asyncio.Future[None],
    io: Sequence[asyncio.Task[None]],
    grace: float,
) -> None:
    """SIGTERM the group and the leader's descendants, give them `grace` seconds,
    SIGKILL them, finish draining.

    Runs after every ending, a normal exit included, because a program's helpers may
    still be running (and holding its pipes) after the program itself has exited. The
    grace period ends early once the program is gone and its pipes are closed.
    """
    family = Family(pgid)
    try:
        if not exited.done():  # after a normal exit the group is all that is left
            await asyncio.to_thread(family.gather, leader_alive=True)
        _signal_group(pgid, signal.SIGTERM)
        family.signal(signal.SIGTERM)
        await asyncio.wait([exited, *io], timeout=grace)
        if family or not exited.done():
            await asyncio.to_thread(family.gather, leader_alive=not exited.done())
        _signal_group(pgid, signal.SIGKILL)
        family.signal(signal.SIGKILL)
    finally:
        family.release()
    await asyncio.shield(exited)
    if io:
        _, late = await asyncio.wait(io, timeout=_DRAIN_AFTER_KILL)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)


async def _finish_despite_cancellation(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` to the end even if the caller is cancelled meanwhile.

    Killing a process group must not be abandoned half way by a second cancellation
    (a user pressing Ctrl+C twice); the cancellation is re-raised once the work is done.
    """
    task = asyncio.ensure_future(work)
    interrupted = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            interrupted = True
    task.result()
    if interrupted:
        raise asyncio.CancelledError


def _open_sinks(
    stack: contextlib.ExitStack, stdout_path: Path | None, stderr_path: Path | None
) -> tuple[BinaryIO | None, BinaryIO | None]:
    """Open the log files; both streams share one handle when they share a path."""

    def open_log(path: Path) -> BinaryIO:
        path.parent.mkdir(parents=True, exist_ok=True)
        return stack.enter_context(path.open("wb", buffering=0))

    out = open_log(stdout_path) if stdout_path is not None else None
    if stderr_path is None:
        return out, None
    if out is not None and stdout_path is not None and stderr_path == stdout_path:
        return out, out
    return out, open_log(stderr_path)


def command_line_problem(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Why the kernel would refuse to start `argv` with `env` as too long, or None.

    `execve` fails with "Argument list too long" when one string passes
    `MAX_ARG_STRLEN` (Linux) or all of them with their pointers pass `ARG_MAX`; saying
    which, and how large, before trying is what lets the caller give a useful message.
    """
    strings = [os.fsencode(word) for word in argv]
    strings += [os.fsencode(f"{name}={value}") for name, value in env.items()]
    if sys.platform == "linux":
        longest = max((len(s) + 1 for s in strings), default=0)
        if longest > MAX_ARG_STRLEN:
            return (
                f"one argument is {_kib(longest)}, more than the {_kib(MAX_ARG_STRLEN)} "
                "Linux takes in one"
            )
    total = sum(len(s) + 1 + 8 for s in strings)  # each string, its NUL and its pointer
    with contextlib.suppress(ValueError, OSError):
        limit = os.sysconf("SC_ARG_MAX")
        if 0 < limit < total:
            return f"the command line and environment are {_kib(total)}, more than {_kib(limit)}"
    return None


def _kib(size: int) -> str:
    return f"{size / 1024:.0f} KiB"


def _dying_with_us(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
    """`argv` behind a launcher that has the kernel kill it if bugbout itself dies, even
    by `kill -9` (on Linux; elsewhere `argv` as it is).

    The group kill covers every ending bugbout sees; this covers the one it cannot, so
    an agent never works on, spending quota, for a run that is gone. The launcher asks
    for the parent-death signal and then becomes the program (one exec, no process left
    between them): setting it in the forked child ourselves would mean running Python
    between fork and exec while other threads hold locks, which can deadlock.
    """
    if sys.platform != "linux" or not argv:
        return list(argv)
    _check_program(argv[0], cwd, env)
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", *argv]
    ctype = env.get("LC_CTYPE")
    kept = "" if ctype is None else f"={ctype}"
    return [sys.executable, "-I", "-S", "-c", _PYTHON_LAUNCHER, kept, *argv]


_PYTHON_LAUNCHER = """\
import ctypes, os, sys
ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
kept = sys.argv[1]
if kept:
    os.environ["LC_CTYPE"] = kept[1:]
else:
    os.environ.pop("LC_CTYPE", None)
os.execvp(sys.argv[2], sys.argv[2:])
"""
"""The launcher where setpriv is missing. Python may set `LC_CTYPE` for itself at
start-up (locale coercion), so the program's own value, or its absence, is put back."""


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv, where it is installed and knows `--pdeathsig` (2.33 on)."""
    found = shutil.which("setpriv")
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [found, "--pdeathsig", "KILL", "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


_PROBE_TIMEOUT = 10.0


def _check_program(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise the `OSError` that starting `program` in `cwd` with `env` would raise.

    A launcher stands between bugbout and the program, and could only exit with a
    status; looking first, the way exec does (`PATH` from `env`, relative paths from
    `cwd`), keeps "no such program" an error raised here, as callers expect. A missing
    `cwd` is left for the start itself to report.
    """
    if not os.path.isdir(cwd):
        return
    if "/" in program:
        candidates = [os.path.join(cwd, program)]
    else:
        candidates = [os.path.join(cwd, folder, program) for folder in os.get_exec_path(dict(env))]
    problem = errno.ENOENT
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return
        if os.path.exists(candidate):
            problem = errno.EACCES
    raise OSError(problem, os.strerror(problem), program)


@dataclass(frozen=True)
class Bounded:
    """How a short command ended: its status (None when it ran out of time, and was
    killed), and what it wrote to the streams that were kept."""

    returncode: int | None
    stdout: bytes
    stderr: bytes


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    keep_stdout: bool = True,
    keep_stderr: bool = True,
) -> Bounded:
    """Run a short command to its end or to `timeout`, without the event loop.

    The command runs in a process group of its own, so a timeout also ends whatever it
    started (a version-manager shim, an ssh), which would otherwise hold a pipe open.

    Raises:
        OSError: the command could not be started.
    """
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
        stderr=subprocess.PIPE if keep_stderr else subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return Bounded(None, b"", b"")
    return Bounded(process.returncode, out or b"", err or b"")


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float | None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    stdin: bytes | None = None,
    on_line: LineCallback | None = None,
    cap_bytes: int = 50 * 1024 * 1024,
    kill_grace: float = 5.0,
    stop: asyncio.Event | None = None,
) -> ProcessResult:
    """Run `argv` to the end and return how it ended.

    `env` is the complete environment of the child. Output is written to `stdout_path`
    and `stderr_path` as it arrives (one file gets both streams when the paths are
    equal), and passed line by line to `on_line(stream, line)` with stream "stdout" or
    "stderr". Past `cap_bytes` on a stream, a marker line is written once and the rest is
    read and dropped. `stdin` is written concurrently with the reading, so a large input
    cannot deadlock against a full output pipe; without it the child's input is empty.

    The child leads its own process group. When it times out, or `stop` is set, the
    group gets SIGTERM, then SIGKILL after `kill_grace` seconds. If the awaiting task is
    cancelled, the same happens and the cancellation is re-raised once the group is
    dead. If `on_line` raises, the group is ended and the exception propagates.

    Raises:
        OSError: the program could not be started (e.g. FileNotFoundError).
    """
    loop = asyncio.get_running_loop()
    with contextlib.ExitStack() as stack:
        out_sink, err_sink = _open_sinks(stack, stdout_path, stderr_path)
        started = time.monotonic()
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(loop),
            *_dying_with_us(argv, cwd, env),
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        stack.callback(transport.close)
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        assert proc.stdout is not None and proc.stderr is not None
        out = _Stream("stdout", out_sink, cap_bytes, on_line)
        err = _Stream("stderr", err_sink, cap_bytes, on_line)
        io = [
            asyncio.ensure_future(_pump(proc.stdout, out)),
            asyncio.ensure_future(_pump(proc.stderr, err)),
        ]
        if stdin is not None:
            assert proc.stdin is not None
            io.append(asyncio.ensure_future(_feed_stdin(proc.stdin, stdin)))
        deadline = None if timeout is None else loop.time() + timeout
        # start_new_session made the child the leader of its own process group.
        try:
            ending = await _await_ending(protocol.exited, io, deadline, stop)
        finally:
            await _finish_despite_cancellation(
                _end_group(proc.pid, protocol.exited, io, kill_grace)
            )
        duration = time.monotonic() - started
        for task in io:
            if not task.cancelled() and (failure := task.exception()) is not None:
                raise failure
        out.close()
        err.close()
    return ProcessResult(
        returncode=proc.returncode if ending == "exited" else None,
        timed_out=ending == "timeout",
        cancelled=ending == "stopped",
        duration=duration,
        stdout_tail=out.tail_text(),
        stderr_tail=err.tail_text(),
        truncated=out.truncated or err.truncated,
    )
