"""The report as Markdown, written for a reader who has never seen the tool.

Each section opens with a sentence on what it measures and how to read it; every share
is shown with its interval as `70% (52–83%)`; terms are defined at the end. Names,
titles, file names and reasons come from agents, commit messages and issues: every table
cell and every such string outside a table goes through `markdown_text` (or
`markdown_code`), so none can make a link, an image, HTML, a heading or a table row.
"""

from __future__ import annotations

from collections.abc import Sequence

from bugbout_tui.core import look
from bugbout_tui.core.text import markdown_code, markdown_text
from bugbout_tui.report import metrics
from bugbout_tui.report.model import (
    EXCLUSION_LABELS,
    LOOSENED_PIN,
    PATHS_LISTED,
    RUNG_LABELS,
    CostSection,
    EnvAgentRow,
    EnvBoard,
    EnvSection,
    PassAtK,
    PatchRow,
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

__all__ = ["render_markdown"]

DEFINITIONS = """\
## Definitions

- **resolved**: every fail-to-pass test of the maintainers' fix passes on the patch,
  and no pass-to-pass test fails.
- **fixed but broke**: every fail-to-pass test passes, but a pass-to-pass test that
  passed before now fails.
- **wrong fix**: the patch changed the source, but a fail-to-pass test still fails.
- **no fix**: no change to the source, the agent crashed or ran out of time, or its
  patch was too large to keep (oversized).
- **quota**: the agent hit its usage limit; the attempt is not scored and not held
  against it.
- **fail-to-pass / pass-to-pass**: the maintainers' tests that failed before their fix
  and passed after it, and those that passed on both sides.
- **support**: how much independent evidence backs a patch. A reproduction is a test
  that fails on the unfixed code; for each other author, the share of its reproductions
  that pass on the patch, averaged over those authors.
- **AUC**: take one right and one wrong patch at random; the AUC is how often the
  evidence scores the right one higher, a tie counting as half. 0.5 is a coin flip.
- **95% interval**: the Wilson score interval, in brackets after each share. With a few
  dozen bugs it is wide; two shares whose intervals overlap may not differ at all.
- **p**: the exact McNemar test on the bugs where only one of two pickers was right.
  Below 0.05 the difference is unlikely to be chance alone; above, it is no evidence
  either way.
"""

ENV_DEFINITIONS = """\
- **installed and ran** (resolved, for an environment task): a clean install of the
  repaired files at the task's date succeeded, and so did the task's command, traced.
- **D¹, D², D³**: what the environment files declare (names normalized as PEP 503);
  what the clean install put in the environment; the distributions whose files the
  traced run imported or opened.
- **safe install**: the share of D¹ that exists on the index, is not removed or yanked,
  has no published advisory, is pinned to an exact version and could be checked.
- **manifest F1**: precision (|D¹ ∩ D³| / |D¹|) and recall (|D¹ ∩ D³| / |D³|) of what a
  repair declares against what its own run used, combined.
- **pass@k**: the chance that at least one of k trials resolves a task, by the unbiased
  1 − C(n−c, k)/C(n, k) over n scored trials with c resolved; no value for a task with
  fewer than k trials.
- **consistency@k**: the share of tasks whose first k trials declare the same names.
- **Jaccard**: |A ∩ B| / |A ∪ B| of two trials' D¹, averaged over every pair of trials
  of a task, then over tasks.
- **attempts**: over the tasks an agent resolved, how many trials it took up to and
  including its first resolved one.
- **merge gate** (environment): approves a repair only when no declared package is
  vulnerable, removed, could not be checked or is named one edit from a popular package.
"""
"""The terms of the environment sections, added to the definitions when they are shown."""


def render_markdown(report: Report) -> str:
    """The whole report as one Markdown document."""
    env = report.env
    # A bout of environment tasks alone has nothing in the bug sections: it shows the
    # history's funnel, the cost and its own sections.
    bugs = env is None or bool(report.funnel.kept)
    sections = [_title(report, bugs=bugs)]
    if bugs:
        sections += [_agents(report), _picking(report), _gate(report), _evidence(report)]
    if bugs or report.funnel.examined:
        sections.append(_funnel(report))
    if report.quarantined:
        sections.append(_quarantined(report))
    sections.append(_cost(report))
    if report.workers is not None:
        sections.append(_workers(report.workers))
    if bugs:
        sections += [
            *([_trials(report.trials)] if report.trials is not None else []),
            *([_stopping(report.stopping)] if report.stopping is not None else []),
            _tasks(report),
        ]
    if env is not None:
        sections += _env(env)
    definitions = DEFINITIONS if bugs else "## Definitions\n\n"
    sections.append(definitions + (ENV_DEFINITIONS if env is not None else ""))
    return "\n\n".join(section.rstrip("\n") for section in sections) + "\n"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: int = 1) -> str:
    """A pipe table; columns from index `numeric` on are right-aligned (counts, shares)."""
    lines = [
        "| " + " | ".join(markdown_text(text) for text in header) + " |",
        "|" + "|".join("---:" if i >= numeric else "---" for i in range(len(header))) + "|",
        *("| " + " | ".join(markdown_text(text) for text in row) + " |" for row in rows),
    ]
    return "\n".join(lines)


def _title(report: Report, *, bugs: bool = True) -> str:
    raced = report.picking.raced_tasks
    names = markdown_text(", ".join(report.contestants) or "none")
    examiners = (
        f" and {look.plural(len(report.examiners), 'examiner')} "
        f"({markdown_text(', '.join(report.examiners))})"
        if report.examiners
        else ""
    )
    counted = [look.plural(raced, "raced task")] if bugs else []
    if report.env is not None:
        counted.append(look.plural(report.env.funnel.admitted, "admitted environment task"))
    return (
        f"# bugbout report: {markdown_text(report.project)}\n\n"
        f"{' and '.join(counted)}, {look.plural(len(report.contestants), 'contestant')} "
        f"({names}){examiners}; the judge's policy is `{report.policy}`. Each share comes with "
        "its 95% interval in brackets: on a few dozen bugs these are wide, so read them "
        "before reading a ranking."
    )


FIRST_TRIAL_NOTE = (
    " With repeated trials this table counts each contestant's first trial, as a bout "
    "of one trial would; every trial counts under Repeated trials."
)


def _agents(report: Report) -> str:
    section = report.agents
    missing = any(row.missing for row in section.rows)
    header = [
        "Agent",
        "Resolved",
        "Fixed but broke",
        "Wrong fix",
        "No fix",
        "Quota",
        *(["No score yet"] if missing else []),
        "Resolved rate",
        "Median time",
        "Tokens in / out / cached",
        "Cost",
    ]
    rows = [
        [
            row.name,
            str(row.resolved),
            str(row.fixed_but_broke),
            str(row.wrong_fix),
            str(row.no_fix) + (f" ({row.oversized} oversized)" if row.oversized else ""),
            str(row.quota),
            *([str(row.missing)] if missing else []),
            f"{row.resolved_rate.percent()}, {row.resolved_rate.counted()}",
            look.duration(row.median_seconds),
            row.spend.tokens_shown(),
            row.spend.cost_shown(),
        ]
        for row in section.rows
    ]
    parts = [
        "## Agents",
        f"Each contestant's patch on each of the {look.plural(section.raced_tasks, 'raced task')} "
        "(tasks the maintainers' tests can score and at least one contestant ran on), "
        "scored by those tests, which no agent saw. The resolved rate and the "
        "median time leave out attempts that hit a usage limit; tokens and cost include "
        "them, as far as each agent reports them."
        + (FIRST_TRIAL_NOTE if report.trials is not None else ""),
        _table(header, rows),
    ]
    if section.flagged:
        parts.append(
            "These attempts also changed files outside the source and the tests. Such "
            "changes are never applied, but a patch that tries to change how tests run "
            "deserves a look:"
        )
        parts.append(
            "\n".join(
                f"- {markdown_text(item.task)}, {markdown_text(item.contestant)}"
                f"{' (examiner)' if item.role == 'examiner' else ''}: " + _paths(item.files)
                for item in section.flagged
            )
        )
    else:
        parts.append("No attempt changed files outside the source and the tests.")
    if section.oversized:
        parts.append(
            "These attempts left a patch too large to keep, so it was not stored; each "
            "counts as no fix:"
        )
        parts.append(
            "\n".join(
                f"- {markdown_text(item.task)}, {markdown_text(item.contestant)}"
                f"{' (examiner)' if item.role == 'examiner' else ''}: "
                + markdown_text(item.detail or "")
                for item in section.oversized
            )
        )
    return "\n\n".join(parts)


def _paths(paths: Sequence[str]) -> str:
    """The first `PATHS_LISTED` paths in code spans, and a count of the rest."""
    shown = ", ".join(markdown_code(path) for path in paths[:PATHS_LISTED])
    rest = len(paths) - PATHS_LISTED
    return shown + (f" and {rest:,} more" if rest > 0 else "")


def _picking(report: Report) -> str:
    picking = report.picking
    configured = next(side for side in picking.policies if side.policy == picking.policy)
    comparison = [
        [f"Judge ({picking.policy})", configured.rate.counted(), configured.rate.percent()]
    ]
    if picking.best_agent is not None and picking.best_agent_rate is not None:
        comparison.append(
            [
                f"Best single agent ({picking.best_agent})",
                picking.best_agent_rate.counted(),
                picking.best_agent_rate.percent(),
            ]
        )
    comparison += [
        [
            "A random agent (expected)",
            picking.random_agent.counted(),
            picking.random_agent.percent(),
        ],
        ["Oracle (any patch right)", picking.oracle.counted(), picking.oracle.percent()],
    ]
    best = picking.best_agent
    rates = any(
        side.versus_best is not None and side.versus_best.test == "sign-flip"
        for side in picking.policies
    )
    header = ["Policy", "Right", "Wrong", "Abstained", "Right share"]
    if best is not None and rates:
        header += ["Judge ahead", f"{best} ahead", "Mean difference (95% CI)", "p"]
    elif best is not None:
        header += ["Only the judge right", f"Only {best} right", "p"]
    if best is not None:
        header.append("Gap to the oracle closed")
    rows = []
    notes = []
    for side in picking.policies:
        row = [
            side.policy + (" (configured)" if side.policy == picking.policy else ""),
            str(side.right),
            str(side.wrong),
            str(side.abstained),
            side.rate.percent() if side.cannot_apply is None else "cannot apply",
        ]
        if side.versus_best is not None:
            versus = side.versus_best
            row += [str(versus.judge_only), str(versus.agent_only)]
            row += [signed_difference(versus)] if rates else []
            row.append(format_p(versus.p_value))
        elif best is not None:
            row += ["–"] * (4 if rates else 3)
        if best is not None:
            row.append("–" if side.gap_closed is None else side.gap_closed.shown())
        rows.append(row)
        if side.cannot_apply is not None:
            notes.append(
                f"`{side.policy}` cannot apply to this bout: {markdown_text(side.cannot_apply)}. "
                "It abstains for want of vendors, not of evidence, so it is not compared."
            )
    return "\n\n".join(
        [
            "## Picking one patch per bug",
            "The judge picks at most one patch per bug, from the cross-examination alone, "
            "and abstains when the evidence is thin. Its picks are set against always "
            "taking the best single agent's patch, taking a random agent's patch (the "
            "expected score), and the oracle, which counts a bug when any patch for it was "
            "right: the ceiling for any way of picking. An abstention counts as not right.",
            f"**{markdown_text(picking.summary)}**",
            _table(["Picker", "Right", "Share"], comparison),
            *([markdown_text(gap)] if (gap := gap_sentence(picking)) is not None else []),
            _versus_note(rates),
            _table(header, rows),
            *notes,
        ]
    )


def _versus_note(rates: bool) -> str:
    if not rates:
        return (
            "Every policy side by side. p compares each policy with the best single agent "
            "bug by bug, so it rests only on the bugs where exactly one of them was right. "
            + GAP_NOTE
        )
    return (
        "Every policy side by side. The agents ran repeated trials, so the best single agent "
        "is the one with the highest mean resolved rate per task, and each policy is "
        "compared with it task by task: the judge's result there (1 or 0) minus the "
        "agent's resolved rate, averaged over the tasks, with a 95% paired bootstrap "
        "interval over tasks; p is an exact two-sided sign-flip test of a zero difference. "
        + GAP_NOTE
    )


GAP_NOTE = (
    "The gap to the oracle closed is (the judge's right picks − the best agent's) / (the "
    "oracle's − the best agent's): 100% matches the oracle, 0% the best agent, below 0 "
    "is worse than always taking its patch; in brackets its 95% bootstrap interval over "
    "tasks, and `no gap` when the best agent was right wherever any patch was."
)


def _gate(report: Report) -> str:
    gate = report.gate
    if gate.cannot_apply is not None:
        return "\n\n".join(
            [
                "## Every patch through a merge gate",
                f"The `{gate.policy}` policy cannot apply to this bout: "
                f"{markdown_text(gate.cannot_apply)}. Its gate would reject every patch for "
                "want of vendors, so no figure is shown.",
            ]
        )
    rows: list[tuple[str, Rate]] = [
        ("Approvals that were right (precision)", gate.precision),
        ("Wrong patches stopped", gate.wrong_stopped),
        ("Right patches stopped", gate.right_stopped),
        ("Approving every patch (precision)", gate.approve_all),
    ]
    return "\n\n".join(
        [
            "## Every patch through a merge gate",
            f"Each patch judged on its own under the `{gate.policy}` policy, as a merge gate "
            "would judge it the moment an agent says it is done. Of "
            f"{look.plural(gate.patches, 'scored patch', 'scored patches')} with a source change, "
            f"{gate.right} {'was' if gate.right == 1 else 'were'} right and {gate.wrong} wrong; "
            f"the gate approved {gate.approved}. A useful gate is more precise than "
            "approving everything, stops many wrong patches and few right ones.",
            _table(
                ["", "Count", "Share"],
                [[label, rate.counted(), rate.percent()] for label, rate in rows],
            ),
        ]
    )


def _evidence(report: Report) -> str:
    rows = [
        [
            row.author,
            row.kind,
            "n/a" if row.auc is None else f"{row.auc:.2f}",
            str(row.positives),
            str(row.negatives),
        ]
        for row in report.evidence.rows
    ]
    return "\n\n".join(
        [
            "## Which tests tell a right fix from a wrong one",
            "For each author of tests, and for the repository's own suite: score every "
            "patch by the share of the author's tests that pass on it, then ask how well "
            "that score separates right patches from wrong ones (fixed but broke, or wrong "
            "fix). The AUC is 1.0 when every right patch scores above every wrong one and "
            "0.5 for a coin flip. An author's tests never score its own patches, just as "
            "the judge never lets an author vouch for itself. n/a: there was no right or "
            "no wrong patch to compare.",
            _table(["Tests by", "Kind", "AUC", "Right patches", "Wrong patches"], rows, 2),
        ]
    )


def _quarantined(report: Report) -> str:
    rows = [
        [
            item.task,
            item.test if item.author == "suite" else f"{item.test} ({item.author})",
            "; ".join(
                f"{on.tree}: {on.passes} passed, {on.fails} failed of {on.runs}"
                for on in item.trees
            ),
        ]
        for item in report.quarantined
    ]
    return "\n\n".join(
        [
            "## Quarantined tests",
            "Tests that both passed and failed on one tree (the same code under the same "
            "conditions): they answer at random, so none of them is used to score a patch "
            "or counted as a reproduction or a breakage.",
            _table(["Task", "Test", "Evidence"], rows, numeric=3),
        ]
    )


def _funnel(report: Report) -> str:
    funnel = report.funnel
    rows = [["Changes examined in the history", str(funnel.examined)]]
    rows += [
        [f"Left out: {EXCLUSION_LABELS[item.reason]} ({item.reason.value})", str(item.count)]
        for item in funnel.excluded
        if item.count
    ]
    rows.append(["Kept as tasks", str(funnel.kept)])
    rows += [
        [f"Set aside: {item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.set_aside
    ]
    rows.append(["Scored by the maintainers' tests", str(funnel.scored)])
    rows += [
        [f"Not scored: {item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.not_scored
    ]
    if funnel.gold_controls is not None:
        rows.append(
            [
                "Gold controls resolved (the maintainers' fix scored as a patch)",
                f"{funnel.gold_controls.counted()}, {funnel.gold_controls.percent()}",
            ]
        )
    rows += [
        [f"{item.reason} ({', '.join(item.tasks)})", str(item.count)] for item in funnel.unreliable
    ]
    rows.append(["Raced: the tasks every figure counts", str(funnel.raced)])
    rows += [
        [f"Not raced: {item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.not_raced
    ]
    rows += [
        [f"Environment: {RUNG_LABELS[item.rung]} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.environments
    ]
    return "\n\n".join(
        [
            "## How the tasks were found",
            "A change in the history became a task when it fixes a bug, names an issue "
            "and adds a test; every other change examined is counted under the first rule "
            "it failed. A task you excluded in bugbout.toml is set aside. A task is scored "
            "when some of the maintainers' tests fail before their fix and pass after it. "
            "Its gold control scores the maintainers' own fix exactly as an agent's patch "
            "is scored; a task whose control does not resolve has a grader that cannot be "
            "trusted here and counts nowhere. A task is raced when at least one contestant "
            "was given it and ran: only raced tasks "
            "count in the figures above, since a task no agent saw says nothing about the "
            "agents or the judge.",
            _table(["Step", "Count"], rows),
        ]
    )


def _cost(report: Report) -> str:
    cost = report.cost
    rows = [
        [
            item.name,
            item.role,
            str(item.spend.attempts),
            look.duration(item.spend.seconds),
            item.spend.tokens_shown(),
            item.spend.cost_shown(),
        ]
        for item in cost.by_agent
    ]
    total = cost.total
    rows.append(
        [
            "Total",
            "",
            str(total.attempts),
            look.duration(total.seconds),
            total.tokens_shown(),
            total.cost_shown(),
        ]
    )
    parts = [
        "## Cost and tokens",
        "What the bout spent over every attempt: unscored tasks, repeated trials and "
        "examiners included. Tokens are summed as far as each agent reports them; a cost "
        "is the agent's own where it reports one, else its tokens at its model's list "
        "price, and unknown without either; a count in brackets says how many attempts "
        "have one. `plan`: an agent on a subscription plan, shown by its tokens alone.",
        _table(["Agent", "Role", "Attempts", "Time", "Tokens in / out / cached", "Cost"], rows, 2),
        _prices_note(cost),
    ]
    if cost.budget_stops:
        stops = [
            [item.name, item.role, str(item.attempts), item.reason] for item in cost.budget_stops
        ]
        parts += [
            "Attempts a budget stopped (not scored; a later run starts them once the budget "
            "allows):",
            _table(["Agent", "Role", "Attempts", "Budget"], stops, 2),
        ]
    return "\n\n".join(parts)


def _prices_note(cost: CostSection) -> str:
    checked = cost.prices_checked.isoformat() if cost.prices_checked else "an unknown date"
    sources = ", ".join(cost.prices_sources.values())
    note = f"List prices checked on {checked}" + (f" against {sources}" if sources else "")
    if cost.prices_overridden:
        note += "; set in bugbout.toml for " + ", ".join(cost.prices_overridden)
    return note + "."


def _workers(section: WorkersSection) -> str:
    rows = [
        [
            look.place(row.worker),
            ", ".join(f"{agent} {count}" for agent, count in row.agents.items()),
            str(row.attempts),
        ]
        for row in section.rows
    ]
    return "\n\n".join(
        [
            "## Where attempts ran",
            "Some of the bout's attempts ran on a cluster's workers. Per worker, and for "
            "this machine (the one that ran the bout), the attempts whose agent started "
            "there, by agent; skipped attempts and those a budget stopped ran nowhere and "
            "are not counted.",
            _table(["Worker", "By agent", "Attempts"], rows, numeric=2),
        ]
    )


def _trials(section: TrialsSection) -> str:
    ks = section.shown_k()
    header = [
        "Agent",
        "Trials",
        "Resolved, all trials",
        *(f"pass@{k}" for k in ks),
        *(f"pass^{k}" for k in ks if k > 1),
        "Consistency",
    ]
    body = []
    for row in section.rows:
        at = {item.k: item for item in row.pass_at}
        every = {item.k: item for item in row.pass_hat}
        body.append(
            [
                row.agent,
                str(row.trials),
                f"{row.resolved_trials} of {row.scored_trials}, "
                + estimate(row.resolved_share, row.resolved_low, row.resolved_high),
                *(_estimate_at(at.get(k)) for k in ks),
                *(_estimate_at(every.get(k)) for k in ks if k > 1),
                estimate(row.consistency, row.consistency_low, row.consistency_high)
                + f" of {look.plural(row.consistency_tasks, 'task')}",
            ]
        )
    return "\n\n".join(
        [
            "## Repeated trials",
            "Contestants run more than once on each task, each trial from a fresh checkout. "
            "Resolved counts every scored trial. pass@k is the chance that at least one of "
            "k trials resolves a task, 1 − C(n−c, k)/C(n, k); pass^k the chance that all k "
            "do, C(c, k)/C(n, k); each is averaged over the tasks with at least k scored "
            "trials, and a task with fewer has no value. Consistency is the share of tasks "
            "on which every trial got the same status, right or wrong. Intervals are 95% "
            f"percentile bootstraps over tasks ({metrics.BOOTSTRAP_RESAMPLES} resamples, "
            "fixed seed): a task's trials share its difficulty, so tasks, not trials, are "
            "the independent draws. The JSON report holds every k.",
            _table(header, body),
        ]
    )


def _stopping(section: StoppingSection) -> str:
    intro = (
        "`stop-when-decided` is on: after each task every pair of contestants was tested "
        "again with the exact McNemar test, at one level for every look (Pocock's, "
        f"{format_p(section.nominal)} for {look.plural(section.tasks, 'task')}) chosen so "
        f"that the chance any decided pair is wrong is at most {section.level:g} "
        f"({section.pair_level:.3g} per pair)."
    )
    if section.nominal == 0:
        intro += " With this few tasks no pair can be decided at this level."
    if section.decided_after is not None:
        stopped = (
            f"The bout was decided after task {markdown_code(section.decided_after)} "
            f"({section.decided_tasks} of {section.tasks}); no new bug was started after it."
        )
    else:
        stopped = (
            f"Not decided after {section.looked_at} of {section.tasks} tasks: every task is raced."
        )
    rows = [
        [
            pair.ahead,
            pair.behind,
            f"{pair.ahead_only} to {pair.behind_only}",
            format_p(pair.p_value),
            "not yet" if pair.after_task is None else f"{pair.after_task} ({pair.after_tasks})",
        ]
        for pair in section.pairs
    ]
    parts = [
        "## Stopping once decided",
        intro,
        stopped,
        _table(["Ahead", "Behind", "Tasks only each resolved", "p", "Decided after"], rows, 2),
    ]
    if section.not_started:
        tasks = look.plural(len(section.not_started_tasks), "task")
        saved = [
            [
                entry.agent,
                str(entry.attempts),
                "n/a" if entry.tokens is None else f"{entry.tokens:,}",
            ]
            for entry in section.not_started
        ]
        parts.append(
            f"Not started, {tasks}: the quota saved (tokens estimated from each "
            "agent's mean over its stored attempts)."
        )
        parts.append(_table(["Agent", "Attempts", "Tokens (est.)"], saved))
    return "\n\n".join(parts)


def _estimate_at(item: PassAtK | None) -> str:
    return "n/a" if item is None else estimate(item.value, item.low, item.high)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _pick(pick: PolicyPick) -> str:
    if pick.pick is None:
        return "abstained"
    mark = "" if pick.right is None else f" {look.pick(pick.right).glyph}"
    return pick.pick + mark


def _patch(patch: PatchRow) -> str:
    gate = {True: ", approved", False: ", rejected", None: ""}[patch.approved]
    return f"{patch.contestant}: {look.resolution(patch.status).word}{gate}"


def _legend(right: bool) -> str:
    mark = look.pick(right)
    return f"{mark.glyph} {mark.word}"


def _tasks(report: Report) -> str:
    raced = [row for row in report.tasks if row.raced]
    policies = [pick.policy for pick in raced[0].picks] if raced else []
    rows = [
        [
            row.task,
            row.title,
            *(_pick(pick) for pick in row.picks),
            "; ".join(map(_patch, row.patches)),
        ]
        for row in raced
    ]
    parts = [
        "## Tasks",
        f"Each raced task: what every policy picked ({_legend(True)}, {_legend(False)}) or "
        "that it abstained, and every patch's status with the merge gate's answer under the "
        f"`{report.policy}` policy.",
    ]
    if not raced:
        parts.append("No task has been scored and raced yet.")
        return "\n\n".join(parts)
    header = ["Task", "Title", *policies, "Patches"]
    parts.append(_table(header, rows, numeric=len(header)))
    chosen = _explained(raced, report, picked=True)
    if chosen:
        parts.append(f"How the `{report.policy}` policy chose its pick:\n\n{chosen}")
    reasons = _explained(raced, report, picked=False)
    if reasons:
        parts.append(f"Why the `{report.policy}` policy abstained:\n\n{reasons}")
    return "\n\n".join(parts)


def _explained(rows: Sequence[TaskRow], report: Report, *, picked: bool) -> str:
    """One line per task under the configured policy: the step that decided its pick, or
    why it abstained."""
    lines = []
    for row in rows:
        pick = next(pick for pick in row.picks if pick.policy == report.policy)
        if (pick.pick is not None) != picked:
            continue
        if picked:
            reason = markdown_text(pick.decided_by or "no reason recorded")
        else:
            reason = markdown_text(pick.abstained or "no reason recorded")
        lines.append(f"- {markdown_text(row.task)}: {reason}")
    return "\n".join(lines)


def _env(section: EnvSection) -> list[str]:
    """The environment sections, each opening with what it measures."""
    parts = [
        "## Environment repairs\n\n"
        "Tasks where the code is right and the environment is not: each agent repaired "
        "only the environment files, and a repair resolved the task when a clean install "
        "at the task's date and a traced run of its command both succeeded. Every "
        f"figure counts the {look.plural(section.funnel.admitted, 'admitted task')} (see "
        "How the environment tasks stand). An agent's trials are pooled; a trial that did "
        "not count (a usage limit, a budget, never started) is no sample. Resolved comes "
        "with its 95% interval; pass@k, consistency, Jaccard and F1 are means over tasks, "
        "safe install a mean over repairs that declare something, cost a mean per task "
        "of all its trials.",
    ]
    parts += [_env_board(board) for board in section.boards]
    parts += [_env_verdicts(section), _env_newest(section), _env_funnel(section)]
    parts.append(_env_tasks(section))
    return parts


def _env_board(board: EnvBoard) -> str:
    title = f"### {markdown_text(board.title)}"
    if not board.tasks:
        return f"{title}\n\nNo task is on this board."
    tasks = ", ".join(markdown_code(task) for task in board.tasks)
    intro = f"Ranked by {board.ranked_by}. Its {look.plural(len(board.tasks), 'task')}: {tasks}."
    if board.board == "stochastic":
        table = _table(
            ["Agent", "Tasks", "Consistency@3", "Mean pairwise Jaccard"],
            [[row.agent, str(row.tasks), _consistency(row), _jaccard(row)] for row in board.rows],
        )
    else:
        header = [
            "Agent",
            "Tasks",
            "Resolved",
            "pass@1",
            "pass@3",
            "Consistency",
            "Mean pairwise Jaccard",
            "Manifest F1",
            "Safe install",
            "Attempts",
            "Cost per task",
        ]
        table = _table(header, [_env_row(row) for row in board.rows])
    parts = [title, intro, table]
    if board.reasons:
        parts.append(
            "\n".join(
                f"- {markdown_text(task)}: {markdown_text(why)}"
                for task, why in board.reasons.items()
            )
        )
    return "\n\n".join(parts)


def _env_row(row: EnvAgentRow) -> list[str]:
    at = {item.k: item for item in row.pass_at}
    return [
        row.agent,
        str(row.tasks),
        f"{row.resolved.percent()}, {row.resolved.counted()} "
        + ("trial" if row.resolved.n == 1 else "trials"),
        _pass(at.get(1)),
        _pass(at.get(3)),
        _consistency(row),
        _jaccard(row),
        _mean_of(row.f1, row.f1_tasks, "task"),
        _mean_of(row.safe_install, row.safe_repairs, "repair", percent=True),
        _mean_of(row.attempts, row.attempts_tasks, "task", places=1),
        "n/a"
        if row.cost_usd is None
        else f"${row.cost_usd:,.2f} over {look.plural(row.cost_tasks, 'task')}",
    ]


def _pass(item: PassAtK | None) -> str:
    if item is None or item.value is None:
        return "n/a"
    return f"{estimate(item.value, item.low, item.high)} of {look.plural(item.tasks, 'task')}"


def _consistency(row: EnvAgentRow) -> str:
    found = row.consistency
    if found is None or found.value is None:
        return "n/a"
    return f"{_percent(found.value)} of {look.plural(found.tasks, 'task')} (k = {found.k})"


def _jaccard(row: EnvAgentRow) -> str:
    return _mean_of(row.jaccard, row.jaccard_tasks, "task")


def _mean_of(
    value: float | None, n: int, noun: str, *, percent: bool = False, places: int = 2
) -> str:
    """`0.83 over 3 tasks`: a mean with what it averages, or `n/a`."""
    if value is None:
        return "n/a"
    shown = _percent(value) if percent else f"{value:.{places}f}"
    return f"{shown} over {look.plural(n, noun)}"


def _env_verdicts(section: EnvSection) -> str:
    rows = [row for row in section.tasks if row.verdict is not None]
    parts = [
        "### Choosing one repair",
        "The env judge reads only what each repair shows of itself: among the repairs "
        "that installed and ran it prefers the safest (safe install), then the most "
        "faithful (manifest F1 against its own traced run), then the smallest change, "
        "then the name. The merge gate approves the pick only when none of its declared "
        "packages is vulnerable, removed, could not be checked or named one edit from a "
        "popular package. "
        f"It picked a repair on {section.picked} of "
        f"{look.plural(len(rows), 'admitted task')}; the gate approved {section.approved}.",
    ]
    if rows:
        body = []
        for row in rows:
            verdict = row.verdict
            assert verdict is not None
            gate = (
                "abstained"
                if verdict.pick is None
                else "approved"
                if verdict.approved
                else "refused"
            )
            body.append([row.task, verdict.pick or "–", gate, " · ".join(verdict.trail)])
        parts.append(_table(["Task", "Pick", "Merge gate", "Trail"], body, numeric=4))
    return "\n\n".join(parts)


def _env_newest(section: EnvSection) -> str:
    parts = [
        "### Newest is not the same as safe",
        "Every pinned package of the admitted tasks' repairs (and of the files as "
        "written, `base`): the version declared, the newest uploaded before the task's "
        "date, the newest today, and the published advisories of each.",
    ]
    if section.newest:
        rows = [
            [
                row.task,
                row.contestant,
                row.name,
                row.declared,
                row.newest_at_date or "n/a",
                row.newest_today or "n/a",
                "; ".join(f"{v}: {', '.join(ids)}" for v, ids in row.advisories.items()) or "none",
            ]
            for row in section.newest
        ]
        header = [
            "Task",
            "Repair",
            "Package",
            "Declared",
            "Newest at the task's date",
            "Newest today",
            "Advisories",
        ]
        parts.append(_table(header, rows, numeric=7))
    else:
        parts.append("No pinned package was checked against the index.")
    parts.append(f"**{LOOSENED_PIN}**")
    if section.loosened:
        parts.append(
            "\n".join(
                f"- {markdown_text(item.task)}, {markdown_text(item.contestant)}: resolved with "
                f"safe install {_percent(item.safe_install)} against "
                f"{_percent(item.gold_safe_install)} for the known repair; it declares "
                f"{', '.join(markdown_code(name) for name in item.dropped)} without the "
                "pin the known repair gives"
                for item in section.loosened
            )
        )
    else:
        parts.append("No repair resolved by loosening a pin the known repair keeps.")
    return "\n\n".join(parts)


def _env_funnel(section: EnvSection) -> str:
    funnel = section.funnel
    rows = [
        ["Environment tasks", str(funnel.kept)],
        ["Of them from the Lite set", str(funnel.lite)],
    ]
    rows += [
        [f"Set aside: {item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.set_aside
    ]
    rows += [
        [f"{item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.controls_failed
    ]
    rows += [
        [f"Not raced: {item.reason} ({', '.join(item.tasks)})", str(item.count)]
        for item in funnel.not_raced
    ]
    rows.append(["Admitted: the tasks every env figure counts", str(funnel.admitted)])
    return "\n\n".join(
        [
            "### How the environment tasks stand",
            "Each environment task has two controls: the files as written (the base) must "
            "fail to install or run, and the known repair must install and run. A task "
            "whose controls did not has a scorer that cannot be trusted here and counts "
            "nowhere, as a bug task with an unreliable grader; so does a task you set "
            "aside, or one no contestant ran on.",
            _table(["Step", "Count"], rows),
        ]
    )


def _env_tasks(section: EnvSection) -> str:
    rows = []
    for row in section.tasks:
        repairs = "; ".join(
            f"{repair.contestant}: {repair.status}, safe install {_percent(repair.safe_install)}, "
            f"F1 {'n/a' if repair.f1 is None else f'{repair.f1:.2f}'}, "
            f"{look.plural(repair.size, 'line')}"
            + (f", changed {', '.join(repair.rejected_files)}" if repair.rejected_files else "")
            for repair in row.repairs
        )
        rows.append(
            [
                row.task,
                row.title,
                row.defect
                + (", Lite" if row.lite else "")
                + (", security" if row.security else ""),
                f"base {row.base or 'none'}, gold {row.gold or 'none'}",
                row.left_out or "admitted",
                repairs or "none",
            ]
        )
    return "\n\n".join(
        [
            "### Environment tasks",
            "Every environment task with its controls and every repair as `repairs.json` "
            "keeps it, so each figure above can be traced to its records.",
            _table(["Task", "Title", "Defect", "Controls", "Counted", "Repairs"], rows, numeric=6),
        ]
    )
