"""Properties every verdict must have, on random small matrices.

The matrices mix contestants (some with a second trial), examiners and the suite, give
every cell a random outcome, leave some cells out, and now and then fail a whole tree,
so the rules meet combinations no hand-written table thought of.
"""

from __future__ import annotations

import random
from typing import TypeVar, get_args

from hypothesis import given
from hypothesis import strategies as st

from bugbout_tui.core.models import Author, Cell, CellOutcome, Matrix, PatchFacts, TreeRun
from bugbout_tui.rules.judge import POLICIES, Verdict, author_identity, judge, judge_all

SEED_POLICIES = [policy for policy in POLICIES if policy != "credible"]
CONTESTANTS = ["alpha", "alpha#2", "beta", "gamma", "delta"]
EXAMINERS = ["exam-x", "exam-y"]
VENDORS = ["openai", "anthropic", "google"]
TESTS = ["t1", "t2", "t3"]
OUTCOMES: list[CellOutcome] = list(get_args(CellOutcome))
T = TypeVar("T")

LEANING = [*OUTCOMES, "passed", "failed"]
"""Outcomes to draw from, tilted toward the two that decide most verdicts."""


@st.composite
def matrices(draw: st.DrawFn) -> Matrix:
    identities = sorted({author_identity(name) for name in CONTESTANTS})
    vendor_of = {name: draw(st.sampled_from(VENDORS)) for name in identities}
    names = draw(st.permutations([*CONTESTANTS, *EXAMINERS, "suite"]))[
        : draw(st.sampled_from([3, 2, 4, 5, 1]))
    ]
    authors: list[Author] = []
    for name in names:
        if name == "suite":
            kind, vendor = "suite", None
        elif name in EXAMINERS:
            kind, vendor = "examiner", draw(st.sampled_from([*VENDORS, None]))
        else:
            kind, vendor = "contestant", vendor_of[author_identity(name)]
        tests = draw(st.lists(st.sampled_from(TESTS), min_size=1, max_size=3, unique=True))
        authors.append(
            Author.model_validate({"name": name, "kind": kind, "vendor": vendor, "tests": tests})
        )
    patches = draw(st.permutations(CONTESTANTS))[: draw(st.sampled_from([2, 3, 1, 4, 5, 0]))]
    trees: dict[str, TreeRun] = {}
    for tree in ["base", *patches]:
        fate = draw(st.integers(0, 11))
        if fate == 10:
            continue
        if fate == 11:
            trees[tree] = TreeRun(tree=tree, error="timeout")
            continue
        cells = {
            author.name: {
                test: Cell(outcome=draw(st.sampled_from(LEANING)))
                for test in author.tests
                if draw(st.integers(0, 9)) > 0
            }
            for author in authors
        }
        trees[tree] = TreeRun(tree=tree, cells=cells)
    return Matrix(
        task="pkg-1",
        authors=authors,
        patches=[
            PatchFacts(
                contestant=name,
                vendor=vendor_of[author_identity(name)],
                source_size=draw(st.integers(1, 3)),
            )
            for name in patches
        ],
        trees=trees,
    )


def approvals(verdict: Verdict) -> set[str]:
    return {a.patch for a in verdict.assessments if a.approved}


@given(matrices())
def test_a_patch_is_never_supported_by_its_own_authors_tests(matrix: Matrix) -> None:
    for verdict in judge_all(matrix).values():
        for assessment in verdict.assessments:
            assert assessment.author not in assessment.independent
            assert assessment.author not in assessment.support_by_author
            assert all(author_identity(ref.author) != assessment.author for ref in assessment.cells)


@given(matrices())
def test_no_approval_without_an_independent_reproduction(matrix: Matrix) -> None:
    for verdict in judge_all(matrix).values():
        reproducing = {
            author_identity(name) for name, tests in verdict.reproductions.items() if tests
        }
        for assessment in verdict.assessments:
            if assessment.approved:
                assert assessment.independent
                assert set(assessment.independent) <= reproducing
                assert assessment.support is not None and assessment.support >= 0.5
                assert assessment.counted_breakages == 0


@given(matrices())
def test_stricter_policies_approve_subsets(matrix: Matrix) -> None:
    verdicts = judge_all(matrix)
    assert approvals(verdicts["unanimous"]) <= approvals(verdicts["majority"])
    assert approvals(verdicts["strict"]) <= approvals(verdicts["unanimous"])


@given(matrices())
def test_cross_vendor_is_majority_when_no_other_author_shares_a_patch_vendor(
    matrix: Matrix,
) -> None:
    """Cross-vendor approvals are not a subset of majority's in general (see the rules
    tests), but with no same-vendor author to drop the two must decide alike."""
    clash = any(
        author.vendor == patch.vendor
        and author_identity(author.name) != author_identity(patch.contestant)
        for author in matrix.authors
        for patch in matrix.patches
    )
    verdicts = judge_all(matrix)
    if not clash:
        decided = {"approved", "independent", "support_by_author", "breakages", "cells"}
        majority, cross = verdicts["majority"], verdicts["cross-vendor"]
        assert cross.pick == majority.pick
        assert [a.model_dump(include=decided) for a in cross.assessments] == [
            a.model_dump(include=decided) for a in majority.assessments
        ]


@given(matrices(), st.randoms(use_true_random=False))
def test_verdicts_ignore_the_order_of_the_input(matrix: Matrix, rng: random.Random) -> None:
    def shuffled(items: list[T]) -> list[T]:
        copy = list(items)
        rng.shuffle(copy)
        return copy

    reordered = Matrix(
        task=matrix.task,
        authors=[
            author.model_copy(update={"tests": shuffled(author.tests)})
            for author in shuffled(matrix.authors)
        ],
        patches=shuffled(matrix.patches),
        trees={
            name: tree.model_copy(
                update={
                    "cells": {
                        author: dict(shuffled(list(tests.items())))
                        for author, tests in shuffled(list(tree.cells.items()))
                    }
                }
            )
            for name, tree in shuffled(list(matrix.trees.items()))
        },
    )
    assert judge_all(reordered) == judge_all(matrix)


@given(matrices())
def test_the_pick_is_approved_and_ranks_first(matrix: Matrix) -> None:
    for verdict in judge_all(matrix).values():
        assert (verdict.pick is None) != (verdict.abstained is None)
        chosen = [a for a in verdict.assessments if a.patch == verdict.pick]
        assert len(chosen) == (verdict.pick is not None)
        for pick in chosen:
            assert pick.approved
            for other in verdict.assessments:
                if other.approved:
                    assert (pick.support or 0) >= (other.support or 0)


@given(matrices())
def test_verdict_cells_exist_in_the_matrix(matrix: Matrix) -> None:
    for verdict in judge_all(matrix).values():
        for assessment in verdict.assessments:
            refs = [*assessment.cells, *(r for b in assessment.breakages for r in b.cells)]
            for ref in refs:
                assert matrix.trees[ref.tree].error is None
                assert matrix.trees[ref.tree].cells[ref.author][ref.test].outcome == ref.outcome
            assert {ref.tree for ref in refs} <= {"base", assessment.patch}


@given(matrices())
def test_support_does_not_depend_on_the_other_patches(matrix: Matrix) -> None:
    """The seed's merge gate judges each patch alone; other patches matter only to the
    quorum. `credible` is left out on purpose: whether an author counts depends on
    whether another author's patch passes its tests."""
    for policy in SEED_POLICIES:
        together = {a.patch: a for a in judge(matrix, policy).assessments}
        for patch in matrix.patches:
            trees = {k: v for k, v in matrix.trees.items() if k in ("base", patch.contestant)}
            alone_matrix = matrix.model_copy(update={"patches": [patch], "trees": trees})
            (alone,) = judge(alone_matrix, policy).assessments
            with_others = together[patch.contestant]
            assert alone.support_by_author == with_others.support_by_author
            assert alone.independent == with_others.independent
            if not with_others.breakages:
                assert alone.approved is with_others.approved
