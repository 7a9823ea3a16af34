"""Agents that cannot be started: a set-up mistake to fix, never a result to score.

A missing or non-executable program stops `bugbout run` before the race with exit 2;
an attempt whose command line the kernel would refuse (a `{prompt}` of 200 KiB) is
recorded as not started, saying why, and runs once the command is fixed; so does an
attempt an older version recorded as crashed because it could not start.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from projects import write_issues
from racekit import attempt, contestant, copy_project, edit_agent, race, records, starts
from terminals import bugbout

from bugbout_tui.core.events import ErrorRaised
from bugbout_tui.core.store import Store
from bugbout_tui.engine.race import attempt_path

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("home")]


def test_a_missing_or_unusable_program_stops_the_run_before_the_race_with_exit_2(
    project_template: Path, tmp_path: Path, home: Path, state: Path
) -> None:
    unusable = tmp_path / "agent.sh"
    unusable.write_text("#!/bin/sh\nexit 0\n")
    unusable.chmod(0o644)
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1", "calc-2"],
        extra=edit_agent("fine", state, quota="fine")
        + contestant("ghost", ["/nowhere/ghost-agent", "{prompt_file}"], quota="ghost")
        + contestant("stale", [str(unusable), "{workdir}"], quota="stale"),
    )
    result = bugbout("run", cwd=project, home=home)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "the contestant 'ghost': `/nowhere/ghost-agent`" in result.stderr
    assert "correct `command` of this agent in bugbout.toml" in result.stderr
    assert f"the contestant 'stale': `{unusable}`" in result.stderr
    assert "is not executable" in result.stderr
    assert f"chmod +x {unusable}" in result.stderr
    assert "'fine'" not in result.stderr
    assert records(project) == {}  # not even the agents that could start
    assert starts(state / "count") == []


def test_an_attempt_an_older_version_recorded_as_unable_to_start_runs_again(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1", "calc-2"],
        extra=edit_agent("fine", state, quota="fine"),
    )
    store = Store(project)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    for task, detail in [
        ("calc-1", "could not start /usr/bin/fine-agent: [Errno 7] Argument list too long"),
        ("calc-2", "exited with 1"),  # this one did run, and crashed: only a retry runs it
    ]:
        path = attempt_path(store.attempts_dir, task, "fine")
        path.parent.mkdir(parents=True)
        old = {
            "schema_version": 1, "task": task, "contestant": "fine", "status": "crashed",
            "detail": detail, "started_at": when.isoformat(), "ended_at": when.isoformat(),
            "seconds": 0.5, "logdir": "",
        }  # fmt: skip
        path.write_text(json.dumps(old, indent=2) + "\n")

    race(project)

    assert attempt(project, "calc-1", "fine").status == "finished"
    assert attempt(project, "calc-2", "fine").status == "crashed"
    assert starts(state / "count") == [("calc-1", "fine")]


def test_a_prompt_too_long_for_the_command_line_is_said_and_runs_once_given_as_a_file(
    project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=["calc-1"])
    # a long issue (an attached log, say): 200 KiB of text, more than one argument holds
    body = "The log says:\n\n" + "\n".join(f"line {n:06d} " + "x" * 50 for n in range(3500))
    assert len(body.encode()) > 200 * 1024
    write_issues(project, {1: ("f1 returns 0", body)})
    config = project / "bugbout.toml"
    config.write_text(config.read_text().replace('"issues.json"', '"long-issues.json"'))
    (project / "issues.json").rename(project / "long-issues.json")
    reads = 'printf "%s" "$1" | wc -c | tee {workdir}/src/calc/seen.txt'
    text = config.read_text()
    config.write_text(text + contestant("reader", ["/bin/sh", "-c", reads, "sh", "{prompt}"]))

    events = race(project)

    record = attempt(project, "calc-1", "reader")
    assert record.status == "skipped"
    assert not record.scorable
    detail = record.detail or ""
    assert detail.startswith("could not start: the prompt (2"), detail
    assert "KiB) is on its command line" in detail
    assert "{prompt_file}" in detail and "standard input" in detail
    assert "Argument list too long" not in detail
    (error,) = [e for e in events if isinstance(e, ErrorRaised)]
    assert "calc-1/reader" in error.message and "{prompt_file}" in error.message

    # the user follows the advice; the next plain run starts the agent, prompt whole
    from_file = 'wc -c < "$1" | tee {workdir}/src/calc/seen.txt'
    config.write_text(
        text + contestant("reader", ["/bin/sh", "-c", from_file, "sh", "{prompt_file}"])
    )
    race(project)

    record = attempt(project, "calc-1", "reader")
    assert record.status == "finished"
    assert int(record.summary or "0") > len(body.encode())  # the bytes it read
