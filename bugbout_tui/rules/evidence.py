"""Whether an issue reports a bug: the evidence that admits a change its title does not.

A title such as "Add pre-commit hook support (fixes #537)" holds a fix word only inside
its closing phrase, which says which issue the change closes, not what the change is.
The issue decides. Evidence is read in this order, and the first that speaks decides:

1. **labels**, the maintainers' own classification: a bug label (`bug`, `type: bug`,
   `kind/bug`, `defect`, `regression`, `crash`, ...) admits the change; a label for
   anything else (`enhancement`, `feature`, `question`, `documentation`, `not a bug`,
   ...) leaves it out;
2. **the template** the issue was written on: a bug report's ("Describe the bug",
   "Steps to reproduce", "Actual behavior", Google Code's "What steps will reproduce the
   problem?", ...) admits it, a feature request's ("Is your feature request related to a
   problem?", "Describe the solution you'd like") leaves it out. Template lines count
   inside code blocks too, where issues moved from another tracker keep their text;
3. **a traceback** or an exception line (`ValueError: ...`) in its text admits it;
4. **its title reporting a failure** ("Query splitting failure case", "Incorrect
   splitting of stored procedure", "Split not working with IF keywords") admits it: the
   reporter's title names the symptom.

An issue with none of these is not taken for a bug: guessing would admit features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bugbout_tui.infra.github import GitHubIssue, Label
from bugbout_tui.rules.problem_text import text_lines

_BUG_WORDS = frozenset({"bug", "bugs", "defect", "defects", "regression", "crash", "bugfix"})
_OTHER_WORDS = frozenset(
    {
        "enhancement",
        "enhancements",
        "feature",
        "features",
        "improvement",
        "proposal",
        "idea",
        "question",
        "documentation",
        "docs",
        "refactor",
        "refactoring",
    }
)
_NEGATIONS = frozenset({"not", "no", "non"})

_MARKUP = r"[ \t>#*_]*(?:<[a-z]+>[ \t]*)*"
"""What may stand before a template's line: quote, heading and emphasis marks, HTML tags."""
_BUG_TEMPLATE = re.compile(
    _MARKUP
    + r"""(?:describe\ the\ bug|bug\ (?:description|report)|(?:steps\ )?to\ reproduce
    |how\ to\ reproduce|reproduction\ steps|minimal\ reproduc\w*
    |(?:actual|observed|current)\ (?:behaviou?r|result|output)|what\ happened
    |what\ steps\ will\ reproduce\ the\ problem)\b""",
    re.IGNORECASE | re.VERBOSE,
)
_FEATURE_TEMPLATE = re.compile(
    _MARKUP
    + r"""(?:is\ your\ feature\ request\ related\ to\ a\ problem
    |describe\ the\ solution\ you['’]?d\ like|describe\ alternatives\ you['’]?ve\ considered
    |feature\ (?:request|description))\b""",
    re.IGNORECASE | re.VERBOSE,
)
_FAILURE_TITLE = re.compile(
    r"""(?<![\w-])(?:bugs?|crash(?:es|ed|ing)?|broken|incorrect(?:ly)?|wrong(?:ly)?
    |regressions?|fail(?:s|ed|ing|ure|ures)?|(?:does\ not|doesn['’]?t|do\ not|don['’]?t
    |is\ not|isn['’]?t|not)\ work(?:ing)?|misbehav\w*)(?!\w)""",
    re.IGNORECASE | re.VERBOSE,
)
"""A word of failure in an issue's title, as its reporter saw the symptom."""
_TRACEBACK = re.compile(r"^[ \t>]*Traceback \(most recent call last\):", re.MULTILINE)
_EXCEPTION_LINE = re.compile(
    r"^[ \t>]*(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)(?::[ \t]|[ \t]*$)", re.MULTILINE
)


@dataclass(frozen=True)
class BugEvidence:
    """The verdict on one issue, with the evidence behind it in words."""

    bug: bool
    why: str
    """What the issue shows, as a predicate: `is labelled 'type: bug'`, `is written on a
    feature-request template`, `shows a traceback`."""


def _name(label: Label | str) -> str:
    return label if isinstance(label, str) else label.name


def _words(name: str) -> set[str]:
    return set(re.findall(r"[a-z]+", name.casefold()))


def label_kind(name: str) -> bool | None:
    """True for a bug label, False for a label of anything else that says what an
    issue is, None for a label that says neither (`help wanted`, `good first issue`)."""
    words = _words(name)
    if words & _NEGATIONS and words & _BUG_WORDS:
        return False
    if words & _BUG_WORDS:
        return True
    if words & _OTHER_WORDS:
        return False
    return None


def bug_evidence(issue: GitHubIssue) -> BugEvidence:
    """Whether `issue` reports a bug, by the first evidence that speaks (module docstring)."""
    names = [_name(label) for label in issue.labels]
    kinds = [(name, label_kind(name)) for name in names]
    bug_labels = [name for name, kind in kinds if kind is True]
    if bug_labels:
        return BugEvidence(True, f"is labelled {bug_labels[0]!r}")
    other_labels = [name for name, kind in kinds if kind is False]
    if other_labels:
        return BugEvidence(False, f"is labelled {other_labels[0]!r}")
    body = issue.body or ""
    lines = text_lines(body)
    for line in lines:
        if match := _BUG_TEMPLATE.match(line):
            marker = re.sub(r"<[a-z]+>", "", match.group(0)).strip(" \t>#*_")
            return BugEvidence(True, f"is written on a bug-report template ({marker!r})")
    for line in lines:
        if _FEATURE_TEMPLATE.match(line):
            return BugEvidence(False, "is written on a feature-request template")
    if _TRACEBACK.search(body) or _EXCEPTION_LINE.search(body):
        return BugEvidence(True, "shows a traceback")
    if match := _FAILURE_TITLE.search(issue.title):
        return BugEvidence(True, f"has a title that reports a failure ({match.group(0)!r})")
    return BugEvidence(
        False, "shows no bug label, bug-report template, traceback or failure in its title"
    )
