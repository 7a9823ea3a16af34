"""Turning mined candidates into tasks: one per issue, with the text the agents will see.

Mining alone cannot decide duplicates or the limit: a `(#N)` in a squash title is
usually a pull request, and only the issue source knows which issue it closes. So the
candidates are resolved newest first, and resolution stops asking once the limit is
reached; everything older is left out as `over-limit` without spending API calls.

The issue source also settles what mining left open (`Candidate.confirm`): whether the
issue a title's closing phrase names reports a bug, and what a title-less merge's pull
request is called. And it can leave a change out for good when the text it reads for
it describes only the change made.

Environment tasks (`EnvCandidate`) share the limit and the issue numbers with fixes,
newest first. Their problem is the failing log, so they need no issue: one that names
none is `<package>-env-<short sha>`, and one whose issue cannot be read, or whose text
is the change's own description, is kept without text. An issue labelled as a security
matter marks the task (`EnvSpec.security`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from bugbout_tui.core.env_models import EnvSpec
from bugbout_tui.core.models import Exclusion, IssueRef, Reason, Task, TaskSet
from bugbout_tui.infra.github import GitHubIssue, Label
from bugbout_tui.rules.evidence import bug_evidence
from bugbout_tui.rules.fixwords import closing_reference, is_fix_title
from bugbout_tui.rules.mine import Candidate, EnvCandidate, LinkedIssue, MiningResult, PullTitle
from bugbout_tui.rules.statement import IssueLookup, IssueSource, Unread, statement_for

NO_ISSUE_NAMED = "the change names no issue: the agents get the failing log alone"
"""Why an environment task has no issue text."""
_SECURITY_LABEL = re.compile(r"security|vulnerab|\bcve\b", re.IGNORECASE)


@dataclass(frozen=True)
class EnvRun:
    """How an environment task's fix is run: its command, on which Python."""

    command: list[str]
    python: str


def _own(ref: IssueRef, own_repo: str | None) -> bool:
    return ref.repo is None or own_repo is None or ref.repo.lower() == own_repo.lower()


def primary_reference(candidate: Candidate | EnvCandidate, own_repo: str | None) -> IssueRef:
    """The reference that names this project's issue, preferring the miner's order."""
    for ref in candidate.refs:
        if _own(ref, own_repo):
            return ref
    return candidate.refs[0]


def _left_out(
    candidate: Candidate | EnvCandidate,
    reason: Reason,
    detail: str | None = None,
    *,
    retry: bool = False,
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
    env_run: Callable[[str], EnvRun] | None = None,
) -> TaskSet:
    """Settle, resolve, de-duplicate and limit the candidates into the stored task set.

    `env_run` gives, for an environment change's commit, the command and the Python its
    task runs with; it is asked only for the changes kept, and needed when any is mined.
    """
    tasks: list[Task] = []
    excluded: list[Exclusion] = list(mined.excluded)
    seen: set[int] = set()
    total = len(mined.candidates)
    for index, mined_candidate in enumerate(mined.candidates):
        if len(tasks) >= limit:
            excluded.append(_left_out(mined_candidate, Reason.OVER_LIMIT))
            continue
        if isinstance(mined_candidate, EnvCandidate):
            if env_run is None:
                raise ValueError("environment changes were mined without a way to run them")
            made = _env_task(mined_candidate, package, issues, own_repo, seen, env_run)
        else:
            made = _bug_task(mined_candidate, package, issues, own_repo, seen)
        if on_lookup is not None:
            on_lookup(index + 1, total)
        if isinstance(made, Exclusion):
            excluded.append(made)
        else:
            tasks.append(made)
    return TaskSet(
        mined_at=datetime.now(UTC),
        head=mined.head,
        fingerprint=fingerprint,
        issue_source=issues.describe(),
        examined=mined.examined,
        tasks=tasks,
        excluded=excluded,
    )


def _bug_task(
    mined: Candidate, package: str, issues: IssueSource, own_repo: str | None, seen: set[int]
) -> Task | Exclusion:
    """A fix as a task, once its condition is settled and its issue is new."""
    settled = _settled(mined, issues)
    if isinstance(settled, Exclusion):
        return settled
    candidate = settled
    ref = primary_reference(candidate, own_repo)
    lookup = statement_for(issues, _in_order(ref, candidate.refs, own_repo))
    if lookup.no_problem:
        return _left_out(candidate, Reason.NO_PROBLEM_TEXT, lookup.missing)
    number = lookup.issue if lookup.issue is not None else ref.number
    if number in seen:
        return _left_out(candidate, Reason.DUPLICATE_ISSUE)
    seen.add(number)
    return Task(
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


def _in_order(ref: IssueRef, refs: Sequence[IssueRef], own_repo: str | None) -> list[IssueRef]:
    """The primary reference, then the project's own other references."""
    return [ref, *(r for r in refs if r != ref and _own(r, own_repo))]


def _env_task(
    candidate: EnvCandidate,
    package: str,
    issues: IssueSource,
    own_repo: str | None,
    seen: set[int],
    env_run: Callable[[str], EnvRun],
) -> Task | Exclusion:
    """An environment change as a task: numbered after its issue when it names one,
    with that issue's text where it can be read."""
    ref, number, task_id = IssueRef(number=0), 0, f"{package}-env-{candidate.commit[:7]}"
    lookup: IssueLookup | None = None
    if candidate.refs:
        ref = primary_reference(candidate, own_repo)
        lookup = statement_for(issues, _in_order(ref, candidate.refs, own_repo))
        number = lookup.issue if lookup.issue is not None else ref.number
        if number in seen:
            return _left_out(candidate, Reason.DUPLICATE_ISSUE)
        seen.add(number)
        task_id = f"{package}-{number}"
    statement = lookup.statement if lookup is not None else None
    run = env_run(candidate.commit)
    return Task(
        id=task_id,
        issue=number,
        reference=ref,
        title=candidate.title,
        fix_commit=candidate.commit,
        base_commit=candidate.base_commit,
        date=candidate.date,
        source_files=[],
        test_files=[],
        added_tests=[],
        statement=statement,
        statement_missing=(lookup.missing if lookup is not None else NO_ISSUE_NAMED)
        if statement is None
        else None,
        statement_note=lookup.note if lookup is not None else None,
        statement_source=lookup.source if lookup is not None and statement is not None else None,
        statement_retry=lookup is not None and lookup.retry,
        kind="env",
        env=EnvSpec(
            command=run.command,
            python=run.python,
            date=candidate.date,
            env_files=list(candidate.env_files),
            defect="mined",
            security=lookup is not None and _security(lookup.item),
        ),
    )


def _security(item: GitHubIssue | None) -> bool:
    """Whether the issue (or pull request) read for a task carries a security label
    (`security`, `type: security`, `vulnerability`, `CVE`)."""
    if item is None:
        return False
    names = (label.name if isinstance(label, Label) else label for label in item.labels)
    return any(_SECURITY_LABEL.search(name) for name in names)
