"""The mining stage of a bout: history → tasks.json, reused while nothing it read changed.

With `[env] lite` the built-in Lite tasks join whatever was mined, taken afresh from the
Lite repository every time, so a Lite repository written again (its home cleared) never
leaves tasks naming commits it does not hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from bugbout_tui import __version__
from bugbout_tui.core.config_errors import ConfigError, ConfigProblem, key_lines, line_of
from bugbout_tui.core.models import TaskSet
from bugbout_tui.engine.env_sources import is_lite
from bugbout_tui.engine.lite import lite_repository
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.detect import github_from_remote
from bugbout_tui.infra.git import default_branch, head_commit, is_directory, open_repository
from bugbout_tui.rules.mine import mine
from bugbout_tui.rules.statement import issue_source_from_settings
from bugbout_tui.rules.tasks import build_taskset


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # the issue source reports it, with the file's name


def mining_fingerprint(project: Project, github: str | None) -> str:
    """Hash of every setting that changes what mining produces, and of the issues
    file's content: an edited file must be read again."""
    cfg = project.config
    issues_file = project.dir / cfg.project.issues_file if cfg.project.issues_file else None
    settings = {
        "source": cfg.project.source,
        "tests": cfg.project.tests,
        "since": str(cfg.tasks.since) if cfg.tasks.since else None,
        "limit": cfg.tasks.limit,
        "max_source_files": cfg.tasks.max_source_files,
        "github": github,
        "issues_file": str(cfg.project.issues_file) if cfg.project.issues_file else None,
        "issues_file_digest": _file_digest(issues_file),
        "lite": __version__ if cfg.env.lite else None,
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
    so `bugbout tasks` answers at once on a second call; unless a lookup behind them
    failed for a reason that may pass (offline, rate limit, server error): then mining
    runs again, every answer already read comes from the cache, and the new task set's
    `retried` says how many lookups were asked again.
    """
    cfg = project.config
    store = project.store
    repo = open_repository(cfg.project.repository, project.dir)
    ref = default_branch(repo)
    github = cfg.project.github or github_from_remote(repo)
    fingerprint = mining_fingerprint(project, github)
    stored = store.read(store.tasks_path, TaskSet)
    head = head_commit(repo, ref)
    _check_tests_dir(project, repo, ref, head)
    current = stored is not None and stored.fingerprint == fingerprint
    retried = stored.unread() if stored is not None and current else 0
    if stored is not None and current and not refresh and stored.head == head and not retried:
        return _with_lite(project, stored)
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
    taskset.retried = retried
    store.write(store.tasks_path, taskset)
    return _with_lite(project, taskset)


def _with_lite(project: Project, taskset: TaskSet) -> TaskSet:
    """`taskset` with the Lite tasks as the Lite repository now holds them (none without
    `[env] lite`), stored when that changed it."""
    lite = lite_repository().tasks() if project.config.env.lite else []
    # A Lite task's fix mined from the Lite repository itself (`bugbout env-lite`) is
    # the same task: the Lite one, which knows its defect, stays.
    fixes = {task.fix_commit for task in lite}
    mined = [t for t in taskset.tasks if not is_lite(t) and t.fix_commit not in fixes]
    if [*mined, *lite] == taskset.tasks:
        return taskset
    updated = taskset.model_copy(update={"tasks": [*mined, *lite]})
    project.store.write(project.store.tasks_path, updated)
    return updated


def _check_tests_dir(project: Project, repo: Path, ref: str, head: str) -> None:
    """Stop at once when `[project] tests` names no directory at the tip of the branch.

    Left unchecked, the repository's suite silently drops out of every cross-examination
    and the agents' test command points at nothing. Only the tip is checked: a project
    may have moved its tests since, and a task from before the move finds them beside
    its own test files.
    """
    tests = project.config.project.tests
    if tests in ("", ".") or is_directory(repo, head, tests):
        return
    file = project.config_path
    try:
        lines = key_lines(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        lines = {}
    written = ("project", "tests") in lines
    branch = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    default = "" if written else " (the default)"
    raise ConfigError(
        [
            ConfigProblem(
                file=file,
                line=line_of(lines, ("project", "tests")),
                key="project.tests",
                kind="invalid-value" if written else "missing-key",
                message=f"there is no directory '{tests}'{default} at the tip of {branch} "
                f"({head[:12]}) in {repo}; name the directory that holds the tests there",
                section="[project]",
                name="tests",
            )
        ]
    )
