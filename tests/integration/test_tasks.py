"""From mined changes to tasks, with the issue source deciding what the history cannot.

Each test builds a small repository and serves its issues from the fake GitHub API on
a loopback socket (`github_server`), then mines it as `bugbout tasks` would: a title whose
only fix word is in "(fixes #N)" waits for its issue, a merge titled only by its branch
for its pull request's title, a pull request's text is cut to the problem it reports,
and lookups that may pass are asked again by the next mining while definite answers
are kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from gitrepo import GitRepo
from terminals import bugbout

from bugbout_tui.core.models import Exclusion, Reason, StatementSource, Task, TaskSet
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project

if TYPE_CHECKING:
    from github_server import FakeGitHub, GitHubEnv

pytest_plugins = ["github_server"]

REPO = "acme/calc"
CONFIG = f"""\
[project]
source = "src/calc"
tests = "tests"
github = "{REPO}"
interpreter = "{sys.executable}"
"""

BUG_TEMPLATE = """\
**Describe the bug**
`total()` forgets the last value.

**To Reproduce**
Call `total([1, 2])`.
"""
FEATURE_TEMPLATE = """\
**Is your feature request related to a problem? Please describe.**
I would like to chain calls.

**Describe the solution you'd like**
A fluent interface.
"""
TRACEBACK = """\
Calling it with no values:

```
Traceback (most recent call last):
  File "t.py", line 3, in <module>
    total([])
ZeroDivisionError: division by zero
```
"""
PULL_TEXT = """\
## Summary

`wait_exponential` can raise `ValueError: math domain error` instead of returning a wait \
when the ratio of `max` to `multiplier` underflows to `0.0`:

```python
wait_exponential(multiplier=1e300, max=1e-100)(state)
```

It is a regression from the threshold shortcut in #54. The fix computes the same \
threshold as a difference of logarithms, so nothing underflows.

## How narrow this is

I ran into it while checking edge cases. I changed the plain-value fallback to route \
into the logarithm instead. Added a regression test.

## Root cause

Forming `max / multiplier` first underflows, and `math.log(0.0)` raises.
"""
"""Shaped after tenacity's pull request #656 and tomlkit's #545, whose statements gave
their fix away: a problem, a sentence naming the fix, first-person sentences about the
change, and a root-cause section."""


@pytest.fixture
def api(
    github_env: GitHubEnv, github_server: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> FakeGitHub:
    """The fake API, which the project reads through `GITHUB_API_URL`."""
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    return github_server


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def f0():\n    return 0\n",
            "tests/test_ops.py": "def test_nothing():\n    pass\n",
            "bugbout.toml": CONFIG,
        },
    )
    return repo


def change(number: int) -> dict[str, str]:
    """Files of a change that passes every mining rule: one source file, one new test."""
    return {
        "src/calc/ops.py": f"def f0():\n    return {number}\n",
        f"tests/test_f{number}.py": f"def test_f{number}():\n    pass\n",
    }


def mined(repo: GitRepo) -> TaskSet:
    return mine_tasks(Project.load(repo.root))


def task(taskset: TaskSet, task_id: str) -> Task:
    found = {t.id: t for t in taskset.tasks}
    assert task_id in found, (task_id, [(e.title, e.reason, e.detail) for e in taskset.excluded])
    return found[task_id]


def left_out(taskset: TaskSet, sha: str) -> Exclusion:
    (item,) = [e for e in taskset.excluded if e.commit == sha]
    return item


# --- a fix word only in "(fixes #N)": the linked issue decides --------------------------


@pytest.mark.parametrize(
    ("labels", "body"),
    [
        pytest.param(("bug",), "Totals are off.", id="bug label"),
        pytest.param(("type: bug",), "Totals are off.", id="type: bug label"),
        pytest.param(("kind/bug",), "Totals are off.", id="kind/bug label"),
        pytest.param((), BUG_TEMPLATE, id="bug-report template"),
        pytest.param((), TRACEBACK, id="traceback"),
    ],
)
def test_a_closing_phrase_title_is_a_task_when_its_issue_reports_a_bug(
    api: FakeGitHub, repo: GitRepo, labels: tuple[str, ...], body: str
) -> None:
    api.add_issue(REPO, 7, "total() is wrong", body, labels=labels)
    repo.commit("Keep totals right when wrapped (fixes #7)", files=change(1))
    found = task(mined(repo), "calc-7")
    assert found.title == "Keep totals right when wrapped (fixes #7)"
    assert found.statement is not None and found.statement.startswith("# total() is wrong")
    assert api.issue_requests() == ["/repos/acme/calc/issues/7"]


@pytest.mark.parametrize(
    ("labels", "body", "why"),
    [
        pytest.param(
            ("enhancement",),
            "Totals are off.",
            "the linked issue #7 is labelled 'enhancement'",
            id="feature label wins over the text",
        ),
        pytest.param(
            (),
            FEATURE_TEMPLATE,
            "the linked issue #7 is written on a feature-request template",
            id="feature-request template",
        ),
        pytest.param(
            ("help wanted",),
            "It would be nice to chain calls.",
            "the linked issue #7 shows no bug label, bug-report template, traceback or failure "
            "in its title",
            id="no evidence",
        ),
    ],
)
def test_a_closing_phrase_title_whose_issue_is_no_bug_is_left_out(
    api: FakeGitHub, repo: GitRepo, labels: tuple[str, ...], body: str, why: str
) -> None:
    api.add_issue(REPO, 7, "Chainable totals", body, labels=labels)
    sha = repo.commit("Add pre-commit hook support (fixes #7)", files=change(1))
    taskset = mined(repo)
    assert taskset.tasks == []
    item = left_out(taskset, sha)
    assert (item.reason, item.detail, item.retry) == (Reason.NOT_A_BUG, why, False)
    assert taskset.funnel()["not-a-bug"] == 1


def test_an_unreadable_linked_issue_is_left_out_with_its_own_reason(
    github_env: GitHubEnv,
    repo: GitRepo,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    monkeypatch.setenv("GITHUB_API_URL", url)
    sha = repo.commit("Keep totals right when wrapped (fixes #7)", files=change(1))
    item = left_out(mined(repo), sha)
    assert item.reason is Reason.ISSUE_UNREADABLE
    assert item.detail == (
        f"the linked issue #7 could not be read: could not reach {url}: "
        "[Errno 111] Connection refused"
    )
    assert item.retry


def test_a_linked_issue_that_does_not_exist_is_a_definite_answer(
    api: FakeGitHub, repo: GitRepo
) -> None:
    sha = repo.commit("Keep totals right when wrapped (fixes #7)", files=change(1))
    item = left_out(mined(repo), sha)
    assert item.reason is Reason.ISSUE_UNREADABLE and not item.retry
    assert item.detail is not None and "issue #7 not found in acme/calc" in item.detail
    asked = len(api.requests)
    assert mined(repo).excluded == mined(repo).excluded
    assert len(api.requests) == asked


# --- a merge titled only by its branch: the pull request's title decides -------------------


def test_a_branch_name_alone_never_makes_a_fix(api: FakeGitHub, repo: GitRepo) -> None:
    api.add_issue(REPO, 20, "Support table copy", "Tables can now be copied.", pull=True)
    api.add_issue(
        REPO, 21, "Fix escaping of keys", "Keys holding a quote are written unescaped.", pull=True
    )
    feature = repo.merge_pr(20, "", files=change(1), branch="fix/table-copy")
    fix = repo.merge_pr(21, "", files=change(2), branch="fix/escape-key")
    titled = repo.merge_pr(22, "Add a copy option", files=change(3), branch="fix/copy-option")
    taskset = mined(repo)

    item = left_out(taskset, feature)
    assert (item.reason, item.detail) == (Reason.NOT_A_FIX, "pull request #20's title is not a fix")
    assert item.title == "Support table copy"
    assert left_out(taskset, titled).reason is Reason.NOT_A_FIX
    found = task(taskset, "calc-21")
    assert (found.fix_commit, found.title) == (fix, "Fix escaping of keys")
    assert found.statement == "Keys holding a quote are written unescaped."


def test_a_merge_of_a_branch_without_a_pull_request_is_not_a_fix(repo: GitRepo) -> None:
    repo.git("switch", "--quiet", "--create", "hotfix")
    repo.commit("Guard the total (#5)", files=change(1))
    repo.git("switch", "--quiet", "main")
    repo.git("merge", "--quiet", "--no-ff", "-m", "Merge branch 'hotfix'", "hotfix")
    item = left_out(mined(repo), repo.head())
    assert (item.reason, item.title) == (Reason.NOT_A_FIX, "Merge branch 'hotfix'")


# --- what the agents are told: a pull request's text cut to the problem -------------------


def test_a_pull_requests_text_is_cut_to_the_problem_it_reports(
    api: FakeGitHub, repo: GitRepo
) -> None:
    api.add_issue(REPO, 56, "Avoid underflow in exponential wait threshold", PULL_TEXT, pull=True)
    repo.commit("Fix exponential wait threshold underflow (#56)", files=change(1))
    found = task(mined(repo), "calc-56")
    assert found.statement == (
        "## Summary\n\n"
        "`wait_exponential` can raise `ValueError: math domain error` instead of returning a "
        "wait when the ratio of `max` to `multiplier` underflows to `0.0`:\n\n"
        "```python\nwait_exponential(multiplier=1e300, max=1e-100)(state)\n```\n\n"
        "It is a regression from the threshold shortcut in #54.\n\n"
        "## How narrow this is\n\n"
        "I ran into it while checking edge cases."
    )
    assert found.statement_source == StatementSource(
        kind="pull",
        number=56,
        cut=["the title", 'section "root cause"', "3 sentences about the change"],
    )
    assert found.statement_note == "pull request #56 names no issue it closes; its own text is used"


def test_a_pull_request_whose_text_is_all_change_is_left_out(
    api: FakeGitHub, repo: GitRepo
) -> None:
    api.add_issue(
        REPO,
        57,
        "Route plain values into the concrete part",
        "## Changes\n\n- route the value into the concrete part\n\nAdded a regression test.",
        pull=True,
    )
    sha = repo.commit("fix: route plain values into the concrete part (#57)", files=change(1))
    taskset = mined(repo)
    assert taskset.tasks == []
    item = left_out(taskset, sha)
    assert (item.reason, item.detail) == (
        Reason.NO_PROBLEM_TEXT,
        "the text of pull request #57 describes only the change made",
    )


@pytest.mark.parametrize(
    ("served", "why"),
    [
        pytest.param(False, "issue #43 not found in acme/calc (a private repository needs "
                     "GITHUB_TOKEN)", id="named issue 404"),
        pytest.param(True, "issue #43 has no text", id="named issue without text"),
    ],
)  # fmt: skip
def test_a_named_issue_that_is_missing_falls_back_to_the_pull_request(
    api: FakeGitHub, repo: GitRepo, served: bool, why: str
) -> None:
    if served:
        api.add_issue(REPO, 43, "Scalar captured", None)
    api.add_issue(
        REPO,
        50,
        "Fix top-level scalar captured by a table",
        "Fixes #43.\n\nAppending a scalar after a dotted key placed it inside the table:\n\n"
        "```python\ndoc['z'] = 2\n```\n\n**Root cause:** the index helper skips dotted "
        "tables.\n\n**Fix:** the helper now stops there:\n\n```toml\nz = 2\n```\n\n"
        "which round-trips.",
        pull=True,
    )
    repo.commit("Fix top-level scalar captured by a table (#50)\n\nFixes #43", files=change(1))
    found = task(mined(repo), "calc-43")
    assert found.statement == (
        "Appending a scalar after a dotted key placed it inside the table:\n\n"
        "```python\ndoc['z'] = 2\n```"
    )
    assert found.statement_source == StatementSource(
        kind="pull",
        number=50,
        cut=[
            "the title",
            'section "root cause"',
            'section "fix"',
            "1 sentence about the change",
            "1 closing reference",
            "1 code block about the change",
        ],
    )
    assert found.statement_note == f"{why}; the text of pull request #50 is used instead"


# --- lookups that may pass are asked again; definite answers are kept ----------------------


def test_a_lookup_that_failed_with_a_server_error_is_asked_again_next_time(
    api: FakeGitHub, repo: GitRepo
) -> None:
    api.add_issue(REPO, 3, "total() is off by one", "Totals are off.")
    api.reply("/repos/acme/calc/issues/3", 503, {"message": "Service Unavailable"})
    repo.commit("Fix the total (#3)", files=change(1))
    first = task(mined(repo), "calc-3")
    assert first.statement is None and first.statement_retry
    assert first.statement_missing == "GitHub answered 503 for /repos/acme/calc/issues/3: " + (
        "Service Unavailable"
    )

    api.forget_reply("/repos/acme/calc/issues/3")
    again = mined(repo)
    assert again.retried == 1 and again.unread() == 0
    found = task(again, "calc-3")
    assert found.statement == "# total() is off by one\n\nTotals are off."
    assert not found.statement_retry

    asked = len(api.requests)
    assert mined(repo).tasks == again.tasks
    assert len(api.requests) == asked


def test_a_missing_issue_is_a_definite_answer_and_is_kept(api: FakeGitHub, repo: GitRepo) -> None:
    repo.commit("Fix the total (#3)", files=change(1))
    found = task(mined(repo), "calc-3")
    assert found.statement is None and not found.statement_retry
    asked = len(api.requests)
    kept = mined(repo)
    assert kept.retried == 0 and kept.tasks == [found]
    assert len(api.requests) == asked


# --- the command line shows where a statement came from and what was cut -------------------


def test_tasks_shows_where_the_statement_came_from_and_what_was_cut(
    api: FakeGitHub, repo: GitRepo, tmp_path: Path, github_env: GitHubEnv
) -> None:
    api.add_issue(REPO, 56, "Avoid underflow in exponential wait threshold", PULL_TEXT, pull=True)
    repo.commit("Fix exponential wait threshold underflow (#56)", files=change(1))
    env = {"PATH": f"{github_env.bin_dir}:/usr/bin:/bin", "GITHUB_API_URL": api.url}
    home = tmp_path / "home"
    shown = bugbout("tasks", "calc-56", cwd=repo.root, home=home, COLUMNS="200", **env)
    assert shown.returncode == 0, shown.stderr
    assert "text from" in shown.stdout and "pull request #56" in shown.stdout
    assert 'the title, section "root cause", 3 sentences about the change' in shown.stdout
    assert "The fix computes" not in shown.stdout and "I changed" not in shown.stdout

    listed = bugbout("tasks", "calc-56", "--json", cwd=repo.root, home=home, COLUMNS="200", **env)
    data = json.loads(listed.stdout)
    assert data["statement_source"] == {
        "kind": "pull",
        "number": 56,
        "repo": None,
        "cut": ["the title", 'section "root cause"', "3 sentences about the change"],
    }
    assert data["statement_note"] == (
        "pull request #56 names no issue it closes; its own text is used"
    )


def test_the_funnel_prints_its_words_as_written(
    repo: GitRepo, tmp_path: Path, github_env: GitHubEnv
) -> None:
    issues = [{"number": n, "title": f"f{n} is wrong", "body": "Wrong."} for n in (3, 4)]
    (repo.root / "issues.json").write_text(json.dumps(issues))
    config = CONFIG.replace(f'github = "{REPO}"', 'issues-file = "issues.json"')
    repo.write("bugbout.toml", config + "\n[tasks]\nlimit = 1\n")
    repo.commit("Fix f3 (#3)", files=change(3))
    repo.commit("Fix f4 (#4)", files=change(4))
    shown = bugbout("tasks", cwd=repo.root, home=tmp_path / "home", COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    assert "over-limit" in shown.stdout
    assert "beyond [tasks] limit" in shown.stdout
