"""The report for a terminal: rich tables, coloured by outcome, readable at 100 columns.

Agent names, file names, task titles and abstention reasons come from agents, commit
messages and issues: every string of the report is made inert first (`inert_fields`),
and goes in as `Text`, never as console markup.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from bugbout_tui.core.text import inert_fields
from bugbout_tui.report.model import (
    EXCLUSION_LABELS,
    PATHS_LISTED,
    STATUS_LABELS,
    AgentsSection,
    CostSection,
    EvidenceSection,
    FunnelSection,
    GateSection,
    PatchRow,
    PickingSection,
    PolicyPick,
    Rate,
    Report,
    TaskRow,
    TrialsSection,
    duration,
    format_p,
)

__all__ = ["render_terminal"]

STATUS_STYLES = {
    "resolved": "green",
    "fixed-but-broke": "yellow",
    "wrong-fix": "red",
    "no-fix": "dim",
    "quota": "magenta",
    "missing": "dim",
}


def render_terminal(report: Report) -> RenderableType:
    """The whole report as one renderable, for `Console.print`."""
    report = inert_fields(report)
    parts: list[RenderableType] = [
        Text.assemble(("bugbout report: ", "bold"), (report.project, "bold cyan")),
        Text(
            f"{report.picking.scored_tasks} scored tasks · policy {report.policy} · "
            "shares with their 95% interval in brackets",
            style="dim",
        ),
        *_agents(report.agents),
        *_picking(report.picking),
        *_gate(report.gate),
        *_evidence(report.evidence),
        *_funnel(report.funnel),
        *_cost(report.cost),
        *(_trials(report.trials) if report.trials is not None else []),
        *_tasks(report),
    ]
    return Group(*parts)


def _heading(title: str) -> Group:
    """A section's rule, with a blank line above it to let the sections breathe."""
    return Group(Text(), Rule(Text(title, style="bold"), align="left", style="cyan"))


def _table(*columns: str | Text, numeric_from: int = 1) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False, expand=False)
    for index, name in enumerate(columns):
        table.add_column(name, justify="right" if index >= numeric_from else "left")
    return table


def _rate(rate: Rate) -> Text:
    shown = Text(rate.percent())
    if rate.share is None:
        shown.stylize("dim")
    return shown


def _count(value: int, style: str) -> Text:
    return Text(str(value), style=style if value else "dim")


def _agents(section: AgentsSection) -> list[RenderableType]:
    table = _table(
        "Agent",
        "Resolved",
        "Broke",
        "Wrong",
        "No fix",
        "Quota",
        "Resolved rate",
        "Median",
        "Tokens in/out/cached",
        "Cost",
    )
    for row in section.rows:
        table.add_row(
            Text(row.name, style="bold"),
            _count(row.resolved, STATUS_STYLES["resolved"]),
            _count(row.fixed_but_broke, STATUS_STYLES["fixed-but-broke"]),
            _count(row.wrong_fix, STATUS_STYLES["wrong-fix"]),
            _count(row.no_fix, ""),
            _count(row.quota, STATUS_STYLES["quota"]),
            _rate(row.resolved_rate),
            duration(row.median_seconds),
            row.spend.tokens_shown(),
            row.spend.cost_shown(),
        )
    parts: list[RenderableType] = [
        _heading(f"Agents · {section.scored_tasks} scored tasks, hidden tests decide"),
        table,
        Text("The resolved rate leaves out quota attempts.", style="dim"),
    ]
    missing = sum(row.missing for row in section.rows)
    if missing:
        parts.append(Text(f"{missing} patches have no score yet.", style="dim"))
    for item in section.flagged:
        rest = len(item.files) - PATHS_LISTED
        parts.append(
            Text.assemble(
                ("⚑ ", "yellow"),
                f"{item.task} {item.contestant} changed files outside source and tests: ",
                (", ".join(item.files[:PATHS_LISTED]), "yellow"),
                f" and {rest:,} more" if rest > 0 else "",
            )
        )
    for oversized in section.oversized:
        parts.append(
            Text.assemble(
                ("▣ ", "red"),
                f"{oversized.task} {oversized.contestant} left a patch too large to keep, "
                f"so no fix: {oversized.detail}",
            )
        )
    return parts


def _picking(section: PickingSection) -> list[RenderableType]:
    baselines = _table("Picker", "Right", "Share")
    configured = next(side for side in section.policies if side.policy == section.policy)
    baselines.add_row(
        f"Judge ({section.policy})", configured.rate.counted(), _rate(configured.rate)
    )
    if section.best_agent is not None and section.best_agent_rate is not None:
        baselines.add_row(
            Text(f"Best single agent ({section.best_agent})"),
            section.best_agent_rate.counted(),
            _rate(section.best_agent_rate),
        )
    baselines.add_row(
        "Random agent (expected)", section.random_agent.counted(), _rate(section.random_agent)
    )
    baselines.add_row("Oracle (any patch right)", section.oracle.counted(), _rate(section.oracle))
    agent = section.best_agent or "agent"
    policies = _table(
        "Policy", "Right", "Wrong", "Abstained", "Share", "Judge only", Text(f"{agent} only"), "p"
    )
    for side in section.policies:
        versus = side.versus_best
        policies.add_row(
            Text(side.policy, style="bold" if side.policy == section.policy else ""),
            _count(side.right, "green"),
            _count(side.wrong, "red"),
            _count(side.abstained, ""),
            _rate(side.rate),
            "–" if versus is None else str(versus.judge_only),
            "–" if versus is None else str(versus.agent_only),
            "–" if versus is None else format_p(versus.p_value),
        )
    return [
        _heading("Picking one patch per bug"),
        Text(section.summary, style="bold"),
        baselines,
        Text(),
        policies,
    ]


def _gate(section: GateSection) -> list[RenderableType]:
    table = _table("", "Count", "Share")
    table.add_row(
        "Approvals that were right", section.precision.counted(), _rate(section.precision)
    )
    table.add_row(
        "Wrong patches stopped", section.wrong_stopped.counted(), _rate(section.wrong_stopped)
    )
    table.add_row(
        "Right patches stopped", section.right_stopped.counted(), _rate(section.right_stopped)
    )
    table.add_row(
        "Approving every patch", section.approve_all.counted(), _rate(section.approve_all)
    )
    return [
        _heading(
            f"Every patch through a merge gate · {section.policy}, "
            f"{section.patches} patches ({section.right} right, {section.wrong} wrong)"
        ),
        table,
    ]


def _auc(value: float | None) -> Text:
    if value is None:
        return Text("n/a", style="dim")
    style = "green" if value >= 0.7 else "yellow" if value > 0.55 else "red"
    return Text(f"{value:.2f}", style=style)


def _evidence(section: EvidenceSection) -> list[RenderableType]:
    table = _table("Tests by", "Kind", "AUC", "Right", "Wrong", numeric_from=2)
    for row in section.rows:
        table.add_row(
            Text(row.author), row.kind, _auc(row.auc), str(row.positives), str(row.negatives)
        )
    return [
        _heading("Which tests tell a right fix from a wrong one · AUC, 0.5 is a coin flip"),
        Text("An author's tests never score its own patches.", style="dim"),
        table,
    ]


def _funnel(section: FunnelSection) -> list[RenderableType]:
    table = _table("Step", "Count")
    table.add_row("Examined", str(section.examined))
    for item in section.excluded:
        if item.count:
            table.add_row(
                Text(f"  left out: {EXCLUSION_LABELS[item.reason]}", style="dim"), str(item.count)
            )
    table.add_row("Kept as tasks", str(section.kept))
    table.add_row("Scored", str(section.scored))
    for group in section.not_scored:
        table.add_row(Text(f"  not scored: {group.reason}", style="dim"), str(group.count))
    return [_heading("How the tasks were found"), table]


def _cost(section: CostSection) -> list[RenderableType]:
    table = _table(
        "Agent", "Role", "Attempts", "Time", "Tokens in/out/cached", "Cost", numeric_from=2
    )
    for item in section.by_agent:
        table.add_row(
            Text(item.name),
            item.role,
            str(item.spend.attempts),
            duration(item.spend.seconds),
            item.spend.tokens_shown(),
            item.spend.cost_shown(),
        )
    total = section.total
    table.add_row(
        Text("Total", style="bold"),
        "",
        str(total.attempts),
        duration(total.seconds),
        total.tokens_shown(),
        Text(total.cost_shown(), style="bold"),
    )
    return [_heading("Cost and tokens · every attempt"), table]


def _trials(section: TrialsSection) -> list[RenderableType]:
    most = max(row.trials for row in section.rows)
    table = _table("Agent", "Trials", *(f"pass@{k}" for k in range(1, most + 1)), "Consistency")
    for row in section.rows:
        values = {item.k: item.value for item in row.pass_at}
        table.add_row(
            Text(row.agent),
            str(row.trials),
            *(_share(values.get(k)) for k in range(1, most + 1)),
            f"{_share(row.consistency)} of {row.consistency_tasks}",
        )
    return [_heading("Repeated trials"), table]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _pick(pick: PolicyPick) -> Text:
    if pick.pick is None:
        return Text("abstained", style="dim")
    if pick.right is None:
        return Text(pick.pick)
    return Text(f"{pick.pick} {'✓' if pick.right else '✗'}", style="green" if pick.right else "red")


def _patches(patches: list[PatchRow]) -> Text:
    shown = Text()
    for index, patch in enumerate(patches):
        if index:
            shown.append(" · ")
        shown.append(patch.contestant)
        shown.append(f" {STATUS_LABELS[patch.status]}", style=STATUS_STYLES[patch.status])
        if patch.approved is not None:
            shown.append(" (approved)" if patch.approved else " (rejected)", style="dim")
    return shown


def _tasks(report: Report) -> list[RenderableType]:
    rows: list[TaskRow] = [row for row in report.tasks if row.scored]
    if not rows:
        return [_heading("Tasks"), Text("No task is scored yet.", style="dim")]
    policies = [pick.policy for pick in rows[0].picks]
    table = _table("Task", *policies, "Patches (merge gate)", numeric_from=len(policies) + 2)
    for row in rows:
        table.add_row(Text(row.task), *(_pick(pick) for pick in row.picks), _patches(row.patches))
    return [_heading(f"Tasks · picks per policy, gate under {report.policy}"), table]
