"""A commit of the project's repository as `git show` prints it, for a person to read.

The Tasks screen shows each task's fix this way; the screen never runs git itself.
"""

from __future__ import annotations

from bugbout_tui.engine.project import Project
from bugbout_tui.infra.git import open_repository, run_git


def show_commit(project: Project, commit: str) -> str:
    """The commit's message, its stat and its patch; a repository or commit that cannot be
    read raises a `BugboutError` saying which."""
    repo = open_repository(project.config.project.repository, project.dir)
    shown = run_git(repo, "show", "--stat", "--patch", "--format=medium", commit)
    return shown.decode("utf-8", "replace")
