"""Comparing contestants task by task, and stopping once every pair is decided.

The report compares two agents with the exact McNemar test: only the tasks where exactly
one of them was right carry information, and under the null hypothesis (neither is
better) each such discordant task goes either way with probability ½. Testing again
after every task and stopping at the first p ≤ 0.05 would be wrong far more often than
5%: a fair random walk of discordant tasks wanders past a fixed boundary sooner or later.

The correction is Pocock's: one constant nominal level c for every look, chosen so that
the chance, under the null, of *ever* seeing an exact McNemar p-value ≤ c is at most the
promised level. That chance is computed exactly, by dynamic programming over the null
random walk of discordant tasks up to the most discordant tasks the bout can have (its
number of tasks), with integer path counts; c is the largest p-value the test can give
for which it stays within the level. The walk is looked at after every discordant task,
which covers any schedule of looks (looking less often can only lower the chance), and
the order of the tasks is fixed before any outcome is known.

With k contestants there are k(k−1)/2 pairs, and the promise is about all of them at
once: the level is split evenly between the pairs (Bonferroni), so the chance that any
decided pair is wrong (a difference declared where there is none, or the wrong agent
named better) is at most the configured level. A wrong direction is covered too: when
one agent is better, its walk drifts away from the boundary that would name the other,
so crossing that boundary is no likelier than under the null, which gives each side half
of the pair's share.

The cost: c is below the pair's share of the level, so a bout that runs to its last task
needs a more lopsided split to decide than one final test would (see `docs/report.md`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

from bugbout_tui.core.models import Resolution, ResolutionSet
from bugbout_tui.rules.judge import author_identity
from bugbout_tui.rules.score import unreliable_grader


def mcnemar_p(b: int, c: int) -> Fraction:
    """The exact two-sided McNemar p-value of `b` against `c` discordant tasks, exactly:
    min(1, 2·P[X ≤ min(b, c)]) for X ~ Binomial(b + c, ½), and 1 with none."""
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


@lru_cache(maxsize=8)
def _tails(horizon: int) -> tuple[tuple[int, ...], ...]:
    """Per n ≤ `horizon`, the lower tails Σ_{i≤k} C(n, i) for the k < n/2: the split
    min(b, c) = k after n discordant tasks has the p-value tail/2ⁿ⁻¹ (the others 1)."""
    found: list[tuple[int, ...]] = []
    for n in range(horizon + 1):
        tail, row = 0, []
        for k in range((n + 1) // 2):
            tail += math.comb(n, k)
            row.append(tail)
        found.append(tuple(row))
    return tuple(found)


def _critical(tails: Sequence[int], n: int, level: Fraction) -> int:
    """The largest k with a p-value ≤ `level` after `n` discordant tasks (a split with
    min(b, c) ≤ k is decided), or −1 when none is; `tails` are n's from `_tails`."""
    bound = level.numerator * 2 ** (n - 1)
    low, high = 0, len(tails)  # tails[:low] pass, tails[high:] fail
    while low < high:
        middle = (low + high) // 2
        if tails[middle] * level.denominator <= bound:
            low = middle + 1
        else:
            high = middle
    return low - 1


def _limits(horizon: int, level: Fraction) -> list[int]:
    """`_critical` for every n from 0 to `horizon`."""
    tails = _tails(horizon)
    return [_critical(tails[n], n, level) if n else -1 for n in range(horizon + 1)]


def crossing_chance(horizon: int, level: Fraction) -> Fraction:
    """The chance, under the null, that a pair's exact McNemar p-value is ≤ `level` at
    some look, looking after each of up to `horizon` discordant tasks.

    Paths of the fair walk are counted in integers: `alive[b]` is how many of the 2ⁿ
    sequences of n discordant tasks, `b` of them won by the first agent, have not yet
    been decided; those that cross are taken out and counted once.
    """
    limits = _limits(horizon, level)
    alive = [1]
    crossed = 0  # in units of 2^-horizon
    for n in range(1, horizon + 1):
        alive = [(alive[b] if b < n else 0) + (alive[b - 1] if b else 0) for b in range(n + 1)]
        k = limits[n]
        if k < 0:
            continue
        gone = 0
        for b in (*range(k + 1), *range(max(k + 1, n - k), n + 1)):
            gone += alive[b]
            alive[b] = 0
        crossed += gone << (horizon - n)
    return Fraction(crossed, 2**horizon)


@lru_cache(maxsize=64)
def pocock_level(horizon: int, share: Fraction) -> Fraction:
    """The largest exact McNemar p-value c with `crossing_chance(horizon, c) ≤ share`:
    deciding a pair at the first look with p ≤ c is wrong with chance at most `share`.

    The chance only changes at p-values the test can give, and grows with c, so the
    answer is one of them, found by bisection. 0 when even the smallest p-value within
    `horizon` tasks would be too likely: with so few tasks nothing can be decided.
    """
    tails = _tails(horizon)
    values = sorted(
        {
            p
            for n in range(1, horizon + 1)
            for tail in tails[n]
            if (p := Fraction(tail, 2 ** (n - 1))) <= share
        }
    )
    low, high = 0, len(values)  # values[:low] pass, values[high:] fail
    while low < high:
        middle = (low + high) // 2
        if crossing_chance(horizon, values[middle]) <= share:
            low = middle + 1
        else:
            high = middle
    return values[low - 1] if low else Fraction(0)


def pair_share(level: Fraction, contestants: int) -> Fraction:
    """Each pair's share of the family-wise `level` (Bonferroni); the whole level when
    there is one pair, nothing to share when there is none."""
    pairs = contestants * (contestants - 1) // 2
    return level / pairs if pairs else level


@dataclass(frozen=True)
class PairDecision:
    """Where one pair stands: `first` is the one ahead (the winner once decided), `wins`
    and `losses` its discordant tasks against `second`, `look` the 1-based task after
    which it was decided (None while undecided). A decided pair keeps the counts and
    p-value of the look that decided it: later tasks do not reopen it."""

    first: str
    second: str
    wins: int
    losses: int
    p_value: Fraction
    look: int | None


@dataclass(frozen=True)
class Decision:
    """The sequential comparison after the looks given: every pair, the nominal level c
    each look used, and the look after which the last pair was decided (None while one
    is not). `level` is the family-wise level promised, `share` each pair's part of it."""

    level: Fraction
    share: Fraction
    nominal: Fraction
    horizon: int
    pairs: tuple[PairDecision, ...]
    looks: int

    @property
    def decided_after(self) -> int | None:
        if not self.pairs or any(pair.look is None for pair in self.pairs):
            return None
        return max(pair.look for pair in self.pairs if pair.look is not None)


Outcomes = Mapping[str, bool | None]
"""One task's outcome per contestant: resolved, not resolved, or None (no score: a usage
limit, an unreliable grader, a score not made): a pair counts a task only when both of
its contestants have one."""


def decide(
    contestants: Sequence[str], looks: Sequence[Outcomes], *, level: Fraction, horizon: int
) -> Decision:
    """Every pair of `contestants` tested after each task of `looks`, in their order.

    `looks` holds the outcomes of the tasks done so far, in the race's order; `horizon`
    is how many tasks the bout has in all, which fixes the nominal level. A pair is
    decided at the first look whose p-value is ≤ that level, in favour of the agent
    that was right on more of their discordant tasks; nothing after reopens it.
    """
    if len(looks) > horizon:
        raise ValueError(f"{len(looks)} looks at a bout of {horizon} tasks")
    share = pair_share(level, len(contestants))
    nominal = pocock_level(horizon, share)
    limits = _limits(horizon, nominal)
    pairs = []
    for one, other in combinations(contestants, 2):
        wins = losses = 0
        look: int | None = None
        for index, outcomes in enumerate(looks, start=1):
            mine, theirs = outcomes.get(one), outcomes.get(other)
            if mine is None or theirs is None or mine == theirs:
                continue
            wins, losses = (wins + 1, losses) if mine else (wins, losses + 1)
            if min(wins, losses) <= limits[wins + losses]:
                look = index
                break
        ahead = wins >= losses
        pairs.append(
            PairDecision(
                first=one if ahead else other,
                second=other if ahead else one,
                wins=max(wins, losses),
                losses=min(wins, losses),
                p_value=mcnemar_p(wins, losses),
                look=look,
            )
        )
    return Decision(
        level=level,
        share=share,
        nominal=nominal,
        horizon=horizon,
        pairs=tuple(pairs),
        looks=len(looks),
    )


def first_trials(names: Sequence[str]) -> list[str]:
    """The names of `names` that are a contestant's first trial (`codex`, not `codex#2`):
    each agent is compared on one attempt per task, as in the report's Agents table."""
    return [name for name in names if author_identity(name) == name]


def task_outcomes(
    contestants: Sequence[str], scores: Mapping[str, Resolution], control: Resolution | None
) -> dict[str, bool | None]:
    """One task's outcome per contestant, as the report counts it: resolved or not, and
    no outcome for a quota, a score not made, or a task whose grader is unreliable."""
    if unreliable_grader(control) is not None:
        return dict.fromkeys(contestants)
    found: dict[str, bool | None] = {}
    for name in contestants:
        score = scores.get(name)
        found[name] = (
            None if score is None or score.status == "quota" else score.status == "resolved"
        )
    return found


def outcomes_so_far(
    order: Sequence[str],
    recorded: Collection[str],
    contestants: Sequence[str],
    resolutions: ResolutionSet,
) -> list[dict[str, bool | None]]:
    """The looks the comparison has had: the tasks of `order` (the race's), up to the
    first one whose contestants' attempts are not all `recorded`, with their outcomes.

    Looking in the race's order, never in the order attempts happened to end, makes the
    decision a function of the stored records alone: a restart, or the report, finds
    the same one.
    """
    found = []
    for task in order:
        if task not in recorded:
            break
        found.append(
            task_outcomes(
                contestants, resolutions.patches.get(task, {}), resolutions.controls.get(task)
            )
        )
    return found
