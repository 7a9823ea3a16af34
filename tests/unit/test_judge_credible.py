"""The `credible` policy: the two weaknesses it exists for, the hole it must not open, and
its properties over generated matrices.

Tables read as in `test_judge_rules.py`: trees across (`base` first), one row per
`author::test`, P passed, F failed.
"""

from __future__ import annotations

from hypothesis import given
from test_judge_properties import matrices
from test_judge_rules import approved, grid

from bugbout_tui.core.models import Matrix
from bugbout_tui.rules.judge import author_identity, judge, judge_all

TWO_OVERFIT = """
        base r1 r2 w1 w2
    r1::t    F  P  P  F  F
    r2::t    F  P  P  F  F
    w1::mine F  F  F  P  F
    w2::mine F  F  F  F  P
"""
"""Two right patches whose tests agree, and two wrong ones, each with a test that passes
only on its own patch."""


def test_authors_whose_tests_only_their_own_patch_passes_are_not_counted() -> None:
    matrix = grid(TWO_OVERFIT, sizes={"r1": 3, "r2": 5})
    assert approved(matrix, "majority") == {"r1": False, "r2": False, "w1": False, "w2": False}
    assert approved(matrix, "unanimous") == approved(matrix, "majority")
    verdict = judge(matrix, "credible")
    assert approved(matrix, "credible") == {"r1": True, "r2": True, "w1": False, "w2": False}
    assert verdict.pick == "r1"
    assert [d.author for d in verdict.discounted] == ["w1", "w2"]
    assert verdict.discounted[0].reproductions == {"w1": ["mine"]}
    assert verdict.discounted[0].passed_by == ["w1"]
    supports = {a.patch: (a.independent, a.support) for a in verdict.assessments}
    assert supports["r1"] == (["r2"], 1.0)
    assert supports["w1"] == (["r1", "r2"], 0.0)
    assert verdict.notes[0] == (
        "w1's 1 reproduction given no weight: only w1's own patch passes it, which says "
        "more about w1's reading of the bug than about the bug"
    )


def test_a_test_no_patch_passes_is_said_so() -> None:
    matrix = grid("""
        base r1 r2
    r1::t    F  P  P
    r2::t    F  P  P
    x::t     F  F  F
    """)
    verdict = judge(matrix, "credible")
    assert [(d.author, d.passed_by) for d in verdict.discounted] == [("x", [])]
    assert "no patch passes it" in verdict.notes[0]


def test_the_breakage_quorum_counts_only_supported_patches() -> None:
    """The fix changes what an old suite test asserts: both complete fixes break it, the
    three patches that fix nothing keep it, and under `majority` they outvote the fixes."""
    matrix = grid("""
        base r1 r2 p1 p2 p3
    r1::t      F  P  P  F  F  F
    r2::t      F  P  P  F  F  F
    suite::old P  F  F  P  P  P
    """)
    assert judge(matrix, "majority").pick is None
    verdict = judge(matrix, "credible")
    assert verdict.pick == "r1"
    assert verdict.witnesses == ["r1", "r2"]
    (breakage,) = next(a for a in verdict.assessments if a.patch == "r1").breakages
    assert (breakage.kept_by, breakage.others, breakage.counted) == (0, 1, False)
    assert verdict.notes == [
        "the breakage quorum counts r1, r2: p1, p2, p3 have support below 0.5, and a patch "
        "that fails the other authors' reproductions is no witness to what the code should "
        "keep doing"
    ]


def test_a_breakage_supported_patches_keep_passing_still_counts() -> None:
    matrix = grid("""
        base r1 r2 r3
    r1::t      F  P  P  P
    suite::old P  P  P  F
    """)
    verdict = judge(matrix, "credible")
    assessment = next(a for a in verdict.assessments if a.patch == "r3")
    assert not assessment.approved
    assert assessment.reason == "breaks 1 test most supported patches keep passing: old (suite)"
    assert verdict.pick == "r2"


def test_one_patch_cannot_shed_the_tests_it_fails_by_confirming_one() -> None:
    """The hole a per-test discount would open: with two patches, the right patch's
    author has tests only its own patch passes. Dropping those would leave the wrong
    patch with full support; counting whole authors keeps it at one third."""
    matrix = grid("""
        base right wrong
    right::t1   F  P  P
    right::t2   F  P  F
    right::t3   F  P  F
    wrong::mine F  F  P
    """)
    verdict = judge(matrix, "credible")
    assert verdict.pick is None
    supports = {a.patch: a.support for a in verdict.assessments}
    assert supports["wrong"] is not None and supports["wrong"] < 0.5
    assert [d.author for d in verdict.discounted] == ["wrong"]


def test_a_trial_does_not_confirm_its_own_agents_tests() -> None:
    matrix = grid("""
        base alpha alpha#2 beta
    alpha::t F     F       P      F
    beta::t  F     P       P      P
    """)
    verdict = judge(matrix, "credible")
    assert [d.author for d in verdict.discounted] == ["alpha"]
    assert verdict.discounted[0].passed_by == ["alpha#2"]


def test_no_credible_author_is_its_own_abstention() -> None:
    matrix = grid("""
        base w1 w2
    w1::mine F  P  F
    w2::mine F  F  P
    """)
    verdict = judge(matrix, "credible")
    assert verdict.abstained == (
        "no patch has a reproduction by another author that a patch not by that author passes"
    )


def test_when_no_patch_ran_nothing_can_be_confirmed_and_it_says_why() -> None:
    matrix = grid(
        """
        base r1
    r1::t    F  .
    r2::t    F  .
    """,
        errors={"r1": "timeout", "r2": "timeout"},
        patches=["r1", "r2"],
    )
    verdict = judge(matrix, "credible")
    assert verdict.abstained == (
        "the test run failed on every patch, so no reproduction could be confirmed"
    )
    assert [d.author for d in verdict.discounted] == ["r1", "r2"]


def test_only_credible_fills_the_credible_fields() -> None:
    verdicts = judge_all(grid(TWO_OVERFIT))
    for policy, verdict in verdicts.items():
        if policy != "credible":
            assert (verdict.discounted, verdict.witnesses, verdict.notes) == ([], None, [])


# --- properties -----------------------------------------------------------------------


def _confirmed(matrix: Matrix, identity: str, reproductions: dict[str, list[str]]) -> bool:
    """Whether a patch by another author passes one of this author's reproductions."""
    ran = {p.contestant for p in matrix.patches if p.contestant in matrix.trees}
    for patch in ran:
        tree = matrix.trees[patch]
        if tree.error is not None or author_identity(patch) == identity:
            continue
        for name, tests in reproductions.items():
            if author_identity(name) != identity:
                continue
            if any(
                (cell := tree.cells.get(name, {}).get(test)) and cell.outcome == "passed"
                for test in tests
            ):
                return True
    return False


@given(matrices())
def test_credible_never_approves_without_a_confirmed_independent_reproduction(
    matrix: Matrix,
) -> None:
    verdict = judge(matrix, "credible")
    discounted = {d.author for d in verdict.discounted}
    for assessment in verdict.assessments:
        assert assessment.author not in assessment.independent
        assert all(author_identity(ref.author) not in discounted for ref in assessment.cells)
        if assessment.approved:
            assert assessment.independent
            assert (assessment.support or 0) >= 2 / 3
            for author in assessment.independent:
                assert author not in discounted
                assert _confirmed(matrix, author, verdict.reproductions)


@given(matrices())
def test_credible_lifts_a_breakage_rejection_only_when_the_quorum_changed(
    matrix: Matrix,
) -> None:
    verdicts = judge_all(matrix)
    credible = {a.patch: a for a in verdicts["credible"].assessments}
    for majority in verdicts["majority"].assessments:
        if majority.counted_breakages == 0 or not credible[majority.patch].approved:
            continue
        quorum = {
            (b.author, b.test): (b.kept_by, b.others) for b in credible[majority.patch].breakages
        }
        assert any(
            quorum.get((b.author, b.test)) != (b.kept_by, b.others)
            for b in majority.breakages
            if b.counted
        )


@given(matrices())
def test_witnesses_are_patches_that_ran_with_support(matrix: Matrix) -> None:
    verdict = judge(matrix, "credible")
    assert verdict.witnesses is not None
    supports = {a.patch: a.support for a in verdict.assessments}
    for witness in verdict.witnesses:
        assert matrix.trees[witness].error is None
        assert (supports[witness] or 0) >= 0.5


@given(matrices())
def test_credible_is_majority_with_a_higher_bar_when_it_discounts_nothing(matrix: Matrix) -> None:
    verdicts = judge_all(matrix)
    credible = verdicts["credible"]
    ran = [
        p.contestant
        for p in matrix.patches
        if p.contestant in matrix.trees and matrix.trees[p.contestant].error is None
    ]
    if credible.discounted or sorted(credible.witnesses or []) != sorted(ran):
        return
    decided = {"independent", "support_by_author", "breakages"}
    majority = verdicts["majority"].assessments
    assert [a.model_dump(include=decided) for a in credible.assessments] == [
        a.model_dump(include=decided) for a in majority
    ]
    for mine, theirs in zip(credible.assessments, majority, strict=True):
        assert mine.approved == (theirs.approved and (theirs.support or 0) >= 2 / 3)


def test_credible_asks_two_thirds_of_the_confirmed_evidence() -> None:
    matrix = grid("""
        base r1 r2 p
    r1::a    F  P  P  P
    r1::b    F  P  P  F
    """)
    assert approved(matrix, "majority")["p"]
    verdict = judge(matrix, "credible")
    assessment = next(a for a in verdict.assessments if a.patch == "p")
    assert not assessment.approved
    assert assessment.reason == "support 0.50 is below 2/3"
