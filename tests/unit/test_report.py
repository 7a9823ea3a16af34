"""The report on a hand-made bout, every figure worked out by hand from the tables below.

Three scored tasks and one that is not, three contestants (alpha, beta, gamma), one
examiner (exam) and the repository's suite. The hidden-test statuses:

    task  alpha      beta              gamma
    t1    resolved   wrong-fix         resolved
    t2    resolved   resolved          quota (only the attempt says so)
    t3    wrong-fix  fixed-but-broke   no-fix (tests only, no source change)

The matrices are small enough to judge by hand (see each one's comment); the verdicts
come from the real judge, so the report is tested on what the judge really stores.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from rich.console import Console

from bugbout_tui.core.config import TasksConfig
from bugbout_tui.core.models import (
    Attempt,
    Author,
    Cell,
    CellOutcome,
    Exclusion,
    IssueRef,
    Matrix,
    Oracle,
    OracleSet,
    PatchFacts,
    Reason,
    Resolution,
    ResolutionSet,
    ResolutionStatus,
    Task,
    TaskSet,
    Tokens,
    TreeRun,
)
from bugbout_tui.core.patch import FileChange, Part, Patch
from bugbout_tui.report import (
    Report,
    build_report,
    render_json,
    render_markdown,
    render_terminal,
    report_json_schema,
)
from bugbout_tui.report.model import Rate, gap_sentence
from bugbout_tui.rules.judge import judge_all

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "report.schema.json"
WHEN = datetime(2026, 1, 1, tzinfo=UTC)
VENDORS = {"alpha": "va", "beta": "vb", "gamma": "vc", "exam": "ve"}
OUTCOMES: dict[str, CellOutcome] = {"P": "passed", "F": "failed", "E": "error"}


def grid(task: str, table: str, sizes: dict[str, int] | None = None) -> Matrix:
    """A matrix from a table: header names the trees, each row `author::test` and marks."""
    header, *rows = (line.split() for line in dedent(table).strip().splitlines())
    cells: dict[str, dict[str, dict[str, Cell]]] = {tree: {} for tree in header}
    tests: dict[str, list[str]] = {}
    for key, *marks in rows:
        author, test = key.split("::")
        tests.setdefault(author, []).append(test)
        for tree, mark in zip(header, marks, strict=True):
            cells[tree].setdefault(author, {})[test] = Cell(outcome=OUTCOMES[mark])

    def kind(name: str) -> str:
        return "suite" if name == "suite" else "examiner" if name == "exam" else "contestant"

    return Matrix(
        task=task,
        authors=[
            Author.model_validate(
                {"name": name, "kind": kind(name), "vendor": VENDORS.get(name), "tests": found}
            )
            for name, found in tests.items()
        ],
        patches=[
            PatchFacts(
                contestant=tree, vendor=VENDORS[tree], source_size=(sizes or {}).get(tree, 10)
            )
            for tree in header
            if tree != "base"
        ],
        trees={tree: TreeRun(tree=tree, cells=cells[tree]) for tree in header},
    )


MATRICES = {
    # majority: alpha (b1 F, e1 P) 0.5, beta (a1 P, e1 P) 1.0, gamma (a1 P, b1 F, e1 P) 2/3;
    # all approved, beta picked. unanimous: only beta passes everything; beta picked.
    "t1": grid(
        "t1",
        """
        base alpha beta gamma
        alpha::a1 F P P P
        beta::b1 F F P F
        exam::e1 F P P P
        suite::s1 P P P P
        """,
    ),
    # majority: both at (1 + 0)/2 = 0.5, approved; alpha's smaller diff wins the tie.
    # unanimous: both fail e1, so it abstains.
    "t2": grid(
        "t2",
        """
        base alpha beta
        alpha::a1 F P P
        beta::b1 F P P
        exam::e1 F F F
        suite::s1 P P P
        """,
        sizes={"alpha": 5, "beta": 10},
    ),
    # majority: alpha has support 0; beta 0.5 but breaks s2, which alpha keeps passing.
    # Every policy abstains. e1 never fails on the base, so the examiner gives no evidence.
    "t3": grid(
        "t3",
        """
        base alpha beta
        alpha::a1 F P F
        beta::b1 F F P
        gamma::g1 F F P
        exam::e1 P P P
        suite::s1 P P P
        suite::s2 P P F
        """,
    ),
}

STATUSES: dict[str, dict[str, ResolutionStatus]] = {
    "t1": {"alpha": "resolved", "beta": "wrong-fix", "gamma": "resolved"},
    "t2": {"alpha": "resolved", "beta": "resolved"},
    "t3": {"alpha": "wrong-fix", "beta": "fixed-but-broke", "gamma": "no-fix"},
}


def task(number: int) -> Task:
    return Task(
        id=f"t{number}",
        issue=number,
        reference=IssueRef(number=number),
        title=f"Fix bug number {number} | with a pipe",
        fix_commit=f"{number}" * 40,
        base_commit=f"{number + 1}" * 40,
        date=WHEN,
        source_files=["pkg/mod.py"],
        test_files=["tests/test_mod.py"],
        added_tests=["test_bug"],
    )


def patch(*files: tuple[str, Part]) -> Patch:
    return Patch(
        files=[
            FileChange(path=path, status="modified", part=part, added_lines=2, removed_lines=1)
            for path, part in files
        ]
    )


def attempt(
    task_id: str,
    name: str,
    seconds: float,
    *,
    role: str = "contestant",
    status: str = "finished",
    tokens: Tokens | None = None,
    cost: float | None = None,
    changed: Patch | None = None,
) -> Attempt:
    return Attempt.model_validate(
        {
            "task": task_id,
            "contestant": name,
            "role": role,
            "status": status,
            "started_at": WHEN,
            "ended_at": WHEN,
            "seconds": seconds,
            "tokens": tokens or Tokens(),
            "cost_usd": cost,
            "patch": changed or patch(("pkg/mod.py", "source"), ("tests/test_x.py", "tests")),
            "logdir": f"/logs/{task_id}/{name}",
        }
    )


def attempts() -> list[Attempt]:
    used = Tokens(input=100, output=10)
    return [
        attempt("t1", "alpha", 10, tokens=used),
        attempt("t2", "alpha", 20, tokens=used),
        attempt("t3", "alpha", 30, tokens=Tokens(input=100, output=10, cached=50)),
        attempt(
            "t1",
            "beta",
            15,
            cost=0.5,
            changed=patch(("pkg/mod.py", "source"), ("conftest.py", "other")),
        ),
        attempt("t2", "beta", 25, cost=0.25),
        attempt("t3", "beta", 35, cost=0.25),
        attempt("t1", "gamma", 40),
        attempt("t2", "gamma", 5, status="quota"),
        attempt("t3", "gamma", 60, changed=patch(("tests/test_g.py", "tests"))),
        *(attempt(t, "exam", 7, role="examiner", cost=0.1) for t in ("t1", "t2", "t3")),
        # The unscored task: counted in cost and flags, never in scores.
        attempt("t4", "alpha", 100, cost=1.0, changed=patch(("setup.cfg", "other"))),
    ]


def records(**changes: Any) -> dict[str, Any]:
    verdicts = {name: judge_all(matrix) for name, matrix in MATRICES.items()}
    base: dict[str, Any] = {
        "project": "demo",
        "policy": "majority",
        "taskset": TaskSet(
            mined_at=WHEN,
            head="h" * 40,
            fingerprint="f",
            issue_source="issues.json",
            examined=10,
            tasks=[task(n) for n in (1, 2, 3, 4)],
            excluded=[
                *(Exclusion(commit=f"{i}", title="x", reason=Reason.NOT_A_FIX) for i in range(3)),
                *(Exclusion(commit=f"{i}", title="x", reason=Reason.NO_ISSUE) for i in range(2)),
                Exclusion(commit="d", title="x", reason=Reason.DUPLICATE_ISSUE),
            ],
        ),
        "oracles": OracleSet(
            oracles={
                **{f"t{n}": Oracle(fail_to_pass=["test_bug"], scored=True) for n in (1, 2, 3)},
                "t4": Oracle(scored=False, reason="no fail-to-pass test"),
            }
        ),
        "attempts": attempts(),
        "matrices": MATRICES,
        "verdicts": verdicts,
        "resolutions": ResolutionSet(
            patches={
                t: {
                    name: Resolution(task=t, contestant=name, status=status)
                    for name, status in by_name.items()
                }
                for t, by_name in STATUSES.items()
            }
        ),
        "contestants": ["alpha", "beta", "gamma"],
        "examiners": ["exam"],
    }
    base.update(changes)
    return base


@pytest.fixture(scope="module")
def report() -> Report:
    return build_report(**records())


def rate(value: Rate) -> tuple[float, int]:
    return (value.count, value.n)


# --- the verdicts the figures rest on --------------------------------------------------


def test_the_judge_decides_the_hand_made_tasks_as_described() -> None:
    verdicts = {name: judge_all(matrix) for name, matrix in MATRICES.items()}
    picks = {t: {p: v.pick for p, v in by_policy.items()} for t, by_policy in verdicts.items()}
    assert picks == {
        "t1": {
            "majority": "beta",
            "unanimous": "beta",
            "strict": "beta",
            "cross-vendor": "beta",
            "credible": "beta",
        },
        "t2": {
            "majority": "alpha",
            "unanimous": None,
            "strict": None,
            "cross-vendor": "alpha",
            "credible": "alpha",
        },
        "t3": {
            "majority": None,
            "unanimous": None,
            "strict": None,
            "cross-vendor": None,
            "credible": None,
        },
    }


# --- agents -------------------------------------------------------------------------


def test_agents_count_every_status_over_scored_tasks(report: Report) -> None:
    rows = {row.name: row for row in report.agents.rows}
    assert list(rows) == ["alpha", "beta", "gamma"]
    counts = {
        name: (r.resolved, r.fixed_but_broke, r.wrong_fix, r.no_fix, r.quota, r.missing)
        for name, r in rows.items()
    }
    assert counts == {
        "alpha": (2, 0, 1, 0, 0, 0),
        "beta": (1, 1, 1, 0, 0, 0),
        "gamma": (1, 0, 0, 1, 1, 0),
    }
    # gamma's quota attempt is not held against it: 1 of 2, not 1 of 3.
    assert {name: rate(r.resolved_rate) for name, r in rows.items()} == {
        "alpha": (2, 3),
        "beta": (1, 3),
        "gamma": (1, 2),
    }
    assert rows["alpha"].resolved_rate.percent() == "67% (21–94%)"


def test_agents_time_tokens_and_cost(report: Report) -> None:
    rows = {row.name: row for row in report.agents.rows}
    assert (rows["alpha"].median_seconds, rows["alpha"].timed) == (20, 3)
    # gamma's quota attempt (5 s) is left out of its median: median of 40 and 60.
    assert (rows["gamma"].median_seconds, rows["gamma"].timed) == (50, 2)
    alpha = rows["alpha"].spend  # t4 is not scored, so its 100 s and $1 are not here
    assert (alpha.attempts, alpha.seconds, alpha.cost_usd, alpha.cost_reported) == (3, 60, None, 0)
    assert alpha.tokens.model_dump() == {"input": 300, "output": 30, "cached": 50, "reported": 3}
    beta = rows["beta"].spend
    assert (beta.cost_usd, beta.cost_reported, beta.tokens.input, beta.tokens.reported) == (
        1.0,
        3,
        None,
        0,
    )


def test_attempts_that_changed_other_files_are_flagged(report: Report) -> None:
    flagged = [(f.task, f.contestant, f.files) for f in report.agents.flagged]
    assert flagged == [("t1", "beta", ["conftest.py"]), ("t4", "alpha", ["setup.cfg"])]
    assert {row.name: row.flagged for row in report.agents.rows} == {
        "alpha": 1,
        "beta": 1,
        "gamma": 0,
    }


# --- picking one patch per bug --------------------------------------------------------


def test_picks_per_policy_against_the_best_single_agent(report: Report) -> None:
    picking = report.picking
    sides = {
        side.policy: (side.right, side.wrong, side.abstained, rate(side.rate))
        for side in picking.policies
    }
    assert sides == {
        "majority": (1, 1, 1, (1, 3)),
        "unanimous": (0, 1, 2, (0, 3)),
        "strict": (0, 1, 2, (0, 3)),
        "cross-vendor": (1, 1, 1, (1, 3)),
        "credible": (1, 1, 1, (1, 3)),
    }
    assert picking.best_agent == "alpha"
    assert picking.best_agent_rate is not None
    assert rate(picking.best_agent_rate) == (2, 3)
    versus = {side.policy: side.versus_best for side in picking.policies}
    majority, unanimous = versus["majority"], versus["unanimous"]
    assert majority is not None and unanimous is not None
    # majority: t1 only alpha right; t2 both; t3 neither → b = 0, c = 1, p = 1.
    assert (majority.agent, majority.judge_only, majority.agent_only) == ("alpha", 0, 1)
    assert majority.p_value == 1.0
    # unanimous abstains on t2 too: c = 2, p = 2 · ¼ = 0.5.
    assert (unanimous.judge_only, unanimous.agent_only, unanimous.p_value) == (0, 2, 0.5)


def resolved(statuses: dict[str, dict[str, ResolutionStatus]]) -> ResolutionSet:
    return ResolutionSet(
        patches={
            t: {name: Resolution(task=t, contestant=name, status=s) for name, s in found.items()}
            for t, found in statuses.items()
        }
    )


def test_without_a_gap_to_the_oracle_each_policy_says_why(report: Report) -> None:
    # alpha resolved t1 and t2, and no patch resolved t3: nothing for the judge to gain.
    for side in report.picking.policies:
        gap = side.gap_closed
        assert gap is not None and gap.share is None and (gap.low, gap.high) == (None, None)
        assert gap.no_gap == "alpha resolved every task that any patch resolved"
        assert gap.gap == 0 and gap.shown() == "no gap"
    assert gap_sentence(report.picking) == (
        "No gap to the oracle to close: alpha resolved every task that any patch resolved."
    )
    nothing = {task: dict.fromkeys(found, "wrong-fix") for task, found in STATUSES.items()}
    found = build_report(**records(resolutions=resolved(nothing)))  # type: ignore[arg-type]
    assert found.picking.policies[0].gap_closed is not None
    assert found.picking.policies[0].gap_closed.no_gap == "no patch resolved any raced task"


GAP_STATUSES: dict[str, dict[str, ResolutionStatus]] = {
    # The judge picks beta on t1 under every policy, and alpha on t2 under majority,
    # cross-vendor and credible: both right, where alpha (the best agent, by name among
    # three with one each) resolved t2 alone.
    "t1": {"alpha": "wrong-fix", "beta": "resolved", "gamma": "wrong-fix"},
    "t2": {"alpha": "resolved", "beta": "wrong-fix"},
    "t3": {"alpha": "wrong-fix", "beta": "fixed-but-broke", "gamma": "no-fix"},
}


def test_the_share_of_the_gap_to_the_oracle_each_policy_closes() -> None:
    found = build_report(**records(resolutions=resolved(GAP_STATUSES)))
    picking = found.picking
    assert (picking.best_agent, rate(picking.oracle)) == ("alpha", (2, 3))
    gaps = {side.policy: side.gap_closed for side in picking.policies}
    assert {policy: gap.share for policy, gap in gaps.items() if gap is not None} == {
        "majority": 1.0,
        "unanimous": 0.0,
        "strict": 0.0,
        "cross-vendor": 1.0,
        "credible": 1.0,
    }
    majority = gaps["majority"]
    assert majority is not None and (majority.closed, majority.gap) == (1.0, 1.0)
    # Only t1 has a gap: a resample without it ((2/3)^3 of them) is left out, and every
    # other one closes it all.
    assert 400 < majority.resamples_without_gap < 800
    assert (majority.low, majority.high) == (1.0, 1.0)
    sentence = gap_sentence(picking)
    assert sentence is not None and sentence.startswith(
        "Gap to the oracle closed: under majority the judge closed 100% (100 to 100%) of the "
        "gap from the best single agent (alpha, 1 of 3) to the oracle (2 of 3); "
        f"{majority.resamples_without_gap} of 2000 resamples drew no task with a gap"
    )
    wide = terminal_text(found, 140)
    assert "Gap closed" in wide and "100% (100 to 100%)" in wide
    narrow = terminal_text(found, 80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "Gap to the oracle closed: under majority the judge closed 100%" in narrow
    assert "(not shown at this width: Gap closed)" in narrow
    assert "credible" in narrow
    markdown = render_markdown(found)
    assert "| unanimous | 1 | 0 | 2 | 33% (6–79%) | 1 | 1 | 1.00 | 0% (-100 to 100%) |" in markdown
    data = json.loads(render_json(found))
    (credible,) = [s for s in data["picking"]["policies"] if s["policy"] == "credible"]
    assert credible["gap_closed"]["share"] == 1.0


def test_a_judge_behind_the_best_agent_closes_a_negative_share() -> None:
    # beta's patch resolves t3 too, where every policy abstains: the oracle gains a task
    # alpha missed, and the judge, wrong on t1 where alpha was right, falls behind it.
    statuses = {**STATUSES, "t3": {**STATUSES["t3"], "beta": "resolved"}}
    found = build_report(**records(resolutions=resolved(statuses)))  # type: ignore[arg-type]
    gaps = {side.policy: side.gap_closed for side in found.picking.policies}
    assert gaps["majority"] is not None and gaps["majority"].share == -1.0
    assert gaps["unanimous"] is not None and gaps["unanimous"].share == -2.0
    sentence = gap_sentence(found.picking)
    assert sentence is not None
    assert "the judge closed -100% (" in sentence
    assert "doing worse than always taking alpha's patch" in sentence
    assert "-200% (" in terminal_text(found, 140)


def test_random_agent_and_oracle(report: Report) -> None:
    # Shares resolving: t1 2/3, t2 2/3 (gamma's quota is not right), t3 0 → 4/3 expected.
    assert report.picking.random_agent.count == pytest.approx(4 / 3)
    assert report.picking.random_agent.n == 3
    assert report.picking.random_agent.counted() == "1.3 of 3"
    assert rate(report.picking.oracle) == (2, 3)


def test_summary_sentence_states_the_difference_and_the_p_value(report: Report) -> None:
    assert report.picking.summary == (
        "Under the majority policy the judge resolved 1 of 3 (33%, 95% CI 6–79%), "
        "the best single agent (alpha) 2 of 3; a difference of 1 bug in alpha's favour, "
        "p = 1.00: not evidence either is better."
    )


def test_summary_when_the_judge_is_far_ahead() -> None:
    # Five tasks only the judge gets right: b = 5, c = 0, p = 0.0625, still not evidence;
    # the sentence names the side ahead.
    from bugbout_tui.report.build import _summary
    from bugbout_tui.report.model import Comparison, PolicyPicks

    picks = PolicyPicks(
        policy="strict",
        right=5,
        wrong=0,
        abstained=0,
        rate=Rate(count=5, n=5, share=1.0, low=0.57, high=1.0),
        versus_best=Comparison(agent="alpha", judge_only=5, agent_only=0, p_value=0.0625),
    )
    sentence = _summary(picks, Rate(count=0, n=5, share=0.0, low=0.0, high=0.43))
    assert "a difference of 5 bugs in the judge's favour, p = 0.062" in sentence
    assert sentence.endswith("not evidence either is better.")


# --- merge gate -----------------------------------------------------------------------


def test_merge_gate_under_the_configured_policy(report: Report) -> None:
    # Scored patches with a source change: t1 alpha R✓ beta W✓ gamma R✓, t2 alpha R✓
    # beta R✓, t3 alpha W✗ beta W✗ (✓ approved). gamma's t3 tests-only patch is no fix.
    gate = report.gate
    assert (gate.policy, gate.patches, gate.right, gate.wrong, gate.approved) == (
        "majority",
        7,
        4,
        3,
        5,
    )
    assert rate(gate.precision) == (4, 5)
    assert rate(gate.wrong_stopped) == (2, 3)
    assert rate(gate.right_stopped) == (0, 4)
    assert rate(gate.approve_all) == (4, 7)


# --- evidence -------------------------------------------------------------------------


def test_auc_per_author_without_its_own_patches(report: Report) -> None:
    rows = {(row.author, row.kind): row for row in report.evidence.rows}
    assert list(rows) == [
        ("alpha", "contestant"),
        ("beta", "contestant"),
        ("gamma", "contestant"),
        ("exam", "examiner"),
        ("suite", "suite"),
    ]
    figures = {key[0]: (row.auc, row.positives, row.negatives) for key, row in rows.items()}
    # alpha's a1 on others' patches: right [t1 gamma 1, t2 beta 1], wrong [t1 beta 1,
    # t3 beta 0] → (½ + 1 + ½ + 1)/4.
    assert figures["alpha"] == (0.75, 2, 2)
    # beta's b1: right [t1 alpha 0, t1 gamma 0, t2 alpha 1], wrong [t3 alpha 0].
    assert figures["beta"] == pytest.approx((2 / 3, 3, 1))
    # gamma wrote tests only on t3, where both patches were wrong: no right class.
    assert figures["gamma"] == (None, 0, 2)
    # exam's e1: right [1, 1, 0, 0], wrong [1, 1, 1] → 6 ties of 12 pairs.
    assert figures["exam"] == (0.25, 4, 3)
    # The suite scores every patch: right [1, 1, 1, 1], wrong [1, 1, ½ (t3 beta breaks s2)].
    assert figures["suite"] == pytest.approx((2 / 3, 4, 3))


def test_a_patch_whose_run_failed_passes_none_of_the_tests() -> None:
    broken = MATRICES["t1"].model_copy(deep=True)
    broken.trees["gamma"] = TreeRun(tree="gamma", error="pytest timed out")
    matrices = {**MATRICES, "t1": broken}
    verdicts = {name: judge_all(matrix) for name, matrix in matrices.items()}
    report = build_report(**records(matrices=matrices, verdicts=verdicts))
    rows = {row.author: row.auc for row in report.evidence.rows}
    # t1 gamma (right) now scores 0 for everyone. Suite: right [1, 0, 1, 1] against
    # wrong [1, 1, ½] → three right patches at ½ + ½ + 1, one at 0 → 6/12.
    assert rows["suite"] == 0.5
    # alpha's a1: right [t1 gamma 0, t2 beta 1], wrong [1, 0] → (0 + ½ + ½ + 1)/4.
    assert rows["alpha"] == 0.5


# --- funnel, cost, tasks ----------------------------------------------------------------


def test_funnel(report: Report) -> None:
    funnel = report.funnel
    assert (funnel.examined, funnel.kept, funnel.scored) == (10, 4, 3)
    assert [(item.reason.value, item.count) for item in funnel.excluded] == [
        ("not-a-fix", 3),
        ("not-a-bug", 0),
        ("issue-unreadable", 0),
        ("no-issue", 2),
        ("too-many-source-files", 0),
        ("no-source-change", 0),
        ("no-test-added", 0),
        ("no-problem-text", 0),
        ("not-env-only", 0),
        ("env-merge", 0),
        ("env-revert", 0),
        ("env-version-only", 0),
        ("env-lock-only", 0),
        ("env-not-dependencies", 0),
        ("duplicate-issue", 1),
        ("before-since", 0),
        ("over-limit", 0),
    ]
    assert [(item.reason, item.count, item.tasks) for item in funnel.not_scored] == [
        ("no fail-to-pass test", 1, ["t4"])
    ]


def test_a_task_without_an_oracle_is_not_scored() -> None:
    oracles = OracleSet(oracles={"t1": Oracle(fail_to_pass=["test_bug"], scored=True)})
    report = build_report(**records(oracles=oracles))
    assert report.funnel.scored == 1
    assert report.picking.raced_tasks == 1
    assert [(item.reason, item.tasks) for item in report.funnel.not_scored] == [
        ("no ground truth is recorded for this task", ["t2", "t3", "t4"])
    ]


# --- which tasks count ------------------------------------------------------------------


def unraced(task_id: str, *attempts_there: Attempt, statement: str | None = None) -> dict[str, Any]:
    """The records with one more scored task, `task_id`, and only `attempts_there` on it."""
    base = records()
    extra = task(5).model_copy(update={"id": task_id, "statement": statement})
    base["taskset"] = base["taskset"].model_copy(update={"tasks": [*base["taskset"].tasks, extra]})
    base["oracles"] = OracleSet(
        oracles={**base["oracles"].oracles, task_id: Oracle(fail_to_pass=["t"], scored=True)}
    )
    base["attempts"] = [*base["attempts"], *attempts_there]
    return base


def counted_over(report: Report) -> set[int]:
    """Every denominator of the figures that count over tasks."""
    picking = report.picking
    assert picking.best_agent_rate is not None
    counts = {
        picking.best_agent_rate.n,
        picking.random_agent.n,
        picking.oracle.n,
        *(side.rate.n for side in picking.policies),
    }
    return counts | {report.agents.raced_tasks, picking.raced_tasks}


def test_a_task_no_contestant_was_given_counts_nowhere(report: Report) -> None:
    """Three tasks were raced; t5 had no issue text, so every attempt on it was skipped:
    it counts in no figure and appears in the funnel with its reason."""
    skipped = [
        attempt("t5", name, 0, status="skipped", changed=Patch())
        for name in ("alpha", "beta", "gamma")
    ]
    found = build_report(**unraced("t5", *skipped))
    assert counted_over(found) == {3}
    assert found.picking == report.picking
    assert found.gate == report.gate
    assert found.evidence == report.evidence
    assert [row.missing for row in found.agents.rows] == [0, 0, 0]
    funnel = found.funnel
    assert (funnel.kept, funnel.scored, funnel.raced) == (5, 4, 3)
    assert [(g.reason, g.count, g.tasks) for g in funnel.not_raced] == [
        ("no issue text", 1, ["t5"])
    ]
    (t5,) = [row for row in found.tasks if row.task == "t5"]
    assert (t5.scored, t5.raced, t5.not_raced) == (True, False, "no issue text")
    markdown = render_markdown(found)
    assert "| Not raced: no issue text (t5) | 1 |" in markdown
    assert "| Raced: the tasks every figure counts | 3 |" in markdown
    assert "not raced: no issue text" in terminal_text(found, 100)


@pytest.mark.parametrize(
    ("statuses", "reason"),
    [
        (("quota", "quota"), "every contestant's attempt hit a usage limit"),
        (("skipped", "quota"), "every contestant's attempt hit a usage limit"),
        (("skipped", "skipped"), "no contestant could be started"),
        ((), "no contestant has run on it yet"),
    ],
)
def test_why_a_scored_task_with_issue_text_was_not_raced(
    statuses: tuple[str, ...], reason: str
) -> None:
    ran = [
        attempt("t5", name, 1, status=status, changed=Patch()).model_copy(
            update={"detail": "could not start x: not found"}
        )
        for name, status in zip(("alpha", "beta"), statuses, strict=False)
    ]
    found = build_report(**unraced("t5", *ran, statement="it breaks"))
    assert counted_over(found) == {3}
    assert [(g.reason, g.tasks) for g in found.funnel.not_raced] == [(reason, ["t5"])]


def test_one_contestant_that_ran_is_enough() -> None:
    ran = [
        attempt("t5", "alpha", 1, status="quota", changed=Patch()),
        attempt("t5", "beta", 1, status="no-change", changed=Patch()),
    ]
    found = build_report(**unraced("t5", *ran, statement="it breaks"))
    assert counted_over(found) == {4}
    assert found.funnel.not_raced == []
    # beta has no score yet there; alpha's quota is not held against it.
    rows = {row.name: row for row in found.agents.rows}
    assert (rows["beta"].missing, rows["alpha"].quota) == (1, 1)


def test_tasks_excluded_by_you_count_nowhere(report: Report) -> None:
    """t1 was raced, then excluded in bugbout.toml: its records stay, and count nowhere."""
    found = build_report(**records(decisions=TasksConfig(exclude=["t1"])))
    assert counted_over(found) == {2}
    funnel = found.funnel
    assert [(g.reason, g.count, g.tasks) for g in funnel.set_aside] == [
        ("excluded by you", 1, ["t1"])
    ]
    assert (funnel.kept, funnel.scored, funnel.raced) == (4, 2, 2)
    # alpha resolved t2, wrong-fixed t3; t1 (resolved) is no longer counted
    rows = {row.name: row for row in found.agents.rows}
    assert rate(rows["alpha"].resolved_rate) == (1, 2)
    (t1,) = [row for row in found.tasks if row.task == "t1"]
    assert (t1.scored, t1.raced, t1.not_raced) == (True, False, "excluded by you")
    assert all(pick.right is None for pick in t1.picks)
    assert "| Set aside: excluded by you (t1) | 1 |" in render_markdown(found)
    assert found.gate.patches == report.gate.patches - 3


def test_tasks_awaiting_review_count_nowhere() -> None:
    decisions = TasksConfig.model_validate({"require-review": True, "include": ["t2", "t3"]})
    found = build_report(**records(decisions=decisions))
    assert counted_over(found) == {2}
    assert [(g.reason, g.tasks) for g in found.funnel.set_aside] == [
        ("awaiting your review", ["t1", "t4"])
    ]


# --- cross-vendor without vendors -------------------------------------------------------


def with_vendors(vendors: dict[str, str | None]) -> dict[str, Any]:
    """The records with every matrix's vendors replaced, and judged again."""
    matrices = {}
    for name, matrix in MATRICES.items():
        again = matrix.model_copy(deep=True)
        for author in again.authors:
            if author.name in vendors:
                author.vendor = vendors[author.name]
        for facts in again.patches:
            facts.vendor = vendors.get(facts.contestant) or "unknown"
        matrices[name] = again
    verdicts = {name: judge_all(matrix) for name, matrix in matrices.items()}
    return records(matrices=matrices, verdicts=verdicts)


def test_cross_vendor_with_vendors_unknown_says_so_instead_of_comparing() -> None:
    found = build_report(**with_vendors({"alpha": "unknown", "beta": "unknown", "gamma": "vc"}))
    (side,) = [s for s in found.picking.policies if s.policy == "cross-vendor"]
    assert side.cannot_apply == "vendors unknown for alpha, beta; set `vendor` in bugbout.toml"
    assert side.versus_best is None
    assert all(s.cannot_apply is None for s in found.picking.policies if s is not side)
    assert found.gate.cannot_apply is None  # the configured policy is majority
    markdown = render_markdown(found)
    assert "| cross-vendor | 1 | 0 | 2 | cannot apply | – | – | – | – |" in markdown
    assert side.gap_closed is None  # withheld with the comparison
    assert (
        "`cross-vendor` cannot apply to this bout: vendors unknown for alpha, beta; set "
        "\\`vendor\\` in bugbout.toml." in markdown
    )
    text = terminal_text(found, 100)
    assert "cross-vendor cannot apply: vendors unknown for alpha, beta" in text


def test_cross_vendor_configured_without_vendors_shows_no_figures() -> None:
    unknown = {name: "unknown" for name in ("alpha", "beta", "gamma", "exam")}
    found = build_report(**{**with_vendors(unknown), "policy": "cross-vendor"})
    why = "vendors unknown for alpha, beta, exam, gamma; set `vendor` in bugbout.toml"
    assert found.gate.cannot_apply == why
    assert found.picking.summary == (
        f"The cross-vendor policy cannot apply to this bout: {why}. Its abstentions "
        "measure nothing, so its picks are not compared with the agents'."
    )
    text = terminal_text(found, 100)
    assert "p = " not in text
    assert "Approvals that were right" not in text
    markdown = render_markdown(found)
    assert "Approvals that were right" not in markdown


def test_cross_vendor_with_one_vendor_cannot_apply_either() -> None:
    same = {name: "acme" for name in ("alpha", "beta", "gamma", "exam")}
    found = build_report(**with_vendors(same))
    (side,) = [s for s in found.picking.policies if s.policy == "cross-vendor"]
    assert side.cannot_apply == "every agent is of one vendor (acme), and it needs two"


def test_cross_vendor_applies_with_known_vendors(report: Report) -> None:
    (side,) = [s for s in report.picking.policies if s.policy == "cross-vendor"]
    assert side.cannot_apply is None and side.versus_best is not None
    # an examiner given no vendor at all is independent of every vendor, as the judge has it
    found = build_report(**with_vendors({**VENDORS, "exam": None}))
    assert all(s.cannot_apply is None for s in found.picking.policies)


def test_cost_totals_cover_every_attempt(report: Report) -> None:
    total = report.cost.total
    assert (total.attempts, total.seconds) == (
        13,
        10 + 20 + 30 + 15 + 25 + 35 + 40 + 5 + 60 + 21 + 100,
    )
    assert total.cost_usd == pytest.approx(0.5 + 0.25 + 0.25 + 0.3 + 1.0)
    assert total.cost_reported == 7
    assert total.tokens.input == 300
    by_agent = {(item.role, item.name): item.spend for item in report.cost.by_agent}
    assert list(by_agent) == [
        ("contestant", "alpha"),
        ("contestant", "beta"),
        ("contestant", "gamma"),
        ("examiner", "exam"),
    ]
    assert by_agent[("contestant", "alpha")].attempts == 4
    assert by_agent[("contestant", "alpha")].cost_usd == 1.0
    assert by_agent[("examiner", "exam")].cost_usd == pytest.approx(0.3)


# --- where attempts ran ---------------------------------------------------------------

PLACED = {
    ("t1", "alpha"): "w10",
    ("t2", "alpha"): "w10",
    ("t1", "alpha#2"): "w10",
    ("t1", "beta"): "w2",
    ("t2", "beta"): "w2",
    ("t3", "beta"): "w2",
    ("t1", "exam"): "w2",
}
"""The attempts that ran on a cluster's workers; the others ran on this machine."""


def on_a_cluster() -> Report:
    """The bout with a second trial of alpha, a skipped and a budget-stopped attempt, and
    the attempts of `PLACED` run on workers `w2` and `w10`."""
    every = [
        *attempts(),
        attempt("t1", "alpha#2", 12),
        attempt("t4", "beta", 0, status="skipped"),
        attempt("t4", "gamma", 0, status="budget"),
    ]
    placed = [a.model_copy(update={"worker": PLACED.get((a.task, a.contestant))}) for a in every]
    return build_report(**records(attempts=placed))


def test_a_bout_on_one_machine_says_nothing_of_where_attempts_ran(report: Report) -> None:
    assert report.workers is None
    assert "Where attempts ran" not in render_markdown(report)
    assert "Where attempts ran" not in terminal_text(report, 100)
    assert json.loads(render_json(report))["workers"] is None


def test_where_attempts_ran_counts_each_agents_attempts_per_worker() -> None:
    workers = on_a_cluster().workers
    assert workers is not None
    # w2 before w10 (numbers as numbers), this machine last; a trial counts under its
    # agent; the skipped and the budget-stopped attempts ran nowhere.
    assert [(row.worker, row.attempts, row.agents) for row in workers.rows] == [
        ("w2", 4, {"beta": 3, "exam": 1}),
        ("w10", 3, {"alpha": 3}),
        (None, 7, {"alpha": 2, "gamma": 3, "exam": 2}),
    ]


def test_where_attempts_ran_in_markdown_terminal_and_json() -> None:
    report = on_a_cluster()
    markdown = render_markdown(report)
    assert "\n## Where attempts ran\n" in markdown
    assert markdown.index("## Cost and tokens") < markdown.index("## Where attempts ran")
    assert "| Worker | By agent | Attempts |" in markdown
    assert "| w2 | beta 3, exam 1 | 4 |" in markdown
    assert "| this machine | alpha 2, gamma 3, exam 2 | 7 |" in markdown
    terminal = terminal_text(report, 80)
    assert max(len(line) for line in terminal.splitlines()) <= 80
    section = terminal[terminal.index("Where attempts ran") :]
    rows = [line.split() for line in section.splitlines()[3:6]]
    assert [[word for word in row if word != "│"] for row in rows] == [
        ["w2", "beta", "3,", "exam", "1", "4"],
        ["w10", "alpha", "3", "3"],
        ["this", "machine", "alpha", "2,", "gamma", "3,", "exam", "2", "7"],
    ]
    data = json.loads(render_json(report))
    assert data["schema_version"] == 6
    assert data["workers"]["rows"][0] == {"worker": "w2", "attempts": 4,
                                          "agents": {"beta": 3, "exam": 1}}  # fmt: skip
    assert data["workers"]["rows"][2]["worker"] is None
    assert Report.model_validate_json(render_json(report)) == report


def test_task_rows_for_drill_down(report: Report) -> None:
    rows = {row.task: row for row in report.tasks}
    assert list(rows) == ["t1", "t2", "t3", "t4"]
    t1 = rows["t1"]
    assert [(p.policy, p.pick, p.right) for p in t1.picks][:2] == [
        ("majority", "beta", False),
        ("unanimous", "beta", False),
    ]
    assert [(p.contestant, p.status, p.approved) for p in t1.patches] == [
        ("alpha", "resolved", True),
        ("beta", "wrong-fix", True),
        ("gamma", "resolved", True),
    ]
    t2 = rows["t2"]
    assert (t2.picks[0].pick, t2.picks[0].right) == ("alpha", True)
    assert t2.picks[0].decided_by == "alpha's patch is smaller: 5 lines against 10 for beta"
    assert t2.picks[1].pick is None and t2.picks[1].abstained
    assert t2.picks[1].decided_by is None
    assert [(p.contestant, p.status, p.approved) for p in t2.patches] == [
        ("alpha", "resolved", True),
        ("beta", "resolved", True),
        ("gamma", "quota", None),
    ]
    t3 = rows["t3"]
    assert t3.picks[0].abstained == (
        "every patch with support of at least 0.5 breaks a suite test that most other "
        "patches keep passing"
    )
    t4 = rows["t4"]
    assert (t4.scored, t4.not_scored) == (False, "no fail-to-pass test")
    assert t4.picks[0].abstained == "no verdict is recorded for this task"
    assert [(p.contestant, p.status) for p in t4.patches] == [
        ("alpha", "missing"),
        ("beta", "missing"),
        ("gamma", "missing"),
    ]


def test_no_trials_no_trials_section(report: Report) -> None:
    assert report.trials is None


def test_repeated_trials() -> None:
    # alpha three times on t1 and t2, twice on t3 (its third trial hit a quota there).
    statuses: dict[str, dict[str, ResolutionStatus]] = {
        "t1": {"alpha": "resolved", "alpha#2": "resolved", "alpha#3": "resolved"},
        "t2": {"alpha": "resolved", "alpha#2": "wrong-fix", "alpha#3": "no-fix"},
        "t3": {"alpha": "wrong-fix", "alpha#2": "resolved", "alpha#3": "quota", "beta": "no-fix"},
    }
    resolutions = ResolutionSet(
        patches={
            t: {n: Resolution(task=t, contestant=n, status=s) for n, s in by.items()}
            for t, by in statuses.items()
        }
    )
    report = build_report(**records(resolutions=resolutions, matrices={}, verdicts={}, attempts=[]))
    assert report.trials is not None
    (row,) = report.trials.rows  # beta ran once: no row
    assert (row.agent, row.trials) == ("alpha", 3)
    pass_at = [(p.k, p.value, p.tasks) for p in row.pass_at]
    # pass@1: mean of 3/3, 1/3, 1/2; pass@2: mean of 1, 1 - C(2,2)/C(3,2) = 2/3, and
    # t3's 1 - C(1,2)/C(2,2) = 1; pass@3 only over t1 and t2: 1 and 1.
    assert pass_at[0][0] == 1 and pass_at[0][1] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert pass_at[1][0] == 2 and pass_at[1][1] == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert pass_at[2] == (3, 1.0, 2)
    # consistency@3 over t1 and t2: only t1's three trials agree.
    assert (row.consistency, row.consistency_tasks) == (0.5, 2)
    # Over all trials: 3 + 1 + 1 resolved of 3 + 3 + 2 scored (the quota is no sample).
    assert (row.resolved_trials, row.scored_trials, row.resolved_share) == (5, 8, 5 / 8)
    assert row.resolved_low is not None and row.resolved_high is not None
    assert row.resolved_low < 5 / 8 < row.resolved_high
    # pass^k = C(c,k)/C(n,k): k=1 as pass@1; k=2: t1 1, t2 C(1,2) = 0, t3 C(1,2) = 0;
    # k=3 only over t1 (1) and t2 (0).
    pass_hat = [(p.k, p.value, p.tasks) for p in row.pass_hat]
    assert pass_hat[0][1] == pytest.approx(pass_at[0][1])
    assert pass_hat[1][0] == 2 and pass_hat[1][1] == pytest.approx(1 / 3)
    assert pass_hat[2] == (3, 0.5, 2)
    # Bootstrap intervals over tasks: t1 and t2 both 1 at pass@3, so no spread; the
    # consistency of one agreeing and one split task spans everything.
    assert (row.pass_at[2].low, row.pass_at[2].high) == (1.0, 1.0)
    assert (row.consistency_low, row.consistency_high) == (0.0, 1.0)
    # The agents table keeps to each contestant's first trial.
    alpha = report.agents.rows[0]
    assert (alpha.resolved, alpha.wrong_fix) == (2, 1)
    # Abstentions for want of verdicts: every task counts as not right for the judge.
    assert report.picking.policies[0].abstained == 3
    assert rate(report.picking.oracle) == (3, 3)
    # With trials the judge meets the best agent on per-task rates: alpha's are 3/3,
    # 1/3 and 1/3 (t3's quota trial counts as not right, as it would alone).
    picking = report.picking
    assert picking.best_agent == "alpha"
    assert picking.best_agent_rate is not None
    assert picking.best_agent_rate.count == pytest.approx(5 / 3)
    assert picking.random_agent.count == pytest.approx(5 / 9)  # beta's and gamma's are 0
    versus = picking.policies[0].versus_best
    assert versus is not None and versus.test == "sign-flip"
    # Differences -1, -1/3, -1/3: mean -5/9; |±1 ± 1/3 ± 1/3| ≥ 5/3 in 2 of 8 sign flips.
    assert versus.difference == pytest.approx(-5 / 9)
    assert (versus.judge_only, versus.agent_only, versus.p_value) == (0, 3, 0.25)
    assert versus.low is not None and versus.high is not None
    assert versus.low <= -5 / 9 <= versus.high
    # The gap to the oracle (3 tasks) from alpha's expected 5/3 is 4/3; the judge, right
    # on none, closes (0 - 5/3) / (4/3) of it.
    gap = picking.policies[0].gap_closed
    assert gap is not None and gap.share == pytest.approx(-5 / 4)
    assert (gap.closed, gap.gap) == (pytest.approx(-5 / 3), pytest.approx(4 / 3))
    assert picking.summary.endswith(
        "the best single agent (alpha) 1.7 of 3 per trial on average; the judge's result "
        "minus its resolved rate, task by task, averages -0.56, 95% CI "
        f"{versus.low:+.2f} to {versus.high:+.2f}, p = 0.25 by an exact sign-flip test: "
        "not evidence either is better."
    )


def test_one_trial_keeps_the_exact_mcnemar(report: Report) -> None:
    for side in report.picking.policies:
        if side.versus_best is not None:
            assert side.versus_best.test == "mcnemar"
            assert side.versus_best.difference is None


def test_no_scored_task_reads_as_such() -> None:
    oracles = OracleSet(oracles={})
    report = build_report(**records(oracles=oracles))
    assert report.picking.summary == (
        "No task has been scored and raced yet, so there is nothing to compare."
    )
    assert report.picking.policies[0].rate.percent() == "n/a"
    assert report.gate.patches == 0
    assert all(row.auc is None for row in report.evidence.rows)
    text = render_markdown(report)
    assert "n/a" in text


def test_the_report_is_pure() -> None:
    assert build_report(**records()) == build_report(**records())


# --- renderers ------------------------------------------------------------------------


def test_markdown_reads_as_a_document(report: Report) -> None:
    text = render_markdown(report)
    for heading in (
        "# bugbout report: demo",
        "## Agents",
        "## Picking one patch per bug",
        "## Every patch through a merge gate",
        "## Which tests tell a right fix from a wrong one",
        "## How the tasks were found",
        "## Cost and tokens",
        "## Tasks",
        "## Definitions",
    ):
        assert f"\n{heading}\n" in f"\n{text}", heading
    assert "## Repeated trials" not in text
    assert report.picking.summary in text
    assert "67% (21–94%)" in text  # alpha's resolved rate
    assert "80% (38–96%)" in text  # the gate's precision, 4 of 5
    assert "| gamma | contestant | n/a | 0 | 2 |" in text
    assert "conftest.py" in text
    assert "Fix bug number 1 \\| with a pipe" in text  # a title cannot break a table
    assert (
        "How the `majority` policy chose its pick:\n\n- t1: beta has the higher support"
    ) in text
    assert "- t2: alpha's patch is smaller: 5 lines against 10 for beta" in text
    for term in ("resolved", "fixed but broke", "wrong fix", "no fix", "quota", "support", "AUC"):
        assert f"**{term}**" in text, term


def test_markdown_shows_trials_when_there_are_some() -> None:
    statuses = {"t1": {"alpha": "resolved", "alpha#2": "wrong-fix"}}
    resolutions = ResolutionSet(
        patches={
            t: {n: Resolution(task=t, contestant=n, status=s) for n, s in by.items()}
            for t, by in statuses.items()
        }
    )
    report = build_report(**records(resolutions=resolutions))
    text = render_markdown(report)
    assert "## Repeated trials" in text
    header = "| Agent | Trials | Resolved, all trials | pass@1 | pass@2 | pass^2 | Consistency |"
    assert header in text
    # One task: no interval (a bootstrap over one task would be a point).
    assert "| alpha | 2 | 1 of 2, 50% | 50% | 100% | 0% | 0% of 1 task |" in text
    console = Console(file=io.StringIO(), width=140, record=True)
    console.print(render_terminal(report))
    terminal = console.export_text()
    assert "Repeated trials" in terminal and "pass^2" in terminal
    assert "1 of 2, 50%" in terminal


def test_an_oversized_patch_is_counted_in_no_fix_and_listed_with_its_cap() -> None:
    detail = "6,000 changed files, 1,000 over the cap of 5,000"
    too_large = attempt("t3", "gamma", 60, status="oversized", changed=Patch())
    too_large = too_large.model_copy(update={"detail": detail})
    records_ = records(
        attempts=[a for a in attempts() if a.task != "t3" or a.contestant != "gamma"]
    )
    report = build_report(**{**records_, "attempts": [*records_["attempts"], too_large]})
    assert {row.name: (row.no_fix, row.oversized) for row in report.agents.rows} == {
        "alpha": (0, 0),
        "beta": (0, 0),
        "gamma": (1, 1),
    }
    assert [(o.task, o.contestant, o.detail) for o in report.agents.oversized] == [
        ("t3", "gamma", detail)
    ]
    markdown = render_markdown(report)
    assert "| gamma | 1 | 0 | 0 | 1 (1 oversized) | 1 |" in markdown
    assert f"- t3, gamma: {detail}" in markdown
    plain = Console(file=io.StringIO(), width=100, record=True)
    plain.print(render_terminal(report))
    text = " ".join(plain.export_text().split())
    assert f"t3 gamma left a patch too large to keep, so no fix: {detail}" in text


def test_a_flagged_attempt_names_its_first_paths_and_counts_the_rest() -> None:
    many = patch(("pkg/mod.py", "source"), *((f"data/f{n:04d}.txt", "other") for n in range(4000)))
    extra = attempt("t4", "beta", 1, changed=many)
    report = build_report(**records(attempts=[*attempts(), extra]))
    markdown = render_markdown(report)
    (line,) = [line for line in markdown.splitlines() if line.startswith("- t4, beta: ")]
    assert line.endswith("`data/f0009.txt` and 3,990 more") and len(line) < 300
    plain = Console(file=io.StringIO(), width=100, record=True)
    plain.print(render_terminal(report))
    assert "data/f0010.txt" not in plain.export_text()


def terminal_text(report: Report, width: int) -> str:
    plain = Console(file=io.StringIO(), width=width, record=True)
    plain.print(render_terminal(report))
    return plain.export_text()


def test_terminal_fits_100_columns(report: Report) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, color_system="truecolor", force_terminal=True)
    console.print(render_terminal(report))
    plain = Console(file=io.StringIO(), width=100, record=True)
    plain.print(render_terminal(report))
    text = plain.export_text()
    assert "\x1b[" in buffer.getvalue()  # coloured on a terminal
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "Picking one patch per bug" in text
    assert "not evidence either is better" in text
    assert "n/a" in text


def test_untrusted_names_are_not_read_as_markup() -> None:
    report = build_report(**records(project="[bold red]x[/]"))
    plain = Console(file=io.StringIO(), width=100, record=True)
    plain.print(render_terminal(report))
    assert "[bold red]x[/]" in plain.export_text()


# --- JSON -----------------------------------------------------------------------------


def test_json_round_trips(report: Report) -> None:
    again = Report.model_validate_json(report.model_dump_json(indent=2))
    assert again == report


def test_published_schema_is_up_to_date() -> None:
    command = "python -m bugbout_tui.report.schema docs/report.schema.json"
    assert SCHEMA.exists(), f"docs/report.schema.json is missing; run: {command}"
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == report_json_schema(), (
        f"docs/report.schema.json is out of date with the report model; run: {command}"
    )


def test_schema_command_writes_the_schema(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    subprocess.run(
        [sys.executable, "-m", "bugbout_tui.report.schema", str(target)], check=True, cwd=ROOT
    )
    assert json.loads(target.read_text(encoding="utf-8")) == report_json_schema()


def test_without_contestants_there_is_nothing_to_compare() -> None:
    report = build_report(**records(contestants=[]))
    assert report.agents.rows == []
    assert report.picking.best_agent is None
    assert report.picking.policies[0].versus_best is None
    assert report.picking.summary.endswith("; there is no contestant to compare it with.")
    render_markdown(report)
    Console(file=io.StringIO(), width=100).print(render_terminal(report))
