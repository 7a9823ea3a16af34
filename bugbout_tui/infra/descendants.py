"""Every process a program started, wherever it went since.

Signalling a program's process group reaches only the processes that stayed in it. A
sandbox's PID-namespace init, an agent's detached shell and a daemon that called setsid
all leave the group, and the one guard they keep (a parent-death signal) is not
delivered every time: a sandbox's init was seen outliving its killed parent, with the
agent under it still running. So before ending a program, bugbout also takes hold of
each of its descendants by pidfd, which names one process for good (a pid can be reused
once the process is gone), and signals them directly.

Linux only; elsewhere the process group is all there is and the family stays empty.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from pathlib import Path

_PROC = Path("/proc")
_TRACKED = sys.platform == "linux" and hasattr(os, "pidfd_open")


def _parent_and_start(pid: int) -> tuple[int, int] | None:
    """A live process's parent pid and start time (clock ticks since boot); None when it
    is gone or already a zombie."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces and parentheses itself.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def _children_by_parent() -> dict[int, list[tuple[int, int]]]:
    """Every live process on the machine as (pid, start time), grouped by parent pid."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        found = _parent_and_start(int(entry.name))
        if found is not None:
            parent, start = found
            children.setdefault(parent, []).append((int(entry.name), start))
    return children


def _exited(pidfd: int) -> bool:
    """A pidfd reads as ready once its process has exited."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))


class Family:
    """The descendants of one process, each held by a pidfd once seen.

    `gather()` may be called more than once: descendants of members already held are
    found even after the leader is gone and they were re-parented away from it.
    """

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self._held: dict[int, int] = {}
        """pid -> pidfd of every descendant seen so far."""

    def __bool__(self) -> bool:
        return bool(self._held)

    def gather(self, *, leader_alive: bool) -> None:
        """Take hold of every live descendant of a member held, and of the leader while
        it has not been reaped (once it has, its pid may name another process)."""
        if not _TRACKED:
            return
        children = _children_by_parent()
        # A member that has exited may have been reaped and its pid given to another.
        running = [pid for pid, pidfd in self._held.items() if not _exited(pidfd)]
        frontier = [*running, *([self.leader] if leader_alive else [])]
        while frontier:
            for pid, start in children.get(frontier.pop(), ()):
                if pid in self._held:
                    continue
                pidfd = self._open(pid, start)
                if pidfd is not None:
                    self._held[pid] = pidfd
                    frontier.append(pid)

    def signal(self, sig: signal.Signals) -> None:
        """Send `sig` to every member held; members already gone are skipped."""
        for pidfd in self._held.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(pidfd, sig)

    def release(self) -> None:
        for pidfd in self._held.values():
            os.close(pidfd)
        self._held.clear()

    @staticmethod
    def _open(pid: int, start: int) -> int | None:
        """A pidfd for `pid`, if it is still the process that started at `start`."""
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return None
        found = _parent_and_start(pid)
        if found is None or found[1] != start:  # gone, or the pid was reused meanwhile
            os.close(pidfd)
            return None
        return pidfd
