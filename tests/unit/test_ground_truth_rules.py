"""The ground-truth classification, rule by rule, without running anything."""

from __future__ import annotations

from bugbout_tui.rules.ground_truth import compute_oracle


def test_fail_on_base_pass_on_fix_is_fail_to_pass() -> None:
    oracle = compute_oracle({"t::a": "failed"}, {"t::a": "passed"}, {"t::a": "passed"})
    assert oracle.fail_to_pass == ["t::a"]
    assert oracle.scored


def test_error_on_base_counts_as_failing() -> None:
    oracle = compute_oracle({"t::a": "error"}, {"t::a": "passed"}, {"t::a": "passed"})
    assert oracle.fail_to_pass == ["t::a"]


def test_missing_on_base_counts_as_failing() -> None:
    oracle = compute_oracle({}, {"t::a": "passed"}, {"t::a": "passed"})
    assert oracle.fail_to_pass == ["t::a"]


def test_pass_on_both_is_pass_to_pass() -> None:
    oracle = compute_oracle(
        {"t::a": "failed", "t::b": "passed"},
        {"t::a": "passed", "t::b": "passed"},
        {"t::a": "passed", "t::b": "passed"},
    )
    assert oracle.pass_to_pass == ["t::b"]


def test_outcome_that_differs_between_fix_runs_is_unstable() -> None:
    oracle = compute_oracle(
        {"t::a": "failed", "t::flaky": "failed"},
        {"t::a": "passed", "t::flaky": "passed"},
        {"t::a": "passed", "t::flaky": "failed"},
    )
    assert oracle.unstable == ["t::flaky"]
    assert oracle.fail_to_pass == ["t::a"]


def test_failing_on_fix_is_neither() -> None:
    oracle = compute_oracle({"t::a": "failed"}, {"t::a": "failed"}, {"t::a": "failed"})
    assert (oracle.fail_to_pass, oracle.pass_to_pass, oracle.unstable) == ([], [], [])
    assert not oracle.scored
    assert oracle.reason == "no test fails before the fix and passes after it"


def test_skipped_tests_are_ignored_and_xfail_counts_as_passing() -> None:
    oracle = compute_oracle(
        {"t::s": "skipped", "t::x": "failed"},
        {"t::s": "skipped", "t::x": "xfailed"},
        {"t::s": "skipped", "t::x": "xfailed"},
    )
    assert oracle.fail_to_pass == ["t::x"]
    assert oracle.pass_to_pass == []


def test_no_fail_to_pass_means_not_scored_and_mentions_unstable() -> None:
    oracle = compute_oracle(
        {"t::a": "passed", "t::f": "failed"},
        {"t::a": "passed", "t::f": "passed"},
        {"t::a": "passed", "t::f": "failed"},
    )
    assert not oracle.scored
    assert oracle.reason is not None and "1 unstable test set aside" in oracle.reason
