"""Stopping the real `bugbout run --until race` half way, and carrying on.

The command runs as a subprocess, as a user starts it, and is stopped the ways a user or
a CI runner stops it: `kill -9` (nothing of bugbout's gets to run), Ctrl-C and SIGTERM.
Every way, the attempts recorded before stay exactly as they were, their agents are not
started again, no agent outlives the run, and the next run does only what is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from racekit import (
    TASKS,
    alive,
    contestant,
    copy_project,
    journal,
    lock_is_free,
    records,
    script,
    starts,
    wait_for,
)

from bugbout_tui.core.events import BoutFinished
from bugbout_tui.core.models import Attempt

pytestmark = pytest.mark.slow


class Run:
    """`bugbout run --until race` in a subprocess, its output in files."""

    def __init__(self, project: Path, home: Path, logs: Path) -> None:
        self.stderr = logs / "stderr.txt"
        with self.stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bugbout_tui", "run", "--until", "race"],
                cwd=project,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env={"BUGBOUT_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home)},
                start_new_session=True,  # its own process group, as a shell job has
                preexec_fn=_as_in_a_terminal,
            )

    def wait(self, timeout: float = 120) -> int:
        return self.proc.wait(timeout=timeout)

    def output(self) -> str:
        return self.stderr.read_text()

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _as_in_a_terminal() -> None:
    """Ctrl-C reaches a command started in a terminal; a test runner's worker, or a
    background job of a script, may ignore SIGINT, and a child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def setup(project_template: Path, tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """A project raced by `fast` (quick edits) and `slow` (holds until released)."""
    state = tmp_path / "state"
    state.mkdir()
    token = f"bugbout-resume-{tmp_path.name}"
    count, release = state / "count", state / "release"
    fast = script("edit", "--count", str(count), "--token", token, "{workdir}")
    slow = script(
        "edit", "--count", str(count), "--hold", str(release), "--token", token, "{workdir}"
    )
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=TASKS,
        extra=contestant("fast", fast, quota="fast", state_dirs=[str(state)])
        + contestant("slow", slow, quota="slow", state_dirs=[str(state)]),
    )
    return project, count, release, token


def wait_for_one_recorded_while_slow_runs(project: Path, count: Path) -> None:
    """Until an attempt is recorded while a slow one is in flight: the moment to stop."""
    wait_for(
        lambda: bool(records(project)) and ("slow" in {a for _, a in starts(count)}),
        timeout=60,
        what="a recorded attempt while a slow one is in flight",
    )


def test_a_run_killed_with_sigkill_resumes_without_repeating_anything(
    setup: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    project, count, release, token = setup
    home = tmp_path / "bugbout-home"
    run = Run(project, home, tmp_path)
    try:
        wait_for_one_recorded_while_slow_runs(project, count)
        os.kill(run.proc.pid, signal.SIGKILL)  # bugbout alone: its agents must follow
        assert run.wait() == -signal.SIGKILL
    finally:
        run.end()
    before = records(project)
    assert before
    assert all(path.stem == "fast" for path in before)  # the held agent left no record
    wait_for(lambda: not alive(token), timeout=10, what="the agents to die with bugbout")
    assert (project / ".bugbout" / "lock").is_file()
    assert lock_is_free(project / ".bugbout")

    release.touch()
    again = Run(project, home, tmp_path)
    assert again.wait() == 0, again.output()

    after = records(project)
    assert len(after) == 2 * len(TASKS)
    assert {path: after[path] for path in before} == before
    started = Counter(starts(count))
    for path in before:
        assert started[(path.parent.name, path.stem)] == 1, path
    assert set(started) == {(task, name) for task in TASKS for name in ("fast", "slow")}
    assert 2 in started.values()  # the slow attempt cut short ran again
    assert all(Attempt.model_validate_json(d).status == "finished" for d in after.values())


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stop_is_clean_and_the_next_run_resumes(
    setup: tuple[Path, Path, Path, str], tmp_path: Path, stop: int, code: int, said: str
) -> None:
    project, count, release, token = setup
    home = tmp_path / "bugbout-home"
    run = Run(project, home, tmp_path)
    try:
        wait_for_one_recorded_while_slow_runs(project, count)
        # Ctrl-C: a terminal signals the whole job; SIGTERM: a runner signals the process
        if stop == signal.SIGINT:
            os.killpg(run.proc.pid, stop)
        else:
            os.kill(run.proc.pid, stop)
        assert run.wait(timeout=30) == code
    finally:
        run.end()
    assert said in run.output()
    assert "Traceback" not in run.output()
    wait_for(lambda: not alive(token), timeout=10, what="the agents to be stopped")
    assert (project / ".bugbout" / "lock").is_file()
    assert lock_is_free(project / ".bugbout")
    last = journal(project)[-1]
    assert isinstance(last, BoutFinished)
    assert last.outcome == "stopped"
    kept = records(project)
    assert kept
    assert all(path.stem == "fast" for path in kept)  # the held agent left no record

    release.touch()
    again = Run(project, home, tmp_path)
    assert again.wait() == 0, again.output()

    after = records(project)
    assert {path: after[path] for path in kept} == kept
    started = Counter(starts(count))
    for path in kept:
        assert started[(path.parent.name, path.stem)] == 1, path
    assert len(after) == 2 * len(TASKS)
    assert 2 in started.values()  # the slow attempt cut short ran again
    # the plain log a CI job shows: one line per attempt, naming its lane
    lines = again.output().splitlines()
    for task in TASKS:
        assert f"[race] {task}/slow started in lane slow" in lines
        assert any(line.startswith(f"[race] {task}/slow finished after ") for line in lines)
    assert "[race] 8 attempts (8 finished)" in lines
