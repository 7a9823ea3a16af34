"""Budgets in a whole race of the agent CLIs: `bugbout run` drives the strict fakes of
Claude Code, Codex and the Gemini CLI (tests/fakes) through their real command lines,
reads what each run reports of its tokens and cost from its real output, and stops an
agent partway through the race once its next attempt would pass its budget.

Each fake reports the same usage per attempt, which each CLI's output says in its own
way: Claude Code counts cache reads apart from the input and reports its own cost;
Codex counts them inside the input and reports no cost. So Claude's budget in dollars
is met by the cost it reported, Codex's budget in tokens by the tokens it reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fakes.harness import FAKES
from racekit import TASKS, attempt, copy_project, journal
from rich.console import Console

from bugbout_tui.core.events import AttemptFinished, RaceEstimated
from bugbout_tui.core.models import Attempt
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report
from bugbout_tui.report import render_json, render_markdown, render_terminal

FIX = 'for n in 1 2 3 4 5; do sed -i "/def f$n()/{n;s/return 0/return $n/}" src/calc/ops.py; done'
"""Every `f<n>` of the race project made to return `n`: one command for any task."""

STEPS = [
    {"run": FIX},
    {"say": "Fixed the functions returning zero."},
    {"usage": {"input": 900_000, "output": 100_000, "cached": 600_000}, "cost": 0.4},
]
"""Per attempt, 1.6M tokens and $0.40 as Claude Code reports them (its input counts the
cache reads apart), 1.0M tokens and no cost as Codex does (cached input inside it)."""

AGENTS = """
[[contestants]]
agent = "claude-code"
name = "claude"
model = "claude-sonnet-4-5"
budget = "$1"

[[contestants]]
agent = "codex"
name = "codex"
budget = "3.5M tokens"

[[contestants]]
agent = "gemini-cli"
name = "gemini"
"""


def statuses(project: Path, name: str) -> Counter[str]:
    return Counter(attempt(project, task, name).status for task in TASKS)


def stopped(project: Path, name: str) -> list[Attempt]:
    return [a for task in TASKS if (a := attempt(project, task, name)).status == "budget"]


def test_a_budget_stops_a_cli_agent_partway_through_the_race_by_what_it_reported(
    project_template: Path, tmp_path: Path, home: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=TASKS, extra=AGENTS)
    user = tmp_path / "user"
    user.mkdir()
    env = {
        "PATH": f"{FAKES}{os.pathsep}/usr/bin:/bin",
        "HOME": str(user),
        "LANG": "C.UTF-8",
        "BUGBOUT_HOME": str(home),
        "BUGBOUT_FAKE_STEPS": json.dumps(STEPS),
        "ANTHROPIC_API_KEY": "anthropic-test",
        "OPENAI_API_KEY": "sk-openai-test",
        "GEMINI_API_KEY": "gemini-test",
    }
    result = subprocess.run(
        [sys.executable, "-m", "bugbout_tui", "run", "--until", "race"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr

    # Each agent has a lane of its own, one attempt at a time. Claude's first attempt is
    # expected to cost its type's default (about $0.80 at its model's price), the next
    # $0.40 as it reported, so a third would pass $1; Codex spends 1.0M tokens each, so a
    # fourth would pass 3.5M. The Gemini CLI has no budget and runs all four.
    assert statuses(project, "claude") == Counter(finished=2, budget=2)
    assert statuses(project, "codex") == Counter(finished=3, budget=1)
    assert statuses(project, "gemini") == Counter(finished=4)

    (ran, _) = [a for task in TASKS if (a := attempt(project, task, "claude")).status != "budget"]
    assert ran.tokens is not None
    assert (ran.tokens.input, ran.tokens.cached, ran.tokens.output) == (1_500_000, 600_000, 100_000)
    assert ran.cost_usd == pytest.approx(0.4)
    assert '"total_cost_usd": 0.4' in (Path(ran.logdir) / "stdout.log").read_text()
    codex = next(a for t in TASKS if (a := attempt(project, t, "codex")).status == "finished")
    assert codex.tokens is not None and codex.cost_usd is None
    assert (codex.tokens.input, codex.tokens.output) == (900_000, 100_000)

    claude_stops = stopped(project, "claude")
    for record in claude_stops:
        assert record.detail == (
            "the budget $1 of claude would be passed: $0.80 spent, about $0.40 per attempt"
        )
        assert record.logdir == "" and record.cost_usd is None and not record.scorable
    (codex_stop,) = stopped(project, "codex")
    assert codex_stop.detail == (
        "the budget 3.5M tokens of codex would be passed: 3.0M tokens spent, "
        "about 1.0M tokens per attempt"
    )

    # The board: the estimate foresaw both stops; each stopped attempt is a line.
    (estimate,) = [e for e in journal(project) if isinstance(e, RaceEstimated)]
    assert [n for n in estimate.estimate.notes if "stops this agent" in n] == [
        "claude: budget $1, $0.00 spent; it stops this agent after about 1 of its 4 attempts",
        "codex: budget 3.5M tokens, 0 tokens spent; it stops this agent after about 3 of its "
        "4 attempts",
    ]
    finished = [e for e in journal(project) if isinstance(e, AttemptFinished)]
    stops = {e.attempt for e in finished if e.status == "budget"}
    assert stops == {a.id for a in [*claude_stops, codex_stop]}
    assert f"[race] {codex_stop.id} budget after 0:00: {codex_stop.detail}" in result.stderr

    # The report: what each spent, and who a budget stopped.
    report = load_report(Project.load(project))
    spent = {a.name: a for a in report.cost.by_agent}
    assert spent["claude"].spend.cost_usd == pytest.approx(0.8)
    assert {(s.name, s.attempts) for s in report.cost.budget_stops} == {("claude", 2), ("codex", 1)}
    markdown = render_markdown(report)
    assert (
        "| claude | contestant | 2 | the budget \\$1 of claude would be passed: \\$0.80 spent, "
        "about \\$0.40 per attempt |"
    ) in markdown  # a dollar sign escaped, so no renderer reads it as maths
    assert "| codex | contestant | 1 | the budget 3.5M tokens of codex would be passed" in markdown
    assert '"budget_stops"' in render_json(report)
    console = Console(record=True, width=160)
    console.print(render_terminal(report))
    assert "Stopped by a budget" in console.export_text()
