"""The report for a terminal: rich tables, coloured by outcome, readable at 80 columns.

Every table is a `FittedTable`: given less room than it wants it wraps what may wrap,
then leaves out its least needed columns, and never cuts a share, an interval or a
name. Agent names, file names, task titles and abstention reasons come from agents,
commit messages and issues: every string of the report is made inert first
(`inert_fields`), and goes in as `Text`, never as console markup.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from bugbout_tui.core import look
from bugbout_tui.core.text import inert_fields
from bugbout_tui.report.fitting import Column, FittedTable, PathText
from bugbout_tui.report.model import (
    EXCLUSION_LABELS,
    LOOSENED_PIN,
    PATHS_LISTED,
    RUNG_LABELS,
    AgentsSection,
    CostSection,
    EnvAgentRow,
    EnvBoard,
    EnvSection,
    EnvTaskRow,
    EvidenceSection,
    FunnelSection,
    GapClosed,
    GateSection,
    PassAtK,
    PatchRow,
    PickingSection,
    PolicyPick,
    Rate,
    Report,
    StoppingSection,
    TaskRow,
    TrialsSection,
    WorkersSection,
    estimate,
    format_p,
    gap_sentence,
    signed_difference,
)

__all__ = ["render_terminal", "render_terminal_parts"]


def render_terminal(report: Report) -> RenderableType:
    """The whole report as one renderable, for `Console.print`."""
    head, env = render_terminal_parts(report)
    return head if env is None else Group(head, env)


def render_terminal_parts(report: Report) -> tuple[RenderableType, RenderableType | None]:
    """The report before its environment section, and that section (None when there is
    no environment task): the TUI shows them apart, so a key brings the environment
    boards into view in a long report."""
    report = inert_fields(report)
    env = report.env
    # A bout of environment tasks alone has nothing in the bug sections: it shows the
    # history's funnel, the cost and its own sections.
    bugs = env is None or bool(report.funnel.kept)
    counted = [f"{report.picking.raced_tasks} raced tasks · policy {report.policy}"] if bugs else []
    if env is not None:
        counted.append(f"{env.funnel.admitted} admitted environment tasks")
    parts: list[RenderableType] = [
        Text.assemble(("bugbout report: ", "bold"), (report.project, "bold cyan")),
        Text(
            " · ".join([*counted, "shares with their 95% interval in brackets"]),
            style="dim",
        ),
    ]
    if bugs:
        parts += [
            *_agents(report.agents, trials=report.trials is not None),
            *_picking(report.picking),
            *_gate(report.gate),
            *_evidence(report.evidence),
        ]
    if bugs or report.funnel.examined:
        parts += _funnel(report.funnel)
    if report.quarantined:
        parts += _quarantined(report)
    parts += _cost(report.cost)
    if report.workers is not None:
        parts += _workers(report.workers)
    if bugs:
        parts += [
            *(_trials(report.trials) if report.trials is not None else []),
            *(_stopping(report.stopping) if report.stopping is not None else []),
            *_tasks(report),
        ]
    return Group(*parts), (Group(*_env(env)) if env is not None else None)


def _heading(title: str) -> Group:
    """A section's rule, with a blank line above it to let the sections breathe."""
    return Group(Text(), Rule(Text(title, style="bold"), align="left", style="cyan"))


def _table(*columns: Column) -> FittedTable:
    return FittedTable(*columns, compact=True)


def _name(header: str | Text, *, wrap: bool = False, drop: int = 0) -> Column:
    """A column of names or words, left-aligned."""
    return Column(header, wrap=wrap, drop=drop, floor=20)


def _figure(header: str | Text, *, drop: int = 0) -> Column:
    """A column of counts or shares: right-aligned, each value on one line."""
    return Column(header, "right", drop=drop)


def _tokens(*, drop: int) -> Column:
    """Token sums: `in / out / cached` may wrap before its bracket `(2 of 3)`."""
    return Column("Tokens in/out/cached", "right", wrap=True, drop=drop, floor=13)


def _rate(rate: Rate) -> Text:
    shown = Text(rate.percent())
    if rate.share is None:
        shown.stylize("dim")
    return shown


def _count(value: int, style: str) -> Text:
    return Text(str(value), style=style if value else "dim")


def _agents(section: AgentsSection, *, trials: bool) -> list[RenderableType]:
    table = _table(
        _name("Agent"),
        _figure("Resolved"),
        _figure("Broke"),
        _figure("Wrong"),
        _figure("No fix"),
        _figure("Quota"),
        _figure("Resolved rate"),
        _figure("Median", drop=2),
        _tokens(drop=4),
        _figure("Cost", drop=3),
    )
    for row in section.rows:
        table.add_row(
            Text(row.name, style="bold"),
            _count(row.resolved, look.resolution("resolved").style),
            _count(row.fixed_but_broke, look.resolution("fixed-but-broke").style),
            _count(row.wrong_fix, look.resolution("wrong-fix").style),
            _count(row.no_fix, ""),
            _count(row.quota, look.resolution("quota").style),
            _rate(row.resolved_rate),
            look.duration(row.median_seconds),
            row.spend.tokens_shown(),
            row.spend.cost_shown(),
        )
    parts: list[RenderableType] = [
        _heading(f"Agents · {section.raced_tasks} raced tasks, hidden tests decide"),
        table,
        Text("The resolved rate leaves out quota attempts.", style="dim"),
    ]
    if trials:
        parts.append(
            Text("Each contestant's first trial; every trial counts under Repeated trials.", "dim")
        )
    missing = sum(row.missing for row in section.rows)
    if missing:
        parts.append(
            Text(
                f"{look.plural(missing, 'patch', 'patches')} "
                f"{look.verb(missing, 'has', 'have')} no score yet.",
                style="dim",
            )
        )
    for item in section.flagged:
        rest = len(item.files) - PATHS_LISTED
        parts.append(
            PathText(
                Text.assemble(
                    ("⚑ ", "yellow"),
                    f"{item.task} {item.contestant} changed files outside source and tests: ",
                    (", ".join(item.files[:PATHS_LISTED]), "yellow"),
                    f" and {rest:,} more" if rest > 0 else "",
                )
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
    baselines = _table(_name("Picker"), _figure("Right"), _figure("Share"))
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
    rates = any(
        side.versus_best is not None and side.versus_best.test == "sign-flip"
        for side in section.policies
    )
    policies = _table(
        _name("Policy"),
        _figure("Right"),
        _figure("Wrong"),
        _figure("Abstained"),
        _figure("Share"),
        _figure("Judge ahead" if rates else "Judge only"),
        _figure(Text(f"{agent} ahead" if rates else f"{agent} only")),
        *([_figure("Mean difference (95% CI)")] if rates else []),
        _figure("p"),
        # The configured policy's share is stated under the baselines whatever the
        # width: the column of every policy's is the first to go.
        _figure("Gap closed", drop=1),
    )
    notes: list[RenderableType] = []
    for side in section.policies:
        versus = side.versus_best
        share = _rate(side.rate) if side.cannot_apply is None else Text("cannot apply", "yellow")
        policies.add_row(
            Text(side.policy, style="bold" if side.policy == section.policy else ""),
            _count(side.right, "green"),
            _count(side.wrong, "red"),
            _count(side.abstained, ""),
            share,
            "–" if versus is None else str(versus.judge_only),
            "–" if versus is None else str(versus.agent_only),
            *(["–" if versus is None else signed_difference(versus)] if rates else []),
            "–" if versus is None else format_p(versus.p_value),
            _gap(side.gap_closed),
        )
        if side.cannot_apply is not None:
            notes.append(Text(f"{side.policy} cannot apply: {side.cannot_apply}", "yellow"))
    gap = gap_sentence(section)
    return [
        _heading("Picking one patch per bug"),
        Text(section.summary, style="bold"),
        baselines,
        *([Text(gap)] if gap is not None else []),
        Text(),
        policies,
        *notes,
    ]


def _gap(gap: GapClosed | None) -> Text:
    """A policy's share of the gap to the oracle; red when it did worse than the best
    agent, dim when there is no gap or no figure."""
    if gap is None:
        return Text("–", style="dim")
    if gap.share is None:
        return Text(gap.shown(), style="dim")
    return Text(gap.shown(), style="red" if gap.share < 0 else "")


def _gate(section: GateSection) -> list[RenderableType]:
    if section.cannot_apply is not None:
        return [
            _heading(f"Every patch through a merge gate · {section.policy}"),
            Text(f"{section.policy} cannot apply: {section.cannot_apply}", "yellow"),
        ]
    table = _table(_name(""), _figure("Count"), _figure("Share"))
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
    table = _table(
        _name("Tests by"), _name("Kind"), _figure("AUC"), _figure("Right"), _figure("Wrong")
    )
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
    table = _table(_name("Step", wrap=True), _figure("Count"))
    table.add_row("Examined", str(section.examined))
    for item in section.excluded:
        if item.count:
            table.add_row(
                Text(f"  left out: {EXCLUSION_LABELS[item.reason]}", style="dim"), str(item.count)
            )
    table.add_row("Kept as tasks", str(section.kept))
    for group in section.set_aside:
        table.add_row(Text(f"  {group.reason}", style="dim"), str(group.count))
    table.add_row("Scored", str(section.scored))
    for each in section.not_scored:
        table.add_row(Text(f"  not scored: {each.reason}", style="dim"), str(each.count))
    if section.gold_controls is not None:
        controls = section.gold_controls
        table.add_row("Gold controls resolved", f"{controls.counted()}, {controls.percent()}")
    for group in section.unreliable:
        table.add_row(Text(f"  {group.reason}", style="dim"), str(group.count))
    table.add_row(Text("Raced: what every figure counts", style="bold"), str(section.raced))
    for group in section.not_raced:
        table.add_row(Text(f"  not raced: {group.reason}", style="dim"), str(group.count))
    for rung in section.environments:
        label = f"  environment: {RUNG_LABELS[rung.rung]}"
        table.add_row(Text(label, style="dim"), str(rung.count))
    return [_heading("How the tasks were found"), table]


def _quarantined(report: Report) -> list[RenderableType]:
    table = _table(_name("Task"), _name("Test", wrap=True), _name("Evidence", wrap=True))
    for item in report.quarantined:
        test = item.test if item.author == "suite" else f"{item.test} ({item.author})"
        evidence = "; ".join(
            f"{on.tree}: {on.passes} passed, {on.fails} failed of {on.runs}" for on in item.trees
        )
        table.add_row(Text(item.task), Text(test), Text(evidence))
    return [
        _heading("Quarantined tests · flipped on one tree, so they decide nothing"),
        table,
    ]


def _cost(section: CostSection) -> list[RenderableType]:
    table = _table(
        _name("Agent"),
        _name("Role", drop=2),
        _figure("Attempts"),
        _figure("Time"),
        _tokens(drop=1),
        _figure("Cost"),
    )
    for item in section.by_agent:
        table.add_row(
            Text(item.name),
            item.role,
            str(item.spend.attempts),
            look.duration(item.spend.seconds),
            item.spend.tokens_shown(),
            item.spend.cost_shown(),
        )
    total = section.total
    table.add_row(
        Text("Total", style="bold"),
        "",
        str(total.attempts),
        look.duration(total.seconds),
        total.tokens_shown(),
        Text(total.cost_shown(), style="bold"),
    )
    checked = section.prices_checked.isoformat() if section.prices_checked else "an unknown date"
    note = f"Costs the agent did not report are its tokens at list prices checked {checked}"
    if section.prices_overridden:
        note += "; bugbout.toml sets " + ", ".join(section.prices_overridden)
    parts: list[RenderableType] = [
        _heading("Cost and tokens · every attempt"),
        table,
        Text(note + ".", style="dim"),
    ]
    if section.budget_stops:
        stops = _table(_name("Agent"), _name("Role", drop=2), _figure("Attempts"),
                       _name("Budget", wrap=True))  # fmt: skip
        for stop in section.budget_stops:
            stops.add_row(Text(stop.name), stop.role, str(stop.attempts), Text(stop.reason))
        parts += [
            _heading("Stopped by a budget · not scored, run by a later run once it allows"),
            stops,
        ]
    return parts


def _workers(section: WorkersSection) -> list[RenderableType]:
    table = _table(_name("Worker"), _name("By agent", wrap=True), _figure("Attempts"))
    for row in section.rows:
        by_agent = ", ".join(f"{agent} {count}" for agent, count in row.agents.items())
        table.add_row(Text(look.place(row.worker)), Text(by_agent), str(row.attempts))
    return [_heading("Where attempts ran · every attempt whose agent started"), table]


def _trials(section: TrialsSection) -> list[RenderableType]:
    ks = section.shown_k()
    table = _table(
        _name("Agent"),
        _figure("Trials"),
        _figure("Resolved, all trials"),
        *(_figure(f"pass@{k}", drop=k) for k in ks),
        *(_figure(f"pass^{k}", drop=k) for k in ks if k > 1),
        _figure("Consistency"),
    )
    for row in section.rows:
        at = {item.k: item for item in row.pass_at}
        every = {item.k: item for item in row.pass_hat}
        table.add_row(
            Text(row.agent),
            str(row.trials),
            f"{row.resolved_trials} of {row.scored_trials}, "
            + estimate(row.resolved_share, row.resolved_low, row.resolved_high),
            *(_estimate_at(at.get(k)) for k in ks),
            *(_estimate_at(every.get(k)) for k in ks if k > 1),
            estimate(row.consistency, row.consistency_low, row.consistency_high)
            + f" of {row.consistency_tasks}",
        )
    return [
        _heading("Repeated trials"),
        Text("Shares with 95% bootstrap intervals over tasks; pass^k: all k trials resolve."),
        table,
    ]


def _stopping(section: StoppingSection) -> list[RenderableType]:
    if section.decided_after is not None:
        said = (
            f"decided after task {section.decided_after} ({section.decided_tasks} of "
            f"{section.tasks}); no new bug started after it"
        )
    else:
        said = f"not decided after {section.looked_at} of {section.tasks} tasks"
    level = (
        f"level {section.level:g} for all pairs ({section.pair_level:.3g} each); each look "
        f"decides at p ≤ {format_p(section.nominal)}, corrected for looking after every task"
    )
    table = _table(
        _name("Ahead"), _name("Behind"), _figure("Only each"), _figure("p"), _name("Decided after")
    )
    for pair in section.pairs:
        table.add_row(
            Text(pair.ahead),
            Text(pair.behind),
            f"{pair.ahead_only} to {pair.behind_only}",
            format_p(pair.p_value),
            Text("not yet" if pair.after_task is None else pair.after_task),
        )
    parts: list[RenderableType] = [
        _heading("Stopping once decided"),
        Text(said, style="bold"),
        Text(level, style="dim"),
        table,
    ]
    if section.not_started:
        saved = _table(_name("Not started"), _figure("Attempts"), _figure("Tokens (est.)"))
        for entry in section.not_started:
            tokens = "n/a" if entry.tokens is None else f"{entry.tokens:,}"
            saved.add_row(Text(entry.agent), str(entry.attempts), tokens)
        parts.append(saved)
    return parts


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _estimate_at(item: PassAtK | None) -> str:
    return "n/a" if item is None else estimate(item.value, item.low, item.high)


def _pick(pick: PolicyPick) -> Text:
    if pick.pick is None:
        return Text("abstained", style="dim")
    if pick.right is None:
        return Text(pick.pick)
    mark = look.pick(pick.right)
    return Text(f"{pick.pick} {mark.glyph}", style=mark.style)


def _patches(patches: list[PatchRow]) -> Text:
    shown = Text()
    for index, patch in enumerate(patches):
        if index:
            shown.append(" · ")
        shown.append(patch.contestant)
        status = look.resolution(patch.status)
        shown.append(f" {status.word}", style=status.style)
        if patch.approved is not None:
            shown.append(" (approved)" if patch.approved else " (rejected)", style="dim")
    return shown


def _tasks(report: Report) -> list[RenderableType]:
    rows: list[TaskRow] = [row for row in report.tasks if row.raced]
    if not rows:
        return [_heading("Tasks"), Text("No task has been scored and raced yet.", style="dim")]
    policies = [pick.policy for pick in rows[0].picks]
    others = [policy for policy in policies if policy != report.policy]
    table = _table(
        _name("Task"),
        *(
            _name(policy, drop=0 if policy == report.policy else others.index(policy) + 1)
            for policy in policies
        ),
        _name("Patches (merge gate)", wrap=True),
    )
    for row in rows:
        table.add_row(Text(row.task), *(_pick(pick) for pick in row.picks), _patches(row.patches))
    return [_heading(f"Tasks · picks per policy, gate under {report.policy}"), table]


def _env(section: EnvSection) -> list[RenderableType]:
    """Every environment figure: the boards, the env judge, the pins, the funnel, the
    tasks. A board with no task says so in a line."""
    parts: list[RenderableType] = [
        _heading(
            f"Environment repairs · {section.funnel.admitted} admitted tasks, "
            "a clean dated install and a traced run decide"
        ),
        Text(
            "Trials pooled per agent; a trial that did not count is no sample. "
            "Resolved with its 95% interval; pass@k, consistency and means over tasks.",
            style="dim",
        ),
    ]
    for board in section.boards:
        parts += _env_board(board)
    parts += [*_env_verdicts(section), *_env_newest(section), *_env_funnel(section)]
    parts += _env_tasks(section.tasks)
    return parts


def _env_board(board: EnvBoard) -> list[RenderableType]:
    heading = _heading(f"{board.title} · {look.plural(len(board.tasks), 'task')}")
    if not board.tasks:
        return [heading, Text("No task is on this board.", style="dim")]
    if board.board == "stochastic":
        table = _table(
            _name("Agent"), _figure("Tasks"), _figure("Consistency@3"), _figure("Jaccard")
        )
        for row in board.rows:
            table.add_row(Text(row.agent), str(row.tasks), _env_consistency(row), _env_jaccard(row))
    else:
        table = _table(
            _name("Agent"),
            _figure("Tasks"),
            _figure("Resolved"),
            _figure("pass@1", drop=1),
            _figure("pass@3", drop=5),
            _figure("Consistency", drop=6),
            _figure("Jaccard", drop=7),
            _figure("F1", drop=2),
            _figure("Safe install"),
            _figure("Attempts", drop=3),
            _figure("Cost/task", drop=4),
        )
        for row in board.rows:
            at = {item.k: item for item in row.pass_at}
            table.add_row(
                Text(row.agent),
                str(row.tasks),
                f"{row.resolved.counted()}, {row.resolved.percent()}",
                _estimate_at(at.get(1)),
                _estimate_at(at.get(3)),
                _env_consistency(row),
                _env_jaccard(row),
                _decimal(row.f1),
                _share(row.safe_install),
                _decimal(row.attempts, places=1),
                "n/a" if row.cost_usd is None else f"${row.cost_usd:,.2f}",
            )
    parts: list[RenderableType] = [heading, Text(f"ranked by {board.ranked_by}", "dim"), table]
    for task, why in board.reasons.items():
        parts.append(PathText(Text.assemble((f"{task}: ", "bold"), why)))
    return parts


def _env_consistency(row: EnvAgentRow) -> str:
    found = row.consistency
    if found is None:
        return "n/a"
    return f"{_share(found.value)} of {found.tasks} (k={found.k})"


def _env_jaccard(row: EnvAgentRow) -> str:
    return "n/a" if row.jaccard is None else f"{row.jaccard:.2f} of {row.jaccard_tasks}"


def _decimal(value: float | None, *, places: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{places}f}"


def _env_verdicts(section: EnvSection) -> list[RenderableType]:
    rows = [row for row in section.tasks if row.verdict is not None]
    heading = _heading(
        f"Choosing one repair · {section.picked} picked, {section.approved} approved "
        "by the merge gate"
    )
    if not rows:
        return [heading, Text("No environment task is admitted yet.", style="dim")]
    table = _table(_name("Task"), _name("Pick"), _name("Merge gate"), _name("Why", wrap=True))
    for row in rows:
        verdict = row.verdict
        assert verdict is not None
        if verdict.pick is None:
            gate = Text("abstained", style="dim")
        elif verdict.approved:
            gate = Text("approved", style="green")
        else:
            gate = Text("refused", style="red")
        table.add_row(
            Text(row.task),
            Text(verdict.pick or "–"),
            gate,
            Text("; ".join(verdict.trail[1:]) or verdict.trail[0]),
        )
    return [heading, table]


def _env_newest(section: EnvSection) -> list[RenderableType]:
    parts: list[RenderableType] = [_heading("Newest is not the same as safe")]
    if section.newest:
        table = _table(
            _name("Task"),
            _name("Repair"),
            _name("Package"),
            _figure("Declared"),
            _figure("Newest at date"),
            _figure("Newest today"),
            _name("Advisories", wrap=True),
        )
        for row in section.newest:
            advisories = "; ".join(
                f"{version}: {', '.join(ids)}" for version, ids in row.advisories.items()
            )
            table.add_row(
                Text(row.task),
                Text(row.contestant),
                Text(row.name),
                row.declared,
                row.newest_at_date or "n/a",
                row.newest_today or "n/a",
                Text(advisories or "none", style="" if advisories else "dim"),
            )
        parts.append(table)
    else:
        parts.append(Text("No pinned package was checked against the index.", style="dim"))
    for item in section.loosened:
        parts.append(
            Text.assemble(
                ("▾ ", "yellow"),
                f"{item.task} {item.contestant} resolved with safe install "
                f"{_share(item.safe_install)} against {_share(item.gold_safe_install)} for the "
                f"known repair, dropping the pins of {', '.join(item.dropped)}",
            )
        )
    parts.append(Text(LOOSENED_PIN, style="dim" if not section.loosened else "yellow"))
    return parts


def _env_funnel(section: EnvSection) -> list[RenderableType]:
    funnel = section.funnel
    table = _table(_name("Step", wrap=True), _figure("Count"))
    table.add_row("Environment tasks", str(funnel.kept))
    table.add_row(Text("  of them from the Lite set", style="dim"), str(funnel.lite))
    for group in [*funnel.set_aside, *funnel.controls_failed]:
        table.add_row(Text(f"  {group.reason}", style="dim"), str(group.count))
    for group in funnel.not_raced:
        table.add_row(Text(f"  not raced: {group.reason}", style="dim"), str(group.count))
    table.add_row(
        Text("Admitted: what every env figure counts", style="bold"), str(funnel.admitted)
    )
    return [_heading("How the environment tasks stand"), table]


def _env_tasks(rows: list[EnvTaskRow]) -> list[RenderableType]:
    if not rows:
        return []
    table = _table(
        _name("Task"),
        _name("Defect", drop=2),
        _name("Controls", drop=1),
        _name("Repairs (safe install, F1)", wrap=True),
    )
    for row in rows:
        repairs = Text()
        for index, repair in enumerate(row.repairs):
            if index:
                repairs.append(" · ")
            repairs.append(repair.contestant)
            style = "green" if repair.status == "resolved" else "red"
            repairs.append(f" {repair.status}", style=style)
            repairs.append(f" ({_share(repair.safe_install)}, {_decimal(repair.f1)})", "dim")
        if row.left_out is not None:
            repairs = Text(row.left_out, style="dim")
        table.add_row(
            Text(row.task),
            row.defect,
            f"base {row.base or '–'} · gold {row.gold or '–'}",
            repairs,
        )
    return [_heading("Environment tasks · each repair as repairs.json keeps it"), table]
