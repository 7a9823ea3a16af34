"""Decisions about environment tasks that need no disk: whether a task's controls make
it worth racing, what an agent is shown of the failure, what a repair is before anything
is installed (rejected, no repair, not run), and what bugbout can say of an agent's
network use.

An environment task's ground truth is its two controls: the files as written (`BASE`)
must fail a clean install or the traced run, and the known repair (`GOLD`) must pass
both. Either way round, the task cannot tell a repair from no repair, so it is not
scored, and the reason says which control is at fault.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from bugbout_tui.core import look
from bugbout_tui.core.env_models import Repair
from bugbout_tui.core.models import BASE, GOLD, Attempt
from bugbout_tui.rules.env_files import split_repair

CONTROLS = (BASE, GOLD)
"""The two controls of an environment task, in the order they are made."""

FAILURE_LIMIT = 6000
"""Characters of the base's failing output an agent is given: the tail, where installers
and test runners say what went wrong."""
_FAILURE_LINES = 120


NO_CONTROLS = "its controls are not recorded yet"
BASE_PASSES = "controls failed: the files as written already install and run"
GOLD_FAILS = "controls failed: the known repair does not install and run here"
CONTROL_REASONS = (NO_CONTROLS, BASE_PASSES, GOLD_FAILS)
"""Every reason `control_problem` gives: few and fixed, so the funnel can count them."""


def control_problem(controls: Mapping[str, Repair] | None) -> str | None:
    """Why an environment task is not scored, or None when its controls make it one:
    the base failed (the install or the run) and the known repair installs and runs.

    Controls not made yet, or one that could not be tried at all, is no answer about
    the task; each control's own record says what went wrong.
    """
    controls = controls or {}
    base, gold = controls.get(BASE), controls.get(GOLD)
    if base is None or gold is None or "not-run" in (base.status, gold.status):
        return NO_CONTROLS
    if base.resolved:
        return BASE_PASSES
    if not gold.resolved:
        return GOLD_FAILS
    return None


def failing_log(base: Repair) -> str | None:
    """The store-relative log of the step the base failed at: the install's when the
    install failed, else the traced run's."""
    if base.install is not None and not base.install.ok:
        return base.install.log
    if base.trace is not None:
        return base.trace.log
    return base.install.log if base.install is not None else None


def failure_tail(
    text: str, *, limit: int = FAILURE_LIMIT, paths: Mapping[str, str] | None = None
) -> str:
    """The end of a failing output, at most `limit` characters on whole lines, with a
    line saying how much was cut; each of `paths` (bugbout's scratch folders) replaced by
    what stands for it, longest first, so the agent reads its own terms."""
    for path, name in sorted((paths or {}).items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    lines = text.rstrip().splitlines()
    kept: list[str] = []
    size = 0
    for line in reversed(lines[-_FAILURE_LINES:]):
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    kept.reverse()
    cut = len(lines) - len(kept)
    if cut:
        kept.insert(0, f"[... {cut} earlier lines not shown]")
    return "\n".join(kept)


def files_digest(*parts: str) -> str:
    """A short digest of what a repair installs (a commit, a diff): a repair made of
    other files is made again."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def network_note(sandbox: str, *, confined: bool) -> str:
    """What bugbout could and could not log of an agent's network use, in words.

    Agents reach their model's API, so the race never takes their network away; no
    backend logs the connections a confined process makes. What can be said is where the
    agent ran, that its checkout had no history, and that the scoring's own install went
    only to the task's index.
    """
    if not confined or sandbox == "none":
        where = "The agent ran unconfined, with the network open"
    else:
        where = (
            f"The agent ran in the {sandbox} sandbox with the network open (its model's "
            "API needs it)"
        )
    scoring = (
        "The scoring installed only from the task's index, dated, and the traced run had "
        "no network."
    )
    if sandbox == "none":
        scoring += " With no sandbox, the install's builds ran on this machine unconfined."
    return (
        f"{where}; bugbout does not log the connections an agent makes, so whether it "
        f"reached a package index or any other host is not known. Its checkout had no "
        f"history. {scoring}"
    )


def repair_without_run(attempt: Attempt, *, network: str) -> Repair | None:
    """The repair read off an attempt record, or None when its files must be installed.

    An attempt whose agent never worked on the task (a spent quota, a budget, not
    started) is `not-run`; one whose agent crashed, ran out of time or left a patch too
    large to keep has no repair, whatever it left; a change to any file that is not an
    environment file rejects the repair, which is never installed; no change to an
    environment file is no repair.
    """
    made = Repair(
        task=attempt.task, contestant=attempt.contestant, status="not-run", network=network
    )
    if attempt.status in ("quota", "budget", "skipped"):
        return made.model_copy(
            update={"detail": attempt.detail or f"the attempt ended {attempt.status}"}
        )
    if attempt.status in _NO_REPAIR:
        why = f"{_NO_REPAIR[attempt.status]} ({attempt.detail or attempt.status})"
        return made.model_copy(update={"status": "no-repair", "detail": why})
    env_files, other_files = split_repair(attempt.patch)
    if other_files:
        return made.model_copy(
            update={
                "status": "rejected",
                "detail": f"it changed {look.plural(len(other_files), 'file')} that "
                f"{look.verb(len(other_files), 'is', 'are')} not an environment file",
                "changed": list(env_files),
                "rejected_files": list(other_files),
            }
        )
    if not env_files:
        return made.model_copy(
            update={"status": "no-repair", "detail": "no change to an environment file"}
        )
    return None


_NO_REPAIR = {
    "crashed": "the agent crashed",
    "timeout": "the agent ran out of time",
    "oversized": "the patch was too large to keep",
}
