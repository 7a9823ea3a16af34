"""The judge stage: every task's verdict under every policy, from its stored matrix.

The judge is pure and fast, so verdicts are never trusted from an earlier run: the
report recomputes them from the matrices each time it is built.
"""

from __future__ import annotations

from bugbout_tui.core.models import Ledger, Matrix
from bugbout_tui.engine.project import Project
from bugbout_tui.rules.flakes import matrix_without, quarantined
from bugbout_tui.rules.judge import VerdictSet, judge_all


def without_quarantined(project: Project, matrices: dict[str, Matrix]) -> dict[str, Matrix]:
    """The matrices without the cells of tests the flake ledger quarantined, so none of
    them counts as a reproduction or a breakage; the judge's rules stay as they are."""
    store = project.store
    ledger = store.read(store.ledger_path, Ledger)
    return {
        task: matrix_without(matrix, quarantined(ledger, task)) for task, matrix in matrices.items()
    }


def judged(project: Project, matrices: dict[str, Matrix]) -> VerdictSet:
    """Every task under every policy, as `verdicts.json` holds them, with quarantined
    tests left out of the evidence."""
    evidence = without_quarantined(project, matrices)
    return VerdictSet(
        policy=project.config.judge.policy,
        verdicts={task: dict(judge_all(matrix)) for task, matrix in sorted(evidence.items())},
    )


def judge_matrices(project: Project, matrices: dict[str, Matrix]) -> VerdictSet:
    """Every task under every policy, stored as `verdicts.json`."""
    verdicts = judged(project, matrices)
    project.store.write(project.store.verdicts_path, verdicts)
    return verdicts
