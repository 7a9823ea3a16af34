"""The judge stage: every task's verdict under every policy, from its stored matrix.

The judge is pure and fast, so verdicts are never trusted from an earlier run: the
report recomputes them from the matrices each time it is built.
"""

from __future__ import annotations

from bugbout_tui.core.models import Matrix
from bugbout_tui.engine.project import Project
from bugbout_tui.rules.judge import VerdictSet, judge_all


def judged(project: Project, matrices: dict[str, Matrix]) -> VerdictSet:
    """Every task under every policy, as `verdicts.json` holds them."""
    return VerdictSet(
        policy=project.config.judge.policy,
        verdicts={task: dict(judge_all(matrix)) for task, matrix in sorted(matrices.items())},
    )


def judge_matrices(project: Project, matrices: dict[str, Matrix]) -> VerdictSet:
    """Every task under every policy, stored as `verdicts.json`."""
    verdicts = judged(project, matrices)
    project.store.write(project.store.verdicts_path, verdicts)
    return verdicts
