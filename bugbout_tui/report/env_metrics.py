"""The figures of environment tasks, per agent, from its repairs and attempts alone.

An agent's trials of a task (`name`, `name#2`, ...) are pooled under the agent, in trial
order. A trial that did not count (`not-run`: a spent quota, a budget, never started) is
no sample; every other one is, a rejected repair or no repair at all being a trial that
did not resolve. The definitions, stated once here and in docs/report.md:

- resolved: resolved trials over scored trials;
- pass@k: the unbiased 1 − C(n−c, k)/C(n, k) per task, averaged over the tasks with at
  least k scored trials (the bug report's estimator, `metrics.at_k`);
- consistency@k: tasks whose first k trials declare the same normalized names (D¹),
  over the tasks with k trials;
- Jaccard: per task the mean over pairs of trials of |A ∩ B| / |A ∪ B| of their D¹,
  then over tasks;
- manifest F1: per task the mean over trials, then over tasks;
- safe install: the mean over repairs that declare something;
- attempts: over the tasks resolved, the trials up to and including the first resolved;
- cost: per task everything its attempts cost (`rules.cost`), then the mean over tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import combinations

from bugbout_tui.core.env_models import AuditFinding, Repair, normalize_name
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.trials import agent_of, trial_number
from bugbout_tui.report import metrics
from bugbout_tui.report.model import (
    EnvAgentRow,
    EnvBoardName,
    EnvConsistency,
    LoosenedPin,
    NewestRow,
    PassAtK,
    Rate,
)
from bugbout_tui.rules.cost import Costing, ran

__all__ = [
    "PASS_KS",
    "RANKED_BY",
    "STOCHASTIC_K",
    "agent_row",
    "attempts_to_resolve",
    "audit_flags",
    "consistency",
    "cost_per_task",
    "declared_names",
    "jaccard",
    "loosened_pins",
    "manifest_f1",
    "mean_jaccard",
    "newest_rows",
    "ranked",
    "safe_install",
    "scored_trials",
]

PASS_KS = (1, 3)
"""The k of pass@k on the boards: one try, and three fresh tries."""

STOCHASTIC_K = 3
"""The trials the Stochastic board asks of a Lite task: three fresh runs."""

RANKED_BY: dict[EnvBoardName, str] = {
    "all": "resolved share, then safe install, then name",
    "lite": "resolved share, then safe install, then name",
    "secure": "safe install, then resolved share, then name",
    "stochastic": "consistency@3, then mean pairwise Jaccard, then name",
}

Runs = Sequence[Sequence[Repair]]
"""One agent's scored trials, per task, each task's in trial order."""


def scored_trials(repairs: Mapping[str, Repair], agent: str) -> list[Repair]:
    """`agent`'s trials of one task (contestant → repair) that count, in trial order."""
    names = sorted(
        (name for name in repairs if agent_of(name) == agent),
        key=lambda name: (trial_number(name), name),
    )
    return [repairs[name] for name in names if repairs[name].status != "not-run"]


def declared_names(repair: Repair) -> frozenset[str]:
    """D¹ as a set of names normalized as PEP 503: what consistency and Jaccard compare."""
    return frozenset(normalize_name(declared.name) for declared in repair.declared)


def jaccard(first: frozenset[str], second: frozenset[str]) -> Fraction:
    """|A ∩ B| / |A ∪ B|; two empty sets declare the same nothing, so 1."""
    union = first | second
    return Fraction(len(first & second), len(union)) if union else Fraction(1)


def pass_at(runs: Runs, k: int) -> PassAtK:
    counted = [(len(trials), sum(r.resolved for r in trials)) for trials in runs]
    return PassAtK.of(k, metrics.at_k(counted, k, metrics.pass_at_k))


def consistency(runs: Runs, k: int) -> EnvConsistency:
    """Tasks whose first k scored trials declare the same names, over tasks with k."""
    names = [[declared_names(repair) for repair in trials] for trials in runs]
    return EnvConsistency(
        k=k,
        value=metrics.consistency_at_k(names, k),
        tasks=sum(len(trials) >= k for trials in runs),
    )


def mean_jaccard(runs: Runs) -> tuple[float | None, int]:
    """The mean pairwise Jaccard of D¹ per task, averaged over tasks with two trials or
    more, and how many such tasks."""
    per_task = []
    for trials in runs:
        pairs = list(combinations([declared_names(r) for r in trials], 2))
        if pairs:
            per_task.append(float(sum(jaccard(a, b) for a, b in pairs) / len(pairs)))
    return _mean(per_task)


def manifest_f1(runs: Runs) -> tuple[float | None, int]:
    """Per task the mean F1 of its trials that have one, averaged over those tasks."""
    per_task = []
    for trials in runs:
        values = [r.f1 for r in trials if r.f1 is not None]
        if values:
            per_task.append(metrics.mean(values))
    return _mean(per_task)


def safe_install(runs: Runs) -> tuple[float | None, int]:
    """The mean safe-install share over every repair that declares something."""
    return _mean([r.safe_install for trials in runs for r in trials if r.safe_install is not None])


def attempts_to_resolve(runs: Runs) -> tuple[float | None, int]:
    """Over the tasks resolved, the mean number of trials up to and including the first
    resolved one: what it took to get there, tasks never resolved left out."""
    return _mean(
        [
            float(next(i for i, r in enumerate(trials, 1) if r.resolved))
            for trials in runs
            if any(r.resolved for r in trials)
        ]
    )


def cost_per_task(
    attempts: Sequence[Sequence[Attempt]], costing: Costing
) -> tuple[float | None, int]:
    """What the attempts of each task cost together, averaged over the tasks whose every
    attempt that ran has a known cost; a task with one unknown cost would be undercounted,
    and a plan has no price, so such tasks are left out."""
    totals = []
    for group in attempts:
        spent = [costing.cost(attempt).usd for attempt in group if ran(attempt)]
        if spent and all(usd is not None for usd in spent):
            totals.append(sum(usd for usd in spent if usd is not None))
    return _mean(totals)


def agent_row(
    agent: str,
    runs: Runs,
    attempts: Sequence[Sequence[Attempt]],
    costing: Costing,
    *,
    k: int | None = None,
) -> EnvAgentRow:
    """`agent`'s figures over one board: `runs` its scored trials per task of the board,
    `attempts` its attempts per task. consistency@k at `k`, or at its most trials on a
    task when not given (none below two)."""
    runs = [trials for trials in runs if trials]
    most = max((len(trials) for trials in runs), default=0)
    at = k if k is not None else most
    jaccard_mean, jaccard_tasks = mean_jaccard(runs)
    f1, f1_tasks = manifest_f1(runs)
    safe, safe_repairs = safe_install(runs)
    tries, tries_tasks = attempts_to_resolve(runs)
    cost, cost_tasks = cost_per_task(attempts, costing)
    return EnvAgentRow(
        agent=agent,
        tasks=len(runs),
        resolved=Rate.of(
            sum(r.resolved for trials in runs for r in trials), sum(len(t) for t in runs)
        ),
        pass_at=[pass_at(runs, each) for each in PASS_KS],
        consistency=consistency(runs, at) if at >= 2 else None,
        jaccard=jaccard_mean,
        jaccard_tasks=jaccard_tasks,
        f1=f1,
        f1_tasks=f1_tasks,
        safe_install=safe,
        safe_repairs=safe_repairs,
        attempts=tries,
        attempts_tasks=tries_tasks,
        cost_usd=cost,
        cost_tasks=cost_tasks,
    )


def ranked(board: EnvBoardName, rows: Sequence[EnvAgentRow]) -> list[EnvAgentRow]:
    """The rows best first, as `RANKED_BY` says; a figure with no value ranks last."""
    keys: dict[EnvBoardName, Callable[[EnvAgentRow], tuple[float, float]]] = {
        "all": lambda row: (_high(row.resolved.share), _high(row.safe_install)),
        "lite": lambda row: (_high(row.resolved.share), _high(row.safe_install)),
        "secure": lambda row: (_high(row.safe_install), _high(row.resolved.share)),
        "stochastic": lambda row: (
            _high(None if row.consistency is None else row.consistency.value),
            _high(row.jaccard),
        ),
    }
    return sorted(rows, key=lambda row: (*keys[board](row), row.agent))


def audit_flags(finding: AuditFinding) -> list[str]:
    """What the audit flags in one declared package, in words: a published advisory, a
    removed or yanked version, a name one edit from a popular one, code run at install."""
    flags = []
    if finding.advisories:
        flags.append("advisories " + ", ".join(a.id for a in finding.advisories))
    if finding.yanked is True:
        flags.append("yanked")
    elif finding.removed is True:
        flags.append("removed")
    if finding.typo_of is not None:
        flags.append(f"one edit from {finding.typo_of}")
    if finding.install_code is True:
        flags.append("runs code at install (no wheel)")
    return flags


def newest_rows(task: str, repairs: Sequence[tuple[str, Repair]]) -> list[NewestRow]:
    """Every pinned package of the repairs given (name → repair, in the order shown),
    against the newest version today and at the task's date."""
    return [
        NewestRow(
            task=task,
            contestant=name,
            name=newest.name,
            declared=newest.declared,
            newest_today=newest.newest_today,
            newest_at_date=newest.newest_at_date,
            advisories=dict(newest.advisories),
        )
        for name, repair in repairs
        for newest in sorted(repair.newest, key=lambda each: each.name)
    ]


def loosened_pins(
    task: str, repairs: Sequence[tuple[str, Repair]], gold: Repair | None
) -> list[LoosenedPin]:
    """The repairs that resolved below the known repair's safe-install share because
    they declare without a pin what the known repair pins."""
    if gold is None or gold.safe_install is None:
        return []
    pinned = {normalize_name(d.name) for d in gold.declared if d.pinned is not None}
    found = []
    for name, repair in repairs:
        if not repair.resolved or repair.safe_install is None:
            continue
        if repair.safe_install >= gold.safe_install:
            continue
        dropped = sorted(
            {
                normalize_name(d.name)
                for d in repair.declared
                if d.pinned is None and normalize_name(d.name) in pinned
            }
        )
        if dropped:
            found.append(
                LoosenedPin(
                    task=task,
                    contestant=name,
                    safe_install=repair.safe_install,
                    gold_safe_install=gold.safe_install,
                    dropped=dropped,
                )
            )
    return found


def _mean(values: Sequence[float]) -> tuple[float | None, int]:
    return (metrics.mean(values) if values else None), len(values)


def _high(value: float | None) -> float:
    """A sort key putting the highest value first and no value last."""
    return 1.0 if value is None else -value
