"""Mining environment tasks from a real history, in the pass that mines fixes.

The history holds a fix with its test, and changes to the environment files alone: a
dependency that was missing, a pin, tool settings, install notes, a version bump, a
revert, a branch's merge and a pull request's merge. What is mined follows
`[tasks] kinds`; each change left out has one reason, which says why an environment-only
change is not a task.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from terminals import piped

from bugbout_tui.core.models import Reason, Task, TaskSet
from bugbout_tui.engine.mine import mine_tasks, mining_fingerprint
from bugbout_tui.engine.project import Project
from bugbout_tui.rules.mine import Candidate, EnvCandidate, MiningResult, mine
from bugbout_tui.rules.tasks import NO_ISSUE_NAMED

PYPROJECT = """\
[project]
name = "pkg"
version = "1.0"
requires-python = ">=3.11,<3.12"
dependencies = ["attrs>=22"]

[tool.ruff]
line-length = 99
"""
CORE = "def parse(text):\n    return text.split()\n"
TESTS = "from pkg.core import parse\n\n\ndef test_parse():\n    assert parse('a') == ['a']\n"
CONFIG = """\
[project]
source = "src/pkg"
tests = "tests"
issues-file = "issues.json"
interpreter = "{python}"
{project}
[tasks]
kinds = {kinds}
{tasks}"""
ENV_REASONS = {
    Reason.NOT_ENV_ONLY,
    Reason.ENV_MERGE,
    Reason.ENV_REVERT,
    Reason.ENV_VERSION_ONLY,
    Reason.ENV_NOT_DEPENDENCIES,
}


class History:
    """The shas of the history every test here mines, oldest first."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.initial = repo.commit(
            "Initial layout",
            files={
                "src/pkg/__init__.py": "",
                "src/pkg/core.py": CORE,
                "tests/test_core.py": TESTS,
                "requirements.txt": "attrs>=22\n",
                "pyproject.toml": PYPROJECT,
                "README.md": "# pkg\n\n    pip install pkg\n",
            },
        )
        self.fix = repo.commit(
            "Fix crash on empty input (#12)",
            files={
                "src/pkg/core.py": CORE.replace("text.split()", "(text or '').split()"),
                "tests/test_core.py": TESTS + "\n\ndef test_empty():\n    assert parse('') == []\n",
            },
        )
        self.missing = repo.commit(
            "Declare six, which core imports", files={"requirements.txt": "attrs>=22\nsix\n"}
        )
        pinned = PYPROJECT.replace('"attrs>=22"', '"attrs>=22,<23"')
        self.pin = repo.commit("Keep attrs below 23 (#7)", files={"pyproject.toml": pinned})
        tuned = pinned.replace("= 99", "= 100")
        repo.clock += timedelta(days=1)  # what follows lands a day later
        self.ruff = repo.commit("Allow longer lines", files={"pyproject.toml": tuned})
        self.readme = repo.commit(
            "Document installing with uv",
            files={"README.md": "# pkg\n\n    uv pip install pkg\n"},
        )
        bumped = tuned.replace('version = "1.0"', 'version = "1.1"')
        self.bump = repo.commit("Release 1.1", files={"pyproject.toml": bumped})
        self.revert = repo.commit(
            'Revert "Keep attrs below 23 (#7)"\n\nThis reverts commit ' + self.pin + ".",
            files={"pyproject.toml": bumped.replace('"attrs>=22,<23"', '"attrs>=22"')},
        )
        self.branch_merge = self._branch_merge("deps", {"requirements.txt": "attrs>=22\nsix>=1\n"})
        self.pull_merge = repo.merge_pr(
            21, "Require requests", files={"requirements.txt": "attrs>=22\nsix>=1\nrequests\n"}
        )
        self.mixed = repo.commit(
            "Use six in core",
            files={
                "requirements.txt": "attrs>=22\nsix>=1\nrequests\nsix\n",
                "src/pkg/core.py": "import six\n" + CORE,
            },
        )

    def _branch_merge(self, branch: str, files: dict[str, str]) -> str:
        repo = self.repo
        repo.git("switch", "--quiet", "--create", branch)
        repo.commit("Loosen six", files=files)
        repo.git("switch", "--quiet", repo.branch)
        repo.git("merge", "--quiet", "--no-ff", "-m", f"Merge branch '{branch}'", branch)
        repo.clock += timedelta(hours=1)
        return repo.head()

    @property
    def env_changes(self) -> list[str]:
        """The environment changes that are tasks, newest first."""
        return [self.pull_merge, self.pin, self.missing]


@pytest.fixture
def history(git_repo: GitRepo) -> History:
    return History(git_repo)


def _mine(history: History, *kinds: str, **settings: Any) -> MiningResult:
    result = mine(
        history.repo.root,
        ref="refs/heads/main",
        source="src/pkg",
        tests="tests",
        since=settings.get("since"),
        max_source_files=2,
        kinds=kinds,  # type: ignore[arg-type]
    )
    assert result.examined == len(result.candidates) + len(result.excluded)
    return result


def _reasons(result: MiningResult) -> dict[str, Reason]:
    return {item.commit: item.reason for item in result.excluded}


def test_mining_fixes_alone_leaves_environment_changes_to_the_fix_rules(history: History) -> None:
    result = _mine(history, "bug")
    assert [c.commit for c in result.candidates] == [history.fix]
    assert all(isinstance(c, Candidate) for c in result.candidates)
    reasons = _reasons(result)
    assert ENV_REASONS.isdisjoint(reasons.values())
    assert reasons[history.missing] is Reason.NOT_A_FIX
    assert reasons[history.pull_merge] is Reason.NOT_A_FIX


def test_mining_environments_keeps_the_changes_to_what_is_installed(history: History) -> None:
    result = _mine(history, "env")
    assert [c.commit for c in result.candidates] == history.env_changes
    assert all(isinstance(c, EnvCandidate) for c in result.candidates)
    reasons = _reasons(result)
    assert reasons == {
        history.mixed: Reason.NOT_ENV_ONLY,
        history.branch_merge: Reason.ENV_MERGE,
        history.revert: Reason.ENV_REVERT,
        history.bump: Reason.ENV_VERSION_ONLY,
        history.readme: Reason.ENV_NOT_DEPENDENCIES,
        history.ruff: Reason.ENV_NOT_DEPENDENCIES,
        history.fix: Reason.NOT_ENV_ONLY,
        history.initial: Reason.NOT_ENV_ONLY,
    }


def test_an_environment_candidate_carries_its_files_date_and_references(history: History) -> None:
    found = {c.commit: c for c in _mine(history, "env").candidates}
    pin, merged, missing = found[history.pin], found[history.pull_merge], found[history.missing]
    assert isinstance(pin, EnvCandidate) and isinstance(merged, EnvCandidate)
    assert pin.env_files == ("pyproject.toml",)
    assert pin.base_commit == history.repo.head(f"{history.pin}^")
    assert pin.date.isoformat() == history.repo.git("log", "-1", "--format=%cI", history.pin)
    assert [r.number for r in pin.refs] == [7]
    assert merged.title == "Require requests"
    assert [(r.number, r.kind) for r in merged.refs] == [(21, "pull")]
    assert isinstance(missing, EnvCandidate) and missing.refs == ()


def test_mining_both_kinds_judges_a_change_by_the_kind_its_files_allow(history: History) -> None:
    result = _mine(history, "bug", "env")
    assert [c.commit for c in result.candidates] == [*history.env_changes, history.fix]
    reasons = _reasons(result)
    assert reasons[history.mixed] is Reason.NOT_A_FIX
    assert reasons[history.ruff] is Reason.ENV_NOT_DEPENDENCIES


def test_environment_changes_before_since_are_left_out_like_fixes(history: History) -> None:
    since = datetime.fromisoformat(history.repo.git("log", "-1", "--format=%cI", history.ruff))
    result = _mine(history, "env", since=since.date())
    assert [c.commit for c in result.candidates] == [history.pull_merge]
    reasons = _reasons(result)
    assert reasons[history.pin] is reasons[history.fix] is Reason.BEFORE_SINCE


# --- tasks: numbered, described, run --------------------------------------------------


def _project(history: History, kinds: list[str], *, project: str = "", tasks: str = "") -> Project:
    """The project over the history, mining `kinds`, with more keys for its tables."""
    root = history.repo.root
    config = CONFIG.format(
        python=sys.executable, kinds=json.dumps(kinds), project=project, tasks=tasks
    )
    (root / "bugbout.toml").write_text(config)
    issue = {
        "number": 7,
        "title": "attrs 23 breaks the import",
        "body": "Installing today pulls attrs 23 and `import pkg` fails.",
        "state": "closed",
        "labels": [{"name": "security"}],
    }
    (root / "issues.json").write_text(json.dumps([issue]))
    return Project.load(root)


def _tasks(taskset: TaskSet) -> dict[str, Task]:
    return {task.id: task for task in taskset.tasks}


@pytest.mark.usefixtures("home")
def test_environment_tasks_are_numbered_and_described_for_their_run(history: History) -> None:
    taskset = mine_tasks(_project(history, ["bug", "env"]))
    short = history.missing[:7]
    tasks = _tasks(taskset)
    assert list(tasks) == ["pkg-21", "pkg-7", f"pkg-env-{short}", "pkg-12"]
    assert [task.kind for task in tasks.values()] == ["env", "env", "env", "bug"]
    pin = tasks["pkg-7"]
    assert pin.env is not None
    assert pin.env.command == ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert pin.env.python == "3.11"
    assert pin.env.date == pin.date
    assert pin.env.env_files == ["pyproject.toml"]
    assert (pin.env.defect, pin.env.security) == ("mined", True)
    assert pin.statement is not None and "attrs 23" in pin.statement
    assert (pin.source_files, pin.test_files, pin.added_tests) == ([], [], [])
    missing = tasks[f"pkg-env-{short}"]
    assert (missing.issue, missing.statement, missing.statement_missing) == (
        0,
        None,
        NO_ISSUE_NAMED,
    )
    merged = tasks["pkg-21"]
    assert merged.statement is None and merged.statement_missing is not None
    assert merged.env is not None and merged.env.security is False


@pytest.mark.usefixtures("home")
def test_the_limit_counts_both_kinds_newest_first(history: History) -> None:
    taskset = mine_tasks(_project(history, ["bug", "env"], tasks="limit = 2\n"))
    assert list(_tasks(taskset)) == ["pkg-21", "pkg-7"]
    over = {item.commit for item in taskset.excluded if item.reason is Reason.OVER_LIMIT}
    assert over == {history.missing, history.fix}


@pytest.mark.usefixtures("home")
def test_project_settings_decide_the_command_and_the_python(history: History) -> None:
    settings = 'python = "3.12"\npytest-args = ["-x"]\n'
    pin = _tasks(mine_tasks(_project(history, ["env"], project=settings)))["pkg-7"]
    assert pin.env is not None and pin.env.python == "3.12"
    assert pin.env.command[-2:] == ["-x", "tests"]


@pytest.mark.usefixtures("home")
def test_changing_the_kinds_mines_again(history: History) -> None:
    bugs = _project(history, ["bug"])
    assert [task.id for task in mine_tasks(bugs).tasks] == ["pkg-12"]
    both = _project(history, ["bug", "env"])
    assert mining_fingerprint(both, None) != mining_fingerprint(bugs, None)
    assert len(mine_tasks(both).tasks) == 4


def test_bugbout_tasks_shows_each_task_s_kind_and_an_environment_task_s_run(
    history: History, home: Path
) -> None:
    root = history.repo.root
    _project(history, ["bug", "env"])
    table = piped(["tasks"], cwd=root, home=home, columns=160)
    cells = [line.split("│")[1:3] for line in table.splitlines() if "│ pkg-" in line]
    rows = {task.strip(): kind.strip() for task, kind in cells}
    missing = f"pkg-env-{history.missing[:7]}"
    assert rows == {"pkg-21": "env", "pkg-7": "env", missing: "env", "pkg-12": "bug"}
    assert "env-not-dependencies" in table and "env-version-only" in table
    shown = piped(["tasks", "pkg-7"], cwd=root, home=home, columns=160)
    for words in (
        "python -m pytest -q -p no:cacheprovider tests",
        "env files",
        "pyproject.toml",
        "defect",
        "mined",
        "its issue carries a security label",
    ):
        assert words in shown, shown
    found = json.loads(piped(["tasks", "pkg-7", "--json"], cwd=root, home=home))
    assert found["kind"] == "env"
    assert found["env"]["env_files"] == ["pyproject.toml"]
    assert found["env"]["python"] == "3.11"
