"""What a cross-examination matrix costs: pytest processes, and wall time in pytest runs.

One task, six contestants' patches (each with its own regression tests, so six authors)
and the repository's suite. One pytest process per tree should run all of them: seven
processes (n + 1), side by side across the cores, so the matrix should take little more
than (n + 1) / cores single runs. This times the whole matrix against one run of the
same tests on one tree (a matrix with the same authors and no patch), and prints both
figures and the target.

    python benchmarks/examine.py [--rounds 3] [--tests 200] [--work 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import bugbout_tui.engine.testing as testing_engine
from bugbout_tui.core.events import BaseEvent, TestRunFinished
from bugbout_tui.core.models import Attempt, IssueRef, Task
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy

PATCHES = 6
OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
SUITE_MODULE = """
import hashlib

import pytest

from calc.ops import mean


@pytest.mark.parametrize("seed", range({per_module}))
def test_work(seed):
    digest = str(seed).encode()
    for _ in range({rounds}):
        digest = hashlib.sha256(digest).digest()
    assert mean([seed, seed]) == seed
"""
REGRESSION = """
from calc.ops import mean


def test_empty_{n}():
    assert mean([]) == {value}


def test_pair_{n}():
    assert mean([1, 3]) == 2
"""
ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def build_project(root: Path, tests: int, work: int) -> tuple[Project, Task]:
    repo = root / "proj"
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    modules = 10
    suite = {
        f"tests/test_bench_{i}.py": SUITE_MODULE.format(per_module=tests // modules, rounds=work)
        for i in range(modules)
    }
    base = commit(repo, "Initial", {"src/calc/__init__.py": "", "src/calc/ops.py": OPS, **suite})
    fixed = OPS.replace("    return", "    if not xs:\n        return 0.0\n    return")
    fix = commit(
        repo,
        "Fix mean of an empty list (#1)",
        {
            "src/calc/ops.py": fixed,
            "tests/test_empty.py": "from calc.ops import mean\n\n\ndef test_empty():\n"
            "    assert mean([]) == 0.0\n",
        },
    )
    (repo / "bugbout.toml").write_text(
        f'[project]\nsource = "src/calc"\ninterpreter = "{sys.executable}"\n'
    )
    task = Task(
        id="calc-1",
        issue=1,
        reference=IssueRef(number=1),
        title="Fix mean of an empty list (#1)",
        fix_commit=fix,
        base_commit=base,
        date=datetime.now(UTC),
        source_files=["src/calc/ops.py"],
        test_files=["tests/test_empty.py"],
        added_tests=["test_empty"],
    )
    return Project.load(repo), task


def make_attempts(project: Project, task: Task, scratch: Path, *, patches: bool) -> list[Attempt]:
    """Six contestants, each returning a different value for `mean([])` and testing it."""
    attempts = []
    for n in range(PATCHES):
        copy = prepare_working_copy(
            project.dir, task.base_commit, scratch / f"wc-{patches}-{n}", hidden=task.test_files
        )
        if patches:
            ops = copy.path / "src/calc/ops.py"
            ops.write_text(
                OPS.replace("    return", f"    if not xs:\n        return {n}\n    return")
            )
        (copy.path / f"tests/test_regression_{n}.py").write_text(REGRESSION.format(n=n, value=n))
        patch = harvest(copy, source_dir="src/calc", tests_dir="tests")
        now = datetime.now(UTC)
        attempts.append(
            Attempt(
                task=task.id,
                contestant=f"agent-{n}",
                status="finished",
                started_at=now,
                ended_at=now,
                seconds=1.0,
                patch=patch,
                logdir=str(scratch),
            )
        )
    return attempts


def examine(
    project: Project, task: Task, attempts: Sequence[Attempt], sandbox: Sandbox
) -> tuple[float, int, list[float]]:
    """Wall time, pytest processes, and each run's own duration, from an empty store."""
    shutil.rmtree(project.store.matrices_dir, ignore_errors=True)
    calls: list[PytestCommand] = []

    async def counted(
        cmd: PytestCommand, sandbox: Sandbox, *, workdir: Path, log_path: Path | None = None
    ) -> TestRun:
        calls.append(cmd)
        return await run_pytest(cmd, sandbox, workdir=workdir, log_path=log_path)

    testing_engine.run_pytest = counted  # type: ignore[attr-defined]
    events: list[BaseEvent] = []
    bus = EventBus()
    bus.subscribe(events.append)
    environment = Environment(python=Path(sys.executable), root=None, key="bench", built=False)
    stage = CrossExamination(project, project.dir, environment, sandbox, bus, vendors={})
    started = time.monotonic()
    matrix = asyncio.run(stage.run([task], {task.id: attempts}))[task.id]
    wall = time.monotonic() - started
    failed = [tree.error for tree in matrix.trees.values() if tree.error]
    if failed:
        raise SystemExit(f"a tree failed: {failed[0]}")
    durations = [e.seconds for e in events if isinstance(e, TestRunFinished)]
    return wall, len(calls), durations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests", type=int, default=200, help="tests in the suite")
    parser.add_argument("--work", type=int, default=1000, help="hash rounds per suite test")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    sandbox = select_sandbox("bubblewrap")
    with tempfile.TemporaryDirectory(prefix="bugbout-bench-") as tmp:
        os.environ["BUGBOUT_HOME"] = str(Path(tmp) / "home")
        project, task = build_project(Path(tmp), args.tests, args.work)
        with_patches = make_attempts(project, task, Path(tmp), patches=True)
        tests_only = make_attempts(project, task, Path(tmp), patches=False)
        examine(project, task, tests_only, sandbox)  # warm the pristine tree and the page cache
        singles: list[float] = []
        walls: list[float] = []
        for round_number in range(1, args.rounds + 1):
            single, one, _ = examine(project, task, tests_only, sandbox)
            wall, processes, durations = examine(project, task, with_patches, sandbox)
            if one != 1:
                raise SystemExit(f"a matrix with no patch took {one} pytest processes")
            singles.append(single)
            walls.append(wall)
            print(
                f"round {round_number}: one tree {single:.2f} s; matrix {wall:.2f} s, "
                f"{processes} pytest processes (runs took "
                f"{', '.join(f'{d:.2f}' for d in durations)} s each)"
            )
    single = statistics.median(singles)
    wall = statistics.median(walls)
    target = (PATCHES + 1) / cores + 1
    print(f"patches: {PATCHES}, authors: {PATCHES} and the suite, cores: {cores}")
    print(f"pytest processes per matrix: {processes} (target n + 1 = {PATCHES + 1})")
    print(f"median one tree: {single:.2f} s; median matrix: {wall:.2f} s")
    print(f"matrix / one tree: {wall / single:.2f} (target under {target:.2f})")
    return 0 if processes == PATCHES + 1 and wall / single < target else 1


if __name__ == "__main__":
    sys.exit(main())
