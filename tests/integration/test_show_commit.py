"""A task's fix as the Tasks screen shows it, read from the project's repository."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.show_commit import show_commit


def calc_project(repo: GitRepo) -> Project:
    write_issues(repo.root, {})
    return Project.load(write_config(repo.root, "calc"))


def test_a_commit_is_shown_with_its_message_stat_and_patch(git_repo: GitRepo) -> None:
    git_repo.commit("Initial layout", files={"src/calc/ops.py": "def one():\n    return 2\n"})
    fix = git_repo.commit("Fix one (#1)", files={"src/calc/ops.py": "def one():\n    return 1\n"})
    project = calc_project(git_repo)
    shown = show_commit(project, fix)
    assert shown.startswith(f"commit {fix}")
    assert "Fix one (#1)" in shown
    assert "src/calc/ops.py | 2 +-" in shown
    assert "-    return 2\n+    return 1\n" in shown


def test_a_commit_the_repository_lacks_is_an_error_naming_it(git_repo: GitRepo) -> None:
    git_repo.commit("Initial layout", files={"src/calc/ops.py": "x = 1\n"})
    project = calc_project(git_repo)
    with pytest.raises(BugboutError, match="f" * 40):
        show_commit(project, "f" * 40)
