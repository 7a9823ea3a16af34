"""Where a task's problem statement comes from: issues, pull requests, and their links.

A change usually names its pull request; the issue that pull request closes describes the
bug without knowing the answer, so its text is preferred whenever the link can be read.
Whatever text is used is cut to the problem it reports (`problem_text`).

A lookup that fails says whether it may pass on a later run (offline, rate limit, server
error) or is a definite answer (no such issue): only the first kind is asked again.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import IssueRef, StatementSource
from bugbout_tui.infra.github import (
    Credentials,
    GitHubClient,
    GitHubError,
    GitHubIssue,
    is_repo_name,
    load_issues_file,
    repo_of_url,
)
from bugbout_tui.rules.problem_text import cut_to_problem, prose_lines

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
    text = "\n".join(prose_lines(body))
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
class Unread:
    """An issue or pull request that could not be read, and why."""

    reason: str
    retry: bool
    """The failure may pass (network, rate limit, server error), so a later run asks
    again; False for a definite answer such as "no such issue"."""


@dataclass(frozen=True)
class IssueLookup:
    """What a reference led to: a statement cut to the problem, or the reason there is none."""

    ref: IssueRef
    issue: int | None
    """The issue the task is numbered after: the ref's own number, or the issue a PR
    closes."""
    title: str | None
    statement: str | None
    """The problem text (an issue's title and body, or a pull request's body) with every
    description of the fix cut; None when there is none."""
    missing: str | None
    """Why `statement` is None; set exactly when it is."""
    via_pull: int | None = None
    """The pull request the ref named, when its closed issue's text is used instead."""
    note: str | None = None
    """Anything the user should know about the choice (several closed issues, a PR's
    own text used because it closes none)."""
    source: StatementSource | None = None
    """Whose text `statement` is, and what was cut from it."""
    item: GitHubIssue | None = None
    """The issue or pull request whose text was read: its labels and body tell whether
    it reports a bug."""
    retry: bool = False
    """`missing` is a failure that may pass; a later run asks again."""
    no_problem: bool = False
    """`missing` says that the text read describes the change made and nothing of the
    problem: the change is left out rather than raced without a statement."""

    def __post_init__(self) -> None:
        if (self.statement is None) == (self.missing is None):
            raise ValueError("an IssueLookup has either a statement or a missing reason")


class IssueSource(Protocol):
    """Where issue text comes from: the GitHub API, an issues file, or nowhere."""

    def read(self, ref: IssueRef) -> GitHubIssue | Unread:
        """The issue or pull request itself, as stored; never raises for one issue."""
        ...

    def fetch(self, ref: IssueRef) -> IssueLookup:
        """The statement for `ref`; never raises for a problem with one issue."""
        ...

    def describe(self) -> str:
        """One line naming the source, for `bugbout doctor` and the task screen."""
        ...


def _missing(ref: IssueRef, reason: str, *, retry: bool = False) -> IssueLookup:
    return IssueLookup(ref, issue=None, title=None, statement=None, missing=reason, retry=retry)


def _reason(error: GitHubError) -> str:
    return error.message if error.hint is None else f"{error.message}; {error.hint}"


_NO_REPOSITORY = "no GitHub repository known: set [project] github or issues-file"


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

    def _repo_for(self, ref: IssueRef) -> str | Unread:
        repo = ref.repo or self.repo
        if repo is None:
            return Unread(_NO_REPOSITORY, retry=False)
        if not is_repo_name(repo):
            return Unread(f"{repo!r} is not a GitHub repository (owner/name)", retry=False)
        return repo

    def _read(self, repo: str, number: int) -> GitHubIssue | Unread:
        try:
            item = self._get(repo, number)
        except GitHubError as error:
            return Unread(_reason(error), retry=True)
        if item is None:
            return Unread(self._not_found(repo, number), retry=False)
        return item

    def read(self, ref: IssueRef) -> GitHubIssue | Unread:
        repo = self._repo_for(ref)
        if isinstance(repo, Unread):
            return repo
        return self._read(repo, ref.number)

    def fetch(self, ref: IssueRef) -> IssueLookup:
        repo = self._repo_for(ref)
        if isinstance(repo, Unread):
            return _missing(ref, repo.reason, retry=repo.retry)
        named = self._read(repo, ref.number)
        if isinstance(named, Unread):
            return _missing(ref, named.reason, retry=named.retry)
        own = (self.repo or "").casefold()
        foreign = ref.repo if ref.repo and ref.repo.casefold() != own else None
        if not named.is_pull:
            return _found(ref, named, repo=foreign)
        closes = [n for n in closing_references(named.body or "", repo) if n != named.number]
        pull = named.number
        if not closes:
            return _found(
                ref,
                named,
                repo=foreign,
                note=f"pull request #{pull} names no issue it closes; its own text is used",
            )
        target = closes[0]
        note = None
        if len(closes) > 1:
            listed = ", ".join(f"#{n}" for n in closes)
            note = f"pull request #{pull} closes {listed}; the first, #{target}, is used"
        closed = self._read(repo, target)
        if isinstance(closed, Unread) and closed.retry:
            why = f"pull request #{pull} closes #{target}: {closed.reason}"
            return _missing(ref, why, retry=True)
        if isinstance(closed, Unread):
            return _found(
                ref,
                named,
                repo=foreign,
                note=f"pull request #{pull} closes #{target}, but {closed.reason}; "
                "the pull request's own text is used",
            )
        if closed.is_pull:
            return _found(
                ref,
                named,
                repo=foreign,
                note=f"pull request #{pull} closes #{target}, which is a "
                "pull request too; the first pull request's own text is used",
            )
        return _found(ref, closed, repo=foreign, via_pull=pull, note=note)


def _found(
    ref: IssueRef,
    item: GitHubIssue,
    *,
    repo: str | None,
    via_pull: int | None = None,
    note: str | None = None,
) -> IssueLookup:
    """The lookup for `item`'s text, cut to the problem; a pull request whose text holds
    nothing of the problem gives none."""
    problem = cut_to_problem(item.title, item.body, writer="fixer" if item.is_pull else "reporter")
    source = StatementSource(
        kind="pull" if item.is_pull else "issue",
        number=item.number,
        repo=repo,
        cut=list(problem.cut),
    )
    if item.is_pull and not problem.body_left:
        what = (
            "describes only the change made"
            if (item.body or "").strip()
            else "has nothing besides its title, which names the change"
        )
        return IssueLookup(
            ref,
            issue=item.number,
            title=item.title,
            statement=None,
            missing=f"the text of pull request #{item.number} {what}",
            via_pull=via_pull,
            note=note,
            source=source,
            item=item,
            no_problem=True,
        )
    return IssueLookup(
        ref,
        issue=item.number,
        title=item.title,
        statement=problem.text,
        missing=None,
        via_pull=via_pull,
        note=note,
        source=source,
        item=item,
    )


def statement_for(issues: IssueSource, refs: Sequence[IssueRef]) -> IssueLookup:
    """The statement of a change that names `refs`, most trusted first.

    The first reference decides, except when it names an issue that does not exist or
    has no text: then the first of the others that is a pull request gives its own
    text, cut the same way, and the task keeps the number of the issue it names. An
    issue without text keeps its title as the statement when no pull request's text
    has anything of the problem.
    """
    first = issues.fetch(refs[0])
    item = first.item
    if first.statement is None and (first.retry or first.no_problem):
        return first
    if first.statement is not None and (
        item is None or item.is_pull or first.via_pull is not None or (item.body or "").strip()
    ):
        return first
    why = first.missing if first.statement is None else f"issue #{refs[0].number} has no text"
    for ref in refs[1:]:
        pull = issues.read(ref)
        if isinstance(pull, Unread) or not pull.is_pull:
            continue
        own = _found(ref, pull, repo=None)
        if own.statement is None and first.statement is not None:
            return first
        return replace(
            own,
            ref=refs[0],
            issue=refs[0].number,
            note=f"{why}; the text of pull request #{pull.number} is used instead",
        )
    return first


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

    def _repo_for(self, ref: IssueRef) -> str | Unread:
        if self.repo is None:
            return ""  # unknown: plain numbers only, and `#N` is the only closing form
        if ref.repo is not None and ref.repo.casefold() != self.repo.casefold():
            return Unread(
                f"{ref.repo}#{ref.number} is in another repository; "
                f"the issues file {self.path} holds {self.repo}'s issues",
                retry=False,
            )
        return self.repo

    def _get(self, repo: str, number: int) -> GitHubIssue | None:
        return self.issues.get(number)

    def _not_found(self, repo: str, number: int) -> str:
        return f"issue #{number} is not in the issues file {self.path}"


class NoIssueSource:
    """Neither a repository nor an issues file: every task says how to provide one."""

    def read(self, ref: IssueRef) -> GitHubIssue | Unread:
        return Unread(_NO_REPOSITORY, retry=False)

    def fetch(self, ref: IssueRef) -> IssueLookup:
        return _missing(ref, _NO_REPOSITORY)

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
