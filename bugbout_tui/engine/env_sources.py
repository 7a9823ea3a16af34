"""Where a bout's environment tasks come from: the repository holding their commits and
the index their files install from.

A task mined from the project's history lives in the project's repository and installs
from `[env] index`, audited against `[env] advisories`. A Lite task lives in the Lite
repository and installs from the Lite index, which this service starts the first time a
Lite task needs it and stops when the bout ends (`close`).
"""

from __future__ import annotations

from pathlib import Path

from bugbout_tui.core.models import Task
from bugbout_tui.engine.lite import (
    IndexUse,
    LiteIndex,
    LiteRepository,
    lite_index_label,
    lite_repository,
)
from bugbout_tui.engine.project import Project


def is_env(task: Task) -> bool:
    """Whether a task asks for an environment repair rather than a fix."""
    return task.kind == "env" and task.env is not None


def is_lite(task: Task) -> bool:
    return task.env is not None and task.env.lite


class EnvSources:
    """The repositories and indexes of one bout's environment tasks."""

    def __init__(self, project: Project, repo: Path, *, home: Path | None = None) -> None:
        self.project = project
        self.repo = repo
        self._home = home
        self._lite: LiteRepository | None = None
        self._index = LiteIndex(home)

    def repo_for(self, task: Task) -> Path:
        """The repository holding `task`'s base and fix commits."""
        if is_lite(task):
            if self._lite is None:
                self._lite = lite_repository(self._home)
            return self._lite.path
        return self.repo

    def index_labels(self, task: Task) -> tuple[str, str]:
        """How a repair's conditions name `task`'s index and its JSON API, without
        starting anything: the addresses, or the Lite set's digest for the Lite index (which gets
        a new port every run)."""
        if is_lite(task):
            label = lite_index_label()
            return label, label
        env = self.project.config.env
        return env.index, env.advisories

    async def index_for(self, task: Task) -> IndexUse:
        """The index `task`'s files install from and are audited against."""
        if is_lite(task):
            return await self._index.use()
        env = self.project.config.env
        return IndexUse(env.index, env.advisories)

    def close(self) -> None:
        """Stop the Lite index if it was started."""
        self._index.close()
