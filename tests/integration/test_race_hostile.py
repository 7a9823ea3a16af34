"""Contestants that misbehave: each is contained, and its attempt is still recorded.

One race runs every hostile agent side by side (each in a lane of its own) on one task;
each test then reads what its agent managed, next to a control showing the agent's
script works where it is allowed to.
"""

from __future__ import annotations

import json
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from racekit import (
    attempt,
    contestant,
    copy_project,
    journal,
    reconfigure,
    report,
    script,
    template,
)
from terminals import bugbout

from bugbout_tui.core.events import AttemptOutput, BaseEvent
from bugbout_tui.core.models import Attempt, TaskSet
from bugbout_tui.infra.trees import pristine_tree

TASK = "calc-1"
SECRET_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
GITHUB_TOKEN = "ghp_" + "a1" * 18
OPENAI_KEY = "sk-proj-" + "b2" * 20
FLOOD_MB = 60
FLOOD_LINES = FLOOD_MB * 1024 * 1024 // 1000

pytestmark = pytest.mark.slow


@dataclass
class HostileRun:
    """The run every test here reads, and what the fixture set up for it."""

    project: Path
    home: Path
    user_home: Path
    fix_file: Path
    events: list[BaseEvent]
    received: list[str]
    token: str
    ops_before: bytes

    def attempt(self, name: str) -> Attempt:
        return attempt(self.project, TASK, name)

    def report(self, name: str) -> dict[str, Any]:
        return report(self.attempt(name))


class _Echo(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        received: list[str] = self.server.received  # type: ignore[attr-defined]
        received.append(self.rfile.readline().decode().strip())
        self.wfile.write(b"hello from the host\n")


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileRun]:
    """One `bugbout run --until race` with every hostile agent, as a user would start it
    (a hang would fail the test rather than stall the suite)."""
    project_template = template(tmp_path_factory)
    root = tmp_path_factory.mktemp("hostile")
    home = root / "bugbout-home"
    user_home = root / "user"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_ed25519").write_text(SECRET_KEY)
    (user_home / ".agentstate").mkdir()
    (user_home / ".agentstate" / "notes.txt").write_text("the agent's own state")
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.received = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token = f"bugbout-hostile-{root.name}"
    project = copy_project(project_template, root / "proj", tasks=[TASK])
    tasks = TaskSet.model_validate_json((project / ".bugbout" / "tasks.json").read_text())
    fix_commit = next(t.fix_commit for t in tasks.tasks if t.id == TASK)
    # the fix's pristine tree is where a run keeps it, as after ground truth
    fix_file = pristine_tree(project, fix_commit, home=home) / "src" / "calc" / "ops.py"
    secret = str(user_home / ".ssh" / "id_ed25519")

    def hostile(name: str, mode: str, *args: str, **options: Any) -> str:
        return contestant(name, script("hostile", mode, "{workdir}", *args), quota=name, **options)

    caller = [
        "/bin/bash",
        "-c",
        f"exec 3<>/dev/tcp/127.0.0.1/{server.server_address[1]}; echo {token} >&3; head -n 1 <&3",
    ]
    extra = "".join(
        [
            hostile(
                "writer",
                "write-outside",
                str(home / "planted.txt"),
                str(project / "src" / "calc" / "ops.py"),
                str(project / ".git" / "hooks" / "post-checkout"),
            ),
            hostile(
                "snoop",
                "read-secrets",
                secret,
                str(user_home / ".agentstate" / "notes.txt"),
                state_dirs=["~/.agentstate"],
                env={"AGENT_KEY": "given-to-snoop"},
            ),
            hostile("peek", "read-fix", str(fix_file), str(home / "trees"), str(project)),
            contestant("caller", caller, quota="caller"),
            hostile("flood", "flood", str(FLOOD_MB)),
            hostile("wrecker", "delete-all"),
            hostile("linker", "symlink"),
            hostile("hoarder", "sparse"),
            hostile("forger", "tamper-logs", "{logdir}", secret),
            hostile("odd", "special", "src/calc", "src/calc/__init__.py"),
        ]
    )
    ops_before = (project / "src" / "calc" / "ops.py").read_bytes()
    reconfigure(project, tasks=[TASK], run="timeout = 120\n", extra=extra)
    try:
        result = bugbout(
            "run", "--until", "race",
            cwd=project, home=home, timeout=120,
            HOME=str(user_home),
            GITHUB_TOKEN=GITHUB_TOKEN,
            OPENAI_API_KEY=OPENAI_KEY,
            BUGBOUT_PLAIN_SETTING="visible",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        yield HostileRun(
            project=project,
            home=home,
            user_home=user_home,
            fix_file=fix_file,
            events=journal(project),
            received=server.received,  # type: ignore[attr-defined]
            token=token,
            ops_before=ops_before,
        )
    finally:
        server.shutdown()
        server.server_close()


def test_writes_outside_the_working_copy_fail_and_leave_nothing(bout: HostileRun) -> None:
    report = bout.report("writer")
    planted = [
        bout.home / "planted.txt",
        bout.project / "src" / "calc" / "ops.py",
        bout.project / ".git" / "hooks" / "post-checkout",
    ]
    for path in planted:
        assert report[str(path)] != "ok", path
    assert not (bout.home / "planted.txt").exists()
    assert not (bout.project / ".git" / "hooks" / "post-checkout").exists()
    assert (bout.project / "src" / "calc" / "ops.py").read_bytes() == bout.ops_before
    # control: the same process could write in its own copy, and that is the patch
    assert report["inside"] == "ok"
    record = bout.attempt("writer")
    assert record.status == "finished"
    assert [change.path for change in record.patch.files] == ["inside.txt"]


def test_credentials_stay_out_of_reach_and_out_of_the_environment(bout: HostileRun) -> None:
    report = bout.report("snoop")
    assert report[str(bout.user_home / ".ssh" / "id_ed25519")] == "FileNotFoundError"
    # control: the state directory it was given, in the same home, reads fine
    assert report[str(bout.user_home / ".agentstate" / "notes.txt")] == "the agent's own state"
    record = bout.attempt("snoop")
    assert record.status == "finished"
    (added,) = [line for line in record.patch.other.splitlines() if line.startswith("+{")]
    env = json.loads(added[1:])
    assert "GITHUB_TOKEN" not in env
    assert "OPENAI_API_KEY" not in env
    assert env["AGENT_KEY"] == "given-to-snoop"  # handed over explicitly through `env`
    assert env["BUGBOUT_PLAIN_SETTING"] == "visible"  # an ordinary variable passes
    for secret in (GITHUB_TOKEN, OPENAI_KEY, SECRET_KEY):
        assert secret not in record.model_dump_json()
        assert secret not in (Path(record.logdir) / "stdout.log").read_text()


def test_neither_the_fix_nor_the_history_can_be_read(bout: HostileRun) -> None:
    # control: the fix's tree is really there, outside the sandbox
    assert "return 1" in bout.fix_file.read_text()
    assert list((bout.home / "trees").iterdir())
    report = bout.report("peek")
    assert report["fix_file"] == "FileNotFoundError"
    assert report["trees"] == "FileNotFoundError"  # the whole home is masked
    assert report["git_log_repo"]["returncode"] != 0
    assert report["git_log_repo"]["stdout"] == ""
    assert report["git_log_here"]["returncode"] != 0
    assert "not a git repository" in report["git_log_here"]["stderr"]
    assert bout.attempt("peek").status == "no-change"


def test_a_command_agent_keeps_the_network_it_needs_for_its_model(bout: HostileRun) -> None:
    assert bout.received == [bout.token]
    record = bout.attempt("caller")
    assert (Path(record.logdir) / "stdout.log").read_text() == "hello from the host\n"
    assert record.status == "no-change"
    assert record.exit_code == 0


def test_a_flood_of_output_is_capped_in_the_log_and_thinned_in_events(bout: HostileRun) -> None:
    record = bout.attempt("flood")
    assert record.status == "no-change"
    assert record.exit_code == 0
    log = Path(record.logdir) / "stdout.log"
    cap = 50 * 1024 * 1024
    assert cap <= log.stat().st_size < cap + 200
    with log.open("rb") as handle:
        handle.seek(-200, 2)
        assert handle.read().endswith(f"[bugbout: output truncated after {cap} bytes]\n".encode())
    lines = [
        e for e in bout.events if isinstance(e, AttemptOutput) and e.attempt == f"{TASK}/flood"
    ]
    assert 0 < len(lines) < FLOOD_LINES // 100
    assert sum(1 + e.skipped for e in lines) > FLOOD_LINES // 2


def test_deleting_the_whole_copy_is_a_patch_deleting_every_file(bout: HostileRun) -> None:
    record = bout.attempt("wrecker")
    assert bout.report("wrecker")["left"] == []
    assert record.status == "finished"
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", _base(bout)],
        cwd=bout.project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    hidden = {"tests/test_f1.py"}  # the fix's test is never handed over
    assert sorted(change.path for change in record.patch.files) == sorted(set(listed) - hidden)
    assert all(change.status == "deleted" for change in record.patch.files)
    assert "every file of the working copy was deleted" in record.patch.notes


def test_a_symlink_to_a_host_file_is_recorded_as_a_link(bout: HostileRun) -> None:
    record = bout.attempt("linker")
    assert record.status == "finished"
    (change,) = record.patch.files
    assert (change.path, change.status, change.symlink) == ("src/calc/passwd", "added", True)
    assert "+/etc/passwd\n" in record.patch.source
    assert "root:" not in record.model_dump_json()


def test_a_giant_sparse_file_is_left_out_with_a_note_quickly(bout: HostileRun) -> None:
    record = bout.attempt("hoarder")
    assert record.status == "finished"
    assert [change.path for change in record.patch.files] == ["src/calc/ops.py"]
    assert "left out big.bin: 1.0 GB is over the 10 MB limit for harvested files" in (
        record.patch.notes
    )
    # generous: reading or hashing the gigabyte would show, an lstat does not
    assert record.seconds < 30


def test_links_and_fifos_left_in_the_log_directory_are_not_followed(bout: HostileRun) -> None:
    record = bout.attempt("forger")
    assert record.status == "no-change"
    assert SECRET_KEY not in record.model_dump_json()
    logdir = Path(record.logdir)
    assert not any(p.is_symlink() for p in logdir.rglob("*"))
    assert not (logdir / "stderr.log").exists()  # the FIFO is gone, and the run did not stall
    assert record.prompt_file is None


def test_pipes_sockets_and_devices_are_left_out_with_a_note(bout: HostileRun) -> None:
    made = bout.report("odd")
    assert (made["pipe"], made["socket"], made["tracked"]) == ("ok", "ok", "ok")
    record = bout.attempt("odd")
    assert record.status == "finished"
    assert [(c.path, c.status) for c in record.patch.files] == [("src/calc/__init__.py", "deleted")]
    kinds = {"char-device": "character device", "block-device": "block device"}
    devices = [
        f"left out src/calc/{name}: a special file ({kind})"
        for name, kind in kinds.items()
        if made[name] == "ok"
    ]
    assert record.patch.notes == sorted(
        [
            "left out src/calc/__init__.py: a special file (named pipe); "
            "the file counts as deleted",
            *devices,
            "left out src/calc/pipe: a special file (named pipe)",
            "left out src/calc/socket: a special file (socket)",
        ]
    )


def _base(bout: HostileRun) -> str:
    tasks = TaskSet.model_validate_json((bout.project / ".bugbout" / "tasks.json").read_text())
    return next(t.base_commit for t in tasks.tasks if t.id == TASK)
