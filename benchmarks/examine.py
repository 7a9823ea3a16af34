"""What keeping authors apart costs the cross-examination.

One task, six contestants' patches (each with its own regression tests, so six authors)
and the repository's suite: seven trees, seven runs on each. Every author's run is kept
apart from the others (a process of its own in a copy of the tree, forked from one warm
pytest per tree inside one sandbox per tree). This times that matrix against the design
it replaced, where one pytest process per tree ran every author together, on the same
trees in the same conditions, and against one of its trees run alone; it prints the
sandboxes, the pytest runs and the ratios of wall times. The target: apart costs at
most twice together.

    python benchmarks/examine.py [--rounds 3] [--patches 6] [--tests 200] [--work 1000] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from benchkit.gitrepo import commit, init
from benchkit.options import parse_args

import bugbout_tui.engine.testing as testing_engine
from bugbout_tui.core.models import Attempt, IssueRef, Task
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.environments import Environments
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy

PATCHES = 6
TARGET = 2.0
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


def build_project(root: Path, tests: int, work: int) -> tuple[Project, Task]:
    repo = root / "proj"
    init(repo)
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


def make_attempts(project: Project, task: Task, scratch: Path, count: int) -> list[Attempt]:
    """`count` contestants, each returning its own value for `mean([])` and testing it."""
    attempts = []
    for n in range(count):
        copy = prepare_working_copy(
            project.dir, task.base_commit, scratch / f"wc-{n}", hidden=task.test_files
        )
        (copy.path / "src/calc/ops.py").write_text(
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


Trees = list[tuple[PytestCommand, list[SeparateRun]]]


def examine(
    project: Project, task: Task, attempts: Sequence[Attempt], sandbox: Sandbox
) -> tuple[float, Trees]:
    """Wall time of the matrix from an empty store, and each tree's runs, kept (with
    their trees and authors' files) for `together` to run the old way."""
    shutil.rmtree(project.store.matrices_dir, ignore_errors=True)
    trees: Trees = []
    keep = Path(tempfile.mkdtemp(prefix="trees-", dir=os.environ["BUGBOUT_HOME"]))

    async def counted(
        cmd: PytestCommand, runs: Sequence[SeparateRun], sandbox: Sandbox, *, workdir: Path
    ) -> dict[str, TestRun]:
        kept = keep / str(len(trees))
        shutil.copytree(cmd.tree, kept / "tree", symlinks=True)
        copies = []
        for n, run in enumerate(runs):
            overlay = None
            if run.overlay is not None:
                overlay = kept / f"overlay-{n}"
                shutil.copytree(run.overlay, overlay, symlinks=True)
            copies.append(replace(run, overlay=overlay))
        pythonpath = [kept / "tree" / Path(p).relative_to(cmd.tree) for p in cmd.pythonpath]
        trees.append((replace(cmd, tree=kept / "tree", pythonpath=pythonpath), copies))
        return await run_each(cmd, runs, sandbox, workdir=workdir)

    testing_engine.run_each = counted  # type: ignore[attr-defined]
    environment = Environment(python=Path(sys.executable), root=None, key="bench", built=False)
    environments = Environments.single(environment, project.dir, project.config.project)
    context = StageContext(project, project.dir, environments, sandbox, EventBus())
    stage = CrossExamination(context, vendors={})
    started = time.monotonic()
    matrix = asyncio.run(stage.run([task], {task.id: attempts}))[task.id]
    wall = time.monotonic() - started
    failed = [tree.error for tree in matrix.trees.values() if tree.error]
    if failed:
        raise SystemExit(f"a tree failed: {failed[0]}")
    if len(trees) != len(matrix.trees):
        raise SystemExit(
            f"{len(trees)} of the matrix's {len(matrix.trees)} trees ran through "
            "engine.testing.run_each, where this benchmark counts them: the stage no "
            "longer starts its runs there, and the benchmark must follow it"
        )
    return wall, trees


def alone(tree: tuple[PytestCommand, list[SeparateRun]], sandbox: Sandbox, scratch: Path) -> float:
    """Wall time of one tree of the matrix with nothing else running: the unit the
    matrix is measured in."""
    cmd, runs = tree
    started = time.monotonic()
    asyncio.run(run_each(cmd, runs, sandbox, workdir=scratch))
    return time.monotonic() - started


def together(trees: Trees, sandbox: Sandbox, scratch: Path) -> float:
    """Wall time of the same trees the old way: every author's tests and the suite in
    one pytest process per tree, as many trees at once as there are cores."""
    cores = os.cpu_count() or 1

    async def all_trees() -> None:
        slots = asyncio.Semaphore(cores)

        async def one(index: int, cmd: PytestCommand, runs: list[SeparateRun]) -> None:
            async with slots:
                tree = scratch / f"together-{index}"
                shutil.rmtree(tree, ignore_errors=True)
                shutil.copytree(cmd.tree, tree, symlinks=True)
                for run in runs:
                    if run.overlay is not None and run.overlay_at is not None:
                        shutil.copytree(run.overlay, tree / run.overlay_at, symlinks=True)
                paths = [path for run in runs for path in run.paths]
                pythonpath = [tree / Path(p).relative_to(cmd.tree) for p in cmd.pythonpath]
                shared = replace(cmd, tree=tree, paths=paths, pythonpath=pythonpath)
                result = await run_pytest(shared, sandbox, workdir=scratch / f"run-{index}")
                if result.error:
                    raise SystemExit(f"a tree failed together: {result.error}")

        await asyncio.gather(*(one(i, cmd, runs) for i, (cmd, runs) in enumerate(trees)))

    started = time.monotonic()
    asyncio.run(all_trees())
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests", type=int, default=200, help="tests in the suite")
    parser.add_argument("--work", type=int, default=1000, help="hash rounds per suite test")
    parser.add_argument("--patches", type=int, default=PATCHES, help="contestants' patches")
    args = parse_args(parser, has_target=True, rounds=1, patches=1, tests=10, work=1)
    sandbox = select_sandbox("bubblewrap")
    with tempfile.TemporaryDirectory(prefix="bugbout-bench-") as tmp:
        os.environ["BUGBOUT_HOME"] = str(Path(tmp) / "home")
        project, task = build_project(Path(tmp), args.tests, args.work)
        attempts = make_attempts(project, task, Path(tmp), args.patches)
        if not args.smoke:  # warm the pristine tree and the page cache
            examine(project, task, attempts, sandbox)
        ratios: list[float] = []
        per_tree: list[float] = []
        for round_number in range(1, args.rounds + 1):
            apart, trees = examine(project, task, attempts, sandbox)
            one_tree = alone(trees[0], sandbox, Path(tmp) / "alone")
            shared = together(trees, sandbox, Path(tmp) / "together")
            runs = sum(len(tree_runs) for _, tree_runs in trees)
            ratios.append(apart / shared)
            per_tree.append(apart / one_tree)
            print(
                f"round {round_number}: matrix {apart:.2f} s in {len(trees)} sandboxes, "
                f"{runs} pytest runs ({apart / one_tree:.2f} × one tree, {one_tree:.2f} s); "
                f"together {shared:.2f} s in {len(trees)} pytest processes; "
                f"apart / together {apart / shared:.2f}"
            )
    ratio = statistics.median(ratios)
    cores = os.cpu_count() or 1
    print(f"patches: {args.patches}, authors: {args.patches} and the suite, cores: {cores}")
    print(f"sandboxes per matrix: {len(trees)} (n + 1), pytest runs: {runs}")
    print(
        f"median matrix / one tree: {statistics.median(per_tree):.2f} "
        f"((n + 1) / cores = {(args.patches + 1) / cores:.2f})"
    )
    print(f"median apart / together: {ratio:.2f} (target at most {TARGET:.2f})")
    return 0 if ratio <= TARGET or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
