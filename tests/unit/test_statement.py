"""Statement cleaning, closing references, and the issues-file source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import IssueRef, StatementSource
from bugbout_tui.rules.problem_text import cut_to_problem, is_fix_section
from bugbout_tui.rules.statement import (
    IssueLookup,
    IssuesFile,
    NoIssueSource,
    closing_references,
    issue_source_from_settings,
)

BUG_REPORT = """\
### Describe the bug

`parse_duration("")` raises an `IndexError` instead of a `ValueError`.

### To reproduce

```python
from timekit import parse_duration


def main():
    parse_duration("")


main()
```

```
Traceback (most recent call last):
  File "repro.py", line 8, in <module>
    main()
  File "timekit/parse.py", line 41, in parse_duration
    unit = text[-1]
IndexError: string index out of range
```

### Expected behavior

A `ValueError` saying the input is empty.

### Environment

- timekit 2.3.0
- Python 3.12
"""

PR_TEMPLATE = """\
<!--
Thanks for contributing! Please fill in the sections below.
Link the issue this PR fixes, e.g. "Fixes #1234".
-->

## Description

Empty strings crashed the duration parser.

## Changes

- check for empty input before indexing
- add a regression test

### Proposed fix

Guard the index:

```diff
--- a/timekit/parse.py
+++ b/timekit/parse.py
@@ -40,3 +40,5 @@ def parse_duration(text):
+    if not text:
+        raise ValueError("empty duration")
     unit = text[-1]
```

## Checklist

- [x] Tests added
- [x] Changelog entry

Fixes #88
"""

ONLY_FIX = """\
**Solution:**

Check `len(text)` first.

<!-- reviewers: see the diff -->

```
diff --git a/timekit/parse.py b/timekit/parse.py
--- a/timekit/parse.py
+++ b/timekit/parse.py
@@ -40 +40,2 @@
+    if not text: raise ValueError
```
"""

CASES = [
    pytest.param(
        "parse_duration('') raises IndexError",
        BUG_REPORT,
        "# parse_duration('') raises IndexError\n\n" + BUG_REPORT.rstrip("\n"),
        id="bug report with repro code and traceback is kept whole",
    ),
    pytest.param(
        "Fix crash on empty duration",
        PR_TEMPLATE,
        "# Fix crash on empty duration\n\n"
        "## Description\n\nEmpty strings crashed the duration parser.",
        id="PR template: comment, Changes, Proposed fix with diff, Checklist to the end removed",
    ),
    pytest.param(
        "Crash on empty duration",
        ONLY_FIX,
        "# Crash on empty duration",
        id="only a fix description leaves the title",
    ),
    pytest.param("Crash", None, "# Crash", id="no body"),
    pytest.param("  Crash\n on  empty ", "", "# Crash on empty", id="title whitespace"),
    pytest.param(
        "Bad sum",
        "Sums are off.\r\n\r\n\r\n\r\n\r\nBy one.\r\n",
        "# Bad sum\n\nSums are off.\n\nBy one.",
        id="CRLF and runs of blank lines",
    ),
    pytest.param(
        "Bad sum",
        "Sums are off.\n\n```diff\n- a\n+ b\n```\n\n```patch\nx\n```\nEnd.",
        "# Bad sum\n\nSums are off.\n\nEnd.",
        id="diff and patch fences by info string",
    ),
    pytest.param(
        "Bad sum",
        "Repro:\n\n```python\nx = 1\n\n\n\ny = 2\n# Solution\n```\n",
        "# Bad sum\n\nRepro:\n\n```python\nx = 1\n\n\n\ny = 2\n# Solution\n```",
        id="code fences kept verbatim, a # line inside is not a heading",
    ),
    pytest.param(
        "Bad sum",
        "## Problem\nOff by one.\n## Proposed Solution:\nAdd one.\n### Details\nIn sum().\n"
        "## Versions\n1.0",
        "# Bad sum\n\n## Problem\nOff by one.\n## Versions\n1.0",
        id="a fix section ends at a heading as high, not at its sub-headings",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n\n**Proposed fix**\nAdd one.\n\n**Versions**: 1.0\n\n## More\nText.",
        "# Bad sum\n\nOff by one.\n\n## More\nText.",
        id="bold-line heading section ends at any heading; 'Versions: 1.0' is not a heading",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n\n**Fix**\nAdd one.\n\n**Versions**\n1.0",
        "# Bad sum\n\nOff by one.\n\n**Versions**\n1.0",
        id="bold-line section ends at the next bold-line heading",
    ),
    pytest.param(
        "Render bug",
        "The template\n\n```html\n<!-- keep me -->\n<p>x</p>\n```\nloses <!-- inline --> text.",
        "# Render bug\n\nThe template\n\n```html\n<!-- keep me -->\n<p>x</p>\n```\nloses  text.",
        id="comments inside code are code; inline comments go",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n<!-- unclosed template note\n## Problem\nhidden",
        "# Bad sum\n\nOff by one.",
        id="an unclosed comment hides the rest, as on GitHub",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n\n~~~\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n~~~\n",
        "# Bad sum\n\nOff by one.",
        id="unlabelled fence holding a unified diff",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n\n```\n--- expected\n+++ actual\nsome output\n```\n",
        "# Bad sum\n\nOff by one.\n\n```\n--- expected\n+++ actual\nsome output\n```",
        id="--- and +++ without a hunk header is not a diff",
    ),
    pytest.param(
        "Bad sum",
        "## How to reproduce\nCall sum().\n## How\nBy adding one.\n## Summary\nOff by one.",
        "# Bad sum\n\n## How to reproduce\nCall sum().\n## Summary\nOff by one.",
        id="'How to reproduce' stays, 'How' goes",
    ),
    pytest.param(
        "Bad sum",
        "1. Run:\n\n    ```diff\n    -a\n    +b\n    ```\n2. See:\n\n    ```\n    # Fix\n    ```",
        "# Bad sum\n\n1. Run:\n\n2. See:\n\n    ```\n    # Fix\n    ```",
        id="fences indented in list items",
    ),
    pytest.param(
        "Bad sum",
        "Off by one.\n\n#### ✅ Test plan\nRan pytest.\n",
        "# Bad sum\n\nOff by one.",
        id="emoji before the heading name",
    ),
]


@pytest.mark.parametrize(("title", "body", "expected"), CASES)
def test_clean_statement(title: str, body: str | None, expected: str) -> None:
    assert cut_to_problem(title, body).text == expected


@pytest.mark.parametrize(
    "name",
    [
        "Solution",
        "Proposed solution",
        "Fix",
        "The fix",
        "Proposed fix:",
        "Changes",
        "Changes made",
        "Changes proposed",
        "What changed",
        "Implementation",
        "How",
        "Approach",
        "Patch",
        "Resolution",
        "Summary of changes",
        "PR checklist",
        "Checklist",
        "Testing",
        "Test plan",
        "SOLUTION",
        "**Possible Solution**",
        "Changes in this PR",
        "How has this been tested?",
    ],
)
def test_fix_section_names(name: str) -> None:
    assert is_fix_section(name)


@pytest.mark.parametrize(
    "name",
    [
        "Describe the bug",
        "To reproduce",
        "How to reproduce",
        "Expected behavior",
        "Traceback",
        "Summary",
        "Environment",
        "Fixed-point arithmetic overflows",
        "Description",
    ],
)
def test_problem_section_names(name: str) -> None:
    assert not is_fix_section(name)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("Fixes #12", [12], id="fixes"),
        pytest.param(
            "close #1, closes #2, closed #3, fix #4, fixed #5, resolve #6, resolves #7, "
            "resolved #8",
            [1, 2, 3, 4, 5, 6, 7, 8],
            id="every keyword",
        ),
        pytest.param("FIXES: #9", [9], id="case and colon"),
        pytest.param("Resolves acme/tools#10", [10], id="owner/repo form, same repo"),
        pytest.param("Resolves ACME/Tools#10", [10], id="repo names ignore case"),
        pytest.param("Fixes other/tools#10", [], id="other repository"),
        pytest.param("Closes https://github.com/acme/tools/issues/11", [11], id="issue URL"),
        pytest.param("Closes https://github.com/other/tools/issues/11", [], id="other repo URL"),
        pytest.param("Fixes #3 and fixes #3 again, then closes #2", [3, 2], id="order, once each"),
        pytest.param("Related to #4; see #5", [], id="no keyword"),
        pytest.param("Prefixes #4 and hotfix #5", [], id="keyword inside a word"),
        pytest.param("Fixes #12abc", [], id="not a number"),
        pytest.param("<!-- e.g. Fixes #1234 -->\nFixes #7", [7], id="template comment ignored"),
        pytest.param("```\nfixes #1\n```\ncloses #2", [2], id="code block ignored"),
        pytest.param("Fixes #1, #2", [1], id="one keyword links one issue, as on GitHub"),
    ],
)
def test_closing_references(body: str, expected: list[int]) -> None:
    assert closing_references(body, "acme/tools") == expected


def _issues_file(tmp_path: Path, items: object) -> Path:
    path = tmp_path / "issues.json"
    path.write_text(json.dumps(items, indent=2))
    return path


def test_issues_file_resolves_a_pull_request_to_its_issue(tmp_path: Path) -> None:
    path = _issues_file(
        tmp_path,
        [
            {
                "number": 5,
                "title": "Crash on empty input",
                "body": "It crashes.",
                "state": "closed",
            },
            {
                "number": 9,
                "title": "Guard empty input",
                "body": "## Changes\nA guard.\n\nFixes #5",
                "pull_request": {},
                "labels": [{"name": "bug"}],
            },
            {"number": 10, "title": "Tidy up", "body": "Just tidying.", "pull_request": {}},
        ],
    )
    source = IssuesFile(path)
    assert source.describe() == f"issues file {path}"
    issue = source.fetch(IssueRef(number=5))
    assert (issue.issue, issue.title, issue.statement, issue.missing) == (
        5,
        "Crash on empty input",
        "# Crash on empty input\n\nIt crashes.",
        None,
    )
    assert issue.source == StatementSource(kind="issue", number=5)
    pull = source.fetch(IssueRef(number=9, kind="pull"))
    assert (pull.issue, pull.via_pull, pull.statement) == (
        5,
        9,
        "# Crash on empty input\n\nIt crashes.",
    )
    own = source.fetch(IssueRef(number=10))
    # a pull request's title names the change, so only its body is the statement
    assert (own.issue, own.via_pull, own.statement) == (10, None, "Just tidying.")
    assert own.source == StatementSource(kind="pull", number=10, cut=["the title"])
    assert own.note == "pull request #10 names no issue it closes; its own text is used"
    missing = source.fetch(IssueRef(number=77))
    assert missing.statement is None
    assert missing.missing == f"issue #77 is not in the issues file {path}"


def test_issues_file_pull_request_closing_several_and_unknown_issues(tmp_path: Path) -> None:
    path = _issues_file(
        tmp_path,
        [
            {"number": 1, "title": "First bug", "body": None},
            {"number": 2, "title": "Second bug"},
            {"number": 3, "title": "Both", "body": "Fixes #1\nFixes #2", "pull_request": {}},
            {"number": 4, "title": "Ghost", "body": "Closes #404", "pull_request": {}},
        ],
    )
    source = IssuesFile(path)
    both = source.fetch(IssueRef(number=3))
    assert (both.issue, both.via_pull, both.statement) == (1, 3, "# First bug")
    assert both.note == "pull request #3 closes #1, #2; the first, #1, is used"
    ghost = source.fetch(IssueRef(number=4))
    # its own text is used, and a closing reference is no description of a problem
    assert (ghost.issue, ghost.via_pull, ghost.statement) == (4, None, None)
    assert ghost.no_problem and not ghost.retry
    assert ghost.missing == "the text of pull request #4 describes only the change made"
    assert ghost.note is not None and "#404" in ghost.note


def test_issues_file_knows_its_repository(tmp_path: Path) -> None:
    path = _issues_file(
        tmp_path,
        [{"number": 1, "title": "Bug", "html_url": "https://github.com/acme/tools/issues/1"}],
    )
    source = IssuesFile(path)
    assert source.fetch(IssueRef(number=1, repo="Acme/Tools")).statement == "# Bug"
    other = source.fetch(IssueRef(number=1, repo="other/thing"))
    assert other.missing == (
        f"other/thing#1 is in another repository; the issues file {path} holds acme/tools's issues"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            '[\n  {"number": 1,\n   "title": "x",\n  }\n]',
            "is not valid JSON: line 4, column 3",
            id="syntax error with line",
        ),
        pytest.param('{"number": 1}', "must hold a JSON list of issues, not a dict", id="object"),
        pytest.param('[{"number": 1}]', "item 1: 'title' is missing", id="no title"),
        pytest.param(
            '[{"number": 1, "title": "a"}, {"number": "two", "title": "b"}]',
            "item 2: 'number': Input should be a valid integer",
            id="number not an int",
        ),
        pytest.param('[{"number": 1, "title": "a"}, 3]', "item 2: must be an object", id="scalar"),
        pytest.param(
            '[{"number": 1, "title": "a"}, {"number": 1, "title": "b"}]',
            "lists #1 twice",
            id="duplicate",
        ),
    ],
)
def test_issues_file_rejects_bad_content(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "issues.json"
    path.write_text(content)
    with pytest.raises(UsageError) as raised:
        IssuesFile(path)
    assert str(path) in raised.value.message
    assert message in raised.value.message


def test_issues_file_missing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        IssuesFile(tmp_path / "nope.json")


def test_source_from_settings(tmp_path: Path) -> None:
    path = _issues_file(tmp_path, [{"number": 1, "title": "Bug"}])
    assert isinstance(issue_source_from_settings("acme/tools", path, tmp_path), IssuesFile)
    nothing = issue_source_from_settings(None, None, tmp_path)
    assert isinstance(nothing, NoIssueSource)
    lookup = nothing.fetch(IssueRef(number=3))
    assert lookup.statement is None
    assert lookup.missing == "no GitHub repository known: set [project] github or issues-file"


def test_lookup_has_statement_or_reason() -> None:
    with pytest.raises(ValueError, match="either"):
        IssueLookup(IssueRef(number=1), None, None, None, None)


# --- sentences about the change -------------------------------------------------------------

REPORTER_CASES = [
    pytest.param(
        "I changed my config to use tabs and now parsing fails. The fix is to accept tabs.",
        "I changed my config to use tabs and now parsing fails.",
        ("1 sentence about the change",),
        id="a reporter's own doings stay; a sentence whose subject is the fix goes",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\nFixes #12.",
        "Parsing fails on tabs.",
        ("1 closing reference",),
        id="a closing reference alone is no problem text",
    ),
    pytest.param(
        "Parsing fails on tabs. I fixed it locally by stripping them first.",
        "Parsing fails on tabs.",
        ("1 sentence about the change",),
        id="the reporter says they fixed it",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\nThe change in 2.0 broke it.",
        "Parsing fails on tabs.\n\nThe change in 2.0 broke it.",
        (),
        id="in an issue, 'the change' that caused a regression is problem text",
    ),
]


@pytest.mark.parametrize(("body", "kept", "cut"), REPORTER_CASES)
def test_an_issue_is_cut_to_its_problem(body: str, kept: str, cut: tuple[str, ...]) -> None:
    problem = cut_to_problem("Tabs", body)
    assert problem.text == "# Tabs\n\n" + kept
    assert problem.cut == cut


FIXER_CASES = [
    pytest.param(
        "Parsing fails on tabs. I changed the lexer to accept them. It also strips them.\n\n"
        "More prose about the change.\n\n## Versions\n\n1.0",
        "Parsing fails on tabs.\n\n## Versions\n\n1.0",
        ("3 sentences about the change",),
        id="first person: cut to the paragraph's end, and the section's prose after it",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\nWe now accept them.\n\n- Added a regression test\n"
        "- Route tabs into the lexer",
        "Parsing fails on tabs.",
        ("3 sentences about the change",),
        id="'we now', and list items led by verbs of change",
    ),
    pytest.param(
        "A header naming an array refers to its last element, so I merge its contents there.",
        "",
        ("1 sentence about the change",),
        id="first person with a verb of change in mid-sentence",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\n**Root cause:** the lexer skips them.\n\n"
        "**Fix:** the lexer now keeps them:\n\n```python\nkeep(tab)\n```\n\nwhich parses.\n\n"
        "Fix: strip them.",
        "Parsing fails on tabs.",
        (
            'section "root cause"',
            'section "fix"',
            "1 sentence about the change",
            "1 code block about the change",
        ),
        id="labelled paragraphs, the code they introduce and the sentence going on after it",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\nThis moves the check into the lexer.\n\n"
        "```python\nparse('\\t')\n```",
        "Parsing fails on tabs.\n\n```python\nparse('\\t')\n```",
        ("1 sentence about the change",),
        id="a code block the cut text does not introduce stays",
    ),
    pytest.param(
        "Fixes #459 (picking up a stale attempt).\n\nDeep nesting crashes the parser. "
        "Deeper values now raise `ParseError`. Key parsing is now a loop.",
        "Deep nesting crashes the parser.",
        ("2 sentences about the change", "1 closing reference"),
        id="a sentence led by a closing reference is dropped; behaviour 'now' is the change",
    ),
    pytest.param(
        "Fixes #12 by stripping tabs first.\n\nMore about it.",
        "",
        ("2 sentences about the change",),
        id="a closing reference that says how is about the change",
    ),
    pytest.param(
        "Parsing fails on tabs.\n\nSigned-off-by: A <a@example.com>\nChange-Id: I12",
        "Parsing fails on tabs.",
        (),
        id="git trailers",
    ),
]


@pytest.mark.parametrize(("body", "kept", "cut"), FIXER_CASES)
def test_a_pull_request_is_cut_to_its_problem(body: str, kept: str, cut: tuple[str, ...]) -> None:
    problem = cut_to_problem("Accept tabs in the lexer", body, writer="fixer")
    assert problem.text == kept
    assert problem.cut == ("the title", *cut)
    assert problem.body_left == bool(kept)


def test_an_issue_keeps_its_title_when_nothing_of_its_body_is_left() -> None:
    problem = cut_to_problem("Crash on tabs", "**Solution:** strip them.")
    assert (problem.text, problem.body_left) == ("# Crash on tabs", False)
    assert problem.cut == ('section "solution"',)
