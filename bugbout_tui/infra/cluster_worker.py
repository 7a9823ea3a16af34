"""The side of a cluster's worker: making a unit's tree and environment, and running it.

Everything a worker keeps lives under its own `BUGBOUT_HOME`: the repositories made
from bundles (`cluster/repos/<digest>.git`, one per content, so a later bout of the
same history sends nothing new to keep), the pristine trees and the environments, as on
one machine. A unit's scratch tree is removed when it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.infra.cluster_units import EnvRecipe, TestUnit, UnitResult, pack_log
from bugbout_tui.infra.dated_env import BuildFailed, ensure_pinned
from bugbout_tui.infra.env import Environment, find_uv
from bugbout_tui.infra.file_sets import lay_down
from bugbout_tui.infra.git import git_env
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import select_sandbox
from bugbout_tui.infra.trees import copy_tree, missing_submodules, pristine_tree

T = TypeVar("T")

_STOP_POLL = 1.0
"""Seconds between looks at the bout's stop event."""


def run_test_unit(unit: TestUnit, bundle: bytes | None) -> UnitResult:
    """Run `unit` here, in the worker's task thread; `bundle` is the repository's, sent
    only to a worker that said it has none."""
    (name, address), stop = worker_context(unit.stop)
    if bundle is None and not repository_path(unit.repository, bugbout_home()).is_dir():
        return UnitResult(runs={}, tree="", worker=name, address=address, needs_repository=True)
    result = asyncio.run(_stoppable(_run(unit, bundle, name), stop))
    return result.model_copy(update={"address": address})


def worker_context(stop_name: str) -> tuple[tuple[str, str], Any]:
    """This worker's name and address, and the bout's stop event, read in the task's
    own thread (the only one that knows its worker)."""
    alone = (os.uname().nodename, "")
    try:
        from distributed import Event, get_client, get_worker
    except ImportError:  # run outside a cluster (a test of the unit alone)
        return alone, None
    try:
        worker = get_worker()
    except ValueError:
        return alone, None
    event: Any = Event
    return (str(worker.name), str(worker.address)), event(stop_name, client=get_client())


async def _stoppable(work: Awaitable[T], stop: Any) -> T:
    """`work`, cancelled (its processes killed) as soon as the bout's stop is set."""
    main = asyncio.ensure_future(work)
    done = watch_stops([stop], main.cancel)
    try:
        return await main
    finally:
        done()


def watch_stops(events: Sequence[Any], on_stop: Callable[[], object]) -> Callable[[], None]:
    """Call `on_stop` in the running loop once any of the cluster's `events` is set;
    the returned function ends the watch.

    The watch waits on the scheduler in a daemon thread of its own: a unit that ends
    neither waits for it to notice (as a loop's own executor would make it wait, up to
    the poll, at every unit's end) nor keeps it.
    """
    loop = asyncio.get_running_loop()
    ended = threading.Event()
    watched = [event for event in events if event is not None]

    def watch() -> None:
        while watched and not ended.is_set():
            for event in watched:
                try:
                    hit = event.wait(_STOP_POLL)
                except Exception:  # the worker is closing: nothing left to stop
                    return
                if hit and not ended.is_set():
                    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                        loop.call_soon_threadsafe(on_stop)
                    return

    threading.Thread(target=watch, name="bugbout-stop-watch", daemon=True).start()
    return ended.set


async def _run(unit: TestUnit, bundle: bytes | None, worker: str) -> UnitResult:
    started = time.monotonic()
    home = bugbout_home()
    repo = await asyncio.to_thread(repository, unit.repository, bundle, home)
    work_root = home / "cluster" / "work"
    work_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=work_root, prefix="unit-"))
    try:
        tree = scratch / "tree"
        await asyncio.to_thread(_make_tree, unit, repo, tree, home)
        environment = await environment_for(unit.environment, home)
        command = PytestCommand(
            python=environment.python,
            tree=tree,
            paths=unit.paths,
            pythonpath=[tree / path for path in unit.pythonpath],
            pytest_args=unit.pytest_args,
            env=unit.env,
            timeout=unit.timeout,
            hidden=(repo,),
        )
        sandbox = select_sandbox(unit.sandbox)
        setup = time.monotonic() - started
        log = scratch / "run.log"
        runs: dict[str, TestRun]
        if unit.each is None:
            run = await run_pytest(
                command, sandbox, workdir=scratch / "run", log_path=log if unit.keep_log else None
            )
            runs = {"": run}
        else:
            separate = []
            for index, each in enumerate(unit.each):
                overlay = None
                if each.overlay is not None:
                    overlay = scratch / "overlays" / str(index)
                    overlay.mkdir(parents=True)
                    lay_down(each.overlay, overlay)
                separate.append(
                    SeparateRun(
                        name=each.name,
                        paths=tuple(each.paths),
                        overlay=overlay,
                        overlay_at=each.overlay_at,
                    )
                )
            runs = await run_each(command, separate, sandbox, workdir=scratch / "each")
        return UnitResult(
            runs=runs,
            tree=str(tree),
            worker=worker,
            log=pack_log(log) if unit.keep_log else b"",
            setup_seconds=setup,
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


def _make_tree(unit: TestUnit, repo: Path, tree: Path, home: Path) -> None:
    recipe = unit.tree
    if recipe.commit is None:
        tree.mkdir()
    else:
        pristine = pristine_tree(repo, recipe.commit, home=home)
        missing = missing_submodules(pristine)
        if recipe.whole and missing:
            raise BugboutError(
                f"This worker cannot make the tree of {recipe.commit[:12]}: "
                + "; ".join(f"submodule {gap.path}: {gap.problem}" for gap in missing),
                hint="Let the worker reach the submodules' URLs, or point git at a mirror "
                "with url.<mirror>.insteadOf in the worker's git config.",
            )
        copy_tree(pristine, tree)
    lay_down(recipe.changes, tree)


async def environment_for(recipe: EnvRecipe, home: Path) -> Environment:
    """The environment `recipe` describes, made (or found) under `home`."""
    if recipe.interpreter is not None:
        python = Path(recipe.interpreter)
        if not os.access(python, os.X_OK):
            raise BugboutError(
                f"This worker has no interpreter at {python}, which [project] interpreter names.",
                hint="Install the same Python at that path on every worker, or remove "
                "[project] interpreter so bugbout builds environments on the workers.",
            )
        return Environment(python=python, root=None, key=str(python), built=False)
    if recipe.pins is None:
        raise BugboutError("A unit came without an environment to run in.")
    pins = recipe.pins
    if pins.interpreter is not None and not os.access(pins.interpreter, os.X_OK):
        pins = pins.model_copy(update={"interpreter": None})  # uv finds the version here
    try:
        return await ensure_pinned(find_uv(), pins, envs=home / "envs")
    except BuildFailed as exc:
        raise BugboutError(f"This worker could not build the test environment: {exc}") from None


def repository_path(digest: str, home: Path) -> Path:
    return home / "cluster" / "repos" / f"{digest}.git"


def repository(digest: str, bundle: bytes | None, home: Path) -> Path:
    """The repository of the bundle named `digest`, made from `bundle` on first use.

    It is cloned beside its final place and renamed into it, so a unit never finds half
    a repository, and of two units making it at once one clone wins.
    """
    target = repository_path(digest, home)
    root = target.parent
    if target.is_dir():
        return target
    if bundle is None:
        raise BugboutError("This worker lost the repository a unit needs; the next run sends it.")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{digest[:12]}."))
    try:
        source = staging / "repository.bundle"
        source.write_bytes(bundle)
        clone = staging / "repository.git"
        done = subprocess.run(
            ["git", "clone", "--quiet", "--mirror", str(source), str(clone)],
            env=git_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BugboutError(f"git could not read the repository's bundle: {done.stderr.strip()}")
        with contextlib.suppress(OSError):  # another unit's clone won: it serves
            os.rename(clone, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


__all__ = [
    "environment_for",
    "repository",
    "repository_path",
    "run_test_unit",
    "watch_stops",
    "worker_context",
]
