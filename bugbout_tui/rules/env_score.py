"""A repair's scores that are arithmetic on its records: how it ended, how faithful its
declared packages are to what the run used, and how large a change it was.

Faithfulness compares D¹ (what the repaired files declare) with D³ (what the traced run
imported or opened). Precision is the share of declared packages the run used: a
declaration of something never needed lowers it. Recall is the share of used packages
that are declared: leaning on what another package happens to bring lowers it. A score
that would divide by nothing is None rather than 0 or 1, so an empty declaration or a
run that traced nothing neither wins nor loses points it has not earned.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from bugbout_tui.core.env_models import EnvInstall, EnvTrace, RepairStatus, normalize_name
from bugbout_tui.core.patch import Patch


def manifest_scores(
    declared: Iterable[str], used: Iterable[str]
) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1 of the declared names against the used ones, both
    compared as PEP 503 names.

    Precision is None when nothing is declared, recall when nothing was used, F1 unless
    both are known; when both are known and nothing is shared, F1 is 0.0.
    """
    d1 = {normalize_name(name) for name in declared}
    d3 = {normalize_name(name) for name in used}
    shared = len(d1 & d3)
    precision = shared / len(d1) if d1 else None
    recall = shared / len(d3) if d3 else None
    if precision is None or recall is None:
        return precision, recall, None
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def repair_status(install: EnvInstall | None, trace: EnvTrace | None) -> RepairStatus:
    """How a repair that was applied ended: resolved only when the clean install and the
    traced run both succeeded.

    A step that never happened (the scoring stopped before it) leaves the repair
    `not-run`; a run is only tried after an install that succeeded, so an install that
    failed decides the status whatever the trace says. Rejected repairs and attempts
    without a change never reach here: the caller knows them before installing.
    """
    if install is None:
        return "not-run"
    if not install.ok:
        return "install-failed"
    if trace is None:
        return "not-run"
    return "resolved" if trace.ok else "run-failed"


def changed_lines(patch: Patch, files: Collection[str]) -> int:
    """Lines added and removed in `files` (the environment files the repair changed):
    the judge prefers the smaller of two equally safe, equally faithful repairs."""
    return sum(
        change.added_lines + change.removed_lines for change in patch.files if change.path in files
    )
