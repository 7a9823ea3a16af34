"""The flake ledger's rules: what a tree is, when a test is quarantined, and that a
quarantined test decides no score, reproduction or breakage anywhere."""

from __future__ import annotations

from test_judge_rules import grid

from bugbout_tui.core.models import (
    SUITE,
    Conditions,
    Ledger,
    Oracle,
    Resolution,
)
from bugbout_tui.rules.flakes import (
    matrix_without,
    merge,
    observe,
    oracle_without,
    quarantined,
    resolution_without,
    tree_of,
)
from bugbout_tui.rules.judge import judge_all

CONDITIONS = Conditions(
    interpreter="/usr/bin/python3",
    environment="pkg-py3.12-0",
    test_dependencies=["pytest"],
    pytest_args=[],
    env={},
    source="src/pkg",
    sandbox="bubblewrap",
    test_timeout=60,
)
FLAKY = "tests/test_x.py::test_flaky"
STEADY = "tests/test_x.py::test_steady"


def test_a_test_is_quarantined_only_when_it_flips_on_one_tree() -> None:
    fix = tree_of("fix 1a2b", CONDITIONS, "fix", "1a2b")
    other = tree_of(
        "fix 1a2b", CONDITIONS.model_copy(update={"pytest_args": ["-x"]}), "fix", "1a2b"
    )
    base = tree_of("base", CONDITIONS, "base", "0f0f", "tests", "1a2b")
    assert len({fix.id, other.id, base.id}) == 3  # other code or conditions: another tree
    ledger = merge(Ledger(), observe("pkg-1", SUITE, fix, {FLAKY: "passed", STEADY: "passed"}))
    ledger = merge(ledger, observe("pkg-1", SUITE, base, {FLAKY: "failed", STEADY: "failed"}))
    ledger = merge(ledger, observe("pkg-1", SUITE, other, {FLAKY: "failed", "tests/x.py": "error"}))
    assert quarantined(ledger, "pkg-1") == {}  # failing elsewhere is no flip
    ledger = merge(ledger, observe("pkg-1", SUITE, fix, {FLAKY: "error", STEADY: "passed"}))
    assert quarantined(ledger, "pkg-1") == {SUITE: {FLAKY}}
    tally = ledger.tasks["pkg-1"][SUITE][FLAKY]
    assert (tally.runs, tally.passes, tally.fails) == (4, 1, 3)
    assert (tally.trees[fix.id].passes, tally.trees[fix.id].fails) == (1, 1)
    assert "tests/x.py" not in ledger.tasks["pkg-1"][SUITE]  # a module is no test
    assert quarantined(ledger, "pkg-2") == {}


def test_a_quarantined_test_is_not_used_to_score() -> None:
    oracle = Oracle(fail_to_pass=["t::f2p", FLAKY], pass_to_pass=[STEADY], scored=True)
    kept = oracle_without(oracle, {FLAKY})
    assert (kept.fail_to_pass, kept.unstable, kept.scored) == (["t::f2p"], [FLAKY], True)
    only = oracle_without(Oracle(fail_to_pass=[FLAKY], scored=True), {FLAKY})
    assert not only.scored and "quarantined" in (only.reason or "")

    broke = Resolution(
        task="pkg-1",
        contestant="a",
        status="fixed-but-broke",
        fail_to_pass={"t::f2p": "passed"},
        broken=[FLAKY],
    )
    assert resolution_without(broke, {FLAKY}).status == "resolved"
    wrong = broke.model_copy(
        update={
            "status": "wrong-fix",
            "fail_to_pass": {"t::f2p": "passed", FLAKY: "failed"},
            "broken": [STEADY],
        }
    )
    rescored = resolution_without(wrong, {FLAKY})
    assert (rescored.status, rescored.fail_to_pass) == ("fixed-but-broke", {"t::f2p": "passed"})
    no_fix = Resolution(task="pkg-1", contestant="a", status="no-fix", detail="crashed")
    assert resolution_without(no_fix, {FLAKY}) == no_fix


def test_a_quarantined_test_is_neither_a_reproduction_nor_a_breakage() -> None:
    matrix = grid(
        """
        base  fixer  other
        exam::test_bug       F  P  F
        exam::test_noise     F  F  P
        suite::test_flaky    P  F  P
        suite::test_steady   P  P  P
        """
    )
    before = judge_all(matrix)["majority"]
    fixer = next(a for a in before.assessments if a.patch == "fixer")
    assert not fixer.approved  # half support, and the flaky suite test counts against it
    kept = matrix_without(matrix, {"suite": {"test_flaky"}, "exam": {"test_noise"}})
    after = judge_all(kept)["majority"]
    assert after.pick == "fixer"
    assert {a.patch: a.approved for a in after.assessments} == {"fixer": True, "other": False}
    for cell in [c for a in after.assessments for c in a.cells]:
        assert cell.test not in ("test_flaky", "test_noise")
