"""Whether a linked issue reports a bug: labels, then the template, a traceback, the title."""

from __future__ import annotations

import pytest

from bugbout_tui.infra.github import GitHubIssue
from bugbout_tui.rules.evidence import bug_evidence, label_kind

NO_EVIDENCE = "shows no bug label, bug-report template, traceback or failure in its title"


def issue(
    body: str | None = None, labels: tuple[str, ...] = (), title: str = "Chained totals"
) -> GitHubIssue:
    return GitHubIssue(number=7, title=title, body=body, labels=list(labels))


@pytest.mark.parametrize(
    "name",
    ["bug", "Bug", "type: bug", "kind/bug", "🐛 Bug", "Type-Defect", "defect", "regression",
     "confirmed bug", "crash"],
)  # fmt: skip
def test_bug_labels(name: str) -> None:
    assert label_kind(name) is True


@pytest.mark.parametrize(
    "name",
    ["enhancement", "feature", "Feature Request", "type: feature", "kind/feature", "question",
     "documentation", "not a bug", "not-bug", "invalid: not a bug"],
)  # fmt: skip
def test_labels_for_anything_else(name: str) -> None:
    assert label_kind(name) is False


@pytest.mark.parametrize("name", ["help wanted", "good first issue", "needs triage", "debug"])
def test_labels_that_say_neither(name: str) -> None:
    assert label_kind(name) is None


@pytest.mark.parametrize(
    ("found", "bug", "why"),
    [
        pytest.param(issue("x", ("good first issue", "type: bug")), True,
                     "is labelled 'type: bug'", id="bug label"),
        pytest.param(issue("Traceback (most recent call last):", ("enhancement",)), False,
                     "is labelled 'enhancement'", id="a label wins over the text"),
        pytest.param(issue("x", ("enhancement", "bug")), True, "is labelled 'bug'",
                     id="a bug label wins over another label"),
        pytest.param(issue("**Describe the bug**\nIt breaks."), True,
                     "is written on a bug-report template ('Describe the bug')",
                     id="GitHub's bug template"),
        pytest.param(issue("### Steps to reproduce\n1. parse"), True,
                     "is written on a bug-report template ('Steps to reproduce')",
                     id="steps to reproduce"),
        pytest.param(issue("# Original description\n\n```\n<b>What steps will reproduce the "
                           "problem?</b>\n<b>1.</b>\n```"), True,
                     "is written on a bug-report template ('What steps will reproduce the "
                     "problem')", id="Google Code's template, kept in a code block"),
        pytest.param(issue("**Is your feature request related to a problem? Please describe.**"
                           "\nNo."), False, "is written on a feature-request template",
                     id="feature template"),
        pytest.param(issue("It fails:\n\n```\nTraceback (most recent call last):\n  File "
                           '"x.py", line 1\nKeyError: 1\n```'), True, "shows a traceback",
                     id="traceback"),
        pytest.param(issue("Parsing gives\n\n    tomlkit.exceptions.ParseError: Key already"
                           " exists"), True, "shows a traceback", id="exception line"),
        pytest.param(issue("It raises IndexError sometimes."), False,
                     NO_EVIDENCE,
                     id="an exception named in prose is no traceback"),
        pytest.param(issue("Similar to #193, now with IF.", title="Query splitting failure case"),
                     True, "has a title that reports a failure ('failure')",
                     id="a failure in the reporter's title"),
        pytest.param(issue(None, title="Split not working with IF keywords"), True,
                     "has a title that reports a failure ('not working')",
                     id="not working"),
        pytest.param(issue("Can we add hooks?", ("question",), title="Hooks fail to install"),
                     False, "is labelled 'question'", id="a label wins over the title"),
        pytest.param(issue(None, title="Better error messages"), False,
                     NO_EVIDENCE, id="'error' alone is no failure: better messages are a feature"),
        pytest.param(issue(None), False,
                     NO_EVIDENCE, id="no text"),
        pytest.param(issue("<!-- Describe the bug -->\nPlease add a flag."), False,
                     NO_EVIDENCE,
                     id="template instructions in a comment do not count"),
    ],
)  # fmt: skip
def test_bug_evidence(found: GitHubIssue, bug: bool, why: str) -> None:
    evidence = bug_evidence(found)
    assert (evidence.bug, evidence.why) == (bug, why)
