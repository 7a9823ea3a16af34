"""A task's problem statement: the issue's text, without the answer in it.

Agents must be told the problem the maintainers faced, not how it was solved. Issue and
pull request bodies often carry the solution too: a "Proposed fix" section, a pasted
diff, a PR template's checklist. Those parts are cut here. Reproducer code and
tracebacks stay, because they describe the problem.

A change usually names its pull request; the issue that pull request closes describes the
bug without knowing the answer, so its text is preferred whenever the link can be read.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import IssueRef
from bugbout_tui.infra.github import (
    Credentials,
    GitHubClient,
    GitHubError,
    GitHubIssue,
    is_repo_name,
    load_issues_file,
    repo_of_url,
)

# ---------------------------------------------------------------- markdown blocks

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
"""Any indentation: fences inside list items are indented, and their code is still code."""
_ATX_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<name>.*?))?(?:[ \t]+#+)?[ \t]*$")
_BOLD_HEADING = re.compile(r"^ {0,3}(?P<mark>\*\*|__)(?P<name>.+?)(?P=mark)[ \t]*:?[ \t]*$")
_BOLD_LEVEL = 7
"""A whole-line bold "heading" ranks below every real heading: any heading ends it."""


@dataclass
class _Fence:
    """A fenced code block, kept verbatim (blank lines and `#` lines are code there)."""

    marker: str
    info: str
    lines: list[str] = field(default_factory=list)
    """Every line, the fences included."""

    def closed_by(self, line: str) -> bool:
        stripped = line.strip()
        return len(stripped) >= len(self.marker) and set(stripped) == {self.marker[0]}

    @property
    def content(self) -> list[str]:
        return self.lines[1:-1] if len(self.lines) > 1 else []


_Block = str | _Fence


def _without_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The parts of `line` outside HTML comments, and whether a comment is still open."""
    kept: list[str] = []
    rest = line
    while True:
        if in_comment:
            end = rest.find("-->")
            if end < 0:
                return "".join(kept), True
            rest = rest[end + 3 :]
            in_comment = False
        start = rest.find("<!--")
        if start < 0:
            kept.append(rest)
            return "".join(kept), False
        kept.append(rest[:start])
        rest = rest[start + 4 :]
        in_comment = True


def _blocks(text: str) -> list[_Block]:
    """Lines and fenced blocks, with HTML comments gone from the lines.

    Comments are removed outside code only: reproducer code may well contain `<!--`.
    A comment that was a whole line leaves nothing behind, not even a blank line.
    An unclosed comment hides the rest of the text, as it does when GitHub renders it.
    """
    blocks: list[_Block] = []
    fence: _Fence | None = None
    in_comment = False
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if fence is not None:
            fence.lines.append(raw)
            if len(fence.lines) > 1 and fence.closed_by(raw):
                blocks.append(fence)
                fence = None
            continue
        line, in_comment_after = _without_comments(raw, in_comment)
        touched = in_comment or "<!--" in raw
        in_comment = in_comment_after
        if touched and not line.strip():
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = _Fence(opening["fence"], opening["info"].strip(), [line])
            continue
        blocks.append(line)
    if fence is not None:
        blocks.append(fence)
    return blocks


# ---------------------------------------------------------------- what counts as "the fix"

_FIX_SECTION = re.compile(
    r"""
    (?:the\ |my\ |our\ |a\ |proposed\ |possible\ |suggested\ |potential\ )?
        (?:solution|fix|fixes|bug\ ?fix|patch|resolution|approach|implementation)s?
    | (?:proposed\ |suggested\ |breaking\ |code\ )?changes?
        (?:\ made|\ proposed|\ introduced|\ included|\ in\ this\ (?:pr|pull\ request))?
    | what\ (?:changed|was\ changed|has\ changed|i\ changed|i\ did
        |this\ (?:pr|pull\ request)\ does|does\ this\ (?:pr|pull\ request)\ do)
    | how(?:\ (?:it\ was\ fixed|this\ was\ fixed|was\ this\ fixed|to\ fix(?:\ it)?
        |it\ works|this\ works|does\ this\ fix\ it|this\ fixes\ it))?
    | (?:summary|description|list|overview)\ of\ (?:the\ )?changes
    | (?:fix|change|pr|pull\ request)\ (?:description|summary)
    | (?:pr\ |pull\ request\ )?checklist
    | testing(?:\ done|\ performed|\ instructions)?
    | tests?\ (?:plan|added|performed|done)
    | how\ (?:has\ this\ been|was\ this|is\ this|was\ it|to)\ tested?
    | changelog(?:\ entry)? | release\ notes? | news\ entry
    """,
    re.VERBOSE,
)
_DIFF_INFO = frozenset({"diff", "patch", "udiff"})
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _heading(line: str) -> tuple[int, str] | None:
    """The level and the plain name of a heading line, or None for other lines."""
    atx = _ATX_HEADING.match(line)
    if atx is not None:
        return len(atx["marks"]), atx["name"] or ""
    bold = _BOLD_HEADING.match(line)
    if bold is not None and bold["mark"] not in bold["name"]:
        return _BOLD_LEVEL, bold["name"]
    return None


def _plain(name: str) -> str:
    """`**✅ Proposed Fix:**` → `proposed fix`: the words, lower case, nothing around them."""
    words = re.sub(r"[*_`]", "", name).casefold()
    words = re.sub(r"^[^\w]+|[^\w]+$", "", words)
    return re.sub(r"\s+", " ", words)


def is_fix_section(name: str) -> bool:
    """Whether a heading names a section in which the author describes a fix."""
    return _FIX_SECTION.fullmatch(_plain(name)) is not None


def _is_diff(fence: _Fence) -> bool:
    info = fence.info.split()
    if info and info[0].casefold() in _DIFF_INFO:
        return True
    content = fence.content
    if any(line.startswith("diff --git ") for line in content):
        return True
    return (
        any(line.startswith("--- ") for line in content)
        and any(line.startswith("+++ ") for line in content)
        and any(_HUNK.match(line) for line in content)
    )


def _without_fix_sections(blocks: list[_Block]) -> list[_Block]:
    kept: list[_Block] = []
    skipping: int | None = None
    """The level of the fix section being skipped; it ends at a heading as high or higher."""
    for block in blocks:
        if isinstance(block, str):
            heading = _heading(block)
            if heading is not None:
                level, name = heading
                if skipping is not None and level > skipping:
                    continue
                skipping = level if is_fix_section(name) else None
        if skipping is not None:
            continue
        if isinstance(block, _Fence) and _is_diff(block):
            continue
        kept.append(block)
    return kept


def _render(blocks: list[_Block]) -> str:
    """Markdown again, with runs of blank lines outside code collapsed to one."""
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, _Fence):
            lines.extend(block.lines)
        elif block.strip():
            lines.append(block)
        elif lines and lines[-1] != "":
            lines.append("")
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def clean_statement(title: str, body: str | None) -> str:
    """The problem as a markdown text: the title as a heading, then the cleaned body.

    Removed: HTML comments (templates' instructions), sections whose heading names a
    fix (Solution, Changes, Implementation, Checklist, Test plan, ...) up to the next
    heading as high, and fenced blocks that hold a diff. Kept: everything else,
    tracebacks and reproducer code above all.
    """
    heading = "# " + " ".join(title.split())
    cleaned = _render(_without_fix_sections(_blocks(body or "")))
    if not cleaned:
        return heading
    return f"{heading}\n\n{cleaned}"


_CLOSING = re.compile(
    r"""
    (?<![\w-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)
    (?::[ \t]*|[ \t]+)
    (?:
        \#(?P<number>\d+)
      | (?P<repo>[\w.-]+/[\w.-]+)\#(?P<repo_number>\d+)
      | https?://[^/\s]+/(?P<url_repo>[\w.-]+/[\w.-]+)/issues/(?P<url_number>\d+)
    )
    (?![\w/-])
    """,
    re.VERBOSE | re.IGNORECASE,
)


def closing_references(body: str, repo: str) -> list[int]:
    """Issues of `repo` that a pull request body says it closes, in order, once each.

    Follows GitHub's closing keywords (close, fix, resolve and their -s/-d forms) before
    `#N`, `owner/name#N` or an issue URL. References to other repositories are dropped,
    and so are examples in HTML comments and code blocks, which templates are full of.
    """
    text = "\n".join(block for block in _blocks(body) if isinstance(block, str))
    wanted = repo.casefold()
    numbers: list[int] = []
    for match in _CLOSING.finditer(text):
        if match["number"] is not None:
            number = int(match["number"])
        elif match["repo"] is not None:
            if match["repo"].casefold() != wanted:
                continue
            number = int(match["repo_number"])
        else:
            if match["url_repo"].casefold() != wanted:
                continue
            number = int(match["url_number"])
        if number not in numbers:
            numbers.append(number)
    return numbers


# ---------------------------------------------------------------- issue sources


@dataclass(frozen=True)
class IssueLookup:
    """What a reference led to: a cleaned statement, or the reason there is none."""

    ref: IssueRef
    issue: int | None
    """The issue whose text is used: the ref's own number, or the issue a PR closes."""
    title: str | None
    statement: str | None
    """The cleaned problem text (title and body); None when it could not be read."""
    missing: str | None
    """Why `statement` is None; set exactly when it is."""
    via_pull: int | None = None
    """The pull request the ref named, when its closed issue's text is used instead."""
    note: str | None = None
    """Anything the user should know about the choice (several closed issues, a PR's
    own text used because it closes none)."""

    def __post_init__(self) -> None:
        if (self.statement is None) == (self.missing is None):
            raise ValueError("an IssueLookup has either a statement or a missing reason")


class IssueSource(Protocol):
    """Where issue text comes from: the GitHub API, an issues file, or nowhere."""

    def fetch(self, ref: IssueRef) -> IssueLookup:
        """The statement for `ref`; never raises for a problem with one issue."""
        ...

    def describe(self) -> str:
        """One line naming the source, for `bugbout doctor` and the task screen."""
        ...


def _missing(ref: IssueRef, reason: str) -> IssueLookup:
    return IssueLookup(ref, issue=None, title=None, statement=None, missing=reason)


def _reason(error: GitHubError) -> str:
    return error.message if error.hint is None else f"{error.message}; {error.hint}"


class _Resolver(ABC):
    """Turns a reference into a statement, following a pull request to its issue.

    Only the first issue a pull request closes is followed: one task has one problem,
    and authors name the main one first; the lookup's note says when there were more. A closed
    issue that does not exist, or is itself a pull request, falls back to the pull
    request's own text; a closed issue that cannot be read right now (rate limit,
    offline) leaves the task without a statement, so a later run can still fetch it.
    """

    repo: str | None

    @abstractmethod
    def _get(self, repo: str, number: int) -> GitHubIssue | None:
        """The issue, None when it does not exist; raises `GitHubError` when unreadable."""

    @abstractmethod
    def _not_found(self, repo: str, number: int) -> str:
        """The reason shown when `repo#number` does not exist."""

    def _repo_for(self, ref: IssueRef) -> str | IssueLookup:
        repo = ref.repo or self.repo
        if repo is None:
            return _missing(ref, "no GitHub repository known: set [project] github or issues-file")
        if not is_repo_name(repo):
            return _missing(ref, f"{repo!r} is not a GitHub repository (owner/name)")
        return repo

    def fetch(self, ref: IssueRef) -> IssueLookup:
        repo = self._repo_for(ref)
        if isinstance(repo, IssueLookup):
            return repo
        try:
            named = self._get(repo, ref.number)
        except GitHubError as error:
            return _missing(ref, _reason(error))
        if named is None:
            return _missing(ref, self._not_found(repo, ref.number))
        if not named.is_pull:
            return _found(ref, named)
        closes = [n for n in closing_references(named.body or "", repo) if n != named.number]
        pull = named.number
        if not closes:
            return _found(
                ref,
                named,
                note=f"pull request #{pull} names no issue it closes; its own text is used",
            )
        target = closes[0]
        note = None
        if len(closes) > 1:
            listed = ", ".join(f"#{n}" for n in closes)
            note = f"pull request #{pull} closes {listed}; the first, #{target}, is used"
        try:
            closed = self._get(repo, target)
        except GitHubError as error:
            return _missing(ref, f"pull request #{pull} closes #{target}: {_reason(error)}")
        if closed is None:
            why = self._not_found(repo, target)
            return _found(
                ref,
                named,
                note=f"pull request #{pull} closes #{target}, but {why}; "
                "the pull request's own text is used",
            )
        if closed.is_pull:
            return _found(
                ref,
                named,
                note=f"pull request #{pull} closes #{target}, which is a "
                "pull request too; the first pull request's own text is used",
            )
        return _found(ref, closed, via_pull=pull, note=note)


def _found(
    ref: IssueRef, item: GitHubIssue, *, via_pull: int | None = None, note: str | None = None
) -> IssueLookup:
    return IssueLookup(
        ref,
        issue=item.number,
        title=item.title,
        statement=clean_statement(item.title, item.body),
        missing=None,
        via_pull=via_pull,
        note=note,
    )


class GitHubIssues(_Resolver):
    """Issue text from the GitHub REST API (or GitHub Enterprise), cached on disk.

    A reference to another repository (`other/repo#12`) is read from that repository:
    the change's author pointed there because that is where the problem is described.
    """

    def __init__(
        self,
        repo: str,
        *,
        api_url: str | None = None,
        token: str | None = None,
        cache_dir: Path | None = None,
        timeout: float = 15.0,
    ) -> None:
        if not is_repo_name(repo):
            raise UsageError(
                f"GitHub repository {repo!r} is not owner/name",
                hint='set [project] github to e.g. "pallets/flask"',
            )
        self.repo = repo
        credentials = Credentials(token, "given") if token is not None else None
        self.client = GitHubClient(api_url, credentials, cache_dir=cache_dir, timeout=timeout)

    def describe(self) -> str:
        return self.client.describe()

    def _get(self, repo: str, number: int) -> GitHubIssue | None:
        return self.client.issue(repo, number)

    def _not_found(self, repo: str, number: int) -> str:
        reason = f"issue #{number} not found in {repo}"
        if self.client.credentials.token is None:
            reason += " (a private repository needs GITHUB_TOKEN)"
        return reason


class IssuesFile(_Resolver):
    """Issue text from a JSON file of GitHub-shaped issues, for offline or non-GitHub work.

    The file holds one repository's issues. A reference that names a different
    repository is reported missing rather than matched by number, which could pick up
    an unrelated issue.
    """

    def __init__(self, path: Path, repo: str | None = None) -> None:
        self.path = path
        issues = load_issues_file(path)
        self.issues = {issue.number: issue for issue in issues}
        in_urls = next((r for r in (repo_of_url(i.html_url) for i in issues) if r), None)
        self.repo = repo or in_urls

    def describe(self) -> str:
        return f"issues file {self.path}"

    def _repo_for(self, ref: IssueRef) -> str | IssueLookup:
        if self.repo is None:
            return ""  # unknown: plain numbers only, and `#N` is the only closing form
        if ref.repo is not None and ref.repo.casefold() != self.repo.casefold():
            return _missing(
                ref,
                f"{ref.repo}#{ref.number} is in another repository; "
                f"the issues file {self.path} holds {self.repo}'s issues",
            )
        return self.repo

    def _get(self, repo: str, number: int) -> GitHubIssue | None:
        return self.issues.get(number)

    def _not_found(self, repo: str, number: int) -> str:
        return f"issue #{number} is not in the issues file {self.path}"


class NoIssueSource:
    """Neither a repository nor an issues file: every task says how to provide one."""

    def fetch(self, ref: IssueRef) -> IssueLookup:
        return _missing(ref, "no GitHub repository known: set [project] github or issues-file")

    def describe(self) -> str:
        return "no issue source (set [project] github or issues-file)"


def issue_source_from_settings(
    github_repo: str | None,
    issues_file: Path | None,
    cache_dir: Path,
    *,
    api_url: str | None = None,
) -> IssueSource:
    """The issue source a project's settings ask for; an issues file wins over the API.

    Raises:
        UsageError: the issues file is unreadable or malformed, or the API URL is bad.
    """
    if issues_file is not None:
        return IssuesFile(issues_file, github_repo)
    if github_repo is not None:
        return GitHubIssues(github_repo, api_url=api_url, cache_dir=cache_dir)
    return NoIssueSource()
