"""How a task's environment, gold control and quarantined tests are worded, for
`bugbout tasks ID` and the Tasks screen alike."""

from __future__ import annotations

from datetime import UTC, datetime

from bugbout_tui.core.models import GOLD, Oracle, Resolution, TaskEnvironment
from bugbout_tui.rules.task_facts import control_words, environment_rows, holds_rows

PINS = [
    "attrs==19.3.0",
    "iniconfig==1.1.1",
    "pluggy==0.13.1",
    "py==1.9.0",
    "pytest==5.4.3",
    "six==1.15.0",
    "tornado==6.0.4",
    "typing-extensions==3.7.4.3",
]


def test_what_an_environment_holds_short_names_the_projects_pins_then_the_runner() -> None:
    assert holds_rows(PINS, shown=2) == [
        ("holds", "six==1.15.0, tornado==6.0.4 and 1 more"),
        ("test runner", "pytest==5.4.3 and 4 more"),
    ]
    assert holds_rows(["pytest==8.0.2", "pluggy==1.4.0"]) == [
        ("holds", "nothing but the test runner"),
        ("test runner", "pytest==8.0.2 and 1 more"),
    ]


def test_brief_rows_shorten_only_what_the_environment_holds() -> None:
    record = TaskEnvironment(
        rung="relaxed",
        key="dated-py3.8.18-0123456789ab",
        python="3.8.18",
        date=datetime(2020, 6, 1, tzinfo=UTC),
        packages=PINS,
        relaxed=["tornado"],
        unenforced=["git+https://example.org/x.git (a VCS requirement)"],
    )
    oracle = Oracle(scored=True, environment=record)
    full, brief = environment_rows(oracle), environment_rows(oracle, brief=True)
    assert ("holds", ", ".join(PINS)) in full
    assert [row for row in brief if row[0] in ("holds", "test runner")] == holds_rows(PINS)
    same = [row for row in full if row[0] != "holds"]
    assert [row for row in brief if row[0] not in ("holds", "test runner")] == same
    assert ("not dated", "git+https://example.org/x.git (a VCS requirement)") in brief
    assert brief[1] == (
        "rung",
        "relaxed: dated, but the date lifted for the packages that blocked it",
    )


def test_a_gold_control_that_broke_a_test_says_the_grader_is_unreliable_and_why() -> None:
    control = Resolution(
        task="t-1",
        contestant=GOLD,
        status="fixed-but-broke",
        fail_to_pass={"tests/t.py::test_new": "passed"},
        broken=["tests/t.py::test_old"],
    )
    assert control_words(control) == (
        "fixed-but-broke; grader unreliable: the fix does not pass its own tests here "
        "(breaks tests/t.py::test_old)"
    )
    resolved = control.model_copy(update={"status": "resolved", "broken": []})
    assert control_words(resolved) == "resolved: the fix passes its own tests here"
