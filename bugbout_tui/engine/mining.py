"""The mining step of a bout: history → tasks.json, reused while nothing it read changed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from bugbout_tui.core.models import TaskSet
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.detect import github_from_remote
from bugbout_tui.infra.git import default_branch, head_commit, open_repository
from bugbout_tui.stages.mine import mine
from bugbout_tui.stages.statement import issue_source_from_settings
from bugbout_tui.stages.tasks import build_taskset


def mining_fingerprint(project: Project, github: str | None) -> str:
    """Hash of every setting that changes what mining produces."""
    cfg = project.config
    settings = {
        "source": cfg.project.source,
        "tests": cfg.project.tests,
        "since": str(cfg.tasks.since) if cfg.tasks.since else None,
        "limit": cfg.tasks.limit,
        "max_source_files": cfg.tasks.max_source_files,
        "github": github,
        "issues_file": str(cfg.project.issues_file) if cfg.project.issues_file else None,
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def mine_tasks(
    project: Project,
    *,
    refresh: bool = False,
    on_lookup: Callable[[int, int], None] | None = None,
) -> TaskSet:
    """Mine the project's history, or return the stored tasks when still current.

    Stored tasks stay valid while the branch tip and the mining settings are unchanged,
    so `bugbout tasks` answers at once on a second call.
    """
    cfg = project.config
    store = project.store
    repo = open_repository(cfg.project.repository, project.dir)
    ref = default_branch(repo)
    github = cfg.project.github or github_from_remote(repo)
    fingerprint = mining_fingerprint(project, github)
    stored = store.read(store.tasks_path, TaskSet)
    head = head_commit(repo, ref)
    if (
        not refresh
        and stored is not None
        and stored.head == head
        and stored.fingerprint == fingerprint
    ):
        return stored
    mined = mine(
        repo,
        ref=ref,
        source=cfg.project.source,
        tests=cfg.project.tests,
        since=cfg.tasks.since,
        max_source_files=cfg.tasks.max_source_files,
    )
    issues_file = project.dir / cfg.project.issues_file if cfg.project.issues_file else None
    issues = issue_source_from_settings(github, issues_file, store.cache_dir / "github")
    taskset = build_taskset(
        mined,
        package=project.package,
        limit=cfg.tasks.limit,
        issues=issues,
        own_repo=github,
        fingerprint=fingerprint,
        on_lookup=on_lookup,
    )
    store.write(store.tasks_path, taskset)
    return taskset
