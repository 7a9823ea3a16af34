"""The statistics a 30-bug report can honestly carry, computed exactly.

A report on a few dozen bugs lives or dies by its error bars: 21 of 30 and 20 of 30 look
different in a table and are not. So every proportion gets a Wilson interval (sound at
small n and at 0 or n successes, where the textbook interval collapses), paired results
get an exact McNemar test rather than a normal approximation, and AUC counts ties as
half, because test-pass shares take few distinct values and tie often. Repeated trials
give per-task rates rather than yes-or-no outcomes: their means get a bootstrap interval
over tasks, and a paired comparison of rates an exact sign-flip test. The share of the
gap from the best single agent to the oracle that the judge closes is a ratio of sums
over tasks, bootstrapped the same way, leaving out the resamples where it is undefined.
Counting is done in integers or fractions, so a figure never depends on float rounding.
"""

from __future__ import annotations

import math
import random
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction
from typing import NamedTuple, TypeVar

Z95 = 1.959964
"""The two-sided 95% point of the standard normal distribution."""


class Interval(NamedTuple):
    """A confidence interval for a proportion, both ends within [0, 1]."""

    low: float
    high: float


def wilson(successes: float, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval for `successes` out of `n`; None when `n` is 0.

    `successes` may be fractional (an expected count, such as a random agent's score):
    the formula only needs the observed share.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and n, got {successes} of {n}")
    if n == 0:
        return None
    share = successes / n
    z2 = z * z
    scale = 1 + z2 / n
    centre = (share + z2 / (2 * n)) / scale
    half = z / scale * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    # At 0 or n successes one end is exactly 0 or 1; say so rather than trust rounding.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts.

    `b` and `c` count the pairs where only the first, or only the second, system was
    right. Under the null hypothesis each discordant pair falls either way with
    probability one half, so the p-value is min(1, 2·P[X ≤ min(b, c)]) for
    X ~ Binomial(b + c, 1/2); with no discordant pair there is no evidence at all (1.0).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts cannot be negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Mann-Whitney AUC: P(positive scores higher) + ½·P(tie); None if a class is empty.

    Read it as: pick one right and one wrong patch at random; how often does this
    evidence rank the right one higher? 0.5 is a coin flip.
    """
    if not positives or not negatives:
        return None
    ordered = sorted(negatives)
    half_wins = 0
    for score in positives:
        below = bisect_left(ordered, score)
        tied = bisect_right(ordered, score) - below
        half_wins += 2 * below + tied
    return float(Fraction(half_wins, 2 * len(positives) * len(negatives)))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator 1 - C(n-c, k)/C(n, k) for one task.

    `n` trials, `c` of them right: the chance that at least one of k trials drawn
    without replacement is right. C(n-c, k) is 0 when k > n-c, which gives 1.
    """
    if not 0 <= c <= n:
        raise ValueError(f"right trials must lie between 0 and n, got {c} of {n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must lie between 1 and the number of trials {n}, got {k}")
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


class TaskMean(NamedTuple):
    """A per-task figure averaged over the tasks that have one, with its interval."""

    value: float | None
    """The mean; None when no task has the figure."""
    tasks: int
    """Tasks behind the mean."""
    interval: Interval | None
    """The 95% bootstrap interval over those tasks; None below two tasks."""


def at_k(
    runs: Sequence[tuple[int, int]], k: int, estimator: Callable[[int, int, int], float]
) -> TaskMean:
    """A per-task estimator at k (`pass_at_k`, `pass_hat_k`) over (trials, right) pairs,
    one per task, averaged over the tasks with at least k trials: a task with fewer has
    no value rather than a guessed one."""
    values = [estimator(n, c, k) for n, c in runs if n >= k]
    if not values:
        return TaskMean(None, 0, None)
    return TaskMean(mean(values), len(values), bootstrap_interval(values, mean))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The unbiased pass^k estimator C(c, k)/C(n, k) for one task.

    `n` trials, `c` of them right: the chance that k trials drawn without replacement
    are all right, the reliability a user feels when they run the agent k times. It is
    the analogue of `pass_at_k` for "all" rather than "any", and C(c, k) is 0 when
    k > c. With k = 1 both are c/n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"right trials must lie between 0 and n, got {c} of {n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must lie between 1 and the number of trials {n}, got {k}")
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def consistency_at_k(runs: Sequence[Sequence[Hashable]], k: int) -> float | None:
    """The share of tasks on which k repeated runs gave the same result.

    `runs` holds, per task, the results of its runs in trial order; only tasks with at
    least k runs count, and their first k results are compared. This measures whether
    an agent does the same thing twice, separately from whether what it does is right.
    None when no task has k runs.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    counted = [results[:k] for results in runs if len(results) >= k]
    if not counted:
        return None
    same = sum(all(result == results[0] for result in results) for results in counted)
    return float(Fraction(same, len(counted)))


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no values (shown as "n/a", never as 0)."""
    return float(statistics.median(values)) if values else None


BOOTSTRAP_RESAMPLES = 2000
"""Resamples behind every bootstrap interval: the 2.5% and 97.5% points are then the
50th and the 1950th of them."""
BOOTSTRAP_SEED = 16
"""The one seed of every bootstrap, so the same records give the same report."""

T = TypeVar("T")


class Bootstrap(NamedTuple):
    """A percentile-bootstrap interval, and how many resamples it had to leave out."""

    interval: Interval | None
    undefined: int
    """Resamples on which the statistic is undefined (it returned None), left out."""


def bootstrap(
    samples: Sequence[T],
    statistic: Callable[[Sequence[T]], float | None],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Bootstrap:
    """The 95% percentile-bootstrap interval of `statistic` over `samples` (tasks).

    Each resample draws len(samples) tasks with replacement and recomputes the
    statistic; the interval runs from the 2.5% to the 97.5% point of those values
    (nearest rank). Tasks are what is resampled because they are the independent
    units: a task's trials share its difficulty, so resampling trials would claim a
    precision the bout does not have. None below two tasks, where every resample is
    the one task and the "interval" would be a point.

    A statistic may be undefined on some resamples (a ratio whose denominator they
    happen to make 0): it returns None there, those resamples are left out and counted,
    and the points are taken among the rest, so the interval is conditional on the
    statistic existing. None when no resample has it.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    n = len(samples)
    if n < 2:
        return Bootstrap(None, 0)
    rng = random.Random(seed)
    drawn = [statistic([samples[i] for i in rng.choices(range(n), k=n)]) for _ in range(resamples)]
    values = sorted(value for value in drawn if value is not None)
    undefined = resamples - len(values)
    if not values:
        return Bootstrap(None, undefined)
    low = values[max(0, math.ceil(0.025 * len(values)) - 1)]
    high = values[max(0, math.ceil(0.975 * len(values)) - 1)]
    return Bootstrap(Interval(low, high), undefined)


def bootstrap_interval(
    samples: Sequence[T],
    statistic: Callable[[Sequence[T]], float | None],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval | None:
    """The interval of `bootstrap`, for a statistic every resample has."""
    return bootstrap(samples, statistic, resamples=resamples, seed=seed).interval


class GapShare(NamedTuple):
    """The share of the gap from the best single agent to the oracle that a way of
    picking closes, with its interval."""

    value: float | None
    """None when there is no gap: the best agent was right wherever any patch was."""
    interval: Interval | None
    """The 95% percentile bootstrap over tasks; None with no gap or below two tasks."""
    undefined: int
    """Resamples that drew no task with a gap, left out of the interval."""


def gap_closed(
    tasks: Sequence[tuple[Fraction, Fraction, Fraction]],
) -> GapShare:
    """(judge − best) / (oracle − best), summed over `tasks`, with a paired bootstrap.

    Each task is (judge, best, oracle): 1 if the judge's pick was right there, else 0;
    the best single agent's result there (1 or 0, or its resolved rate with repeated
    trials); 1 if any patch was right there, else 0. So 1 means the judge did as well as
    the oracle, 0 as well as always taking the best agent, and a negative share that it
    did worse than that agent. It is never above 1, as a pick is right only where some
    patch is; it has no floor, as the gap may be small and the judge's loss large.

    With no gap (oracle = best, summed) there is nothing to close and the share is None,
    not 0 or 1: the judge can only match the best agent or fall short of it there, and
    neither says how much of a gap it closes. Resamples are whole tasks, the judge's,
    the best agent's and the oracle's results kept together (paired), and the best
    agent is the one chosen on the whole bout, not chosen again per resample; a resample
    that draws no task with a gap is left out and counted (`Bootstrap`).
    """
    for judge, best, oracle in tasks:
        if not (0 <= judge <= oracle <= 1 and 0 <= best <= oracle):
            raise ValueError(
                f"a task's results must satisfy 0 ≤ judge, best ≤ oracle ≤ 1, got "
                f"judge {judge}, best {best}, oracle {oracle}"
            )
    # Scaled to whole numbers once, so each of the resamples sums integers.
    scale = math.lcm(*(value.denominator for task in tasks for value in task)) if tasks else 1
    pairs = [
        (int((judge - best) * scale), int((oracle - best) * scale)) for judge, best, oracle in tasks
    ]
    value = _share_closed(pairs)
    if value is None:
        return GapShare(None, None, 0)
    found = bootstrap(pairs, _share_closed)
    return GapShare(value, found.interval, found.undefined)


def _share_closed(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Summed (judge − best) over summed (oracle − best); None when the latter is 0."""
    gap = sum(gap for _, gap in pairs)
    if gap == 0:
        return None
    return float(Fraction(sum(closed for closed, _ in pairs), gap))


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean, summed exactly (`math.fsum`), of at least one value."""
    return math.fsum(values) / len(values)


def sign_flip_exact(differences: Sequence[Fraction]) -> float:
    """Two-sided exact sign-flip (paired permutation) p-value for a mean difference of 0.

    `differences` holds one paired difference per task (the judge's result minus an
    agent's resolved rate there). Under the null hypothesis the two are exchangeable on
    every task, so each difference is as likely to have come out with the other sign;
    the p-value is the share of the 2^m sign assignments whose sum is at least as far
    from 0 as the one observed. It is counted exactly, by convolving the tasks' ±d,
    never sampled. With every difference in {-1, 0, 1} it is the exact McNemar test.
    """
    scale = math.lcm(*(d.denominator for d in differences)) if differences else 1
    steps = [abs(int(d * scale)) for d in differences if d != 0]
    observed = abs(sum(int(d * scale) for d in differences))
    if not steps:
        return 1.0
    ways: dict[int, int] = {0: 1}
    for step in steps:
        moved: dict[int, int] = {}
        for total, count in ways.items():
            for signed in (total + step, total - step):
                moved[signed] = moved.get(signed, 0) + count
        ways = moved
    extreme = sum(count for total, count in ways.items() if abs(total) >= observed)
    return float(min(Fraction(1), Fraction(extreme, 2 ** len(steps))))
