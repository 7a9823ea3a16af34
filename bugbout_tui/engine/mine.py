"""The mining stage of a bout: history → tasks.json, reused while nothing it read changed.

With `[env] lite` the built-in Lite tasks join whatever was mined, taken afresh from the
Lite repository every time, so a Lite repository written again (its home cleared) never
leaves tasks naming commits it does not hold.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from bugbout_tui.core.config import ProjectConfig
from bugbout_tui.core.config_errors import ConfigError, ConfigProblem, key_lines, line_of
from bugbout_tui.core.models import TaskSet
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.env_sources import is_lite
from bugbout_tui.engine.lite import lite_digest, lite_repository
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.detect import github_from_remote
from bugbout_tui.infra.git import (
    default_branch,
    head_commit,
    is_directory,
    open_repository,
    read_files,
)
from bugbout_tui.infra.manifests import read_manifests
from bugbout_tui.infra.python_list import available_pythons
from bugbout_tui.infra.pythons import Python, choose
from bugbout_tui.rules.mine import mine
from bugbout_tui.rules.statement import issue_source_from_settings
from bugbout_tui.rules.tasks import EnvRun, build_taskset

PYTHON_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
"""The packaging files that say which Python a commit runs on."""


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # the issue source reports it, with the file's name


def mining_fingerprint(project: Project, github: str | None) -> str:
    """Hash of every setting that changes what mining produces, and of the issues
    file's content: an edited file must be read again. What is mined (`kinds`) is one:
    asking for environment tasks mines again."""
    cfg = project.config
    issues_file = project.dir / cfg.project.issues_file if cfg.project.issues_file else None
    settings: dict[str, object] = {
        "source": cfg.project.source,
        "tests": cfg.project.tests,
        "since": str(cfg.tasks.since) if cfg.tasks.since else None,
        "limit": cfg.tasks.limit,
        "max_source_files": cfg.tasks.max_source_files,
        "github": github,
        "issues_file": str(cfg.project.issues_file) if cfg.project.issues_file else None,
        "issues_file_digest": _file_digest(issues_file),
        "kinds": sorted(cfg.tasks.kinds),
        "lite": lite_digest() if cfg.env.lite else None,
    }
    if "env" in cfg.tasks.kinds:  # an environment task's command and Python follow from them
        settings["env_run"] = {"pytest_args": cfg.project.pytest_args, "python": cfg.project.python}
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
        kinds=cfg.tasks.kinds,
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
        env_run=EnvRuns(repo, cfg.project),
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


class EnvRuns:
    """How each environment task is run: the project's test command, on the Python its
    fix declares, chosen as dated environments choose it (`infra.pythons.choose`) unless
    `[project] python` decides for every commit."""

    def __init__(self, repo: Path, project: ProjectConfig) -> None:
        self.repo = repo
        self.project = project
        self._pythons: list[Python] | None = None

    def __call__(self, commit: str) -> EnvRun:
        project = self.project
        tests = project.tests if is_directory(self.repo, commit, project.tests) else None
        command = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += [*project.pytest_args, *([tests] if tests else [])]
        return EnvRun(command=command, python=project.python or self._python(commit))

    def _python(self, commit: str) -> str:
        """The version the commit's `requires-python` and classifiers choose among the
        interpreters uv knows; with none that fits, the newest its classifiers name, else
        the running interpreter's (the install then says what is missing)."""
        with tempfile.TemporaryDirectory(prefix="bugbout-python-") as scratch:
            for name, content in read_files(self.repo, commit, PYTHON_FILES).items():
                if content is not None:
                    (Path(scratch) / name).write_bytes(content)
            manifests = read_manifests(Path(scratch))
        if self._pythons is None:
            self._pythons = asyncio.run(available_pythons(bugbout_home().resolve() / "envs"))
        chosen = choose(self._pythons, manifests.requires_python, manifests.classifiers).python
        if chosen is not None:
            return chosen.minor
        return manifests.classifiers[-1] if manifests.classifiers else self.project.python_version()


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
