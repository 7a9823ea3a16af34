"""How well each judge policy picks, on populations of agents of graded skill.

No agent or test runs. Each recorded case (`benchmarks/data/judge-cases.json`, made by
`tools/record_judge_cases.py` on real histories) holds one task's real cross-examination
of three kinds of patch — the maintainers' fix (`right`), half of its hunks (`partial`),
a change that fixes nothing (`wrong`) — with the fix's tests and the suite, and each
patch's status under the hidden tests. For every seed, every case is raced by:

- four contestants, right with chance strong .75, good .57, fair .36, weak .20. Right:
  the fix, and a non-empty share of the fix's reproductions as its tests (in one
  population, sometimes also a test only its own patch passes). Wrong: the partial patch
  (when the case has one, half the time) or the wrong one, and either a smoke test that
  reproduces nothing or an *overfit* test, which fails on the unfixed code and passes
  only on its own patch;
- one examiner that only writes tests: the fix's reproductions (with a chance the
  population sets), otherwise a smoke test or one that no patch passes.

The matrix each population would have produced is put together from the recorded cells
(an author's tests on a tree are the recorded tests on that tree's kind of patch), and
all five policies judge it. Printed per population and policy, over all seeds: right,
wrong and abstained picks; the share of the gap from the best single agent to the
oracle that the picks close, with a 95% bootstrap interval over seeds; and the merge
gate's precision and recall. Target, in every population: `credible` closes at least
ten points more of the gap than `majority` (the difference's interval above 0), with no
more wrong picks, and a gate precision of at least 0.95. The whole run takes seconds.

    python benchmarks/judge.py [--seeds 200] [--population NAME] [--cases PATH] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkit.judge_cases import CASES, Archetype, JudgeCase, load_cases
from benchkit.options import parse_args

from bugbout_tui.core.models import Author, Cell, Matrix, PatchFacts, TreeRun
from bugbout_tui.report.metrics import bootstrap_interval
from bugbout_tui.rules.judge import POLICIES, Policy, judge_all

SKILLS = {"strong": 0.75, "good": 0.57, "fair": 0.36, "weak": 0.20}
EXAMINER = "tests"
SMOKE = "test_smoke"
OWN = "test_own_reading"
GAP_MARGIN = 0.10
"""How much more of the gap `credible` must close than `majority` to count as clearly."""


@dataclass(frozen=True)
class Entrant:
    """One member of the population on one task: its patch (None for the examiner) and
    the kind of tests it wrote."""

    name: str
    patch: Archetype | None
    tests: str
    """`reproduce` (a share of the fix's reproductions), `smoke`, `overfit` or `none`
    (a test no patch passes)."""
    chosen: tuple[str, ...] = ()
    """Under `reproduce`, which of the fix's reproductions."""
    overspecified: bool = False
    """Under `reproduce`, whether it also wrote a test only its own patch passes (one
    that asserts its own wording of an error, say)."""


@dataclass(frozen=True)
class Population:
    """Who races each case: the contestants' skills and what the others write."""

    skills: dict[str, float]
    examiner: float
    """The chance the tests-only agent reproduces the bug."""
    overspecify: float
    """The chance a right contestant also writes a test only its own patch passes."""


POPULATIONS = {
    "as first measured": Population(SKILLS, examiner=0.5, overspecify=0.0),
    "a sharper examiner": Population(SKILLS, examiner=0.9, overspecify=0.0),
    "right agents over-specify": Population(SKILLS, examiner=0.5, overspecify=0.3),
}
"""The population the judge was first measured with, and two that stress `credible`'s
bar from either side: more confirmed evidence, and right authors whose own extra test
every other patch fails."""


@dataclass
class Tally:
    """One policy's record over every draw."""

    right: int = 0
    wrong: int = 0
    abstained: int = 0
    approved_right: int = 0
    approved_wrong: int = 0


@dataclass(frozen=True)
class Seed:
    """One seed's draw of every case: what each policy got right, the agents and the
    oracle, so intervals can resample seeds."""

    right: dict[Policy, int]
    agents: Counter[str]
    oracle: int


def draw_population(case: JudgeCase, rng: random.Random, population: Population) -> list[Entrant]:
    reproductions = _reproductions(case)
    partial = "partial" in case.matrix.trees
    entrants: list[Entrant] = []
    for name, skill in population.skills.items():
        if rng.random() < skill:
            chosen = _share(reproductions, rng)
            extra = rng.random() < population.overspecify
            entrants.append(Entrant(name, "right", "reproduce", chosen, extra))
            continue
        patch: Archetype = "partial" if partial and rng.random() < 0.5 else "wrong"
        entrants.append(Entrant(name, patch, rng.choice(("smoke", "overfit"))))
    if rng.random() < population.examiner:
        entrants.append(Entrant(EXAMINER, None, "reproduce", _share(reproductions, rng)))
    else:
        entrants.append(Entrant(EXAMINER, None, rng.choice(("smoke", "none"))))
    return entrants


def _reproductions(case: JudgeCase) -> list[str]:
    base = case.matrix.trees["base"].cells.get("right", {})
    return sorted(test for test, cell in base.items() if cell.outcome in ("failed", "error"))


def _share(tests: Sequence[str], rng: random.Random) -> tuple[str, ...]:
    return tuple(sorted(rng.sample(list(tests), rng.randint(1, len(tests)))))


def compose(case: JudgeCase, entrants: Sequence[Entrant]) -> Matrix:
    """The matrix these entrants would have produced, from the recorded cells."""
    recorded = case.matrix
    sizes = {patch.contestant: patch.source_size for patch in recorded.patches}
    patched = [entrant for entrant in entrants if entrant.patch is not None]
    authors = [
        Author(
            name=entrant.name,
            kind="examiner" if entrant.patch is None else "contestant",
            vendor=entrant.name,
            tests=list(_tests_of(entrant)),
        )
        for entrant in entrants
    ]
    suite = next((author for author in recorded.authors if author.kind == "suite"), None)
    if suite is not None:
        authors.append(suite)
    trees = {"base": _tree(recorded, "base", "base", entrants, suite is not None)}
    for entrant in patched:
        assert entrant.patch is not None
        trees[entrant.name] = _tree(recorded, entrant.patch, entrant.name, entrants, suite)
    return Matrix(
        task=recorded.task,
        authors=authors,
        patches=[
            PatchFacts(contestant=e.name, vendor=e.name, source_size=sizes[e.patch or ""])
            for e in patched
        ],
        trees=trees,
    )


def _tests_of(entrant: Entrant) -> tuple[str, ...]:
    if entrant.tests == "reproduce":
        return (*entrant.chosen, *((OWN,) if entrant.overspecified else ()))
    return (SMOKE,) if entrant.tests == "smoke" else (OWN,)


def _tree(
    recorded: Matrix, kind: str, name: str, entrants: Sequence[Entrant], suite: object
) -> TreeRun:
    source = recorded.trees[kind]
    if source.error is not None:
        return TreeRun(tree=name, error=source.error)
    fix = source.cells.get("right", {})
    cells: dict[str, dict[str, Cell]] = {}
    for entrant in entrants:
        if entrant.tests == "reproduce":
            cells[entrant.name] = {test: fix[test] for test in entrant.chosen if test in fix}
            if entrant.overspecified:
                own = name == entrant.name
                cells[entrant.name][OWN] = Cell(outcome="passed" if own else "failed")
        elif entrant.tests == "smoke":
            cells[entrant.name] = {SMOKE: Cell(outcome="passed")}
        else:
            own = entrant.tests == "overfit" and name == entrant.name
            cells[entrant.name] = {OWN: Cell(outcome="passed" if own else "failed")}
    if suite:
        cells["suite"] = dict(source.cells.get("suite", {}))
    return TreeRun(tree=name, cells=cells)


def race(
    cases: Sequence[JudgeCase], seeds: int, population: Population
) -> tuple[dict[Policy, Tally], list[Seed]]:
    """Every policy's tally over all draws, and each seed's figures."""
    tallies = {policy: Tally() for policy in POLICIES}
    drawn: list[Seed] = []
    for seed in range(seeds):
        rng = random.Random(seed)
        right_here = dict.fromkeys(POLICIES, 0)
        agents: Counter[str] = Counter()
        oracle = 0
        for case in cases:
            entrants = draw_population(case, rng, population)
            truth = {e.name: case.truth.get(e.patch) == "resolved" for e in entrants if e.patch}
            agents.update(name for name, right in truth.items() if right)
            oracle += any(truth.values())
            for policy, verdict in judge_all(compose(case, entrants)).items():
                tally = tallies[policy]
                if verdict.pick is None:
                    tally.abstained += 1
                elif truth[verdict.pick]:
                    tally.right += 1
                    right_here[policy] += 1
                else:
                    tally.wrong += 1
                for assessment in verdict.assessments:
                    if assessment.approved:
                        if truth[assessment.patch]:
                            tally.approved_right += 1
                        else:
                            tally.approved_wrong += 1
        drawn.append(Seed(right_here, agents, oracle))
    return tallies, drawn


def gap_closed(seeds: Sequence[Seed], policy: Policy, best: str) -> float:
    """The share of the gap from the best single agent to the oracle that the policy's
    picks close, pooled over seeds; 0 when there is no gap to close."""
    picked = sum(seed.right[policy] for seed in seeds)
    single = sum(seed.agents[best] for seed in seeds)
    oracle = sum(seed.oracle for seed in seeds)
    return 0.0 if oracle == single else (picked - single) / (oracle - single)


def report(name: str, population: Population, cases: Sequence[JudgeCase], seeds: int) -> bool:
    """Print one population's table; whether `credible` met its target there."""
    started = time.perf_counter()
    tallies, drawn = race(cases, seeds, population)
    seconds = time.perf_counter() - started
    agents: Counter[str] = sum((seed.agents for seed in drawn), Counter())
    best = max(population.skills, key=lambda agent: (agents[agent], agent))
    oracle = sum(seed.oracle for seed in drawn)
    print(
        f"{name}: examiner reproduces {population.examiner:.0%}, right agents over-specify "
        f"{population.overspecify:.0%}; {len(cases) * seeds} draws judged in {seconds:.1f} s"
    )
    print(
        "  right patches: "
        + ", ".join(
            f"{agent} ({skill:.2f}) {agents[agent]}" for agent, skill in population.skills.items()
        )
        + f"; best single {best} {agents[best]}; oracle {oracle}"
    )
    print(
        f"  {'policy':<13}{'right':>7}{'wrong':>7}{'abstain':>9}{'gap closed':>12}"
        f"{'95% interval':>18}{'gate prec.':>12}{'recall':>8}"
    )
    right_patches = sum(agents.values())
    closed: dict[Policy, float] = {}
    precision: dict[Policy, float | None] = {}
    for policy, tally in tallies.items():
        closed[policy] = gap_closed(drawn, policy, best)
        spread = bootstrap_interval(drawn, lambda sample, p=policy: gap_closed(sample, p, best))
        approved = tally.approved_right + tally.approved_wrong
        precision[policy] = tally.approved_right / approved if approved else None
        recall = tally.approved_right / right_patches if right_patches else None
        shown = "" if spread is None else f"[{spread.low:+.2f}, {spread.high:+.2f}]"
        print(
            f"  {policy:<13}{tally.right:>7}{tally.wrong:>7}{tally.abstained:>9}"
            f"{closed[policy]:>+12.2f}{shown:>18}"
            f"{_figure(precision[policy]):>12}{_figure(recall):>8}"
        )
    difference = bootstrap_interval(
        drawn,
        lambda sample: gap_closed(sample, "credible", best) - gap_closed(sample, "majority", best),
    )
    margin = closed["credible"] - closed["majority"]
    gate = precision["credible"] or 0.0
    wrong, majority_wrong = tallies["credible"].wrong, tallies["majority"].wrong
    clearly = margin >= GAP_MARGIN and (difference is None or difference.low > 0)
    met = clearly and wrong <= majority_wrong and gate >= 0.95
    between = "" if difference is None else f" [{difference.low:+.2f}, {difference.high:+.2f}]"
    print(
        f"  credible - majority: {margin:+.2f} of the gap{between}, wrong picks {wrong} "
        f"against {majority_wrong}, gate precision {gate:.2f}: {'met' if met else 'NOT met'}"
    )
    print()
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="draws of every case")
    parser.add_argument("--cases", type=Path, default=CASES, help="the recorded cases")
    parser.add_argument(
        "--population", choices=sorted(POPULATIONS), help="one population only (default: all)"
    )
    options = parse_args(parser, has_target=True, seeds=2)
    data = load_cases(options.cases)
    # A right agent writes some of the fix's reproductions: a case whose fix's tests
    # reproduce nothing on the base (its failing tests error at import) gives it none.
    cases = [
        case
        for case in data.cases
        if case.truth.get("right") == "resolved" and _reproductions(case)
    ]
    projects = Counter(case.project for case in cases)
    print(
        f"cases: {len(cases)} ({', '.join(f'{p} {n}' for p, n in sorted(projects.items()))}); "
        f"seeds: {options.seeds}; intervals: 95% bootstrap over seeds"
    )
    print()
    chosen = [options.population] if options.population else list(POPULATIONS)
    met = [report(name, POPULATIONS[name], cases, options.seeds) for name in chosen]
    print(
        f"target (credible closes at least {GAP_MARGIN:.2f} more of the gap than majority, its "
        f"interval above 0, no more wrong picks, gate precision at least 0.95): "
        f"met in {sum(met)} of {len(met)} populations"
    )
    return 0 if all(met) or options.smoke else 1


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    sys.exit(main())
