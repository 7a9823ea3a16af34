"""Scoring a patch by the maintainers' hidden tests, decided from outcomes alone.

The definitions are the ground truth's, which are SWE-bench's: a test passes when it
`passed` or is an expected failure (`xfailed`); anything else, a missing outcome
included, is not passing. Unstable tests decide nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bugbout_tui.core.models import Attempt, CellOutcome, Oracle, Resolution, ResolutionStatus
from bugbout_tui.infra.pytest_run import TestRun, expand_collection_errors
from bugbout_tui.rules.ground_truth import PASSING

PATCH_DOES_NOT_APPLY = "the patch's source changes do not apply to the unfixed code"
RUN_FAILED = "the hidden tests could not run on this patch"
_FROM_RUN_FAILURES = (PATCH_DOES_NOT_APPLY, RUN_FAILED)
"""Beginnings of the details of a no-fix that took a test run (or an attempt to
prepare one) to find, as opposed to one read off the attempt record."""
CONTROL_WITHOUT_SOURCE = "the fix changes no file that a patch's source part holds"
UNRELIABLE_GRADER = "grader unreliable: the fix does not pass its own tests here"
UNRELIABLE_NO_RUN = "grader unreliable: the fix cannot be scored as a patch here"
UNRELIABLE = frozenset({UNRELIABLE_GRADER, UNRELIABLE_NO_RUN})
_FROM_RUN = frozenset({"resolved", "fixed-but-broke", "wrong-fix"})
_DETAIL_LIMIT = 600


def is_scored(attempt: Attempt) -> bool:
    """Whether an attempt gets a score: a contestant's, unless it was skipped or stopped
    by a budget, in which case the agent was never given the task and a score would say
    nothing about it."""
    return attempt.role == "contestant" and attempt.status not in ("skipped", "budget")


def score_without_run(attempt: Attempt) -> Resolution | None:
    """The score read off the attempt record, or None when its patch must be run.

    A spent quota is not scored. An agent that crashed or ran out of time, left a patch
    too large to keep, or changed no source file, has no fix, whatever it left on disk.
    """

    def without_fix(detail: str) -> Resolution:
        return Resolution(
            task=attempt.task, contestant=attempt.contestant, status="no-fix", detail=detail
        )

    if attempt.status == "quota":
        return Resolution(
            task=attempt.task,
            contestant=attempt.contestant,
            status="quota",
            detail=attempt.detail or "stopped by a usage limit before it produced a patch",
        )
    if attempt.status == "timeout":
        return without_fix(f"the agent ran out of time ({attempt.detail or 'timeout'})")
    if attempt.status == "crashed":
        return without_fix(f"the agent crashed ({attempt.detail or 'no detail'})")
    if attempt.status == "oversized":
        return without_fix(f"the patch was too large to keep: {attempt.detail or 'over a cap'}")
    if not attempt.patch.has_source_change:
        return without_fix("no change to the source code")
    return None


def took_a_run(resolution: Resolution) -> bool:
    """Whether a stored score came from running the patch, so it holds for as long as
    the attempt is finished. A score read off an earlier record of the attempt (a quota,
    a timeout, since retried) does not."""
    if resolution.status in _FROM_RUN:
        return True
    detail = resolution.detail or ""
    return resolution.status == "no-fix" and detail.startswith(_FROM_RUN_FAILURES)


def untestable(task: str, contestant: str, what: str, reason: str) -> Resolution:
    """The no-fix of a patch that could not be tested: `what` is `PATCH_DOES_NOT_APPLY`
    or `RUN_FAILED`, `reason` the first line of what went wrong."""
    first = next((line for line in reason.splitlines() if line.strip()), reason)
    detail = f"{what}: {first}"
    if len(detail) > _DETAIL_LIMIT:
        detail = detail[: _DETAIL_LIMIT - 1] + "…"
    return Resolution(task=task, contestant=contestant, status="no-fix", detail=detail)


def run_outcomes(run: TestRun, tests: Iterable[str]) -> dict[str, CellOutcome]:
    """Each test's outcome in `run`; a test in a module that failed to import is
    `uncollected`, and a test the run never reported is missing from the result."""
    expanded = expand_collection_errors(run, tests)
    outcomes: dict[str, CellOutcome] = {}
    for test, result in expanded.outcomes.items():
        spread = test not in run.outcomes
        outcomes[test] = "uncollected" if spread and result.outcome == "error" else result.outcome
    return outcomes


def classify(
    task: str, contestant: str, oracle: Oracle, outcomes: Mapping[str, CellOutcome]
) -> Resolution:
    """Score a patch from its hidden tests' outcomes.

    resolved: every fail-to-pass test passes and no pass-to-pass test fails;
    fixed-but-broke: every fail-to-pass passes, some pass-to-pass does not;
    wrong-fix: some fail-to-pass test does not pass. A test never reported counts as
    `uncollected`: it did not pass.
    """
    unstable = set(oracle.unstable)
    fail_to_pass: dict[str, CellOutcome] = {
        test: outcomes.get(test, "uncollected")
        for test in oracle.fail_to_pass
        if test not in unstable
    }
    broken = [
        test
        for test in oracle.pass_to_pass
        if test not in unstable and outcomes.get(test, "uncollected") not in PASSING
    ]
    return Resolution(
        task=task,
        contestant=contestant,
        status=status_of(fail_to_pass, broken),
        fail_to_pass=fail_to_pass,
        broken=broken,
    )


def status_of(fail_to_pass: Mapping[str, CellOutcome], broken: list[str]) -> ResolutionStatus:
    """A patch's status from what its fail-to-pass tests did and the pass-to-pass tests
    it broke (see `classify`)."""
    if any(outcome not in PASSING for outcome in fail_to_pass.values()):
        return "wrong-fix"
    return "fixed-but-broke" if broken else "resolved"


def unreliable_grader(control: Resolution | None) -> str | None:
    """Why a task's hidden tests cannot be trusted to grade a patch, from its gold
    control; None when the control resolved, or none was made yet.

    The maintainers' fix is right by definition: when it is not `resolved` through the
    path every patch takes, the fault is in the grader (an environment the tests need
    more of, a flaky test, a fix that needs files no patch may carry), and a patch's
    score on that task would measure that fault instead of the patch.
    """
    if control is None or control.status == "resolved":
        return None
    if control.status in ("no-fix", "quota"):
        return UNRELIABLE_NO_RUN
    return UNRELIABLE_GRADER
