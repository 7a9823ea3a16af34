"""The env judge on hand-built repairs: each step of the pick order, the gate, abstention."""

from __future__ import annotations

from itertools import permutations

from envrecords import finding, repair

from bugbout_tui.core.env_models import Repair
from bugbout_tui.rules.env_judge import choose_repair, gate_blockers

TASK = "env-1"


def repairs(*found: Repair) -> dict[str, Repair]:
    return {each.contestant: each for each in found}


def test_the_safest_repair_is_picked_over_a_more_faithful_one() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "alpha", safe=0.5, f1=1.0),
            repair(TASK, "beta", safe=1.0, f1=0.5),
        ),
    )
    assert (verdict.pick, verdict.approved) == ("beta", True)
    assert [r.contestant for r in verdict.ranking] == ["beta", "alpha"]
    assert verdict.trail[0] == "2 repairs installed and ran: beta, alpha"
    assert verdict.trail[1] == "beta is the safest: safe install 100% against 50% for alpha"


def test_equally_safe_the_more_faithful_repair_is_picked() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "alpha", safe=1.0, f1=0.6, size=1),
            repair(TASK, "beta", safe=1.0, f1=0.9, size=9),
        ),
    )
    assert verdict.pick == "beta"
    assert verdict.trail[1] == (
        "beta and alpha are equally safe (100%); beta is the more faithful: F1 0.90 against 0.60"
    )


def test_equally_safe_and_faithful_the_smaller_change_is_picked() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "alpha", safe=1.0, f1=0.8, size=7),
            repair(TASK, "beta", safe=1.0, f1=0.8, size=3),
        ),
    )
    assert verdict.pick == "beta"
    assert verdict.trail[1].endswith("beta's change is smaller: 3 lines against 7 for alpha")


def test_when_everything_ties_the_name_decides() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "beta", safe=1.0, f1=0.8, size=3),
            repair(TASK, "alpha", safe=1.0, f1=0.8, size=3),
        ),
    )
    assert verdict.pick == "alpha"
    assert verdict.trail[1].endswith("alpha comes first by name")


def test_a_missing_share_ranks_below_zero() -> None:
    # gamma declares nothing (no safe-install share): below alpha's measured 0.
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "gamma", names={}, safe=None, size=0),
            repair(TASK, "alpha", safe=0.0, f1=None, size=5),
        ),
    )
    assert [r.contestant for r in verdict.ranking] == ["alpha", "gamma"]
    assert verdict.trail[1] == "alpha is the safest: safe install 0% against n/a for gamma"


def test_only_repairs_that_installed_and_ran_are_candidates() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "alpha", "install-failed", safe=1.0, f1=1.0),
            repair(TASK, "beta", safe=0.5, f1=0.5),
            repair(TASK, "gamma", "rejected", safe=1.0, rejected=["src/app.py"]),
        ),
    )
    assert verdict.pick == "beta"
    assert verdict.trail[0] == (
        "1 repair installed and ran: beta; left out: alpha install failed; "
        "gamma rejected: changed files other than environment files"
    )
    assert verdict.trail[1] == "beta is the only repair that installed and ran"


def test_the_gate_refuses_a_pick_with_a_vulnerable_removed_or_unchecked_package() -> None:
    audit = [
        finding("urllib3", "1.26.4", advisories=("PYSEC-2023-212", "GHSA-v845")),
        finding("idna", "3.0", removed=True, yanked=True),
        finding("chardet", "4.0", removed=True),
        finding("certifi", "2023.7.22", unchecked="the index did not answer"),
        finding("six", "1.16.0"),
    ]
    names = {f.name: f.pinned for f in audit} | {"charset-normalizer": "3.3.2"}
    found = repair(TASK, "alpha", safe=0.2, f1=0.9, names=names, audit=audit)
    verdict = choose_repair(TASK, repairs(found))
    assert (verdict.pick, verdict.approved) == ("alpha", False)
    blockers = [
        "certifi==2023.7.22 could not be checked: the index did not answer",
        "chardet==4.0 is no longer on the index",
        "idna==3.0 was yanked",
        "urllib3==1.26.4 has published advisories: PYSEC-2023-212, GHSA-v845",
        "charset-normalizer was not audited",
    ]
    assert gate_blockers(found) == blockers
    assert verdict.ranking[0].blockers == blockers
    assert verdict.trail[-1] == "the merge gate refuses alpha: " + "; ".join(blockers)


def test_the_gate_refuses_a_typo_of_a_popular_name_and_lets_an_sdist_build_through() -> None:
    # A squat installs and runs, and counts as safe by the share's rule: the gate is
    # what stops it. An sdist build is flagged by the audit but blocks nothing.
    squat = repair(
        TASK,
        "alpha",
        names={"reqeusts": "1.0"},
        audit=[finding("reqeusts", "1.0", typo_of="requests")],
    )
    verdict = choose_repair(TASK, repairs(squat))
    assert (verdict.pick, verdict.approved) == ("alpha", False)
    assert verdict.trail[-1] == (
        "the merge gate refuses alpha: reqeusts==1.0 is one edit from the popular requests: "
        "a typo-squat, perhaps"
    )
    built = repair(
        TASK, "alpha", names={"lxml": "1.0"}, audit=[finding("lxml", "1.0", install_code=True)]
    )
    verdict = choose_repair(TASK, repairs(built))
    assert verdict.approved
    assert verdict.trail[-1] == (
        "the merge gate approves alpha: no declared package is vulnerable, removed, unchecked "
        "or a typo of a popular name"
    )


def test_the_gate_judges_the_pick_not_the_runner_up() -> None:
    bad = [finding("requests", "2.19.0", advisories=("PYSEC-2018-28",))]
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "alpha", safe=1.0, f1=1.0),
            repair(TASK, "beta", safe=0.0, names={"requests": "2.19.0"}, audit=bad),
        ),
    )
    assert (verdict.pick, verdict.approved) == ("alpha", True)
    assert verdict.ranking[1].blockers == [
        "requests==2.19.0 has published advisories: PYSEC-2018-28"
    ]


def test_it_abstains_when_no_repair_installed_and_ran() -> None:
    verdict = choose_repair(
        TASK,
        repairs(
            repair(TASK, "beta", "run-failed"),
            repair(TASK, "alpha", "no-repair", names={}),
        ),
    )
    assert (verdict.pick, verdict.approved, verdict.ranking) == (None, False, [])
    assert verdict.trail == [
        "no repair installed and ran (alpha changed no environment file; "
        "beta installed, run failed), so the judge abstains"
    ]
    nothing = choose_repair(TASK, {})
    assert (nothing.pick, nothing.trail) == (None, ["no repair is recorded for this task"])


def test_the_verdict_does_not_depend_on_the_order_of_the_repairs() -> None:
    found = [
        repair(TASK, "alpha", safe=1.0, f1=0.8, size=3),
        repair(TASK, "beta", safe=1.0, f1=0.8, size=3),
        repair(TASK, "gamma", safe=1.0, f1=0.9, size=9),
        repair(TASK, "delta", safe=0.5, f1=1.0, size=1),
        repair(TASK, "eps", "install-failed"),
    ]
    verdicts = {
        choose_repair(TASK, {r.contestant: r for r in order}).model_dump_json()
        for order in permutations(found)
    }
    assert len(verdicts) == 1
    (only,) = verdicts
    assert '"pick":"gamma"' in only
