"""Ground truth: which of the maintainers' tests define "fixed" for a task.

The definitions are SWE-bench's, so numbers compare: a test is fail-to-pass when it
fails (or errors) on the base with the fix's tests installed and passes on the fix;
pass-to-pass when it passes on both. The fix is run `[tasks] reruns` times (twice by
default) and any test whose outcome differs between those runs is set aside as unstable,
because a flaky test would score a correct patch as wrong at random.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bugbout_tui.core import look
from bugbout_tui.core.models import Oracle, TaskEnvironment
from bugbout_tui.infra.submodules import MissingSubmodule

PASSING = frozenset({"passed", "xfailed"})
FAILING = frozenset({"failed", "error"})


def compute_oracle(base: Mapping[str, str], *fixes: Mapping[str, str]) -> Oracle:
    """Classify every test seen on the fix from the base's run and the fix's runs
    (each node id → outcome); a test whose outcome differs between the fix's runs is
    unstable.

    A test the base run never reported (its module could not even be collected, or the
    whole run died) counts as failing there: on the unfixed code it did not pass.
    """
    fail_to_pass: list[str] = []
    pass_to_pass: list[str] = []
    unstable: list[str] = []
    for test in sorted({test for run in fixes for test in run}):
        seen = {run.get(test) for run in fixes}
        if len(seen) > 1:
            unstable.append(test)
            continue
        (first,) = seen
        if first not in PASSING:
            continue
        before = base.get(test, "error")
        if before in FAILING:
            fail_to_pass.append(test)
        elif before in PASSING:
            pass_to_pass.append(test)
    if fail_to_pass:
        return Oracle(
            fail_to_pass=fail_to_pass, pass_to_pass=pass_to_pass, unstable=unstable, scored=True
        )
    reason = "no test fails before the fix and passes after it"
    if unstable:
        reason += f" ({look.plural(len(unstable), 'unstable test')} set aside)"
    return Oracle(pass_to_pass=pass_to_pass, unstable=unstable, scored=False, reason=reason)


def unrunnable(reason: str) -> Oracle:
    """The oracle of a task whose tests cannot run at all; the reason says why."""
    return Oracle(scored=False, reason=reason)


def failed_again(problem: str, stored: Oracle | None) -> Oracle:
    """The record of runs that failed in a way that may pass (`problem`), given what the
    last run left (`stored`, under the same conditions or None).

    Once, it is no answer: the next run tries again. The same failure twice in a row is
    taken as the task's answer, since a failure that repeats itself exactly is the
    code's or the settings' (an interpreter that crashes on import, a plugin that kills
    its process), not the machine's passing trouble; `--retry-failed` tries it again.
    """
    problem = problem.rstrip(". ")
    if stored is not None and stored.may_pass == problem:
        return unrunnable(f"{problem}, in two runs in a row")
    return Oracle(
        scored=False,
        reason=f"not answered yet: {problem}; this may pass, and the next run tries again",
        may_pass=problem,
    )


def lacking_submodules(missing: Sequence[MissingSubmodule], outcome: str) -> str:
    """The reason of a task whose trees lack a submodule: which one and why first, since
    that is what to fix, then what its tests did without it."""
    first = missing[0]
    where = f"{first.path} ({first.url})" if first.url else first.path
    more = f" (and {look.plural(len(missing) - 1, 'more submodule')})" if len(missing) > 1 else ""
    return (
        f"the submodule {where} is missing from the trees: {first.problem}{more}; "
        f"without it, {outcome}"
    )


def on_newer_python(oracle: Oracle, record: TaskEnvironment | None) -> str | None:
    """The reason of an unscored oracle whose tests gave no answer (none passed: they
    could not be collected, or not run), saying so when they ran on a Python newer than
    any the commit names: the failure may be the interpreter's (a module or syntax that
    Python has since dropped), and installing an older one may answer it."""
    answered = oracle.scored or oracle.fail_to_pass or oracle.pass_to_pass
    if answered or oracle.reason is None or record is None or not record.older_python:
        return oracle.reason
    return (
        f"{oracle.reason} (it ran on Python {record.python}; the commit names Python "
        f"{record.older_python} at the newest, and none of those is installed here: "
        f"`uv python install {record.older_python}` lets the next run use it)"
    )
