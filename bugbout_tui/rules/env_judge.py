"""The judge for environment tasks: one repair per task, or none, and whether to merge it.

A bug's right answer is hidden in the maintainers' tests, so the bug judge must do
without them. An environment task's hidden part is the known repair; what each repair
shows of itself (that it installed cleanly at the task's date, that the task's command
ran, what the run used, what the audit found of every declared package) is evidence
anyone merging it would have, so this judge reads exactly that. The rules, in
`docs/judge.md`:

- only repairs that installed and ran (`resolved`) are candidates; with none, abstain;
- among them prefer the safest (safe-install share), then the most faithful (F1 of what
  it declares against what its own traced run used), then the smallest change, then the
  name, so the same repairs always give the same pick in any order;
- the merge gate approves the pick only when no declared package is vulnerable,
  removed or could not be checked; otherwise it is the pick, not approved, and the
  trail says which package and why.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core import look
from bugbout_tui.core.env_models import Repair, RepairStatus
from bugbout_tui.rules.env_audit import merge_blockers

__all__ = [
    "REPAIR_WORDS",
    "EnvVerdict",
    "RankedRepair",
    "choose_repair",
    "f1_text",
    "gate_blockers",
    "share",
]

REPAIR_WORDS: dict[RepairStatus, str] = {
    "resolved": "installed and ran",
    "install-failed": "install failed",
    "run-failed": "installed, run failed",
    "rejected": "rejected: changed files other than environment files",
    "no-repair": "changed no environment file",
    "not-run": "did not count",
}
"""How a repair ended, in words a trail and a report can quote."""


class RankedRepair(BaseModel):
    """A candidate repair with the figures the pick order reads."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    contestant: str
    """The repair's contestant, trial suffix included."""
    safe_install: float | None = None
    """Its safe-install share; None (ranked below 0) when it declares nothing."""
    f1: float | None = None
    """F1 of what it declares against what its traced run used; None ranks below 0."""
    size: int
    """Changed lines in the environment files."""
    blockers: list[str] = Field(default_factory=list)
    """Why the merge gate refuses it, one entry per package; empty when it would pass."""


class EnvVerdict(BaseModel):
    """One environment task judged: the pick, whether to merge it, and why, in words."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    task: str
    pick: str | None = None
    """The picked repair's contestant; None when no repair installed and ran."""
    approved: bool = False
    """The merge gate's answer for the pick: no declared package vulnerable, removed,
    unchecked or a typo of a popular name. Always False without a pick."""
    trail: list[str] = Field(default_factory=list)
    """Every step that decided the verdict, in order, as sentences."""
    ranking: list[RankedRepair] = Field(default_factory=list)
    """The candidates in pick order, the pick first."""


def choose_repair(task: str, repairs: Mapping[str, Repair]) -> EnvVerdict:
    """The verdict on `task` from its repairs (contestant → repair), trials included.

    The mapping's order never matters: candidates are sorted on figures and names alone.
    """
    ranking = sorted(
        (_ranked(name, repair) for name, repair in repairs.items() if repair.resolved),
        key=_order,
    )
    others = sorted(name for name, repair in repairs.items() if not repair.resolved)
    left = "; ".join(f"{name} {REPAIR_WORDS[repairs[name].status]}" for name in others)
    if not ranking:
        why = (
            "no repair is recorded for this task"
            if not repairs
            else f"no repair installed and ran ({left}), so the judge abstains"
        )
        return EnvVerdict(task=task, trail=[why])
    names = ", ".join(candidate.contestant for candidate in ranking)
    installed = f"{look.plural(len(ranking), 'repair')} installed and ran: {names}" + (
        f"; left out: {left}" if left else ""
    )
    pick = ranking[0]
    trail = [installed, _decided(pick, ranking[1] if len(ranking) > 1 else None)]
    if pick.blockers:
        trail.append(f"the merge gate refuses {pick.contestant}: " + "; ".join(pick.blockers))
    else:
        trail.append(
            f"the merge gate approves {pick.contestant}: no declared package is "
            "vulnerable, removed, unchecked or a typo of a popular name"
        )
    return EnvVerdict(
        task=task,
        pick=pick.contestant,
        approved=not pick.blockers,
        trail=trail,
        ranking=ranking,
    )


def gate_blockers(repair: Repair) -> list[str]:
    """Why the merge gate refuses `repair`, one entry per package, by name; empty when
    none of its declared packages is vulnerable, removed, uncheckable or a typo of a
    popular name (`AuditFinding.blocks_merge`).

    A declared package the audit has no finding for was never checked, and a package
    that could not be checked does not count as safe."""
    found = {finding.name for finding in repair.audit}
    reasons = merge_blockers(sorted(repair.audit, key=lambda each: (each.name, each.requirement)))
    reasons += [
        f"{declared.name} was not audited"
        for declared in sorted(repair.declared, key=lambda each: each.name)
        if declared.name not in found
    ]
    return reasons


def _ranked(name: str, repair: Repair) -> RankedRepair:
    return RankedRepair(
        contestant=name,
        safe_install=repair.safe_install,
        f1=repair.f1,
        size=repair.size,
        blockers=gate_blockers(repair),
    )


def _order(candidate: RankedRepair) -> tuple[float, float, int, str]:
    """Safest first, then most faithful, then smallest, then by name."""
    return (
        -_or_below(candidate.safe_install),
        -_or_below(candidate.f1),
        candidate.size,
        candidate.contestant,
    )


def _or_below(value: float | None) -> float:
    """A missing share ranks below every measured one, 0 included."""
    return -1.0 if value is None else value


def _decided(pick: RankedRepair, runner_up: RankedRepair | None) -> str:
    """The first step of the pick order on which the pick beats the runner-up."""
    a = pick.contestant
    if runner_up is None:
        return f"{a} is the only repair that installed and ran"
    b = runner_up.contestant
    if _or_below(pick.safe_install) != _or_below(runner_up.safe_install):
        return (
            f"{a} is the safest: safe install {share(pick.safe_install)} against "
            f"{share(runner_up.safe_install)} for {b}"
        )
    same = f"{a} and {b} are equally safe ({share(pick.safe_install)})"
    if _or_below(pick.f1) != _or_below(runner_up.f1):
        return (
            f"{same}; {a} is the more faithful: F1 {f1_text(pick.f1)} against "
            f"{f1_text(runner_up.f1)}"
        )
    same += f" and faithful (F1 {f1_text(pick.f1)})"
    if pick.size != runner_up.size:
        return (
            f"{same}; {a}'s change is smaller: {look.plural(pick.size, 'line')} against "
            f"{runner_up.size} for {b}"
        )
    return f"{same}, and their changes are as large; {a} comes first by name"


def share(value: float | None) -> str:
    """A safe-install share as a person reads it: `67%`, or `n/a` with nothing declared."""
    return "n/a" if value is None else f"{value * 100:.0f}%"


def f1_text(value: float | None) -> str:
    """An F1 with two decimals, or `n/a` when nothing was declared or traced."""
    return "n/a" if value is None else f"{value:.2f}"
