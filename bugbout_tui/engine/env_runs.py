"""One set of environment files scored: a clean dated install, the traced run of the
task's command, and the audit of what the files declare.

This is the path every repair takes, the controls of ground truth and the agents'
repairs alike (steps 2 and 4 to 7 of docs/environment-repair.md): a fresh environment
with the task's interpreter, uv limited to the task's date and index (bugbout's test
runner, where the tree declares none, and the build tools taken as of the interpreter's
release when that is later); the installed set D², the traced run's used set D³, the
declared set D¹ and its audit; precision, recall and F1 of D¹ against D³ and the
safe-install share. Its output is kept in the store, so a person can read why an install
failed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from bugbout_tui.core.env_models import EnvConditions, Repair
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import EnvRunFinished, EnvRunStarted, Stage, StageProgress
from bugbout_tui.core.models import BASE, Task
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.context import StageContext, StageRunner
from bugbout_tui.engine.lite import IndexUse
from bugbout_tui.infra.brought_tools import condition, runner_requirements
from bugbout_tui.infra.env_audit import audit
from bugbout_tui.infra.env_declared import declared_packages
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.env_trace import traced_run
from bugbout_tui.infra.git import repository_paths
from bugbout_tui.infra.trees import repo_key
from bugbout_tui.rules.env_audit import safe_share
from bugbout_tui.rules.env_score import manifest_scores, repair_status

T = TypeVar("T")

AUDIT_CACHE = "env-audit"
"""The audit's answers, by name, version and date, under the store's cache."""


def env_workspace(repo: Path, task: Task, kind: str, label: str) -> Path:
    """Where one repair of `task` is installed and run (`kind` is `controls` or
    `repairs`): the tree in `tree`, the environment in `venv`. Its logs name these
    paths, which an agent is shown as `.` and `<environment>` instead."""
    folder = quote(label, safe="").replace("%", "+")
    return bugbout_home() / "work" / repo_key(repo) / "env" / task.id / kind / folder


def base_paths(repo: Path, task: Task) -> dict[str, str]:
    """The base control's scratch paths and what an agent is shown instead."""
    folder = env_workspace(repo, task, "controls", BASE)
    return {str(folder / "tree"): ".", str(folder / "venv"): "<environment>"}


class EnvRunner(StageRunner):
    """Scores environment files in scratch trees, `parallel` at a time."""

    def __init__(self, context: StageContext, *, parallel: int | None = None) -> None:
        super().__init__(context)
        self.parallel = parallel or os.cpu_count() or 1
        self.hidden = (*repository_paths(self.repo), self.project.dir)
        """What an install's builds must not read besides every home: the repository
        with its history, and the project with its store."""

    def conditions(self, task: Task, files: str) -> EnvConditions:
        """What a repair of `files` (a digest) on `task` is made under."""
        assert task.env is not None
        simple, api = self.sources.index_labels(task)
        return EnvConditions(
            files=files,
            index=simple,
            advisories=api,
            python=task.env.python,
            date=task.env.date,
            command=list(task.env.command),
            sandbox=self.sandbox.name,
            timeout=self.project.config.run.test_timeout,
            tools=condition(self.runner(task)),
        )

    def runner(self, task: Task) -> list[str]:
        """What `task`'s command needs of bugbout's test runner, brought to every install
        of it whose tree declares none (`infra/brought_tools.py`)."""
        assert task.env is not None
        dependencies = self.project.config.project.test_dependencies
        return runner_requirements(task.env.command, dependencies)

    async def _interpreter(self, version: str) -> str:
        """The installed interpreter of `version` (`3.13`) an install is made with: a bare
        version is looked for on PATH, where a version manager's shim for it may be unable
        to run it. With none installed, the version itself (uv may fetch one)."""
        try:
            return str(await self.environments.interpreter(version))
        except BugboutError:
            return version

    def logs_for(self, task: Task, kind: str, label: str) -> Path:
        """Where one repair's install and trace logs are kept: `kind` is `controls` or
        `repairs`."""
        return self.project.store.logs_dir / "env" / task.id / kind / quote(label, safe="")

    async def score(
        self,
        task: Task,
        tree: Path,
        *,
        kind: str,
        label: str,
        index: IndexUse,
        conditions: EnvConditions,
        base: Repair,
    ) -> Repair:
        """`tree`'s environment files installed, traced and audited, as `base` (the
        record so far: who, what changed) completed; `tree` is a scratch copy and is
        deleted with the environment afterwards."""
        assert task.env is not None
        spec = task.env
        store = self.project.store
        timeout = self.project.config.run.test_timeout
        logs = self.logs_for(task, kind, label)
        workspace = tree.parent
        venv = workspace / "venv"
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True)
        started = time.monotonic()
        self.bus.emit(EnvRunStarted(task=task.id, label=label))
        try:
            # D¹ is read before anything is built: the install runs the tree's own build
            # code, which may write in the tree, and must not change what the audit sees.
            declared = await asyncio.to_thread(declared_packages, tree)
            install = await clean_install(
                tree,
                python=await self._interpreter(spec.python),
                date=spec.date,
                index=index.simple,
                venv=venv,
                log=logs / "install.log",
                timeout=timeout,
                sandbox=self.sandbox,
                hidden=self.hidden,
                runner=self.runner(task),
            )
            install = install.model_copy(update={"log": _kept(logs / "install.log", store.root)})
            trace = None
            if install.ok:
                trace = await traced_run(
                    tree,
                    spec.command,
                    venv=venv,
                    sandbox=self.sandbox,
                    log=logs / "trace.log",
                    timeout=timeout,
                    brought=install.brought,
                )
                trace = trace.model_copy(update={"log": _kept(logs / "trace.log", store.root)})
            findings, newest = await audit(
                declared,
                api=index.api,
                date=spec.date,
                python=spec.python,
                cache=store.cache_dir / AUDIT_CACHE,
            )
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        used = trace.used if trace is not None else []
        precision, recall, f1 = manifest_scores([d.name for d in declared], used)
        status = repair_status(install, trace)
        failed = trace if install.ok and trace is not None else install
        repair = base.model_copy(
            update={
                "status": status,
                "detail": None if status == "resolved" else failed.detail,
                "declared": declared,
                "install": install,
                "trace": trace,
                "audit": findings,
                "newest": newest,
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "safe_install": safe_share(findings),
                "conditions": conditions,
            }
        )
        self.bus.emit(
            EnvRunFinished(
                task=task.id,
                label=label,
                status=repair.status,
                seconds=time.monotonic() - started,
                detail=repair.detail,
            )
        )
        return repair

    def workspace(self, task: Task, kind: str, label: str) -> Path:
        """A fresh scratch folder for one repair; its tree goes in `tree` inside it."""
        folder = env_workspace(self.repo, task, kind, label)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder

    async def side_by_side(
        self,
        stage: Stage,
        items: Sequence[T],
        work: Callable[[T], Awaitable[None]],
        *,
        label: Callable[[T], str],
    ) -> None:
        """`work` on every item, `parallel` at a time, each item's end the stage's progress."""
        gate = asyncio.Semaphore(self.parallel)
        done = 0

        async def one(item: T) -> None:
            nonlocal done
            async with gate:
                await work(item)
            done += 1
            self.bus.emit(
                StageProgress(stage=stage, done=done, total=len(items), detail=label(item))
            )

        async with asyncio.TaskGroup() as group:
            for item in items:
                group.create_task(one(item))


def _kept(log: Path, store: Path) -> str:
    """A log's path as records name files: relative to the store."""
    return log.relative_to(store).as_posix()
