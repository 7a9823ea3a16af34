"""Runs several pytest runs on one tree, one after another, none able to touch the next.

This file is a program, not a module of bugbout: it is copied beside a job file and run
with the *test environment's* interpreter inside the sandbox (one PID namespace of its
own), so it uses the standard library only and the syntax of Python 3.8.

Why it exists: the cross-examination runs several authors' tests on the same tree. One
pytest process for all of them would let one author's conftest, plugin or import-time
code decide the others' outcomes; one sandboxed process per author costs a full start of
Python, pytest and its plugins each time, most of a run. This program pays that start
once, then forks one child per run and keeps the runs apart:

- each child runs in the tree as it was first handed over, plus only its own author's
  files: before every run, whatever the last one changed in the tree is put back (every
  file is compared by inode, size, and nanosecond change time, which no process can set);
- before every run, every other process in the namespace is killed, and the private
  temporary directories and the run's scratch directory are emptied;
- a child's outcomes are read from the report it wrote only once it and everything it
  started are dead, and kept in this process's memory, which no child can reach (the
  process is made non-dumpable, so no child can trace it or read its memory or files);
- results are written out only after the last run, when nothing else is alive.

A child that kills this process makes the whole job fail; the caller then runs every
author in a sandbox of its own, so such a child costs time, never another's result.

Warm starts. Before the first run this process runs one pytest session on an empty
directory: pytest, its plugins and whatever they import are then loaded (and rewritten
for assertions) once. Each child calls pytest's public entry point with its own
arguments, so it parses them, reads the ini file, loads its own conftests and collects
exactly as a separate `python -m pytest` would; it only finds those modules already
imported. Where the warm-up fails, or leaves a second thread running (a fork would copy
a lock held by it), each child starts a fresh interpreter instead: slower, equally apart.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import traceback

PR_SET_DUMPABLE = 4
LOG_HEAD = 2000
LOG_TAIL = 6000
REPORT = "junit.xml"
OUTPUT = "output.log"


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    _set_dumpable(False)
    restorer = Restorer(job["source"], job["tree"])
    warm_error = _warm_up(job)
    warm = warm_error is None
    results = []
    for index, run in enumerate(job["runs"]):
        _sweep()
        restorer.restore()
        for directory in [job["work"], *job["private"]]:
            _empty(directory, keep=[job["tree"], *job["keep"]])
        _remove_ipc_objects()
        if run.get("overlay"):
            target = os.path.join(job["tree"], run["overlay_at"])
            shutil.copytree(run["overlay"], target, symlinks=True)
        result = _one_run(job, run, warm)
        result["index"] = index
        results.append(result)
    _sweep()
    _write_results(job, results, warm_error)
    return 0


# --- keeping runs apart ------------------------------------------------------------------


def _set_dumpable(dumpable: bool) -> None:
    """A non-dumpable process cannot be traced, nor its memory or descriptors opened
    through /proc, by another process of the same user that lacks CAP_SYS_PTRACE."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 1 if dumpable else 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _sweep() -> None:
    """Kill every process of the namespace but this one and its init, and wait until
    they are gone. `kill(-1)` reaches exactly those; it is only ever called inside the
    sandbox's own PID namespace."""
    me = os.getpid()
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        _reap()
        alive = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        others = [pid for pid in alive if pid not in (1, me)]
        if not others:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"processes {others} of an earlier run would not end")
        time.sleep(0.002)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _remove(path: str) -> None:
    """Remove `path` and everything below it on its own filesystem, taking back any right
    a run took away; a mount found below (the sandbox's own) is left alone. No recursion,
    so no depth a run builds can stop it."""
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(top.st_mode):
        os.unlink(path)
        return
    stack = [(path, False)]
    while stack:
        current, emptied = stack.pop()
        if emptied:
            with contextlib.suppress(OSError):
                os.rmdir(current)
            continue
        with contextlib.suppress(OSError):
            os.chmod(current, 0o700)
        stack.append((current, True))
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if st.st_dev != top.st_dev:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append((entry.path, False))
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def _empty(directory: str, *, keep: list[str]) -> None:
    """Remove everything a run could have written inside `directory`: all but the paths
    in `keep`, the directories on the way to them, and the sandbox's own mounts (it binds
    the tree's source, the job and the environment, often inside a private temporary
    directory). Nothing on a read-only mount can have been written by a run."""
    try:
        here = os.lstat(directory)
    except FileNotFoundError:
        return
    writable = not os.statvfs(directory).f_flag & os.ST_RDONLY
    if writable:
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if path in keep:
            continue
        if any(kept.startswith(path + os.sep) for kept in keep):
            _empty(path, keep=keep)
        elif writable and os.lstat(path).st_dev == here.st_dev:
            _remove(path)


def _remove_ipc_objects() -> None:
    """System V shared memory, semaphores and queues outlive their makers; the sandbox's
    IPC namespace is this job's own, so every object in it is a run's leftover."""
    for kind in ("shm", "sem", "msg"):
        try:
            with open("/proc/sysvipc/" + kind, encoding="ascii") as handle:
                if len(handle.read().splitlines()) > 1:
                    break
        except OSError:
            continue
    else:
        return
    ipcrm = shutil.which("ipcrm")
    if ipcrm is not None:
        subprocess.run([ipcrm, "--all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Restorer:
    """Puts a tree back as it was handed over, copying from its read-only source only
    what changed. A change of content, mode, owner or links moves a file's change time,
    which no process can set back; on a filesystem that keeps whole seconds only, every
    run gets a fresh copy instead."""

    def __init__(self, source: str, tree: str) -> None:
        self.source = source
        self.tree = tree
        self.known = self._scan()
        self.coarse = all(st[4] % 1_000_000_000 == 0 for st in self.known.values())

    def _scan(self) -> dict[str, tuple[int, int, int, int, int]]:
        found = {}
        stack = [""]
        while stack:
            relative = stack.pop()
            with os.scandir(os.path.join(self.tree, relative)) as entries:
                for entry in entries:
                    path = os.path.join(relative, entry.name)
                    st = entry.stat(follow_symlinks=False)
                    found[path] = _signature(st)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(path)
        return found

    def restore(self) -> None:
        try:
            whole = stat.S_ISDIR(os.lstat(self.tree).st_mode)
        except FileNotFoundError:
            whole = False
        if self.coarse or not whole:
            _remove(self.tree)
            shutil.copytree(self.source, self.tree, symlinks=True)
            self.known = self._scan()
            return
        seen = set()
        stack = [""]
        while stack:
            relative = stack.pop()
            directory = os.path.join(self.tree, relative)
            with contextlib.suppress(OSError):
                os.chmod(directory, 0o700)
            with os.scandir(directory) as entries:
                listed = list(entries)
            for entry in listed:
                path = os.path.join(relative, entry.name)
                st = entry.stat(follow_symlinks=False)
                want = self.known.get(path)
                if want is None or stat.S_IFMT(st.st_mode) != stat.S_IFMT(want[0]):
                    _remove(entry.path)
                    continue
                seen.add(path)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(path)
                elif _signature(st) != want:
                    _remove(entry.path)
                    seen.discard(path)
            original = self.known.get(relative)
            if relative and original is not None:
                os.chmod(directory, stat.S_IMODE(original[0]))
        for path in sorted(set(self.known) - seen):
            if os.path.lexists(os.path.join(self.tree, path)):
                continue  # inside a directory put back whole just before
            self._put_back(path)
        root_mode = os.lstat(self.source).st_mode
        os.chmod(self.tree, stat.S_IMODE(root_mode))

    def _put_back(self, relative: str) -> None:
        source = os.path.join(self.source, relative)
        target = os.path.join(self.tree, relative)
        if os.path.isdir(source) and not os.path.islink(source):
            shutil.copytree(source, target, symlinks=True)
            prefix = relative + os.sep
            for path in [p for p in self.known if p == relative or p.startswith(prefix)]:
                self.known[path] = _signature(os.lstat(os.path.join(self.tree, path)))
        else:
            shutil.copy2(source, target, follow_symlinks=False)
            self.known[relative] = _signature(os.lstat(target))
        parent = os.path.dirname(relative)
        if parent:
            self.known[parent] = _signature(os.lstat(os.path.join(self.tree, parent)))


def _signature(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What must be equal for a path to be untouched. A directory's times move whenever
    an entry comes or goes; its entries are compared one by one instead."""
    if stat.S_ISDIR(st.st_mode):
        return (st.st_mode, 0, 0, 0, 0)
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# --- running -------------------------------------------------------------------------------


def _warm_up(job: dict) -> str | None:  # type: ignore[type-arg]
    """Run one empty session, so that pytest, its plugins and what they import lazily
    are loaded (and assertion-rewritten) once, in this process, for every child.

    Returns why the children must start afresh instead, or None.
    """
    os.chdir(job["tree"])
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    log = os.open(os.path.join(job["work"], "warm-up.log"), os.O_WRONLY | os.O_CREAT, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        import pytest

        pytest.main([*job["options"], job["empty"]])
    except BaseException:
        return traceback.format_exc(limit=-4)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, log):
            os.close(fd)
    if threading.active_count() > 1 or len(os.listdir("/proc/self/task")) > 1:
        return "the warm-up session left a thread running; each run starts afresh instead"
    import gc

    gc.collect()
    gc.freeze()  # children neither copy nor re-scan what they share
    return None


def _one_run(job: dict, run: dict, warm: bool) -> dict:  # type: ignore[type-arg]
    scratch = job["scratch"]
    report = os.path.join(scratch, REPORT)
    output = os.path.join(scratch, OUTPUT)
    for name in ("tmp", "home"):
        os.makedirs(os.path.join(scratch, name))
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(job, run, warm, report, output)
    status, timed_out = _wait(pid, job["timeout"])
    duration = time.monotonic() - started
    _sweep()  # nothing the run started may still be writing its report
    result = {
        "name": run["name"],
        "exit_code": None if timed_out else _exit_code(status),
        "timed_out": timed_out,
        "duration": duration,
        "report": None,
        "output": _read_output(output),
    }
    try:
        fd = os.open(report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return result
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            data = handle.read(job["report_limit"] + 1)
            result["report"] = data.decode("utf-8", "replace") if data else None
            result["report_too_large"] = len(data) > job["report_limit"]
    return result


def _child(job: dict, run: dict, warm: bool, report: str, output: str) -> None:  # type: ignore[type-arg]
    """A run of its own: after the warm-up, pytest's public entry point in this forked
    process; otherwise a fresh interpreter. Never returns."""
    code = 3
    try:
        _set_dumpable(True)
        os.setpgid(0, 0)
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.chdir(job["tree"])
        os.environ["TMPDIR"] = os.path.join(job["scratch"], "tmp")
        os.environ["HOME"] = os.path.join(job["scratch"], "home")
        arguments = [*job["options"], "--junitxml=" + report, *run["paths"]]
        if not warm:
            os.execv(sys.executable, [sys.executable, "-m", "pytest", *arguments])
        import pytest

        code = int(pytest.main(arguments))
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return 0, True
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _read_output(path: str) -> str:
    """The head and the tail of what a run printed. Opened as the report is: a run may
    have put a link or a pipe at that path."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        if st.st_size <= LOG_HEAD + LOG_TAIL:
            return handle.read().decode("utf-8", "replace")
        head = handle.read(LOG_HEAD)
        handle.seek(st.st_size - LOG_TAIL)
        tail = handle.read()
    cut = st.st_size - LOG_HEAD - LOG_TAIL
    middle = f"\n[… {cut} bytes of output left out …]\n"
    return head.decode("utf-8", "replace") + middle + tail.decode("utf-8", "replace")


def _write_results(job: dict, results: list, warm_error: str | None) -> None:  # type: ignore[type-arg]
    """Written when nothing else is alive: a fresh directory, files that did not exist."""
    out = job["results"]
    _remove(out)
    os.mkdir(out, 0o700)
    for result in results:
        text = result.pop("report")
        if text is not None:
            _write_new(os.path.join(out, f"{result['index']}.xml"), text)
            result["report"] = f"{result['index']}.xml"
    summary = {"warm": warm_error is None, "warm_error": warm_error, "runs": results}
    _write_new(os.path.join(out, "results.json"), json.dumps(summary))


def _write_new(path: str, text: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    sys.exit(main())
