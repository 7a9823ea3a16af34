"""Several pytest runs on one tree, each unable to change another's outcome.

The cross-examination runs every author's tests, and the repository's suite, on the same
tree. Sharing one pytest process would let one author's conftest, plugins, import-time
code or the files its tests write decide the others' outcomes, so every run here is
apart: its own process, its own copy of the tree with only its own files in it, nothing
left behind by the run before.

Where the sandbox gives its processes a PID namespace of their own (bubblewrap), the
runs of a tree share one sandbox and one warm start: `pytest_each_runner.py` runs inside
it, loads pytest and its plugins once, then forks a child per run, killing whatever a
run left behind and putting the tree back before the next one. That keeps a matrix
within a small factor of one process per tree, where a sandbox per run would pay a full
start of Python, pytest and its plugins for every author. Elsewhere, or when that runner
fails as a whole (a run may kill it), each run gets a sandbox and a tree copy of its own.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bugbout_tui.infra.proc import ProcessResult, run_process
from bugbout_tui.infra.pytest_run import (
    PytestCommand,
    TestRun,
    confinement_for_tests,
    interpret_run,
    pytest_options,
    run_pytest,
)
from bugbout_tui.infra.sandbox import Sandbox
from bugbout_tui.infra.trees import copy_tree

__all__ = ["SeparateRun", "run_each"]

_RUNNER = Path(__file__).with_name("pytest_each_runner.py")
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
"""Writable in every bubblewrap sandbox and shared by the processes in it."""
_REPORT_LIMIT = 64 * 1024 * 1024
"""The largest JUnit report the runner keeps in memory per run."""
_EMPTY = ".bugbout_empty"
"""A directory of the tree with nothing to collect, for the runner's warm-up session."""
_SLACK_SECONDS = 60.0


@dataclass(frozen=True)
class SeparateRun:
    """One pytest run on the shared tree.

    Attributes:
        name: Who the run is for; the key of its result.
        paths: pytest's arguments, relative to the tree.
        overlay: A directory copied into the tree for this run only (an author's tests).
        overlay_at: Where, relative to the tree.
    """

    name: str
    paths: tuple[str, ...]
    overlay: Path | None = None
    overlay_at: str | None = None


async def run_each(
    cmd: PytestCommand, runs: Sequence[SeparateRun], sandbox: Sandbox, *, workdir: Path
) -> dict[str, TestRun]:
    """Run each of `runs` on the tree `cmd.tree` as if it were the only one.

    `cmd.tree` is never written: every run works in a copy under `workdir` (a scratch
    directory of the caller's that this call empties), so node ids are relative to the
    tree's root as usual. `cmd.paths` is ignored; each run has its own. Returns run name
    → its `TestRun`, with `error` set for a run that failed as a whole.
    """
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    if sandbox.separates_processes and runs:
        found = await _together(cmd, runs, sandbox, workdir)
        if found is not None:
            return found
    return await _apart(cmd, runs, sandbox, workdir)


def _rebased(cmd: PytestCommand, tree: Path, paths: Sequence[str]) -> PytestCommand:
    """`cmd` for a copy of its tree at `tree`."""
    pythonpath = [tree / Path(p).relative_to(cmd.tree) for p in cmd.pythonpath]
    return replace(cmd, tree=tree, paths=tuple(paths), pythonpath=pythonpath)


def _install(run: SeparateRun, tree: Path) -> None:
    if run.overlay is not None and run.overlay_at is not None:
        copy_tree(run.overlay, tree / run.overlay_at)


async def _apart(
    cmd: PytestCommand, runs: Sequence[SeparateRun], sandbox: Sandbox, workdir: Path
) -> dict[str, TestRun]:
    """Each run in a sandbox and a tree copy of its own."""
    found: dict[str, TestRun] = {}
    for index, run in enumerate(runs):
        tree = workdir / f"alone-{index}"
        try:
            copy_tree(cmd.tree, tree)
            _install(run, tree)
            found[run.name] = await run_pytest(
                _rebased(cmd, tree, run.paths), sandbox, workdir=workdir / f"alone-{index}.run"
            )
        finally:
            shutil.rmtree(tree, ignore_errors=True)
    return found


async def _together(
    cmd: PytestCommand, runs: Sequence[SeparateRun], sandbox: Sandbox, workdir: Path
) -> dict[str, TestRun] | None:
    """Every run in one sandbox through the runner; None when the runner itself failed,
    whatever the reason, so the caller runs them apart."""
    work = workdir / "work"
    job_dir = workdir / "job"
    tree = work / "tree"
    results = work / "results"
    job_dir.mkdir()
    copy_tree(cmd.tree, tree)
    (tree / _EMPTY).mkdir(exist_ok=True)
    shutil.copyfile(_RUNNER, job_dir / _RUNNER.name)
    overlays = [run.overlay for run in runs if run.overlay is not None]
    job = {
        "source": str(cmd.tree),
        "tree": str(tree),
        "work": str(work),
        "scratch": str(work / "run"),
        "results": str(results),
        "empty": str(tree / _EMPTY),
        "keep": [str(cmd.tree), str(job_dir), *map(str, overlays)],
        "private": list(_PRIVATE_DIRS),
        "options": pytest_options(cmd, tree),
        "timeout": cmd.timeout,
        "report_limit": _REPORT_LIMIT,
        "runs": [
            {
                "name": run.name,
                "paths": list(run.paths),
                "overlay": str(run.overlay) if run.overlay is not None else None,
                "overlay_at": run.overlay_at,
            }
            for run in runs
        ],
    }
    (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
    inside = _rebased(cmd, tree, ())
    confinement = confinement_for_tests(
        inside, writable=[work], readable=[cmd.tree, job_dir, *overlays]
    )
    argv = sandbox.wrap(
        [str(cmd.python), str(job_dir / _RUNNER.name), str(job_dir / "job.json")],
        confinement,
        cwd=work,
    )
    outcome = await run_process(
        argv,
        cwd=work,
        env=confinement.env,
        timeout=cmd.timeout * (len(runs) + 1) + _SLACK_SECONDS,
        stdout_path=workdir / "runner.log",
        stderr_path=workdir / "runner.log",
    )
    if outcome.timed_out or outcome.returncode != 0:
        return None
    summary = _read_summary(results / "results.json")
    if summary is None or len(summary) != len(runs):
        return None
    found: dict[str, TestRun] = {}
    for run, entry in zip(runs, summary, strict=True):
        if entry.get("name") != run.name:
            return None
        found[run.name] = _one(inside, results, entry)
    return found


def _read_summary(path: Path) -> list[dict[str, object]] | None:
    """The runner's account of each run, or None when it is missing or malformed. The
    file is opened without following links: a run could have left one at that path."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(_REPORT_LIMIT))
    except (OSError, ValueError):
        return None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        return None
    return runs


def _one(cmd: PytestCommand, results: Path, entry: dict[str, object]) -> TestRun:
    """One run's `TestRun`, judged exactly as a separate `run_pytest` would be."""
    code = entry.get("exit_code")
    duration = entry.get("duration")
    output = entry.get("output")
    report = entry.get("report")
    process = ProcessResult(
        returncode=code if isinstance(code, int) else None,
        timed_out=entry.get("timed_out") is True,
        cancelled=False,
        duration=float(duration) if isinstance(duration, int | float) else 0.0,
        stdout_tail=output if isinstance(output, str) else "",
        stderr_tail="",
        truncated=False,
    )
    junit = results / report if isinstance(report, str) else results / "missing.xml"
    if entry.get("report_too_large") is True:
        junit = results / "too-large.xml"
    return interpret_run(process, junit, cmd)
