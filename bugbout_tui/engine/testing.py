"""What the stages that run the project's tests share: where, with what, and how it is told.

Ground truth, cross-examination and scoring all run pytest in scratch trees with the
project's environment, inside the sandbox, in parallel up to the cores, and announce
every run on the bus the same way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from bugbout_tui.core.events import TestRunFinished, TestRunStarted
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.git import repository_paths
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox
from bugbout_tui.infra.trees import repo_key


def import_paths(tree: Path, source: str) -> list[Path]:
    """What goes on PYTHONPATH so the tree's own package is the one imported."""
    parent = PurePosixPath(source).parent
    roots = [tree / parent] if str(parent) not in ("", ".") else []
    return [*roots, tree]


class PytestStage:
    """Base of the stages that run tests; `scratch` is this stage's own work area."""

    stage_dir: str = "tests"

    def __init__(
        self,
        project: Project,
        repo: Path,
        environment: Environment,
        sandbox: Sandbox,
        bus: EventBus,
        *,
        parallel: int | None = None,
    ) -> None:
        self.project = project
        self.repo = repo
        self.environment = environment
        self.sandbox = sandbox
        self.bus = bus
        self.parallel = parallel or os.cpu_count() or 1
        self.scratch = bugbout_home() / "work" / repo_key(repo) / self.stage_dir
        self.hidden = (*repository_paths(repo), project.dir)
        """What a test interpreter's paths must not bring into view (see `PytestCommand`)."""

    def command(
        self, tree: Path, paths: Sequence[str], pythonpath: Sequence[Path] | None = None
    ) -> PytestCommand:
        """How this project's tests run in `tree`."""
        cfg = self.project.config
        return PytestCommand(
            python=self.environment.python,
            tree=tree,
            paths=paths,
            pythonpath=(
                pythonpath if pythonpath is not None else import_paths(tree, cfg.project.source)
            ),
            pytest_args=cfg.project.pytest_args,
            env=cfg.project.env,
            timeout=cfg.run.test_timeout,
            hidden=self.hidden,
        )

    async def run_tests(
        self,
        task: str,
        label: str,
        tree: Path,
        paths: Sequence[str],
        workdir: Path,
        *,
        pythonpath: Sequence[Path] | None = None,
    ) -> TestRun:
        """One pytest process over `paths` in `tree`, announced as `label` of `task`."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.bus.emit(TestRunStarted(task=task, label=label))
        run = await run_pytest(self.command(tree, paths, pythonpath), self.sandbox, workdir=workdir)
        self._announce(task, label, [run])
        return run

    async def run_each(
        self,
        task: str,
        label: str,
        tree: Path,
        runs: Sequence[SeparateRun],
        workdir: Path,
        *,
        pythonpath: Sequence[Path],
    ) -> dict[str, TestRun]:
        """`runs` on `tree`, each apart from the others, announced together as `label`."""
        self.bus.emit(TestRunStarted(task=task, label=label))
        found = await run_each(
            self.command(tree, (), pythonpath), runs, self.sandbox, workdir=workdir
        )
        self._announce(task, label, list(found.values()))
        return found

    def _announce(self, task: str, label: str, runs: Sequence[TestRun]) -> None:
        outcomes = [result.outcome for run in runs for result in run.outcomes.values()]
        errors = [run.error for run in runs if run.error is not None]
        self.bus.emit(
            TestRunFinished(
                task=task,
                label=label,
                passed=outcomes.count("passed"),
                failed=outcomes.count("failed") + outcomes.count("error"),
                seconds=sum(run.duration for run in runs),
                error=errors[0] if errors and len(errors) == len(runs) else None,
            )
        )
