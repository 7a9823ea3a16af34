"""`bugbout doctor` with a cluster, for real: a `dask scheduler` and `dask worker`
processes on the loopback, each worker with its own PATH and its own BUGBOUT_HOME, so a
worker's report can only have come from the worker itself.

One worker declares `agent:codex` and has the strict fake `codex` on its PATH; the other
declares `agent:claude-code` and has no `claude` until a test gives it one. The cluster
is started once for the module; every process it starts is killed at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask.config
import pytest
from distributed import Client
from fakes.harness import FAKES
from gitrepo import GitRepo

from bugbout_tui import __version__
from bugbout_tui.agents.claude_code import ClaudeCodeAgent
from bugbout_tui.cli import main
from bugbout_tui.engine.cluster import INSTALL_HINT

pytestmark = pytest.mark.usefixtures("home")

DASK = str(Path(sys.executable).with_name("dask"))
STARTUP_SECONDS = 60.0
CONTESTANTS = '[[contestants]]\nagent = "codex"\n\n[[contestants]]\nagent = "claude-code"\n'

HIDE = """\
import sys


class _Hidden:
    '''Imports of {package} fail here, as where it is not installed.'''

    def find_spec(self, name, path=None, target=None):
        if name == {package!r} or name.startswith({package!r} + "."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Hidden())
"""
"""A Python file that makes `package` impossible to import in the process it runs in."""


@dataclass(frozen=True)
class Cluster:
    address: str
    root: Path
    system: Path
    """git, bwrap and python3, for every PATH here."""
    lacking: Path
    """The PATH directory of the worker `lacking`: empty unless a test puts `claude` there."""


class Processes:
    """The processes a test module starts, each in a session of its own, all killed."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen[bytes]] = []

    def start(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], log: Path
    ) -> subprocess.Popen[bytes]:
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.running.append(process)
        return process

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        """Kill `process` and whatever it started (its session's group), then reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for process in reversed(self.running):
            self.stop(process)


def _worker(
    processes: Processes,
    cluster: Cluster,
    name: str,
    path: Path,
    *,
    resources: str | None = None,
    preload: Path | None = None,
) -> subprocess.Popen[bytes]:
    argv = [DASK, "worker", cluster.address, "--name", name, "--nthreads", "1", "--no-nanny"]
    argv += ["--no-dashboard", "--local-directory", str(cluster.root / f"dask-{name}")]
    if resources is not None:
        argv += ["--resources", resources]
    if preload is not None:
        argv += ["--preload", str(preload)]
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(path), str(cluster.system)]),
        "BUGBOUT_HOME": str(cluster.root / f"home-{name}"),
    }
    return processes.start(argv, cwd=cluster.root, env=env, log=cluster.root / f"{name}.log")


def _wait_for(address: str, count: int) -> None:
    """Until the scheduler has exactly `count` workers."""
    with Client(address, timeout=STARTUP_SECONDS) as client:
        deadline = time.monotonic() + STARTUP_SECONDS
        while len(client.scheduler_info(n_workers=-1)["workers"]) != count:
            assert time.monotonic() < deadline, f"the scheduler never had {count} workers"
            time.sleep(0.1)


def _programs(folder: Path, **programs: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in programs.items():
        (folder / name).symlink_to(target)
    return folder


def _scheduler(processes: Processes, root: Path) -> str:
    """A `dask scheduler` on a free loopback port; its address."""
    scheduler_file = root / "scheduler.json"
    argv = [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
    processes.start(
        [*argv, "--scheduler-file", str(scheduler_file)],
        cwd=root,
        env=dict(os.environ),
        log=root / "scheduler.log",
    )
    deadline = time.monotonic() + STARTUP_SECONDS
    while not scheduler_file.is_file() or not scheduler_file.read_text().strip():
        assert time.monotonic() < deadline, "the scheduler did not start"
        time.sleep(0.05)
    return str(json.loads(scheduler_file.read_text())["address"])


@pytest.fixture(scope="module")
def processes() -> Iterator[Processes]:
    started = Processes()
    try:
        yield started
    finally:
        started.stop_all()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, processes: Processes) -> Cluster:
    """A scheduler and the workers `good` (agent:codex) and `lacking` (agent:claude-code)."""
    root = tmp_path_factory.mktemp("cluster")
    found = {name: shutil.which(name) for name in ("git", "bwrap")}
    system = _programs(
        root / "system-bin",
        python3=Path(sys.executable),
        **{name: Path(path) for name, path in found.items() if path is not None},
    )
    address = _scheduler(processes, root)
    made = Cluster(address=address, root=root, system=system, lacking=root / "lacking-bin")
    good = _programs(root / "good-bin", codex=FAKES / "codex")
    _worker(processes, made, "good", good, resources="agent:codex=1")
    _worker(processes, made, "lacking", _programs(made.lacking), resources="agent:claude-code=1")
    _wait_for(address, 2)
    return made


@pytest.fixture
def coordinator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: Cluster) -> Path:
    """This machine's PATH: both agents' fakes, git, bwrap and python3, nothing else."""
    fakes = _programs(tmp_path / "bin", codex=FAKES / "codex", claude=FAKES / "claude")
    monkeypatch.setenv("PATH", os.pathsep.join([str(fakes), str(cluster.system)]))
    monkeypatch.delenv("BUGBOUT_CLUSTER", raising=False)
    return fakes


def project(tmp_path: Path, config: str = "") -> GitRepo:
    """A small package with one test, run by this Python, and both agents as contestants."""
    repo = GitRepo(tmp_path / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "tests/test_calc.py": "def test_one():\n    assert 1 + 1 == 2\n",
            "issues.json": "[]",
        },
    )
    text = (
        f'[project]\nsource = "src/calc"\ninterpreter = "{sys.executable}"\n'
        f'issues-file = "issues.json"\n\n{CONTESTANTS}{config}'
    )
    (repo.root / "bugbout.toml").write_text(text)
    return repo


def doctor_json(repo: GitRepo, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code = main(["-C", str(repo.root), "doctor", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is (code == 0)
    return code, report


def by_name(report: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Each worker's checks by name, the workers by name."""
    return {
        worker["name"]: {check["name"]: check for check in worker["checks"]}
        for worker in report["cluster"]["workers"]
    }


@pytest.mark.usefixtures("coordinator")
def test_each_worker_checks_itself(
    tmp_path: Path, cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = doctor_json(project(tmp_path), capsys, "--cluster", cluster.address)
    assert code == 1
    assert all(check["status"] == "ok" for check in report["checks"])
    workers = by_name(report)
    good, lacking = workers["good"], workers["lacking"]
    assert list(good) == [
        "bugbout",
        "python",
        "git",
        "uv",
        "interpreter",
        "sandbox",
        "BUGBOUT_HOME",
        "agent:codex",
    ]
    assert {check["status"] for check in good.values()} == {"ok"}
    assert good["bugbout"]["detail"] == f"bugbout {__version__}, the coordinator's version"
    assert good["agent:codex"]["detail"] == f"{cluster.root / 'good-bin' / 'codex'} 0.171.0"
    assert good["BUGBOUT_HOME"]["detail"] == f"{cluster.root / 'home-good'} is writable"
    assert "bubblewrap" in good["sandbox"]["detail"]
    missing = lacking["agent:claude-code"]
    assert missing["status"] == "problem"
    assert "`claude`" in missing["detail"]
    assert "not installed or not on PATH" in missing["detail"]
    assert missing["fix"] == ClaudeCodeAgent.install_hint
    assert [name for name, check in lacking.items() if check["status"] != "ok"] == [
        "agent:claude-code"
    ]
    assert report["cluster"]["ok"] is False
    assert {w["name"]: w["ok"] for w in report["cluster"]["workers"]} == {
        "good": True,
        "lacking": False,
    }


@pytest.mark.usefixtures("coordinator")
def test_table_per_worker_with_the_fix(
    tmp_path: Path, cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["-C", str(project(tmp_path).root), "doctor", "--cluster", cluster.address])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert "worker good tcp://127.0.0.1:" in out
    assert "worker lacking tcp://127.0.0.1:" in out
    assert "`claude`, which runs the claude-code agent, is not installed" in out
    assert " ".join(ClaudeCodeAgent.install_hint.split()) in out
    assert "1 problem stops a bout (1 on lacking)" in out


@pytest.mark.usefixtures("coordinator")
def test_ready_cluster_from_the_config(
    tmp_path: Path, cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[run] cluster` alone asks for the workers' checks; with `claude` on the second
    worker's PATH, nothing stops a bout."""
    repo = project(tmp_path, f'\n[run]\ncluster = "{cluster.address}"\n')
    claude = cluster.lacking / "claude"
    claude.symlink_to(FAKES / "claude")
    try:
        code = main(["-C", str(repo.root), "doctor"])
    finally:
        claude.unlink()
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "worker good" in out
    assert "worker lacking" in out
    assert f"{claude} 2.1.197" in out
    assert "ready: nothing stops a bout" in out


def test_workers_without_bugbout_or_with_another(
    tmp_path: Path,
    cluster: Cluster,
    processes: Processes,
    coordinator: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A worker whose Python cannot import bugbout, and one whose bugbout is another
    version, each get a report saying so with the command that installs this machine's
    version; the address comes from BUGBOUT_CLUSTER."""
    hide = tmp_path / "hide_bugbout.py"
    hide.write_text(HIDE.format(package="bugbout_tui"))
    older = tmp_path / "older_bugbout.py"
    older.write_text('import bugbout_tui\n\nbugbout_tui.__version__ = "0.0.1"\n')
    extra = [
        _worker(processes, cluster, "bare", coordinator, preload=hide),
        _worker(processes, cluster, "older", coordinator, preload=older),
    ]
    try:
        _wait_for(cluster.address, 4)
        monkeypatch.setenv("BUGBOUT_CLUSTER", cluster.address)
        code, report = doctor_json(project(tmp_path), capsys)
    finally:
        for process in extra:
            processes.stop(process)
        _wait_for(cluster.address, 2)
    assert code == 1
    install = f'pip install "bugbout-tui[cluster]=={__version__}"'
    workers = by_name(report)
    bare = workers["bare"]
    assert list(bare) == ["bugbout"]
    assert bare["bugbout"]["status"] == "problem"
    assert "bugbout is not installed in the Python this worker runs" in bare["bugbout"]["detail"]
    assert install in bare["bugbout"]["fix"]
    version = workers["older"]["bugbout"]
    assert version["status"] == "problem"
    assert version["detail"].startswith(f"bugbout 0.0.1 here, {__version__} on the coordinator")
    assert install in version["fix"]
    assert workers["older"]["agents"]["status"] == "ok"


def test_scheduler_without_workers(
    tmp_path: Path,
    processes: Processes,
    capsys: pytest.CaptureFixture[str],
    coordinator: Path,
) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    address = _scheduler(processes, lonely)
    code = main(["-C", str(project(tmp_path).root), "doctor", "--cluster", address])
    err = capsys.readouterr().err
    assert code == 1
    assert f"The cluster at {address} has no worker." in err
    assert f"dask worker {address}" in err


@pytest.mark.usefixtures("coordinator")
def test_unreachable_scheduler(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    started = time.monotonic()
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code = main(["-C", str(project(tmp_path).root), "doctor", "--cluster", address])
    captured = capsys.readouterr()
    assert code == 1
    assert time.monotonic() - started < 15
    assert f"Cannot reach the cluster's scheduler at {address}" in captured.err
    assert "dask scheduler" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


@pytest.mark.usefixtures("coordinator")
def test_empty_address_means_this_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--cluster ""` overrides `[run] cluster`: no scheduler is asked, so none need answer."""
    repo = project(tmp_path, '\n[run]\ncluster = "tcp://127.0.0.1:9"\n')
    code, report = doctor_json(repo, capsys, "--cluster", "")
    assert code == 0
    assert "cluster" not in report


@pytest.mark.usefixtures("coordinator")
def test_without_distributed(tmp_path: Path) -> None:
    """Where `distributed` is not installed, the message says how to get it."""
    hide = tmp_path / "hide_distributed.py"
    hide.write_text(HIDE.format(package="distributed"))
    run = (
        f"exec(open({str(hide)!r}).read())\n"
        "from bugbout_tui.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    repo = project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", run, "-C", str(repo.root), "doctor", "--cluster", "tcp://h:1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Running on a cluster needs Dask's `distributed` package." in done.stderr
    assert INSTALL_HINT in done.stderr
    assert "Traceback" not in done.stderr
