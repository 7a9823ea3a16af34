"""The environment figures on hand-built repairs, every number worked out by hand.

alpha's trials (D¹ by name, F1, safe install; ✓ installed and ran):

    task  trial 1                     trial 2                         trial 3
    t1    install-failed {requests}   ✓ {requests, idna} 0.9, 1.0     ✓ {Requests, idna} 0.6, 1.0
          F1 –, safe 0.5
    t2    ✓ {} F1 0.5, safe –
    t3    run-failed {requests} F1 –, safe 0.0    not-run (a usage limit: no sample)

Its attempts cost $0.1 + $0.2 + $0.3 on t1, $0.4 on t2, $0.5 and an unknown on t3.
"""

from __future__ import annotations

import pytest
from envrecords import controls, env_attempt, env_task, finding, repair

from bugbout_tui.core.config import TasksConfig
from bugbout_tui.core.env_models import Newest, Repair, RepairSet
from bugbout_tui.core.prices import shipped_prices
from bugbout_tui.report.env_build import (
    BASE_PASSES,
    GOLD_FAILS,
    NO_CONTROLS,
    build_env_section,
    control_problem,
)
from bugbout_tui.report.env_metrics import (
    agent_row,
    consistency,
    jaccard,
    loosened_pins,
    newest_rows,
    scored_trials,
)
from bugbout_tui.report.model import EnvAgentRow, EnvSection
from bugbout_tui.rules.cost import Billed, Costing

COSTING = Costing(shipped_prices())
TWO = {"requests": "2.31.0", "idna": "3.6"}


def alpha_repairs() -> dict[str, dict[str, Repair]]:
    return {
        "t1": {
            "alpha#3": repair(
                "t1", "alpha#3", names={"Requests": "2.31.0", "idna": "3.6"}, f1=0.6, safe=1.0
            ),
            "alpha": repair("t1", "alpha", "install-failed", names={"requests": None}, safe=0.5),
            "alpha#2": repair("t1", "alpha#2", names=TWO, f1=0.9, safe=1.0),
            "beta": repair("t1", "beta", names=TWO, f1=1.0, safe=1.0),
        },
        "t2": {"alpha": repair("t2", "alpha", names={}, f1=0.5, safe=None)},
        "t3": {
            "alpha": repair("t3", "alpha", "run-failed", safe=0.0),
            "alpha#2": repair("t3", "alpha#2", "not-run"),
        },
    }


def alpha_attempts() -> list[list]:  # type: ignore[type-arg]
    return [
        [
            env_attempt("t1", name, cost=cost)
            for name, cost in (("alpha", 0.1), ("alpha#2", 0.2), ("alpha#3", 0.3))
        ],
        [env_attempt("t2", "alpha", cost=0.4)],
        [env_attempt("t3", "alpha", cost=0.5), env_attempt("t3", "alpha#2", status="quota")],
    ]


def alpha(**kwargs: object) -> EnvAgentRow:
    runs = [scored_trials(by_name, "alpha") for by_name in alpha_repairs().values()]
    return agent_row("alpha", runs, alpha_attempts(), COSTING, **kwargs)  # type: ignore[arg-type]


def test_trials_are_pooled_in_trial_order_and_a_trial_that_did_not_count_is_no_sample() -> None:
    found = alpha_repairs()
    assert [r.contestant for r in scored_trials(found["t1"], "alpha")] == [
        "alpha",
        "alpha#2",
        "alpha#3",
    ]
    assert [r.contestant for r in scored_trials(found["t3"], "alpha")] == ["alpha"]
    row = alpha()
    assert (row.tasks, row.resolved.count, row.resolved.n) == (3, 3, 5)
    assert row.resolved.percent() == "60% (23–88%)"


def test_pass_at_k_is_averaged_per_task_and_has_no_value_with_too_few_samples() -> None:
    at = {item.k: item for item in alpha().pass_at}
    # pass@1 per task c/n: t1 2/3, t2 1, t3 0.
    assert (at[1].value, at[1].tasks) == (pytest.approx(5 / 9), 3)
    # pass@3 only on t1 (3 trials, 2 right): 1 − C(1,3)/C(3,3) = 1.
    assert (at[3].value, at[3].tasks, at[3].low) == (1.0, 1, None)
    single = agent_row("beta", [scored_trials(alpha_repairs()["t1"], "beta")], [], COSTING)
    beta_at = {item.k: item for item in single.pass_at}
    assert (beta_at[3].value, beta_at[3].tasks) == (None, 0)
    assert beta_at[1].value == 1.0
    assert single.consistency is None  # one trial: nothing to be consistent with


def test_consistency_compares_normalized_declared_names() -> None:
    row = alpha()
    # t1's three trials declare {requests}, {requests, idna}, {requests, idna}: not alike.
    assert row.consistency is not None
    assert (row.consistency.k, row.consistency.value, row.consistency.tasks) == (3, 0.0, 1)
    # Trials 2 and 3 alone agree once `Requests` is normalized to `requests`.
    later = scored_trials(alpha_repairs()["t1"], "alpha")[1:]
    assert consistency([later], 2).value == 1.0
    assert consistency([later], 3).tasks == 0


def test_mean_pairwise_jaccard_per_task_then_over_tasks() -> None:
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 1
    # t1's pairs: (1,2) ½, (1,3) ½, (2,3) 1 → ⅔; the other tasks have one trial each.
    row = alpha()
    assert (row.jaccard, row.jaccard_tasks) == (pytest.approx(2 / 3), 1)


def test_manifest_f1_is_a_mean_per_task_then_over_tasks() -> None:
    # t1 (0.9 + 0.6)/2 = 0.75, t2 0.5 → 0.625 (pooled over trials it would be 0.667).
    row = alpha()
    assert (row.f1, row.f1_tasks) == (pytest.approx(0.625), 2)


def test_safe_install_is_a_mean_over_repairs_that_declare_something() -> None:
    # 0.5, 1.0, 1.0 on t1 and 0.0 on t3; t2 declares nothing.
    row = alpha()
    assert (row.safe_install, row.safe_repairs) == (pytest.approx(0.625), 4)


def test_attempts_count_the_trials_up_to_the_first_resolved_one() -> None:
    # t1 first resolved on trial 2, t2 on trial 1; t3 never, so it is left out.
    row = alpha()
    assert (row.attempts, row.attempts_tasks) == (1.5, 2)


def test_cost_is_a_mean_per_task_of_all_its_trials_known_costs() -> None:
    # t1 0.6, t2 0.4; t3's quota attempt has no known cost, so t3 is left out.
    row = alpha()
    assert (row.cost_usd, row.cost_tasks) == (pytest.approx(0.5), 2)
    plan = Costing(shipped_prices(), {"alpha": Billed(None, "plan")})
    runs = [scored_trials(by_name, "alpha") for by_name in alpha_repairs().values()]
    on_plan = agent_row("alpha", runs, alpha_attempts(), plan)
    assert (on_plan.cost_usd, on_plan.cost_tasks) == (None, 0)


def test_controls_decide_whether_a_task_can_be_scored() -> None:
    assert control_problem(controls("t")) is None
    assert control_problem(None) == NO_CONTROLS
    assert control_problem({"base": controls("t")["base"]}) == NO_CONTROLS
    assert control_problem(controls("t", base="resolved")) == BASE_PASSES
    assert control_problem(controls("t", gold="install-failed")) == GOLD_FAILS


def test_newest_rows_name_the_base_and_every_repair() -> None:
    old = Newest(
        name="requests",
        declared="2.19.0",
        newest_today="2.32.3",
        newest_at_date="2.31.0",
        advisories={"2.19.0": ["PYSEC-2018-28"]},
    )
    fresh = Newest(
        name="requests", declared="2.31.0", newest_today="2.32.3", newest_at_date="2.31.0"
    )
    base = controls("t1", base_newest=[old])["base"]
    rows = newest_rows("t1", [("base", base), ("alpha", repair("t1", "alpha", newest=[fresh]))])
    assert [(r.contestant, r.declared, r.newest_at_date, r.advisories) for r in rows] == [
        ("base", "2.19.0", "2.31.0", {"2.19.0": ["PYSEC-2018-28"]}),
        ("alpha", "2.31.0", "2.31.0", {}),
    ]


def test_a_repair_that_resolved_by_dropping_a_pin_is_listed() -> None:
    gold = controls("t1", gold_names=TWO, gold_safe=1.0)["gold"]
    loose = repair("t1", "alpha", names={"requests": None, "idna": "3.6"}, safe=0.5)
    vulnerable = repair("t1", "beta", names=TWO, safe=0.5)  # pinned, but an advisory
    failed = repair("t1", "gamma", "install-failed", names={"requests": None}, safe=0.0)
    found = loosened_pins("t1", [("alpha", loose), ("beta", vulnerable), ("gamma", failed)], gold)
    assert [(f.contestant, f.safe_install, f.gold_safe_install, f.dropped) for f in found] == [
        ("alpha", 0.5, 1.0, ["requests"])
    ]


# --- the boards -------------------------------------------------------------------------

ADVISORY = finding("requests", "2.19.0", advisories=("PYSEC-2018-28",))


def section(decisions: TasksConfig | None = None) -> EnvSection:
    """Admitted: L1, L2 (Lite), M1 (a security label), M2 (its base flagged), M3.
    Left out: C1 (base installs), C2 (known repair fails), C3 (no controls), X1
    (excluded), N1 (nobody ran it). alpha resolves more; beta is safer."""
    tasks = [
        env_task("L1", lite=True, defect="pin-missing"),
        env_task("L2", lite=True, defect="typo-name"),
        env_task("M1", security=True),
        env_task("M2"),
        env_task("M3"),
        env_task("C1"),
        env_task("C2"),
        env_task("C3"),
        env_task("X1"),
        env_task("N1"),
    ]
    made = {t.id: controls(t.id) for t in tasks if t.id != "C3"}
    made["C1"] = controls("C1", base="resolved")
    made["C2"] = controls("C2", gold="run-failed")
    made["M2"] = controls("M2", base_audit=[ADVISORY, finding("six", "1.16.0")])
    found: dict[str, dict[str, Repair]] = {}
    for t in ("L2", "M1", "M2", "M3", "C1", "C2", "C3", "X1"):
        found[t] = {
            "alpha": repair(t, "alpha", safe=0.5),
            "beta": repair(
                t, "beta", "install-failed" if t in ("M1", "M2") else "resolved", safe=1.0
            ),
        }
    found["L1"] = {
        "alpha": repair("L1", "alpha", names=TWO, safe=0.5),
        "alpha#2": repair("L1", "alpha#2", names=TWO, safe=0.5),
        "alpha#3": repair("L1", "alpha#3", "run-failed", names=TWO, safe=0.5),
        "beta": repair("L1", "beta", safe=1.0),
    }
    found["N1"] = {"alpha": repair("N1", "alpha", "not-run")}
    return build_env_section(
        tasks=tasks,
        repairs=RepairSet(repairs=found, controls=made),
        attempts=[env_attempt("M3", "alpha", cost=1.0)],
        contestants=["beta", "alpha"],
        decisions=decisions or TasksConfig(exclude=["X1"]),
        costing=COSTING,
    )


def test_tasks_whose_controls_failed_are_left_out_with_the_reason() -> None:
    funnel = section().funnel
    assert (funnel.kept, funnel.lite, funnel.admitted) == (10, 2, 5)
    assert {g.reason: g.tasks for g in funnel.set_aside} == {"excluded by you": ["X1"]}
    assert {g.reason: g.tasks for g in funnel.controls_failed} == {
        BASE_PASSES: ["C1"],
        GOLD_FAILS: ["C2"],
        NO_CONTROLS: ["C3"],
    }
    assert {g.reason: g.tasks for g in funnel.not_raced} == {
        "no contestant has run on it yet": ["N1"]
    }
    rows = {row.task: row for row in section().tasks}
    assert (rows["C1"].admitted, rows["C1"].left_out, rows["C1"].verdict) == (
        False,
        BASE_PASSES,
        None,
    )
    assert (rows["C1"].base, rows["C1"].gold) == ("resolved", "resolved")


def test_the_boards_hold_their_tasks() -> None:
    boards = {board.board: board for board in section().boards}
    assert list(boards) == ["all", "lite", "secure", "stochastic"]
    assert boards["all"].tasks == ["L1", "L2", "M1", "M2", "M3"]
    assert boards["lite"].tasks == ["L1", "L2"]
    assert boards["secure"].tasks == ["M1", "M2"]
    assert boards["secure"].reasons == {
        "M1": "a security label",
        "M2": "the audit flagged requests: advisories PYSEC-2018-28",
    }
    assert boards["stochastic"].tasks == ["L1"]  # alpha ran it three times


def test_all_ranks_by_resolved_and_secure_by_safe_install() -> None:
    boards = {board.board: board for board in section().boards}
    all_rows = {row.agent: row for row in boards["all"].rows}
    # alpha: L1 2 of 3, four more tasks resolved → 6 of 7; beta: M1, M2 failed → 3 of 5.
    assert (all_rows["alpha"].resolved.count, all_rows["alpha"].resolved.n) == (6, 7)
    assert (all_rows["beta"].resolved.count, all_rows["beta"].resolved.n) == (3, 5)
    assert [row.agent for row in boards["all"].rows] == ["alpha", "beta"]
    # On M1 and M2 alpha resolves both at 0.5, beta neither at 1.0: safety first.
    assert [row.agent for row in boards["secure"].rows] == ["beta", "alpha"]
    secure = {row.agent: row for row in boards["secure"].rows}
    assert (secure["beta"].safe_install, secure["beta"].resolved.count) == (1.0, 0)
    assert all_rows["alpha"].cost_usd == 1.0  # M3's attempt, the only one with a cost


def test_the_stochastic_board_counts_tasks_run_three_times() -> None:
    stochastic = next(board for board in section().boards if board.board == "stochastic")
    rows = {row.agent: row for row in stochastic.rows}
    assert rows["alpha"].tasks == 1
    assert rows["alpha"].consistency is not None
    assert (rows["alpha"].consistency.k, rows["alpha"].consistency.value) == (3, 1.0)
    assert rows["alpha"].jaccard == 1.0
    # beta ran L1 once: no task of its counts here.
    assert rows["beta"].tasks == 0
    assert rows["beta"].consistency is not None and rows["beta"].consistency.value is None
    assert [row.agent for row in stochastic.rows] == ["alpha", "beta"]


def test_the_env_judge_decides_every_admitted_task() -> None:
    found = section()
    verdicts = {row.task: row.verdict for row in found.tasks if row.verdict is not None}
    assert sorted(verdicts) == ["L1", "L2", "M1", "M2", "M3"]
    assert {task: v.pick for task, v in verdicts.items()} == {
        "L1": "beta",
        "L2": "beta",
        "M1": "alpha",
        "M2": "alpha",
        "M3": "beta",
    }
    assert (found.picked, found.approved) == (5, 5)


def test_a_task_awaiting_review_is_set_aside() -> None:
    found = section(TasksConfig.model_validate({"require-review": True, "include": ["L1"]}))
    assert found.funnel.admitted == 1
    assert {g.reason: len(g.tasks) for g in found.funnel.set_aside} == {"awaiting your review": 9}
