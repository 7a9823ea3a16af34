"""The judge's rules one by one, each on a matrix small enough to read as a table.

A table's header names the trees (`base` first, then one per patch); each row is one
test, `author::test`, with its outcome on every tree: P passed, F failed, E error,
S skipped, X xfailed, U uncollected, `.` no cell. Authors named `suite` are the
repository's suite, names starting with `exam` are examiners, anything else is a
contestant. Unless told otherwise every author has a vendor of its own.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from textwrap import dedent

import pytest

from bugbout_tui.core.models import Author, Cell, CellOutcome, Matrix, PatchFacts, TreeRun
from bugbout_tui.rules.judge import (
    POLICIES,
    CellRef,
    Policy,
    Verdict,
    VerdictSet,
    author_identity,
    judge,
    judge_all,
    reproductions,
)

OUTCOMES: dict[str, CellOutcome] = {
    "P": "passed",
    "F": "failed",
    "E": "error",
    "S": "skipped",
    "X": "xfailed",
    "U": "uncollected",
}


def grid(
    table: str,
    *,
    vendors: Mapping[str, str | None] | None = None,
    sizes: Mapping[str, int] | None = None,
    errors: Mapping[str, str] | None = None,
    patches: list[str] | None = None,
) -> Matrix:
    """A matrix from a table; `errors` marks whole-tree failures (the tree needs no column)."""
    vendors, sizes, errors = vendors or {}, sizes or {}, errors or {}
    header, *rows = (line.split() for line in dedent(table).strip().splitlines())
    tree_names = list(dict.fromkeys([*header, *errors]))
    cells: dict[str, dict[str, dict[str, Cell]]] = {tree: {} for tree in tree_names}
    tests: dict[str, list[str]] = {}
    for key, *marks in rows:
        assert len(marks) == len(header), f"row {key} needs one mark per tree"
        author, test = key.split("::", 1)
        tests.setdefault(author, []).append(test)
        for tree, mark in zip(header, marks, strict=True):
            if mark != ".":
                cells[tree].setdefault(author, {})[test] = Cell(outcome=OUTCOMES[mark])

    def vendor(name: str) -> str | None:
        identity = author_identity(name)
        return vendors.get(identity, None if name == "suite" else identity)

    def kind(name: str) -> str:
        return (
            "suite" if name == "suite" else "examiner" if name.startswith("exam") else "contestant"
        )

    names = patches if patches is not None else [t for t in tree_names if t != "base"]
    return Matrix(
        task="pkg-1",
        authors=[
            Author.model_validate({"name": a, "kind": kind(a), "vendor": vendor(a), "tests": t})
            for a, t in tests.items()
        ],
        patches=[
            PatchFacts(contestant=p, vendor=vendor(p) or "", source_size=sizes.get(p, 10))
            for p in names
        ],
        trees={
            tree: TreeRun(tree=tree, error=errors.get(tree), cells=cells[tree])
            for tree in tree_names
        },
    )


def approved(matrix: Matrix, policy: Policy = "majority") -> dict[str, bool]:
    return {a.patch: a.approved for a in judge(matrix, policy).assessments}


# --- reproduction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mark", "reproduces"),
    [("F", True), ("E", True), ("U", False), ("S", False), ("P", False), ("X", False)],
)
def test_only_failed_or_error_on_base_reproduces(mark: str, reproduces: bool) -> None:
    matrix = grid(f"""
        base alpha
    exam::t1 {mark} P
    """)
    assert reproductions(matrix) == {"exam": ["t1"] if reproduces else []}
    assert approved(matrix) == {"alpha": reproduces}


def test_test_without_a_cell_on_base_does_not_reproduce() -> None:
    matrix = grid("""
        base alpha
    exam::t1 . P
    exam::t2 F P
    """)
    assert reproductions(matrix) == {"exam": ["t2"]}


def test_suite_failing_on_base_is_not_a_reproduction() -> None:
    matrix = grid("""
        base alpha
    suite::s1 F P
    """)
    assert reproductions(matrix) == {}
    verdict = judge(matrix, "majority")
    assert verdict.pick is None
    assert verdict.abstained == "no contestant's or examiner's test fails on the unfixed code"


def test_suite_failure_on_base_does_not_drag_support_down() -> None:
    matrix = grid("""
         base alpha
    exam::t1  F P
    suite::s1 F F
    """)
    assert judge(matrix, "unanimous").pick == "alpha"


# --- independence -----------------------------------------------------------------------


def test_own_tests_never_support() -> None:
    matrix = grid("""
          base alpha
    alpha::t1 F P
    """)
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.independent == []
    assert assessment.support is None
    assert not assessment.approved
    assert assessment.reason == (
        "no independent reproduction: no test by another author fails on the unfixed code"
    )
    assert judge(matrix, "majority").abstained == "no patch has a reproduction by another author"


def test_other_contestants_tests_support() -> None:
    matrix = grid("""
          base alpha beta
    alpha::t1 F P    P
    beta::t1  F P    P
    """)
    verdict = judge(matrix, "unanimous")
    assert {a.patch: a.independent for a in verdict.assessments} == {
        "alpha": ["beta"],
        "beta": ["alpha"],
    }
    assert verdict.reproductions == {"alpha": ["t1"], "beta": ["t1"]}


@pytest.mark.parametrize("tests_by", ["alpha", "alpha#3"])
def test_trials_of_one_agent_are_one_author(tests_by: str) -> None:
    matrix = grid(f"""
              base alpha#2
    {tests_by}::t1 F P
    """)
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.author == "alpha"
    assert assessment.independent == []
    assert not assessment.approved


def test_only_a_numeric_suffix_marks_a_trial() -> None:
    assert author_identity("alpha#12") == "alpha"
    assert author_identity("alpha#x") == "alpha#x"
    assert author_identity("a#1#2") == "a#1"


def test_trials_pool_their_reproductions_into_one_vote() -> None:
    matrix = grid("""
            base beta
    alpha::t1   F P
    alpha#2::t1 F F
    exam::t1    F P
    """)
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.support_by_author == {"alpha": 0.5, "exam": 1.0}
    assert assessment.support == 0.75


def test_cross_vendor_excludes_same_vendor_authors() -> None:
    table = """
        base alpha
    exam::t1 F P
    """
    same = grid(table, vendors={"exam": "openai", "alpha": "openai"})
    assert approved(same, "majority") == {"alpha": True}
    assert approved(same, "cross-vendor") == {"alpha": False}
    assert judge(same, "cross-vendor").abstained == (
        "no patch has a reproduction by an author of another vendor"
    )
    other = grid(table, vendors={"exam": "anthropic", "alpha": "openai"})
    assert approved(other, "cross-vendor") == {"alpha": True}


def test_cross_vendor_compares_vendors_without_case() -> None:
    matrix = grid(
        """
        base alpha
    exam::t1 F P
    """,
        vendors={"exam": "OpenAI", "alpha": "openai"},
    )
    assert approved(matrix, "cross-vendor") == {"alpha": False}


def test_author_without_vendor_is_independent_of_every_vendor() -> None:
    matrix = grid(
        """
        base alpha
    exam::t1 F P
    """,
        vendors={"exam": None, "alpha": "openai"},
    )
    assert approved(matrix, "cross-vendor") == {"alpha": True}


def test_cross_vendor_can_approve_what_majority_rejects() -> None:
    """Dropping same-vendor authors can raise support, so no subset relation holds."""
    matrix = grid(
        """
         base alpha
    exam1::t1 F P
    exam2::t1 F F
    exam3::t1 F F
    """,
        vendors={"alpha": "openai", "exam1": "anthropic", "exam2": "openai", "exam3": "openai"},
    )
    assert approved(matrix, "majority") == {"alpha": False}
    assert approved(matrix, "cross-vendor") == {"alpha": True}


# --- support ----------------------------------------------------------------------------


def _many(author: str, count: int, on_alpha: str) -> str:
    return "\n".join(f"{author}::t{i} F {on_alpha}" for i in range(count))


@pytest.mark.parametrize(
    ("big_on_alpha", "small_on_alpha"),
    [("P", "F"), ("F", "P")],
    ids=["ten-pass-one-fails", "ten-fail-one-passes"],
)
def test_support_is_a_mean_over_authors_not_tests(big_on_alpha: str, small_on_alpha: str) -> None:
    matrix = grid(
        "base alpha\n" + _many("exam1", 10, big_on_alpha) + "\n" + _many("exam2", 1, small_on_alpha)
    )
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.support == 0.5
    assert assessment.approved


@pytest.mark.parametrize(
    ("table", "support", "approves"),
    [
        ("exam1::t1 F P\nexam2::t1 F F", 0.5, True),
        ("exam1::t1 F P\nexam2::t1 F F\nexam3::t1 F F", 1 / 3, False),
        ("exam1::t1 F P\nexam1::t2 F P\nexam1::t3 F F", 2 / 3, True),
        ("exam1::t1 F F", 0.0, False),
    ],
)
def test_majority_threshold_is_half_inclusive(table: str, support: float, approves: bool) -> None:
    (assessment,) = judge(grid("base alpha\n" + table), "majority").assessments
    assert assessment.support == pytest.approx(support)
    assert assessment.approved is approves


def test_low_support_reason_rounds_down() -> None:
    matrix = grid("base alpha\nexam1::t1 F P\nexam2::t1 F F\nexam3::t1 F F")
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.reason == "support 0.33 is below 0.5"
    assert (
        judge(matrix, "majority").abstained == "no patch reached support 0.5 (best: alpha at 0.33)"
    )


@pytest.mark.parametrize(
    ("mark", "passes"), [("P", True), ("X", False), ("S", False), (".", False)]
)
def test_only_passed_on_the_patch_counts_as_passing(mark: str, passes: bool) -> None:
    (assessment,) = judge(grid(f"base alpha\nexam::t1 F {mark}"), "majority").assessments
    assert assessment.support == (1.0 if passes else 0.0)


def test_unanimous_needs_every_reproduction() -> None:
    matrix = grid("""
         base alpha
    exam1::t1 F P
    exam1::t2 F F
    exam2::t1 F P
    """)
    assert approved(matrix, "majority") == {"alpha": True}
    assert approved(matrix, "unanimous") == {"alpha": False}
    assert approved(matrix, "strict") == {"alpha": False}
    (assessment,) = judge(matrix, "unanimous").assessments
    assert assessment.reason == "passes 2 of 3 independent reproductions; every one must pass"
    assert judge(matrix, "unanimous").abstained == (
        "no patch passes every independent reproduction (best: alpha at 0.75)"
    )


# --- breakage by quorum ----------------------------------------------------------------


def _quorum(others_keep: list[bool], *, test_author: str = "suite", on_alpha: str = "F") -> Matrix:
    """alpha fails one test that passed on the base; each other patch keeps it or not."""
    others = [f"p{i}" for i in range(len(others_keep))]
    header = " ".join(["base", "alpha", *others])
    reproduced = " ".join(["F", "P", *("P" for _ in others)])
    kept = " ".join(["P", on_alpha, *("P" if keep else "F" for keep in others_keep)])
    return grid(f"{header}\nexam::t1 {reproduced}\n{test_author}::s1 {kept}")


@pytest.mark.parametrize(
    ("others_keep", "counted"),
    [
        ([], True),
        ([True], True),
        ([False], False),
        ([True, True], True),
        ([True, False], False),
        ([True, True, False], True),
        ([True, False, False], False),
        ([True, True, False, False], False),
        ([True, True, True, False], True),
    ],
)
def test_breakage_counts_only_when_more_than_half_of_others_keep_it(
    others_keep: list[bool], counted: bool
) -> None:
    verdict = judge(_quorum(others_keep), "majority")
    alpha = next(a for a in verdict.assessments if a.patch == "alpha")
    (breakage,) = alpha.breakages
    assert (breakage.kept_by, breakage.others) == (sum(others_keep), len(others_keep))
    assert breakage.counted is counted
    assert alpha.counted_breakages == int(counted)
    assert alpha.approved is not counted


@pytest.mark.parametrize(("mark", "broken"), [("F", True), ("E", True), ("U", True), ("S", False)])
def test_failed_error_and_uncollected_on_the_patch_are_breakages(mark: str, broken: bool) -> None:
    (assessment,) = judge(_quorum([], on_alpha=mark), "majority").assessments
    assert len(assessment.breakages) == int(broken)
    assert assessment.approved is not broken


def test_counted_breakage_reason_and_abstention() -> None:
    verdict = judge(_quorum([]), "majority")
    (assessment,) = verdict.assessments
    assert assessment.reason == "breaks 1 test most other patches keep passing: s1 (suite)"
    assert verdict.abstained == (
        "every patch with support of at least 0.5 breaks a suite test "
        "that most other patches keep passing"
    )


def test_contestant_tests_are_never_breakages() -> None:
    verdict = judge(_quorum([], test_author="beta"), "strict")
    (assessment,) = verdict.assessments
    assert assessment.breakages == []
    assert assessment.approved


def test_strict_counts_examiner_regressions() -> None:
    matrix = _quorum([], test_author="exam2")
    assert approved(matrix, "unanimous") == {"alpha": True}
    assert approved(matrix, "strict") == {"alpha": False}
    assert judge(matrix, "unanimous").assessments[0].breakages == []
    assert judge(matrix, "strict").abstained == (
        "every patch that passes every independent reproduction breaks a suite or examiner "
        "test that most other patches keep passing"
    )


def test_strict_applies_the_quorum_to_examiner_tests() -> None:
    matrix = _quorum([False, False], test_author="exam2")
    verdict = judge(matrix, "strict")
    alpha = next(a for a in verdict.assessments if a.patch == "alpha")
    assert [(b.author, b.counted) for b in alpha.breakages] == [("exam2", False)]
    assert alpha.approved


# --- failed runs --------------------------------------------------------------------------


def test_patch_whose_run_failed_cannot_be_supported() -> None:
    matrix = grid("base\nexam::t1 F\nsuite::s1 P", errors={"alpha": "timeout after 600s"})
    verdict = judge(matrix, "majority")
    (assessment,) = verdict.assessments
    assert assessment.support == 0.0
    assert assessment.support_by_author == {"exam": 0.0}
    assert assessment.breakages == []
    assert not assessment.approved
    assert assessment.reason == (
        "cannot be supported: its test run failed as a whole (timeout after 600s)"
    )
    assert assessment.cells == [CellRef(tree="base", author="exam", test="t1", outcome="failed")]
    assert verdict.abstained == (
        "the test run failed on every patch that has an independent reproduction"
    )


def test_patch_without_a_run_cannot_be_supported() -> None:
    matrix = grid("base\nexam::t1 F", patches=["alpha"])
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.reason == "cannot be supported: the matrix has no run on this patch"


def test_failed_run_is_not_a_witness_for_the_quorum() -> None:
    matrix = grid(
        """
         base alpha
    exam::t1  F P
    suite::s1 P F
    """,
        errors={"beta": "patch did not apply"},
    )
    alpha = next(a for a in judge(matrix, "majority").assessments if a.patch == "alpha")
    (breakage,) = alpha.breakages
    assert (breakage.others, breakage.counted) == (0, True)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            "pytest crashed",
            "the run on the unfixed code failed as a whole (pytest crashed), "
            "so no test can reproduce the bug",
        ),
        (None, "the matrix has no run on the unfixed code, so no test can reproduce the bug"),
    ],
)
def test_failed_or_missing_base_run_abstains(error: str | None, reason: str) -> None:
    matrix = grid("base alpha\nexam::t1 F P\nsuite::s1 P F")
    if error is None:
        del matrix.trees["base"]
    else:
        matrix.trees["base"].error = error
    for policy in POLICIES:
        verdict = judge(matrix, policy)
        assert verdict.pick is None
        assert verdict.abstained == reason
        assert verdict.reproductions == {"exam": []}
        assert verdict.assessments[0].breakages == []


def test_no_patch_abstains() -> None:
    verdict = judge(grid("base\nexam::t1 F"), "majority")
    assert verdict.assessments == []
    assert verdict.abstained == "no patch changed the source code"


# --- pick --------------------------------------------------------------------------------


def test_pick_prefers_highest_support() -> None:
    matrix = grid(
        """
        base alpha beta
    exam::t1 F P     P
    exam::t2 F P     F
    """,
        sizes={"alpha": 100, "beta": 1},
    )
    assert judge(matrix, "majority").pick == "alpha"


def test_pick_prefers_more_independent_authors_over_a_smaller_diff() -> None:
    matrix = grid(
        """
          base alpha beta
    alpha::t1 F P     P
    exam::t1  F P     P
    """,
        sizes={"alpha": 1, "beta": 100},
    )
    verdict = judge(matrix, "unanimous")
    assert {a.patch: len(a.independent) for a in verdict.assessments} == {"alpha": 1, "beta": 2}
    assert verdict.pick == "beta"


def test_pick_prefers_the_smaller_diff_then_the_name() -> None:
    table = """
        base alpha beta
    exam::t1 F P     P
    """
    assert judge(grid(table, sizes={"alpha": 30, "beta": 10}), "majority").pick == "beta"
    assert judge(grid(table, sizes={"alpha": 10, "beta": 10}), "majority").pick == "alpha"


def test_merge_gate_approves_every_patch_that_passes_on_its_own() -> None:
    matrix = grid("""
        base alpha beta gamma
    exam::t1 F P     P    F
    """)
    verdict = judge(matrix, "majority")
    assert approved(matrix) == {"alpha": True, "beta": True, "gamma": False}
    assert verdict.pick == "alpha"
    assert verdict.abstained is None


# --- the evidence each verdict names ---------------------------------------------------


def test_assessment_cells_cover_support_and_counted_breakages_only() -> None:
    matrix = grid("""
         base alpha beta gamma
    exam::t1  F P     P    P
    suite::s1 P F     P    P
    suite::s2 P F     F    F
    """)
    alpha = next(a for a in judge(matrix, "majority").assessments if a.patch == "alpha")
    assert [(b.test, b.kept_by, b.others, b.counted) for b in alpha.breakages] == [
        ("s1", 2, 2, True),
        ("s2", 0, 2, False),
    ]
    assert alpha.cells == [
        CellRef(tree="base", author="exam", test="t1", outcome="failed"),
        CellRef(tree="base", author="suite", test="s1", outcome="passed"),
        CellRef(tree="alpha", author="exam", test="t1", outcome="passed"),
        CellRef(tree="alpha", author="suite", test="s1", outcome="failed"),
    ]
    assert alpha.breakages[1].cells == [
        CellRef(tree="base", author="suite", test="s2", outcome="passed"),
        CellRef(tree="alpha", author="suite", test="s2", outcome="failed"),
    ]


def test_approved_reason_names_support_and_authors() -> None:
    matrix = grid("base alpha\nexam1::t1 F P\nexam2::t1 F P")
    (assessment,) = judge(matrix, "majority").assessments
    assert assessment.reason == "support 1.00 from 2 independent authors, no counted breakage"


def test_verdict_set_round_trips_through_json() -> None:
    matrix = _quorum([True, False], test_author="exam2")
    stored = VerdictSet(policy="strict", verdicts={matrix.task: judge_all(matrix)})
    assert list(stored.verdicts[matrix.task]) == list(POLICIES)
    assert VerdictSet.model_validate_json(stored.model_dump_json()) == stored


# --- scale ----------------------------------------------------------------------------------


def _large() -> Matrix:
    """40 patches, 40 test authors (the 40 contestants) with 20 tests each, and a suite."""
    contestants = [f"agent{i:02}" for i in range(40)]
    authors = [*contestants, "suite"]
    outcomes: list[CellOutcome] = ["passed", "failed", "error", "passed", "skipped"]

    def cells(seed: int) -> dict[str, dict[str, Cell]]:
        return {
            author: {
                f"t{t}": Cell(outcome=outcomes[(seed * 7 + a * 3 + t) % len(outcomes)])
                for t in range(20)
            }
            for a, author in enumerate(authors)
        }

    return Matrix(
        task="pkg-big",
        authors=[
            Author(
                name=name,
                kind="suite" if name == "suite" else "contestant",
                vendor=None if name == "suite" else f"v{i % 3}",
                tests=[f"t{t}" for t in range(20)],
            )
            for i, name in enumerate(authors)
        ],
        patches=[
            PatchFacts(contestant=name, vendor=f"v{i % 3}", source_size=i)
            for i, name in enumerate(contestants)
        ],
        trees={
            tree: TreeRun(tree=tree, cells=cells(seed))
            for seed, tree in enumerate(["base", *contestants])
        },
    )


def test_large_matrix_is_judged_under_every_policy() -> None:
    matrix = _large()
    started = time.perf_counter()
    verdicts = judge_all(matrix)
    elapsed = time.perf_counter() - started
    assert set(verdicts) == set(POLICIES)
    assert all(len(v.assessments) == 40 for v in verdicts.values())
    assert any(a.breakages for v in verdicts.values() for a in v.assessments)
    print(f"judge_all on 40 patches x 41 authors x 20 tests: {elapsed:.3f}s")


# --- the example in docs/judge.md ----------------------------------------------------------


def test_the_documented_example() -> None:
    matrix = grid(
        """
                   base alpha beta gamma
    alpha::t_bug    F    P     P    F
    beta::t_bug     F    P     P    P
    gamma::t_bug    P    P     P    P
    exam::t_report  F    P     P    F
    exam::t_edge    F    F     P    F
    exam::t_keep    P    P     F    P
    suite::t_old    P    P     P    F
    """,
        vendors={"alpha": "openai", "beta": "anthropic", "gamma": "google", "exam": "openai"},
    )
    verdicts = judge_all(matrix)
    assert verdicts["majority"].reproductions == {
        "alpha": ["t_bug"],
        "beta": ["t_bug"],
        "exam": ["t_edge", "t_report"],
        "gamma": [],
    }
    supports = {a.patch: a.support for a in verdicts["majority"].assessments}
    assert supports == {"alpha": 0.75, "beta": 1.0, "gamma": pytest.approx(1 / 3)}
    assert {p: v.pick for p, v in verdicts.items()} == {
        "majority": "beta",
        "unanimous": "beta",
        "strict": None,
        "cross-vendor": "beta",
        "credible": "beta",
    }
    assert {p: sorted(approvals) for p, approvals in _approvals(verdicts).items()} == {
        "majority": ["alpha", "beta"],
        "unanimous": ["beta"],
        "strict": [],
        "cross-vendor": ["alpha", "beta"],
        "credible": ["alpha", "beta"],
    }
    assert verdicts["credible"].witnesses == ["alpha", "beta"]
    assert verdicts["credible"].discounted == []
    assert verdicts["strict"].abstained == (
        "every patch that passes every independent reproduction breaks a suite or examiner "
        "test that most other patches keep passing"
    )


def _approvals(verdicts: Mapping[Policy, Verdict]) -> dict[Policy, list[str]]:
    return {p: [a.patch for a in v.assessments if a.approved] for p, v in verdicts.items()}


# --- why the pick won ------------------------------------------------------------------


def test_decided_by_names_the_only_approved_patch() -> None:
    matrix = grid("""
        base alpha beta
    exam::t1 F P     F
    """)
    assert judge(matrix, "majority").decided_by == "alpha is the only approved patch"


def test_decided_by_names_higher_support() -> None:
    matrix = grid("""
        base alpha beta
    exam::t1 F P     P
    exam::t2 F P     F
    """)
    verdict = judge(matrix, "majority")
    assert verdict.decided_by == "alpha has the higher support: 1.00 against 0.50 for beta"


def test_decided_by_names_more_independent_authors() -> None:
    matrix = grid(
        """
          base alpha beta
    alpha::t1 F P     P
    exam::t1  F P     P
    """,
        sizes={"alpha": 1, "beta": 100},
    )
    verdict = judge(matrix, "unanimous")
    assert verdict.decided_by == "beta has more independent authors: 2 against 1 for alpha"


def test_decided_by_names_the_smaller_patch() -> None:
    table = """
        base careful hasty
    exam::t1 F P       P
    """
    verdict = judge(grid(table, sizes={"careful": 7, "hasty": 3}), "majority")
    assert verdict.decided_by == "hasty's patch is smaller: 3 lines against 7 for careful"


def test_decided_by_falls_back_to_the_name() -> None:
    table = """
        base alpha beta
    exam::t1 F P     P
    """
    verdict = judge(grid(table, sizes={"alpha": 1, "beta": 1}), "majority")
    assert verdict.decided_by == (
        "alpha comes first by name: it ties with beta on support, independent authors "
        "and size (1 line)"
    )


def test_decided_by_is_empty_when_abstaining_and_old_records_load() -> None:
    matrix = grid("""
        base alpha
    exam::t1 F F
    """)
    verdict = judge(matrix, "majority")
    assert verdict.pick is None and verdict.decided_by is None
    stored = verdict.model_dump(mode="json")
    del stored["decided_by"]
    assert Verdict.model_validate(stored).decided_by is None
