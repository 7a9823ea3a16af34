"""Turning mined candidates into tasks: one per issue, with the text the agents will see.

Mining alone cannot decide duplicates or the limit: a `(#N)` in a squash title is
usually a pull request, and only the issue source knows which issue it closes. So the
candidates are resolved newest first, and resolution stops asking once the limit is
reached; everything older is left out as `over-limit` without spending API calls.

The issue source also settles what mining left open (`Candidate.confirm`): whether the
issue a title's closing phrase names reports a bug, and what a title-less merge's pull
request is called. And it can leave a change out for good when the text it reads for
it describes only the change made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from bugbout_tui.core.models import Exclusion, IssueRef, Reason, Task, TaskSet
from bugbout_tui.rules.evidence import bug_evidence
from bugbout_tui.rules.fixwords import closing_reference, is_fix_title
from bugbout_tui.rules.mine import Candidate, LinkedIssue, MiningResult, PullTitle
from bugbout_tui.rules.statement import IssueSource, Unread, statement_for


def _own(ref: IssueRef, own_repo: str | None) -> bool:
    return ref.repo is None or own_repo is None or ref.repo.lower() == own_repo.lower()


def primary_reference(candidate: Candidate, own_repo: str | None) -> IssueRef:
    """The reference that names this project's issue, preferring the miner's order."""
    for ref in candidate.refs:
        if _own(ref, own_repo):
            return ref
    return candidate.refs[0]


def _left_out(
    candidate: Candidate, reason: Reason, detail: str | None = None, *, retry: bool = False
) -> Exclusion:
    return Exclusion(
        commit=candidate.commit, title=candidate.title, reason=reason, detail=detail, retry=retry
    )


def _pull_title(candidate: Candidate, number: int, issues: IssueSource) -> Candidate | Exclusion:
    """A title-less merge judged by its pull request's title, by the same rule as any."""
    pull = issues.read(IssueRef(number=number, kind="pull"))
    if isinstance(pull, Unread):
        why = f"the title of pull request #{number} could not be read: {pull.reason}"
        return _left_out(candidate, Reason.ISSUE_UNREADABLE, why, retry=pull.retry)
    titled = replace(candidate, title=" ".join(pull.title.split()), confirm=None)
    if is_fix_title(titled.title):
        return titled
    linked = closing_reference(titled.title)
    if linked is None:
        return _left_out(titled, Reason.NOT_A_FIX, f"pull request #{number}'s title is not a fix")
    return replace(titled, refs=(linked, *titled.refs), confirm=LinkedIssue(linked))


def _linked_issue(
    candidate: Candidate, ref: IssueRef, issues: IssueSource
) -> Candidate | Exclusion:
    """A change whose title names the issue it closes and no fix: a task when the issue
    reports a bug."""
    lookup = issues.fetch(ref)
    name = f"the linked issue {ref.repo or ''}#{ref.number}"
    if lookup.item is None:
        why = f"{name} could not be read: {lookup.missing}"
        return _left_out(candidate, Reason.ISSUE_UNREADABLE, why, retry=lookup.retry)
    evidence = bug_evidence(lookup.item)
    if not evidence.bug:
        return _left_out(candidate, Reason.NOT_A_BUG, f"{name} {evidence.why}")
    return replace(candidate, confirm=None)


def _settled(candidate: Candidate, issues: IssueSource) -> Candidate | Exclusion:
    """The candidate with its condition confirmed, or left out with the reason it failed."""
    if isinstance(candidate.confirm, PullTitle):
        titled = _pull_title(candidate, candidate.confirm.number, issues)
        if isinstance(titled, Exclusion):
            return titled
        candidate = titled
    if isinstance(candidate.confirm, LinkedIssue):
        return _linked_issue(candidate, candidate.confirm.ref, issues)
    return candidate


def build_taskset(
    mined: MiningResult,
    *,
    package: str,
    limit: int,
    issues: IssueSource,
    own_repo: str | None,
    fingerprint: str,
    on_lookup: Callable[[int, int], None] | None = None,
) -> TaskSet:
    """Settle, resolve, de-duplicate and limit the candidates into the stored task set."""
    tasks: list[Task] = []
    excluded: list[Exclusion] = list(mined.excluded)
    seen: set[int] = set()
    total = len(mined.candidates)
    for index, mined_candidate in enumerate(mined.candidates):
        if len(tasks) >= limit:
            excluded.append(_left_out(mined_candidate, Reason.OVER_LIMIT))
            continue
        settled = _settled(mined_candidate, issues)
        if isinstance(settled, Exclusion):
            excluded.append(settled)
            if on_lookup is not None:
                on_lookup(index + 1, total)
            continue
        candidate = settled
        ref = primary_reference(candidate, own_repo)
        others = [r for r in candidate.refs if r != ref and _own(r, own_repo)]
        lookup = statement_for(issues, [ref, *others])
        if on_lookup is not None:
            on_lookup(index + 1, total)
        if lookup.no_problem:
            excluded.append(_left_out(candidate, Reason.NO_PROBLEM_TEXT, lookup.missing))
            continue
        number = lookup.issue if lookup.issue is not None else ref.number
        if number in seen:
            excluded.append(_left_out(candidate, Reason.DUPLICATE_ISSUE))
            continue
        seen.add(number)
        tasks.append(
            Task(
                id=f"{package}-{number}",
                issue=number,
                reference=ref,
                title=candidate.title,
                fix_commit=candidate.commit,
                base_commit=candidate.base_commit,
                date=candidate.date,
                source_files=list(candidate.source_files),
                test_files=list(candidate.test_files),
                added_tests=list(candidate.added_tests),
                test_data_files=list(candidate.test_data_files),
                statement=lookup.statement,
                statement_missing=lookup.missing if lookup.statement is None else None,
                statement_note=lookup.note,
                statement_source=lookup.source if lookup.statement is not None else None,
                statement_retry=lookup.retry,
            )
        )
    return TaskSet(
        mined_at=datetime.now(UTC),
        head=mined.head,
        fingerprint=fingerprint,
        issue_source=issues.describe(),
        examined=mined.examined,
        tasks=tasks,
        excluded=excluded,
    )
