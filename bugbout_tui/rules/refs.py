"""Issue and pull-request references in a commit message, in the order they should be trusted.

A change can name several numbers; the first one should be the issue it fixed. Closing
phrases (`Fixes #45`) say so outright, so they come first; then the pull request of a
merge commit; then a `(#123)` in the title, which squash merges add and which is usually
the pull request; then any other mention, title before body.

The patterns avoid what only looks like a reference: `#123abc`, colour codes (`#fff`),
`C#`, markdown headings (`# 1. Setup`), HTML entities (`&#123;`), anchors (`page#L12`,
`file.md#3`) and version-like numbers (`#1.2`).
"""

from __future__ import annotations

import re

from bugbout_tui.core.models import IssueRef

_NUMBER = r"[1-9][0-9]{0,8}"
_END = r"(?!\w)(?!\.[0-9])"

_REFERENCE = rf"""
(?:
    (?<![\w/])https?://[^\s/]+/(?P<url_repo>[\w.-]+/[\w.-]+)/(?P<url_kind>issues|pulls?)/(?P<url_number>{_NUMBER})
  | (?<![\w/.-])(?P<cross_repo>[A-Za-z0-9][\w.-]*/[\w.-]+)\#(?P<cross_number>{_NUMBER})
  | (?<![\w-])gh-(?P<gh_number>{_NUMBER})
  | (?<![\w-])(?:pr|pull\s+request)\s*\#(?P<pull_number>{_NUMBER})
  | (?<![\w-])issues?\s*\#?\s*(?P<issue_number>{_NUMBER})
  | (?<![\w&\#/])\#(?P<bare_number>{_NUMBER})
){_END}
"""

_FLAGS = re.IGNORECASE | re.VERBOSE
_REFERENCES = re.compile(_REFERENCE, _FLAGS)
_ANONYMOUS_REFERENCE = re.sub(r"\(\?P<\w+>", "(?:", _REFERENCE)
_KEYWORD = r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)"

CLOSING_PHRASE = re.compile(
    rf"""
    (?<![\w-])(?P<keyword>{_KEYWORD})\s*:?\s*{_ANONYMOUS_REFERENCE}
    (?:\s*(?:,|&|\band\b)?\s*(?:{_KEYWORD}\s*:?\s*)?{_ANONYMOUS_REFERENCE})*
    """,
    _FLAGS,
)
"""`Fixes #45`, `closed: #1, #2`, `resolves owner/repo#3`, `fixed issue 601`: GitHub's
closing keywords, and the looser forms commit messages use."""

_SQUASH_SUFFIX = re.compile(rf"\((?:\#|gh-)(?P<number>{_NUMBER})\)", re.IGNORECASE)


def _found(match: re.Match[str]) -> IssueRef:
    groups = {name: value for name, value in match.groupdict().items() if value is not None}
    if "url_number" in groups:
        kind = "issue" if groups["url_kind"].lower() == "issues" else "pull"
        return IssueRef(number=int(groups["url_number"]), repo=groups["url_repo"], kind=kind)
    if "cross_number" in groups:
        return IssueRef(number=int(groups["cross_number"]), repo=groups["cross_repo"])
    if "pull_number" in groups:
        return IssueRef(number=int(groups["pull_number"]), kind="pull")
    (number,) = groups.values()
    return IssueRef(number=int(number))


def references_in(text: str) -> list[IssueRef]:
    """Every reference in `text`, in reading order, repeats included."""
    return [_found(match) for match in _REFERENCES.finditer(text)]


def _deduplicated(refs: list[IssueRef]) -> tuple[IssueRef, ...]:
    """First mention wins its place; a later mention may still tell its kind."""
    kept: dict[tuple[str | None, int], IssueRef] = {}
    for ref in refs:
        key = (ref.repo.lower() if ref.repo else None, ref.number)
        first = kept.get(key)
        if first is None:
            kept[key] = ref
        elif first.kind == "unknown" and ref.kind != "unknown":
            kept[key] = first.model_copy(update={"kind": ref.kind})
    return tuple(kept.values())


def find_references(title: str, body: str, *, pull: int | None = None) -> tuple[IssueRef, ...]:
    """The change's references, most trustworthy first (see the module docstring).

    `pull` is the pull request a merge commit's subject names.
    """
    ordered: list[IssueRef] = []
    for text in (title, body):
        for phrase in CLOSING_PHRASE.finditer(text):
            ordered += references_in(phrase.group(0))
    if pull is not None:
        ordered.append(IssueRef(number=pull, kind="pull"))
    ordered += [IssueRef(number=int(m["number"])) for m in _SQUASH_SUFFIX.finditer(title)]
    ordered += references_in(title)
    ordered += references_in(body)
    return _deduplicated(ordered)
