"""A project: its `bugbout.toml`, where it lives, and its results store."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bugbout_tui.core.config import CONFIG_NAME, Config, load_config
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.store import Store


@dataclass(frozen=True)
class Project:
    """Everything a command needs to find: the config, the store, and the repository."""

    config_path: Path
    config: Config

    @classmethod
    def load(cls, path: str | Path = ".") -> Project:
        """Open the project at `path`: a directory holding `bugbout.toml`, or the file."""
        target = Path(path).expanduser()
        config_path = target if target.suffix == ".toml" else target / CONFIG_NAME
        if target.suffix != ".toml" and not target.is_dir():
            raise UsageError(f"{target} is not a directory.")
        return cls(config_path=config_path.resolve(), config=load_config(config_path))

    @property
    def dir(self) -> Path:
        return self.config_path.parent

    @cached_property
    def store(self) -> Store:
        """One `Store` per project, so the run holding its lock is the one that writes."""
        return Store(self.dir)

    @property
    def package(self) -> str:
        """The import name of the package under test, used in task ids."""
        return Path(self.config.project.source).name
