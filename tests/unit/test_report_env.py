"""The report with environment tasks: its own section in every form, and the bug
sections counting bug tasks alone.

Two environment tasks are admitted: `lite-pin` (Lite, its base pins a vulnerable
requests) where alpha resolves by dropping the pin and beta by pinning a safe version,
and `mined-1`, where beta's repair changed a source file. `broken` is left out: its
files as written already install and run.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from envrecords import controls, env_attempt, env_task, finding, repair, taskset
from rich.console import Console

from bugbout_tui.core.env_models import Newest, RepairSet
from bugbout_tui.core.models import (
    Attempt,
    IssueRef,
    OracleSet,
    ResolutionSet,
    Task,
)
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.report import (
    Report,
    build_report,
    render_json,
    render_markdown,
    render_terminal,
    report_json_schema,
)
from bugbout_tui.report.model import LOOSENED_PIN, REPORT_SCHEMA_VERSION

OLD = finding("requests", "2.19.0", advisories=("PYSEC-2018-28",))
NEWEST = Newest(
    name="requests",
    declared="2.19.0",
    newest_today="2.32.3",
    newest_at_date="2.31.0",
    advisories={"2.19.0": ["PYSEC-2018-28"]},
)


def bug_task() -> Task:
    return Task(
        id="bug-1",
        issue=1,
        reference=IssueRef(number=1),
        title="Fix a bug",
        fix_commit="1" * 40,
        base_commit="2" * 40,
        date=datetime(2024, 1, 1, tzinfo=UTC),
        source_files=["pkg/mod.py"],
        test_files=["tests/test_mod.py"],
        added_tests=["test_bug"],
    )


def repairs() -> RepairSet:
    pinned = {"requests": "2.31.0"}
    return RepairSet(
        repairs={
            "lite-pin": {
                "alpha": repair("lite-pin", "alpha", names={"requests": None}, safe=0.0, f1=1.0),
                "beta": repair("lite-pin", "beta", names=pinned, safe=1.0, f1=1.0, size=2),
            },
            "mined-1": {
                "alpha": repair("mined-1", "alpha", names=pinned, safe=1.0, f1=0.5),
                "beta": repair("mined-1", "beta", "rejected", rejected=["src/app.py"]),
            },
            "broken": {"alpha": repair("broken", "alpha", safe=1.0)},
        },
        controls={
            "lite-pin": controls(
                "lite-pin", base_audit=[OLD], gold_names=pinned, base_newest=[NEWEST]
            ),
            "mined-1": controls("mined-1"),
            "broken": controls("broken", base="resolved"),
        },
    )


def env_attempts() -> list[Attempt]:
    pyproject = Patch(
        files=[
            FileChange(
                path="pyproject.toml",
                status="modified",
                part="other",
                added_lines=1,
                removed_lines=1,
            )
        ]
    )
    return [
        env_attempt("lite-pin", "alpha", cost=0.25).model_copy(update={"patch": pyproject}),
        env_attempt("lite-pin", "beta", cost=0.5),
        env_attempt("mined-1", "alpha", cost=0.75),
        env_attempt("mined-1", "beta"),
    ]


def build(*, with_bug: bool = False) -> Report:
    tasks = [
        env_task("lite-pin", lite=True, defect="pin-yanked"),
        env_task("mined-1"),
        env_task("broken"),
    ]
    return build_report(
        project="envdemo",
        policy="majority",
        taskset=taskset(*([bug_task()] if with_bug else []), *tasks),
        oracles=OracleSet(),
        attempts=env_attempts(),
        matrices={},
        verdicts={},
        resolutions=ResolutionSet(),
        contestants=["alpha", "beta"],
        examiners=[],
        repairs=repairs(),
    )


@pytest.fixture(scope="module")
def report() -> Report:
    return build()


def test_without_environment_tasks_there_is_no_env_section() -> None:
    found = build_report(
        project="bugs",
        policy="majority",
        taskset=taskset(bug_task()),
        oracles=OracleSet(),
        attempts=[],
        matrices={},
        verdicts={},
        resolutions=ResolutionSet(),
        contestants=["alpha"],
        examiners=[],
        repairs=repairs(),
    )
    assert found.env is None
    assert "Environment" not in render_markdown(found)


def test_bug_sections_count_bug_tasks_alone_and_the_cost_counts_everything() -> None:
    mixed = build(with_bug=True)
    assert mixed.funnel.kept == 1
    assert [row.task for row in mixed.tasks] == ["bug-1"]
    assert mixed.funnel.not_scored[0].tasks == ["bug-1"]
    # alpha's pyproject.toml is the whole point of an env task, not a flag.
    assert mixed.agents.flagged == []
    assert mixed.cost.total.attempts == 4
    assert mixed.cost.total.cost_usd == pytest.approx(1.5)
    assert mixed.env is not None and mixed.env.funnel.admitted == 2


def test_the_env_section_traces_every_figure_to_its_task(report: Report) -> None:
    env = report.env
    assert env is not None
    assert report.schema_version == REPORT_SCHEMA_VERSION == 6
    assert [(g.reason, g.tasks) for g in env.funnel.controls_failed] == [
        ("controls failed: the files as written already install and run", ["broken"])
    ]
    boards = {board.board: board for board in env.boards}
    rows = {row.agent: row for row in boards["all"].rows}
    assert (rows["alpha"].resolved.count, rows["alpha"].resolved.n) == (2, 2)
    assert (rows["beta"].resolved.count, rows["beta"].resolved.n) == (1, 2)
    assert rows["alpha"].cost_usd == pytest.approx(0.5)  # (0.25 + 0.75) / 2
    assert boards["secure"].tasks == ["lite-pin"]
    assert [row.agent for row in boards["secure"].rows] == ["beta", "alpha"]
    verdicts = {row.task: row.verdict for row in env.tasks if row.verdict is not None}
    assert {task: (v.pick, v.approved) for task, v in verdicts.items()} == {
        "lite-pin": ("beta", True),
        "mined-1": ("alpha", True),
    }
    assert [(r.task, r.contestant, r.declared) for r in env.newest] == [
        ("lite-pin", "base", "2.19.0")
    ]
    assert [(item.task, item.contestant, item.dropped) for item in env.loosened] == [
        ("lite-pin", "alpha", ["requests"])
    ]


def test_markdown_shows_every_env_section(report: Report) -> None:
    text = render_markdown(report)
    for heading in (
        "## Environment repairs",
        "### All: every admitted environment task",
        "### Lite: the built-in set",
        "### Secure: tasks whose original manifest the audit flagged, or with a security label",
        "### Stochastic: Lite tasks each agent ran three times or more",
        "### Choosing one repair",
        "### Newest is not the same as safe",
        "### How the environment tasks stand",
        "### Environment tasks",
        "## Definitions",
        "## Cost and tokens",
    ):
        assert f"\n{heading}\n" in text, heading
    assert "## Agents" not in text  # no bug task: the bug sections say nothing
    assert f"**{LOOSENED_PIN}**" in text
    assert "- lite-pin, alpha: resolved with safe install 0% against 100%" in text
    newest = "| lite-pin | base | requests | 2.19.0 | 2.31.0 | 2.32.3 | 2.19.0: PYSEC-2018-28 |"
    assert newest in text
    assert "| alpha | 2 | 100% (34–100%), 2 of 2 trials |" in text
    assert "- lite-pin: the audit flagged requests: advisories PYSEC-2018-28" in text
    assert "beta is the safest: safe install 100% against 0% for alpha" in text
    assert "| Not counted: controls failed" not in text
    assert "Controls failed: the files as written already install and run (broken)" not in text
    assert "| controls failed: the files as written already install and run (broken) | 1 |" in text
    assert "beta: rejected, safe install n/a, F1 n/a, 1 line, changed src/app.py" in text
    assert "Environment of lite-pin \\| repaired" in text  # a title cannot break a table
    assert "**safe install**" in text and "**consistency@k**" in text


def test_terminal_shows_every_env_section_within_100_columns(report: Report) -> None:
    console = Console(file=io.StringIO(), width=100, record=True)
    console.print(render_terminal(report))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    flat = " ".join(text.split())
    for words in (
        "Environment repairs · 2 admitted tasks",
        "All: every admitted environment task · 2 tasks",
        "Stochastic: Lite tasks each agent ran three times or more · 0 tasks",
        "No task is on this board.",
        "Choosing one repair · 2 picked, 2 approved by the merge gate",
        "Newest is not the same as safe",
        "lite-pin alpha resolved with safe install 0% against 100% for the known repair",
        LOOSENED_PIN,
        "How the environment tasks stand",
    ):
        assert words in flat, words
    (admitted,) = [line for line in text.splitlines() if "what every env figure counts" in line]
    assert admitted.split()[-1] == "2"
    assert "Agents ·" not in text


def test_json_validates_against_the_published_schema(report: Report) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    text = render_json(report)
    jsonschema.validate(json.loads(text), report_json_schema())
    again = Report.model_validate_json(text)
    assert again == report
    assert again.env is not None and again.env.tasks[0].verdict is not None


def test_names_from_records_are_shown_as_text() -> None:
    hostile = "[bold red]x[/]|<b>"
    found = repairs()
    found.repairs["mined-1"][hostile] = repair("mined-1", hostile, safe=1.0, f1=1.0, size=0)
    report = build_report(
        project="envdemo",
        policy="majority",
        taskset=taskset(env_task("mined-1")),
        oracles=OracleSet(),
        attempts=[],
        matrices={},
        verdicts={},
        resolutions=ResolutionSet(),
        contestants=["alpha"],
        examiners=[],
        repairs=found,
    )
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(render_terminal(report))
    assert hostile in console.export_text()
    markdown = render_markdown(report)
    assert "\\[bold red\\]x\\[/\\]\\|\\<b\\>" in markdown
    assert "[bold red]x[/]|<b>" not in markdown
