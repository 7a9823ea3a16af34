"""A prepared working copy: what preparing hands over to harvesting."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict


class WorkingCopy(BaseModel):
    """A prepared checkout, and what `harvest` needs to find its patch later."""

    model_config = ConfigDict(frozen=True)

    path: Path
    """The directory the agent works in: no `.git`, none of the hidden files."""
    git_dir: Path
    """Our git directory, beside the copy; its index is the baseline until harvest."""
    base_commit: str
    baseline_tree: str
    """The tree the agent was handed: the base commit as exported, minus the hidden files."""
    hidden: tuple[str, ...]
    files: int
    """How many files the agent was handed."""
