"""The report's statistics against values worked out by hand (or from closed forms)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from bugbout_tui.report.metrics import (
    BOOTSTRAP_RESAMPLES,
    Z95,
    Bootstrap,
    Interval,
    auc,
    bootstrap,
    bootstrap_interval,
    consistency_at_k,
    gap_closed,
    mcnemar_exact,
    mean,
    median,
    pass_at_k,
    pass_hat_k,
    sign_flip_exact,
    wilson,
)

Z2 = Z95 * Z95

# --- Wilson --------------------------------------------------------------------------


def test_wilson_is_undefined_without_trials() -> None:
    assert wilson(0, 0) is None


def test_wilson_at_zero_successes_starts_at_zero() -> None:
    # With no success the upper end has the closed form z²/(n + z²).
    interval = wilson(0, 10)
    assert interval is not None
    assert interval.low == 0.0
    assert interval.high == pytest.approx(Z2 / (10 + Z2), abs=1e-12)
    assert interval.high == pytest.approx(0.2775, abs=1e-4)


def test_wilson_at_all_successes_ends_at_one() -> None:
    # Mirror image of the zero case: the lower end is n/(n + z²).
    interval = wilson(10, 10)
    assert interval is not None
    assert interval.high == 1.0
    assert interval.low == pytest.approx(10 / (10 + Z2), abs=1e-12)
    assert interval.low == pytest.approx(0.7225, abs=1e-4)


def test_wilson_for_21_of_30_matches_the_published_interval() -> None:
    # 21/30 is [0.521, 0.833]. By hand: centre (0.7 + 0.064024)/1.128049 = 0.677297,
    # half-width 1.737481 · sqrt(0.007 + 0.001067) = 0.156055.
    interval = wilson(21, 30)
    assert interval is not None
    assert interval.low == pytest.approx(0.5212, abs=1e-4)
    assert interval.high == pytest.approx(0.8334, abs=1e-4)


def test_wilson_by_the_formula_for_a_middle_value() -> None:
    n, k = 30, 20
    p = k / n
    centre = (p + Z2 / (2 * n)) / (1 + Z2 / n)
    half = Z95 / (1 + Z2 / n) * math.sqrt(p * (1 - p) / n + Z2 / (4 * n * n))
    interval = wilson(k, n)
    assert interval is not None
    assert interval == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert interval.low == pytest.approx(0.4878, abs=1e-4)


def test_wilson_takes_an_expected_count() -> None:
    interval = wilson(1.5, 3)
    assert interval is not None
    assert interval.low < 0.5 < interval.high
    assert interval.low == pytest.approx(1 - interval.high, abs=1e-12)


@pytest.mark.parametrize(("successes", "n"), [(-1, 10), (11, 10), (1, -1)])
def test_wilson_refuses_impossible_counts(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson(successes, n)


# --- McNemar --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (1, 0, 1.0),  # 2 · ½ = 1
        (0, 1, 1.0),
        (2, 1, 1.0),  # 2 · (1 + 3)/8 = 1
        (5, 0, 0.0625),  # 2 · 1/32
        (0, 5, 0.0625),
        (6, 1, 0.125),  # 2 · (1 + 7)/128
        (2, 0, 0.5),
        (10, 0, 2 / 1024),
    ],
)
def test_mcnemar_exact_by_hand(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, abs=1e-15)


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="negative"):
        mcnemar_exact(-1, 2)


# --- AUC ------------------------------------------------------------------------------


def test_auc_counts_ties_as_half() -> None:
    # Pairs: 1>.5, 1>0, .5=.5 (half), .5>0 → (1 + 1 + 0.5 + 1) / 4.
    assert auc([1, 0.5], [0.5, 0]) == 0.875


def test_auc_of_identical_scores_is_a_coin_flip() -> None:
    assert auc([1, 1, 1], [1, 1]) == 0.5


def test_auc_perfect_and_reversed() -> None:
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.5, 0.9]) == 0.0


def test_auc_with_repeated_scores_on_both_sides() -> None:
    # pos [0, 0, 1] vs neg [0]: half, half, win → 2/3.
    assert auc([0, 0, 1], [0]) == pytest.approx(2 / 3)
    # pos [1, 1, 0, 0] vs neg [1, 1, 1]: six ties and six losses → 3/12.
    assert auc([1, 1, 0, 0], [1, 1, 1]) == 0.25


@pytest.mark.parametrize(("positives", "negatives"), [([], [0.5]), ([0.5], []), ([], [])])
def test_auc_is_undefined_for_an_empty_class(
    positives: list[float], negatives: list[float]
) -> None:
    assert auc(positives, negatives) is None


# --- pass@k, consistency@k, median ------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 1 - 3 / 5),  # 1 - C(3,1)/C(5,1)
        (2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (3, 1 - 1 / 10),  # 1 - C(3,3)/C(5,3)
        (4, 1.0),  # C(3,4) = 0: any 4 of 5 include a right one
        (5, 1.0),
    ],
)
def test_pass_at_k_for_two_right_of_five(k: int, expected: float) -> None:
    assert pass_at_k(5, 2, k) == pytest.approx(expected, abs=1e-15)


def test_pass_at_k_edges() -> None:
    assert pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(3, 3, 1) == 1.0


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_pass_at_k_refuses_impossible_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_consistency_counts_tasks_whose_k_runs_agree() -> None:
    runs = [
        ["resolved", "resolved", "resolved"],  # same
        ["resolved", "wrong-fix", "resolved"],  # differs
        ["no-fix", "no-fix", "no-fix"],  # same, though never right
        ["resolved", "resolved"],  # too few runs for k = 3: not counted
    ]
    assert consistency_at_k(runs, 3) == pytest.approx(2 / 3)
    # At k = 2 only the first two runs of each task are compared; all four count.
    assert consistency_at_k(runs, 2) == pytest.approx(3 / 4)


def test_consistency_without_enough_runs_is_undefined() -> None:
    assert consistency_at_k([["resolved"]], 2) is None
    assert consistency_at_k([], 1) is None
    with pytest.raises(ValueError):
        consistency_at_k([["resolved"]], 0)


def test_median() -> None:
    assert median([]) is None
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5


# --- pass^k -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 2 / 5),  # C(2,1)/C(5,1): one trial is right as often as c/n
        (5, 2, 2, 1 / 10),  # C(2,2)/C(5,2): both of 2 drawn right
        (5, 2, 3, 0.0),  # C(2,3) = 0: three right trials cannot be drawn from two
        (3, 2, 2, 1 / 3),  # C(2,2)/C(3,2)
        (5, 3, 3, 1 / 10),  # C(3,3)/C(5,3)
        (3, 3, 3, 1.0),
        (4, 0, 1, 0.0),
    ],
)
def test_pass_hat_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-15)


def test_pass_hat_1_is_pass_at_1() -> None:
    assert all(pass_hat_k(6, c, 1) == pass_at_k(6, c, 1) for c in range(7))


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (2, 1, 3)])
def test_pass_hat_k_refuses_impossible_arguments(n: int, c: int, k: int) -> None:
    """k > n included: a task with fewer trials than k has no pass^k, so the report
    leaves it out rather than guess."""
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


# --- bootstrap over tasks -----------------------------------------------------------------


def test_bootstrap_needs_two_tasks() -> None:
    assert bootstrap_interval([], mean) is None
    assert bootstrap_interval([0.5], mean) is None


def test_bootstrap_of_identical_tasks_is_that_value() -> None:
    assert bootstrap_interval([0.25] * 7, mean) == Interval(0.25, 0.25)


def test_bootstrap_is_reproducible_and_seeded() -> None:
    values = [0.0, 1.0, 1 / 3, 2 / 3, 1.0, 0.0, 0.5, 1.0]
    first = bootstrap_interval(values, mean)
    assert first is not None and first == bootstrap_interval(values, mean)
    assert first.low < mean(values) < first.high
    assert bootstrap_interval(values, mean, seed=1) != first


def test_bootstrap_ends_are_the_nearest_rank_percentiles() -> None:
    """Two tasks, 0 and 1: a resample's mean is 0, ½ or 1 with chances ¼, ½, ¼, so the
    2.5% point is 0 and the 97.5% point is 1 (each end holds far more than 2.5%)."""
    assert bootstrap_interval([0.0, 1.0], mean) == Interval(0.0, 1.0)
    # Three tasks, one right: the mean is 1 only when all three draws are it (1/27 ≈
    # 3.7% > 2.5%), so the upper end is 1; it is 0 with chance 8/27, so the lower is 0.
    assert bootstrap_interval([0.0, 0.0, 1.0], mean) == Interval(0.0, 1.0)


def test_bootstrap_matches_its_definition() -> None:
    """Against the percentile interval worked out from the same seeded draws."""
    values = [0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 2 / 3, 1 / 3, 1.0, 0.0]
    rng = random.Random(16)
    means = sorted(
        sum(values[i] for i in rng.choices(range(10), k=10)) / 10
        for _ in range(BOOTSTRAP_RESAMPLES)
    )
    found = bootstrap_interval(values, mean)
    assert found is not None
    assert found.low == pytest.approx(means[49]) and found.high == pytest.approx(means[1949])


def test_bootstrap_leaves_out_and_counts_the_resamples_without_a_value() -> None:
    """A statistic undefined on some resamples: the interval is taken among the rest."""
    values = [0.0, 1.0, 2.0]

    def positive_mean(sample: list[float]) -> float | None:
        return None if not any(sample) else mean(sample)

    rng = random.Random(16)
    draws = [[values[i] for i in rng.choices(range(3), k=3)] for _ in range(BOOTSTRAP_RESAMPLES)]
    kept = sorted(mean(draw) for draw in draws if any(draw))
    found = bootstrap(values, positive_mean)
    assert found.undefined == BOOTSTRAP_RESAMPLES - len(kept) > 0
    assert found.interval == Interval(
        kept[math.ceil(0.025 * len(kept)) - 1], kept[math.ceil(0.975 * len(kept)) - 1]
    )
    assert bootstrap(values, lambda _: None) == Bootstrap(None, BOOTSTRAP_RESAMPLES)
    assert bootstrap([1.0], positive_mean) == Bootstrap(None, 0)


def test_bootstrap_of_a_ratio_resamples_whole_tasks() -> None:
    """Resolved share over all trials: (resolved, trials) pairs stay together."""
    tasks = [(3, 3), (0, 3), (1, 2), (2, 3)]
    found = bootstrap_interval(tasks, lambda s: sum(r for r, _ in s) / sum(n for _, n in s))
    assert found is not None and 0.0 <= found.low < 6 / 11 < found.high <= 1.0


# --- the paired sign-flip test ------------------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(5, 0), (3, 1), (2, 2), (7, 2), (0, 0), (1, 9)])
def test_sign_flip_on_yes_or_no_outcomes_is_mcnemar(b: int, c: int) -> None:
    differences = [Fraction(1)] * b + [Fraction(-1)] * c + [Fraction(0)] * 4
    assert sign_flip_exact(differences) == pytest.approx(mcnemar_exact(b, c), abs=1e-15)


def test_sign_flip_with_rates_by_hand() -> None:
    # ±1 ± 1/2: sums ±3/2, ±1/2; |sum| ≥ 3/2 in 2 of 4.
    assert sign_flip_exact([Fraction(1), Fraction(1, 2)]) == 0.5
    # ±1 ± 1/3 ± 1/3: sums 5/3, 1, 1, 1/3 and their negatives; |sum| ≥ 5/3 in 2 of 8.
    assert sign_flip_exact([Fraction(1), Fraction(1, 3), Fraction(1, 3)]) == 0.25
    # ±2/3 ± 1/3 around an observed 1/3: every assignment is at least as far out.
    assert sign_flip_exact([Fraction(2, 3), Fraction(-1, 3)]) == 1.0
    assert sign_flip_exact([]) == 1.0


# --- the gap from the best single agent to the oracle -------------------------------------

ONE, NONE = Fraction(1), Fraction(0)


def test_the_gap_closed_is_judge_minus_best_over_oracle_minus_best() -> None:
    # The judge right on 3 of 4, the best agent on 1, the oracle on 4: 2 of the 3 bugs
    # the best agent missed.
    tasks = [(ONE, ONE, ONE), (ONE, NONE, ONE), (NONE, NONE, ONE), (ONE, NONE, ONE)]
    found = gap_closed(tasks)
    assert found.value == pytest.approx(2 / 3)
    assert found.interval is not None
    assert found.interval.low <= 2 / 3 <= found.interval.high <= 1.0


def test_a_judge_worse_than_the_best_agent_closes_a_negative_share() -> None:
    # The judge loses two bugs the best agent had and wins the one it missed: −1 of 1.
    tasks = [(NONE, ONE, ONE), (NONE, ONE, ONE), (ONE, NONE, ONE)]
    found = gap_closed(tasks)
    assert found.value == -1.0
    assert found.interval is not None and found.interval.low < 0


def test_with_no_gap_there_is_no_share() -> None:
    """The best agent right wherever any patch was: nothing to close, whether the judge
    matched it or fell short; the same when no patch was right at all."""
    matched = [(ONE, ONE, ONE), (NONE, NONE, NONE)]
    short = [(NONE, ONE, ONE), (NONE, NONE, NONE)]
    nothing = [(NONE, NONE, NONE)] * 3
    for tasks in (matched, short, nothing, []):
        assert gap_closed(tasks) == (None, None, 0)


def test_resamples_without_a_gap_are_left_out_and_counted() -> None:
    """One task the best agent missed and the judge won, one it missed and the judge
    lost, one where it was right: only a resample of that last task alone has no gap."""
    tasks = [(ONE, NONE, ONE), (NONE, NONE, ONE), (ONE, ONE, ONE)]
    found = gap_closed(tasks)
    assert found.value == 0.5
    rng = random.Random(16)
    draws = [rng.choices(range(3), k=3) for _ in range(BOOTSTRAP_RESAMPLES)]
    assert found.undefined == sum(set(draw) == {2} for draw in draws) > 0
    assert found.interval == Interval(0.0, 1.0)


def test_repeated_trials_count_the_best_agents_rate() -> None:
    # Right on 2 of 3 trials, then on 1 of 3: 1 bug expected, against the judge's 1.
    tasks = [(ONE, Fraction(2, 3), ONE), (NONE, Fraction(1, 3), ONE)]
    assert gap_closed(tasks).value == 0.0


def test_the_share_is_never_above_one() -> None:
    rng = random.Random(3)
    for _ in range(200):
        tasks = []
        for _ in range(rng.randint(1, 6)):
            oracle = Fraction(rng.randint(0, 1))
            judge = oracle * rng.randint(0, 1)
            best = oracle * Fraction(rng.randint(0, 3), 3)
            tasks.append((judge, best, oracle))
        found = gap_closed(tasks)
        assert found.value is None or found.value <= 1.0
        assert found.interval is None or found.interval.high <= 1.0


def test_a_task_right_for_the_judge_but_no_patch_is_refused() -> None:
    with pytest.raises(ValueError, match="judge, best ≤ oracle"):
        gap_closed([(ONE, NONE, NONE)])
