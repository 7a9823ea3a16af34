"""The report's environment section from stored records: one pure function.

Environment tasks are scored by their own controls rather than an oracle: the base
control (the files as written) must fail and the gold control (the known repair) must
install and run. A task whose controls did not, like a bug task whose grader is
unreliable, counts in no figure and is listed with the reason. The others (not set aside,
raced) are the admitted tasks every board draws from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bugbout_tui.core.config import TasksConfig
from bugbout_tui.core.env_models import Repair, RepairSet
from bugbout_tui.core.models import BASE, GOLD, Attempt, Task
from bugbout_tui.core.trials import agent_of, trial_number
from bugbout_tui.report import env_metrics
from bugbout_tui.report.model import (
    AWAITING_REVIEW,
    BUDGET_ONLY,
    ENV_BOARDS,
    EXCLUDED_BY_YOU,
    NOT_RUN,
    NOT_STARTED,
    QUOTA_ONLY,
    EnvBoard,
    EnvBoardName,
    EnvFunnel,
    EnvRepairRow,
    EnvSection,
    EnvTaskRow,
    LeftOutCount,
)
from bugbout_tui.rules.cost import Costing
from bugbout_tui.rules.env_judge import EnvVerdict, choose_repair, gate_blockers
from bugbout_tui.rules.env_repairs import (
    BASE_PASSES,
    CONTROL_REASONS,
    GOLD_FAILS,
    NO_CONTROLS,
    control_problem,
)

__all__ = [
    "BASE_PASSES",
    "GOLD_FAILS",
    "NOT_SCORED_YET",
    "NO_CONTROLS",
    "build_env_section",
    "control_problem",
]

NOT_SCORED_YET = "its repairs are not scored yet"


def build_env_section(
    *,
    tasks: Sequence[Task],
    repairs: RepairSet,
    attempts: Sequence[Attempt],
    contestants: Sequence[str],
    decisions: TasksConfig,
    costing: Costing,
) -> EnvSection:
    """The env section over `tasks` (the environment tasks, in mining order).

    `contestants` fixes the order of the agents listed before any other agent the
    repairs hold; `attempts` are the attempts on these tasks, for their cost.
    """
    by_task: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        if attempt.role == "contestant":
            by_task.setdefault(attempt.task, []).append(attempt)
    standings = {
        task.id: _left_out(task, decisions, repairs, by_task.get(task.id, [])) for task in tasks
    }
    admitted = [task for task in tasks if standings[task.id] is None]
    found = {agent_of(name) for task in admitted for name in repairs.repairs.get(task.id, {})}
    agents = [*contestants, *sorted(found - set(contestants))]
    verdicts = {
        task.id: choose_repair(task.id, repairs.repairs.get(task.id, {})) for task in admitted
    }
    newest = []
    loosened = []
    for task in admitted:
        controls = repairs.controls.get(task.id, {})
        shown = [
            (name, repair)
            for name, repair in _ordered(repairs.repairs.get(task.id, {}), contestants)
            if repair.status != "not-run"
        ]
        base = [(BASE, controls[BASE])] if BASE in controls else []
        newest += env_metrics.newest_rows(task.id, [*base, *shown])
        loosened += env_metrics.loosened_pins(task.id, shown, controls.get(GOLD))
    return EnvSection(
        funnel=_funnel(tasks, standings),
        boards=_boards(admitted, repairs, by_task, agents, costing),
        picked=sum(verdict.pick is not None for verdict in verdicts.values()),
        approved=sum(verdict.approved for verdict in verdicts.values()),
        newest=newest,
        loosened=loosened,
        tasks=[
            _task_row(task, standings[task.id], repairs, contestants, verdicts.get(task.id))
            for task in tasks
        ],
    )


def _left_out(
    task: Task, decisions: TasksConfig, repairs: RepairSet, attempts: Sequence[Attempt]
) -> str | None:
    """Why a task counts nowhere, in the bug report's order: a person's decision, then
    its controls, then whether any contestant ran on it; None when it counts."""
    decision = decisions.decision(task.id)
    if decision == "excluded":
        return EXCLUDED_BY_YOU
    if decisions.require_review and decision != "accepted":
        return AWAITING_REVIEW
    problem = control_problem(repairs.controls.get(task.id))
    if problem is not None:
        return problem
    if any(r.status != "not-run" for r in repairs.repairs.get(task.id, {}).values()):
        return None
    if any(attempt.scorable for attempt in attempts):
        return NOT_SCORED_YET
    if any(attempt.status == "quota" for attempt in attempts):
        return QUOTA_ONLY
    if attempts and all(attempt.status == "budget" for attempt in attempts):
        return BUDGET_ONLY
    if any(attempt.status == "skipped" for attempt in attempts):
        return NOT_STARTED
    return NOT_RUN


def _funnel(tasks: Sequence[Task], standings: Mapping[str, str | None]) -> EnvFunnel:
    set_aside: dict[str, list[str]] = {}
    controls: dict[str, list[str]] = {}
    not_raced: dict[str, list[str]] = {}
    for task in tasks:
        reason = standings[task.id]
        if reason is None:
            continue
        if reason in (EXCLUDED_BY_YOU, AWAITING_REVIEW):
            group = set_aside
        elif reason in CONTROL_REASONS:
            group = controls
        else:
            group = not_raced
        group.setdefault(reason, []).append(task.id)
    return EnvFunnel(
        kept=len(tasks),
        lite=sum(task.env is not None and task.env.lite for task in tasks),
        set_aside=_counts(set_aside),
        controls_failed=_counts(controls),
        not_raced=_counts(not_raced),
        admitted=sum(reason is None for reason in standings.values()),
    )


def _counts(groups: Mapping[str, list[str]]) -> list[LeftOutCount]:
    return [
        LeftOutCount(reason=reason, count=len(tasks), tasks=tasks)
        for reason, tasks in groups.items()
    ]


def _flagged(repairs: RepairSet, task: str) -> list[str]:
    """What the audit flagged in the files as written: `name: flag, flag`."""
    base = repairs.controls.get(task, {}).get(BASE)
    if base is None:
        return []
    return [
        f"{finding.name}: {', '.join(flags)}"
        for finding in sorted(base.audit, key=lambda each: each.name)
        if (flags := env_metrics.audit_flags(finding))
    ]


def _boards(
    admitted: Sequence[Task],
    repairs: RepairSet,
    attempts: Mapping[str, Sequence[Attempt]],
    agents: Sequence[str],
    costing: Costing,
) -> list[EnvBoard]:
    """All, Lite, Secure and Stochastic; each agent's row over the board's tasks."""
    trials = {
        (task.id, agent): env_metrics.scored_trials(repairs.repairs.get(task.id, {}), agent)
        for task in admitted
        for agent in agents
    }
    lite = [task.id for task in admitted if task.env is not None and task.env.lite]
    secure: dict[str, str] = {}
    for task in admitted:
        flagged = _flagged(repairs, task.id)
        labelled = task.env is not None and task.env.security
        if flagged or labelled:
            why = ["a security label"] if labelled else []
            if flagged:
                why.append("the audit flagged " + "; ".join(flagged))
            secure[task.id] = " and ".join(why)
    stochastic = [
        task
        for task in lite
        if any(len(trials[task, agent]) >= env_metrics.STOCHASTIC_K for agent in agents)
    ]
    members: dict[EnvBoardName, list[str]] = {
        "all": [task.id for task in admitted],
        "lite": lite,
        "secure": list(secure),
        "stochastic": stochastic,
    }
    boards = []
    for board, tasks in members.items():
        rows = []
        for agent in agents:
            if board == "stochastic":
                here = [t for t in tasks if len(trials[t, agent]) >= env_metrics.STOCHASTIC_K]
            else:
                here = tasks
            spent = [
                [a for a in attempts.get(task, []) if agent_of(a.contestant) == agent]
                for task in here
            ]
            rows.append(
                env_metrics.agent_row(
                    agent,
                    [trials[task, agent] for task in here],
                    [group for group in spent if group],
                    costing,
                    k=env_metrics.STOCHASTIC_K if board == "stochastic" else None,
                )
            )
        boards.append(
            EnvBoard(
                board=board,
                title=ENV_BOARDS[board],
                tasks=tasks,
                ranked_by=env_metrics.RANKED_BY[board],
                rows=env_metrics.ranked(board, rows),
                reasons=secure if board == "secure" else {},
            )
        )
    return boards


def _ordered(found: Mapping[str, Repair], contestants: Sequence[str]) -> list[tuple[str, Repair]]:
    """A task's repairs (contestant → repair), configured agents in config order, each
    followed by its trials, then the rest by name."""
    position = {name: index for index, name in enumerate(contestants)}
    names = sorted(
        found,
        key=lambda name: (position.get(agent_of(name), len(position)), trial_number(name), name),
    )
    return [(name, found[name]) for name in names]


def _task_row(
    task: Task,
    left_out: str | None,
    repairs: RepairSet,
    contestants: Sequence[str],
    verdict: EnvVerdict | None,
) -> EnvTaskRow:
    assert task.env is not None  # the section is given environment tasks only
    controls = repairs.controls.get(task.id, {})
    base, gold = controls.get(BASE), controls.get(GOLD)
    return EnvTaskRow(
        task=task.id,
        title=task.title,
        defect=task.env.defect,
        lite=task.env.lite,
        security=task.env.security,
        admitted=left_out is None,
        left_out=left_out,
        base=None if base is None else base.status,
        gold=None if gold is None else gold.status,
        gold_safe_install=None if gold is None else gold.safe_install,
        flagged=_flagged(repairs, task.id),
        repairs=[
            EnvRepairRow(
                contestant=name,
                status=repair.status,
                detail=repair.detail,
                declared=len(repair.declared),
                safe_install=repair.safe_install,
                f1=repair.f1,
                size=repair.size,
                rejected_files=list(repair.rejected_files),
                blockers=gate_blockers(repair),
            )
            for name, repair in _ordered(repairs.repairs.get(task.id, {}), contestants)
        ],
        verdict=verdict,
    )
