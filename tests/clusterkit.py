"""A real Dask cluster on this machine for the tests: a scheduler and worker processes.

Each worker is its own `dask worker` process, with no nanny, in a PID namespace of its
own, so killing it ends everything it started, as a machine going down would; it has its
own `BUGBOUT_HOME` and, through bubblewrap, no view of the directories it is given as
hidden: the coordinator's project and home are an empty directory to it, as on another
machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from distributed import Client
from terminals import clean_env

from bugbout_tui.core.events import parse_event
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.store import Store
from bugbout_tui.demo.project import build_demo

DASK = str(Path(sys.executable).with_name("dask"))
WINDOW = 5.0
"""The rationed agent's refill, shorter than the demo's, as in the demo's own tests."""
AGENTS_W1 = ("agent:careful", "agent:hasty", "agent:examiner")
AGENTS_W2 = ("agent:careful", "agent:slow")
"""What each worker of the demo's cluster declares; the rationed agent, declared by none,
runs on the coordinator (its usage counter lives in the project's directory)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LocalMachines:
    """A scheduler and the worker processes started against it."""

    address: str
    scheduler: subprocess.Popen[bytes]
    logs: Path
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start_worker(
        self,
        name: str,
        home: Path,
        *,
        hidden: Sequence[Path] = (),
        resources: Sequence[str] = (),
        threads: int = 2,
    ) -> None:
        """Start worker `name` and wait until the scheduler has it."""
        home.mkdir(parents=True, exist_ok=True)
        argv = [DASK, "worker", self.address, "--name", name, "--nthreads", str(threads)]
        argv += ["--no-nanny", "--no-dashboard", "--local-directory", str(home / "dask")]
        if resources:
            argv += ["--resources", " ".join(f"{r}=1" for r in resources)]
        walls = [word for path in hidden for word in ("--tmpfs", str(path))]
        bwrap = shutil.which("bwrap")
        assert bwrap is not None, "the tests need bubblewrap"
        env = {**os.environ, "BUGBOUT_HOME": str(home)}
        env.pop("BUGBOUT_CLUSTER", None)
        log = (self.logs / f"{name}.log").open("ab")
        self.workers[name] = subprocess.Popen(
            [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", *walls, *argv],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.wait_for(lambda names: name in names)

    def kill(self, name: str) -> None:
        """End worker `name` at once, as a machine that goes down."""
        process = self.workers.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def names(self) -> set[str]:
        with Client(self.address, timeout=30) as client:
            info = client.scheduler_info(n_workers=-1)
        return {str(worker["name"]) for worker in info["workers"].values()}

    def wait_for(self, ready: object, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready(self.names()):  # type: ignore[operator]
                return
            time.sleep(0.2)
        raise AssertionError(f"the workers never became ready: {self.names()}")

    def stop(self) -> None:
        for name in list(self.workers):
            self.kill(name)
        self.scheduler.terminate()
        try:
            self.scheduler.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.scheduler.kill()


@contextlib.contextmanager
def local_machines(logs: Path) -> Iterator[LocalMachines]:
    """A scheduler on 127.0.0.1; its workers are started by the test."""
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    scheduler = subprocess.Popen(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        stdout=(logs / "scheduler.log").open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    machines = LocalMachines(f"tcp://127.0.0.1:{port}", scheduler, logs)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the scheduler never listened"
            time.sleep(0.2)
        yield machines
    finally:
        machines.stop()


# ---------------------------------------------------------------- the demo on them


def make_demo(root: Path, home: Path) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        build_demo(root / "demo", window=WINDOW)
    return root / "demo"


def journal(demo: Path) -> list[Any]:
    path = Store(demo).events_path
    return [parse_event(line) for line in path.read_text().splitlines() if line.strip()]


def stored_attempts(demo: Path) -> dict[str, Attempt]:
    store = Store(demo)
    found = {}
    for path in store.attempts_dir.glob("*/*.json"):
        attempt = store.read(path, Attempt)
        assert attempt is not None
        found[attempt.id] = attempt
    return found


def follow(demo: Path, bout: subprocess.Popen[str], seen: Callable[[Any], bool]) -> Any:
    """The first event of the bout's journal that `seen` picks, waiting for it."""
    deadline = time.monotonic() + 300
    path = Store(demo).events_path
    while time.monotonic() < deadline:
        if path.exists():
            for event in journal(demo):
                if seen(event):
                    return event
        assert bout.poll() is None, "the bout ended before the event came"
        time.sleep(0.05)
    raise AssertionError("the event never came")


def start_bout(demo: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bugbout_tui", *args],
        env=clean_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
