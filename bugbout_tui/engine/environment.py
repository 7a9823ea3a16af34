"""The test environment of a project, and the files it is built from.

The environment takes the project's runtime dependencies from its packaging files
(`infra.env`). A local checkout is read as it is, uncommitted edits included, since
that is the project the user is working on. A repository with no checked-out files (a
bare repository, or the clone bugbout makes of a URL) is read at the tip of the branch
that is mined, from that commit's pristine tree.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bugbout_tui.core.config import ProjectConfig
from bugbout_tui.infra.env import Environment, ensure_environment
from bugbout_tui.infra.git import default_branch, head_commit, is_bare
from bugbout_tui.infra.trees import pristine_tree


def packaging_tree(repo: Path, project: ProjectConfig) -> Path:
    """The directory whose packaging files the environment is built from."""
    if not project.repository_is_url and not is_bare(repo):
        return repo
    return pristine_tree(repo, head_commit(repo, default_branch(repo)))


async def project_environment(repo: Path, project: ProjectConfig) -> Environment:
    """The environment for `project`'s tests, built on first use from `repo`'s packaging
    files (see `packaging_tree`)."""
    tree = await asyncio.to_thread(packaging_tree, repo, project)
    return await environment_at(tree, project)


async def environment_at(root: Path, project: ProjectConfig) -> Environment:
    """The environment `project` configures, with `root` as the project's root: where
    the packaging files are read and a relative `interpreter` is found (see
    `ensure_environment`)."""
    return await ensure_environment(
        root,
        python=project.python_version(),
        test_dependencies=project.test_dependencies,
        install_project=project.install_project,
        interpreter=project.interpreter,
    )
