"""The sequential McNemar comparison: exact against enumeration, and by simulation.

The simulation races agents on made-up bouts shaped like recorded ones: tasks differ in
difficulty, so two agents are often both right or both wrong, and only the rest is
evidence. With a fixed seed it is the same every run. Its margin for Monte Carlo error
is three standard errors of a binomial share at the promised level.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from bugbout_tui.report.metrics import mcnemar_exact
from bugbout_tui.rules.sequential import (
    crossing_chance,
    decide,
    mcnemar_p,
    pair_share,
    pocock_level,
)

ALPHA = Fraction(1, 20)


def _brute_crossing(horizon: int, level: Fraction) -> Fraction:
    """The chance of ever crossing, by walking every one of the 2ⁿ sequences."""
    crossed = 0
    for signs in itertools.product((0, 1), repeat=horizon):
        wins = 0
        for n, sign in enumerate(signs, start=1):
            wins += sign
            if mcnemar_p(wins, n - wins) <= level:
                crossed += 1
                break
    return Fraction(crossed, 2**horizon)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 0), (3, 4), (9, 2), (12, 12)])
def test_the_exact_p_value_is_the_reports(b: int, c: int) -> None:
    assert float(mcnemar_p(b, c)) == mcnemar_exact(b, c)


@pytest.mark.parametrize("horizon", [1, 4, 7, 10, 13])
@pytest.mark.parametrize("level", [Fraction(1, 20), Fraction(1, 8), Fraction(3, 10)])
def test_the_crossing_chance_is_what_every_path_gives(horizon: int, level: Fraction) -> None:
    assert crossing_chance(horizon, level) == _brute_crossing(horizon, level)


@pytest.mark.parametrize("horizon", [6, 10, 13, 30])
def test_the_pocock_level_is_the_largest_that_keeps_the_promise(horizon: int) -> None:
    nominal = pocock_level(horizon, ALPHA)
    assert 0 < nominal <= ALPHA
    assert crossing_chance(horizon, nominal) <= ALPHA
    greater = sorted(
        {
            p
            for n in range(1, horizon + 1)
            for k in range(n + 1)
            if (p := mcnemar_p(k, n - k)) > nominal
        }
    )
    assert crossing_chance(horizon, greater[0]) > ALPHA


def test_looking_after_every_task_at_the_plain_level_breaks_the_promise() -> None:
    # Why a correction is needed at all: 30 looks at 0.05 are wrong far more often.
    assert crossing_chance(30, ALPHA) > Fraction(2, 25)
    assert pocock_level(30, ALPHA) == Fraction(1, 64)


def test_too_few_tasks_can_decide_nothing() -> None:
    # Four tasks all one way give p = 0.125: nothing within 0.05 is reachable.
    assert pocock_level(4, ALPHA) == 0
    decision = decide(["a", "b"], [{"a": True, "b": False}] * 4, level=ALPHA, horizon=4)
    assert decision.pairs[0].look is None
    assert decision.decided_after is None


def test_the_level_is_shared_between_the_pairs() -> None:
    assert pair_share(ALPHA, 2) == ALPHA
    assert pair_share(ALPHA, 3) == ALPHA / 3
    assert pair_share(ALPHA, 4) == ALPHA / 6


def test_a_pair_is_decided_at_its_first_crossing_and_stays_so() -> None:
    # 30 tasks at 0.05: c = 1/64, so seven discordant tasks all one way decide (p = 1/64).
    right, wrong = {"a": True, "b": False}, {"a": False, "b": True}
    both = {"a": True, "b": True}
    looks = [both, right, right, right, both, right, right, right, right, wrong, wrong]
    decision = decide(["a", "b"], looks, level=ALPHA, horizon=30)
    (pair,) = decision.pairs
    assert (pair.first, pair.second, pair.wins, pair.losses) == ("a", "b", 7, 0)
    assert pair.look == 9
    assert pair.p_value == Fraction(1, 64)
    assert decision.decided_after == 9
    assert decision.nominal == Fraction(1, 64)


def test_a_task_without_both_scores_is_no_evidence_for_the_pair() -> None:
    looks = [{"a": True, "b": None}, {"a": None, "b": False}] * 10
    decision = decide(["a", "b"], looks, level=ALPHA, horizon=30)
    assert (decision.pairs[0].wins, decision.pairs[0].losses) == (0, 0)


def test_the_bout_is_decided_after_its_last_pair() -> None:
    # c beats a and b from the start; a and b tie until a wins seven straight.
    nominal = pocock_level(30, ALPHA / 3)
    needed = next(n for n in range(1, 31) if mcnemar_p(n, 0) <= nominal)
    assert needed == 9
    looks = [{"a": True, "b": True, "c": True}] * 2
    looks += [{"a": False, "b": False, "c": True}] * 9
    looks += [{"a": True, "b": False, "c": True}] * 12
    decision = decide(["a", "b", "c"], looks, level=ALPHA, horizon=30)
    assert decision.share == ALPHA / 3
    by_pair = {(p.first, p.second): p.look for p in decision.pairs}
    assert by_pair == {("c", "a"): 2 + needed, ("c", "b"): 2 + needed, ("a", "b"): 11 + needed}
    assert decision.decided_after == 11 + needed


# --- simulation --------------------------------------------------------------------


def _bout(rng: random.Random, skills: list[float], tasks: int) -> list[dict[str, bool]]:
    """One bout's outcomes: each task has a difficulty, each agent a skill, and an agent
    resolves a task with the logistic chance of skill minus difficulty."""
    outcomes = []
    for _ in range(tasks):
        difficulty = rng.gauss(0.0, 1.5)
        outcomes.append(
            {
                f"agent{i}": rng.random() < 1 / (1 + math.exp(difficulty - skill))
                for i, skill in enumerate(skills)
            }
        )
    return outcomes


def _simulate(
    skills: list[float], tasks: int, bouts: int, *, seed: int, level: Fraction = ALPHA
) -> tuple[float, float]:
    """The share of bouts with a wrongly decided pair (a difference declared between
    equal agents, or the worse one named better), and the mean tasks raced."""
    rng = random.Random(seed)
    names = [f"agent{i}" for i in range(len(skills))]
    wrong = 0
    used = 0
    for _ in range(bouts):
        decision = decide(names, _bout(rng, skills, tasks), level=level, horizon=tasks)
        for pair in decision.pairs:
            if pair.look is None:
                continue
            first, second = (skills[names.index(pair.first)], skills[names.index(pair.second)])
            if first <= second:
                wrong += 1
                break
        used += decision.decided_after or tasks
    return wrong / bouts, used / bouts


def _margin(bouts: int, level: Fraction = ALPHA) -> float:
    """Three standard errors of a share at `level` over `bouts`."""
    share = float(level)
    return 3 * math.sqrt(share * (1 - share) / bouts)


@pytest.mark.parametrize("skills", [[0.0, 0.0], [0.5, 0.5, 0.5], [0.0, 0.0, 1.5]])
def test_simulated_bouts_decide_wrongly_no_more_often_than_promised(skills: list[float]) -> None:
    bouts = 3000
    error, _ = _simulate(skills, 40, bouts, seed=16)
    assert error <= float(ALPHA) + _margin(bouts)


def test_simulated_coin_flip_walks_match_the_exact_chance() -> None:
    # Every task discordant and fair: the simulated error is the computed chance itself.
    bouts, horizon = 4000, 30
    rng = random.Random(7)
    nominal = pocock_level(horizon, ALPHA)
    crossed = naive = 0
    for _ in range(bouts):
        looks = [{"a": (w := rng.random() < 0.5), "b": not w} for _ in range(horizon)]
        crossed += decide(["a", "b"], looks, level=ALPHA, horizon=horizon).pairs[0].look is not None
        wins = list(itertools.accumulate(look["a"] for look in looks))
        naive += any(mcnemar_p(w, n - w) <= ALPHA for n, w in enumerate(wins, start=1))
    exact = float(crossing_chance(horizon, nominal))
    assert abs(crossed / bouts - exact) <= 3 * math.sqrt(exact * (1 - exact) / bouts)
    # The same walks looked at with the plain level each time: the simulation sees it.
    assert naive / bouts > float(ALPHA) + _margin(bouts)


def test_a_real_difference_stops_the_bout_early() -> None:
    error, used = _simulate([1.5, -1.5], 40, 1000, seed=16)
    assert error <= float(ALPHA) + _margin(1000)
    assert used < 0.75 * 40
