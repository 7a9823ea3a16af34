"""An issue that could not be read is asked for again by the next run, which then races it.

A run made offline leaves every task without its text and skips its attempts ("no issue
text to give"). The next `bugbout run` must not believe that answer: a network failure
may pass. It mines again, reads the issues, and runs the attempts it skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from racekit import attempt, copy_project, edit_agent, race, starts

from bugbout_tui.core.events import StageFinished

if TYPE_CHECKING:
    from github_server import FakeGitHub, GitHubEnv

pytest_plugins = ["github_server"]


pytestmark = pytest.mark.usefixtures("home")


def test_attempts_skipped_while_offline_run_once_the_issue_is_read(
    project_template: Path,
    tmp_path: Path,
    state: Path,
    github_env: GitHubEnv,
    github_server: FakeGitHub,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"], extra=edit_agent("one", state)
    )
    config = project / "bugbout.toml"
    text = config.read_text()
    config.write_text(text.replace('issues-file = "issues.json"\n', 'github = "acme/calc"\n'))

    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{closed_port}")
    race(project)
    skipped = attempt(project, "calc-1", "one")
    assert skipped.status == "skipped"
    assert skipped.detail is not None and "could not reach" in skipped.detail

    github_server.add_issue("acme/calc", 1, "f1 returns 0", "f1() should return 1.")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    events = race(project)

    assert attempt(project, "calc-1", "one").status == "finished"
    assert starts(state / "count") == [("calc-1", "one")]
    (mined,) = [e for e in events if isinstance(e, StageFinished) and e.stage == "mine"]
    # all five issues were unread; #1 is read now, the other four are definitely missing
    assert mined.summary == (
        "5 tasks from 6 changes; asked again for 5 issue lookups that had failed"
    )
