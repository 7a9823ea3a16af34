"""Turning mined candidates into tasks: one per issue, with the text the agents will see.

Mining alone cannot decide duplicates or the limit: a `(#N)` in a squash title is
usually a pull request, and only the issue source knows which issue it closes. So the
candidates are resolved newest first, and resolution stops asking once the limit is
reached; everything older is left out as `over-limit` without spending API calls.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bugbout_tui.core.models import Exclusion, IssueRef, Reason, Task, TaskSet
from bugbout_tui.stages.mine import Candidate, MiningResult
from bugbout_tui.stages.statement import IssueSource


def primary_reference(candidate: Candidate, own_repo: str | None) -> IssueRef:
    """The reference that names this project's issue, preferring the miner's order."""
    for ref in candidate.refs:
        if ref.repo is None or own_repo is None or ref.repo.lower() == own_repo.lower():
            return ref
    return candidate.refs[0]


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
    """Resolve, de-duplicate and limit the candidates into the stored task set."""
    tasks: list[Task] = []
    excluded: list[Exclusion] = list(mined.excluded)
    seen: set[int] = set()
    total = len(mined.candidates)
    for index, candidate in enumerate(mined.candidates):
        if len(tasks) >= limit:
            excluded.append(_left_out(candidate, Reason.OVER_LIMIT))
            continue
        ref = primary_reference(candidate, own_repo)
        lookup = issues.fetch(ref)
        if on_lookup is not None:
            on_lookup(index + 1, total)
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


def _left_out(candidate: Candidate, reason: Reason) -> Exclusion:
    return Exclusion(commit=candidate.commit, title=candidate.title, reason=reason)
