"""From stored records to the report: one pure function, so every figure can be traced.

`build_report` reads nothing from disk and runs nothing. Given the same tasks, oracles,
attempts, matrices, verdicts and resolutions it returns the same report, which is what
lets `bugbout report` recompute the report, or switch policy, offline. The readings taken
where the design leaves room are stated in `docs/report.md`; the main ones:

- only raced tasks enter any figure, except the funnel, the cost totals and the flags on
  patches that changed `other` files. A task is raced when its ground truth can score it,
  no person set it aside in bugbout.toml, and at least one contestant ran on it (an
  attempt neither skipped nor stopped by a usage limit): a task no agent was given says
  nothing about the agents or the judge, so it must not dilute their rates;
- an agent's resolved rate leaves out its quota attempts (a spent usage limit is not held
  against it), but the judge's comparisons count over every raced task, where an
  abstention, like a quota, is simply not right;
- `cross-vendor` cannot apply when an agent's vendor is unknown, or every agent is of one
  vendor: it would abstain for want of information, not of evidence, so its comparisons
  are withheld and the reason given instead (decided per report);
- the share of the gap from the best single agent to the oracle a policy closes keeps
  that agent fixed, as chosen on the whole bout, in every bootstrap resample; with no gap
  there is no share (not 0, not 1), and the reason is given in words;
- a task whose gold control (the maintainers' fix scored as a patch) did not resolve
  has an unreliable grader and counts in no figure;
- an author's tests never score the author's own patches, as the judge never lets an
  author vouch for itself;
- environment tasks are scored by their controls and repairs, not by hidden tests, so
  they have a section of their own (`env_build.py`) and no bug figure counts them; only
  the cost totals, which cover every attempt of the bout, include their attempts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

from bugbout_tui.core import look
from bugbout_tui.core.agent_facts import UNKNOWN_VENDOR
from bugbout_tui.core.config import Policy, TasksConfig
from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.core.models import (
    RUNGS,
    Attempt,
    AuthorKind,
    Ledger,
    Matrix,
    OracleSet,
    Reason,
    Resolution,
    ResolutionSet,
    Task,
    TaskSet,
)
from bugbout_tui.core.prices import shipped_prices
from bugbout_tui.core.trials import agent_of, trial_number
from bugbout_tui.report import metrics
from bugbout_tui.report.env_build import build_env_section
from bugbout_tui.report.model import (
    AWAITING_REVIEW,
    BUDGET_ONLY,
    DECIDED_BEFORE,
    EXCLUDED_BY_YOU,
    NO_ISSUE_TEXT,
    NOT_RUN,
    NOT_STARTED,
    QUOTA_ONLY,
    AgentRow,
    AgentSpend,
    AgentsSection,
    AuthorEvidence,
    BudgetStop,
    Comparison,
    CostSection,
    DecidedPair,
    EvidenceSection,
    ExclusionCount,
    FlaggedAttempt,
    FunnelSection,
    GapClosed,
    GateSection,
    LeftOutCount,
    NotScoredCount,
    NotStarted,
    OversizedAttempt,
    PassAtK,
    PatchRow,
    PatchStatus,
    PickingSection,
    PolicyPick,
    PolicyPicks,
    QuarantinedTest,
    Rate,
    Report,
    Role,
    RungCount,
    Spend,
    StoppingSection,
    TaskRow,
    TokenUse,
    TreeEvidence,
    TrialRow,
    TrialsSection,
    WorkerRow,
    WorkersSection,
    format_p,
)
from bugbout_tui.rules.cost import Costing
from bugbout_tui.rules.flakes import (
    matrix_without,
    oracle_without,
    quarantined,
    repository_tests,
    resolution_without,
)
from bugbout_tui.rules.judge import POLICIES, Verdict, author_identity
from bugbout_tui.rules.score import UNRELIABLE, unreliable_grader
from bugbout_tui.rules.sequential import decide, first_trials, outcomes_so_far

__all__ = ["NO_VERDICT", "build_report"]

NO_VERDICT = "no verdict is recorded for this task"
"""The abstention shown for a task the judge never saw (no matrix was built for it)."""
NO_ORACLE = "no ground truth is recorded for this task"

RIGHT: frozenset[PatchStatus] = frozenset({"resolved"})
WRONG: frozenset[PatchStatus] = frozenset({"fixed-but-broke", "wrong-fix"})
SCORED: frozenset[PatchStatus] = frozenset({"resolved", "fixed-but-broke", "wrong-fix", "no-fix"})
"""Statuses that say something about the agent; quota and missing say nothing."""
SUITE = "suite"

Status = Callable[[str, str], PatchStatus]
"""(task, contestant) → the patch's status."""


def build_report(
    *,
    project: str,
    policy: Policy,
    taskset: TaskSet,
    oracles: OracleSet,
    attempts: Sequence[Attempt],
    matrices: Mapping[str, Matrix],
    verdicts: Mapping[str, Mapping[Policy, Verdict]],
    resolutions: ResolutionSet,
    contestants: Sequence[str],
    examiners: Sequence[str],
    decisions: TasksConfig | None = None,
    ledger: Ledger | None = None,
    costing: Costing | None = None,
    stop_level: float | None = None,
    repairs: RepairSet | None = None,
) -> Report:
    """The report on a bout, computed from its stored records alone.

    `contestants` and `examiners` are the configured names in config order: they fix the
    order of rows, and the agents a random pick draws from. Records of a contestant's
    repeated trials (`codex#2`) are reported as trials of it. `decisions` is the
    `[tasks]` table holding a person's accept and exclude decisions: a task set aside
    there counts nowhere, whatever its records say. `ledger` is the flake ledger: a
    test it quarantined counts in no oracle, score or matrix cell, and is listed.
    `costing` prices attempts whose agent reported tokens but no cost, and knows which
    agents are on a plan; without it only reported costs count. `stop_level` is
    `[run] decided-at` when `stop-when-decided` is on: the sequential comparison is
    recomputed from the records, as the race made it. `repairs` holds the environment
    tasks' repairs and controls: those tasks have a section of their own (`env`), and
    every other section counts the bug tasks alone, the cost totals excepted.
    """
    decisions = decisions or TasksConfig()
    costing = costing or Costing(shipped_prices())
    every_attempt = attempts
    env_tasks = [task for task in taskset.tasks if task.kind == "env"]
    env_ids = {task.id for task in env_tasks}
    if env_ids:
        taskset = taskset.model_copy(
            update={"tasks": [task for task in taskset.tasks if task.id not in env_ids]}
        )
        attempts = [attempt for attempt in attempts if attempt.task not in env_ids]
    race_order = [
        task.id
        for task in taskset.tasks
        if decisions.is_raceable(task.id)
        and (oracle := oracles.oracles.get(task.id)) is not None
        and oracle.scored
    ]
    oracles, resolutions, matrices = _quarantine(ledger, oracles, resolutions, matrices)
    by_task: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        by_task.setdefault(attempt.task, []).append(attempt)
    stopping = (
        None
        if stop_level is None
        else _stopping(
            stop_level,
            race_order,
            by_task,
            resolutions,
            attempts,
            [*contestants, *examiners],
            len(contestants),
        )
    )
    decided_before = frozenset(stopping.not_started_tasks if stopping is not None else ())
    statuses = _statuses(resolutions, attempts)
    controls = resolutions.controls
    standings = {
        task.id: _standing(
            task,
            decisions,
            oracles,
            by_task.get(task.id, []),
            statuses.get(task.id, {}),
            controls.get(task.id),
            decided_before,
        )
        for task in taskset.tasks
    }
    raced = [task.id for task in taskset.tasks if standings[task.id] == (None, None)]

    def status(task: str, contestant: str) -> PatchStatus:
        return statuses.get(task, {}).get(contestant, "missing")

    raced_attempts = [a for task in raced for a in by_task.get(task, [])]
    flagged = _flagged(attempts)
    oversized = _oversized(attempts)
    agents = _agents(raced, status, raced_attempts, flagged, oversized, contestants, costing)
    cannot_apply = _cross_vendor_problem(raced, matrices)
    return Report(
        project=project,
        policy=policy,
        contestants=list(contestants),
        examiners=list(examiners),
        agents=agents,
        picking=_picking(
            policy, raced, status, statuses, verdicts, agents.rows, contestants, cannot_apply
        ),
        gate=_gate(
            policy, raced, status, verdicts, cannot_apply if policy == "cross-vendor" else None
        ),
        evidence=_evidence(raced, status, matrices, contestants, examiners),
        funnel=_funnel(taskset, standings, controls, oracles),
        cost=_cost(every_attempt, contestants, examiners, costing),
        trials=_trials(raced, statuses, contestants),
        stopping=stopping,
        quarantined=_quarantined(ledger),
        tasks=[
            _task_row(
                task,
                policy,
                standings[task.id],
                statuses,
                verdicts,
                contestants,
                controls.get(task.id),
            )
            for task in taskset.tasks
        ],
        workers=_workers(every_attempt, [*contestants, *examiners]),
        env=None
        if not env_tasks
        else build_env_section(
            tasks=[task for task in env_tasks if task.env is not None],
            repairs=repairs or RepairSet(),
            attempts=[a for a in every_attempt if a.task in env_ids],
            contestants=contestants,
            decisions=decisions,
            costing=costing,
        ),
    )


def _quarantine(
    ledger: Ledger | None,
    oracles: OracleSet,
    resolutions: ResolutionSet,
    matrices: Mapping[str, Matrix],
) -> tuple[OracleSet, ResolutionSet, dict[str, Matrix]]:
    """The records as they stand with the ledger's quarantined tests taken out."""
    if ledger is None:
        return oracles, resolutions, dict(matrices)
    oracles = OracleSet(
        oracles={
            task: oracle_without(oracle, repository_tests(ledger, task))
            for task, oracle in oracles.oracles.items()
        }
    )
    resolutions = ResolutionSet(
        patches={
            task: {
                name: resolution_without(resolution, repository_tests(ledger, task))
                for name, resolution in by_name.items()
            }
            for task, by_name in resolutions.patches.items()
        },
        controls={
            task: resolution_without(control, repository_tests(ledger, task))
            for task, control in resolutions.controls.items()
        },
    )
    kept = {
        task: matrix_without(matrix, quarantined(ledger, task)) for task, matrix in matrices.items()
    }
    return oracles, resolutions, kept


def _quarantined(ledger: Ledger | None) -> list[QuarantinedTest]:
    if ledger is None:
        return []
    found = []
    for task in sorted(ledger.tasks):
        for author, tests in sorted(ledger.quarantined(task).items()):
            for test, tally in sorted(tests.items()):
                trees = sorted(
                    tally.trees.values(), key=lambda on: (not (on.passes and on.fails), on.label)
                )
                found.append(
                    QuarantinedTest(
                        task=task,
                        author=author,
                        test=test,
                        runs=tally.runs,
                        passes=tally.passes,
                        fails=tally.fails,
                        trees=[
                            TreeEvidence(
                                tree=on.label, runs=on.runs, passes=on.passes, fails=on.fails
                            )
                            for on in trees
                        ],
                    )
                )
    return found


Standing = tuple[str | None, str | None]
"""(why the ground truth cannot score a task, why it does not count otherwise); a task
counts in the figures exactly when both are None."""


def _standing(
    task: Task,
    decisions: TasksConfig,
    oracles: OracleSet,
    attempts: Sequence[Attempt],
    statuses: Mapping[str, PatchStatus],
    control: Resolution | None,
    decided_before: frozenset[str] = frozenset(),
) -> Standing:
    """Whether a task counts, and if not why: a person's decision first, as on the Tasks
    screen, then the ground truth, then its gold control, then whether any contestant
    ran on it."""
    decision = decisions.decision(task.id)
    not_scored = _not_scored(task, oracles)
    if decision == "excluded":
        return not_scored, EXCLUDED_BY_YOU
    if decisions.require_review and decision != "accepted":
        return not_scored, AWAITING_REVIEW
    if not_scored is not None:
        return not_scored, None
    unreliable = unreliable_grader(control)
    if unreliable is not None:
        return None, unreliable
    reason = _not_raced(task, attempts, statuses)
    if reason == NOT_RUN and task.id in decided_before:
        return None, DECIDED_BEFORE
    return None, reason


def _not_raced(
    task: Task, attempts: Sequence[Attempt], statuses: Mapping[str, PatchStatus]
) -> str | None:
    """Why no contestant ran on a scored task; None when one did.

    A skipped attempt (no issue text, an agent that could not be started) gave the agent
    nothing; a quota attempt ended on a usage limit before any work was done, and
    `--retry-failed` runs it again. Either way the task says nothing about the agents.
    A patch's score other than quota shows a contestant ran, whatever the attempts say.
    """
    own = [attempt for attempt in attempts if attempt.role == "contestant"]
    if any(attempt.scorable for attempt in own) or any(s != "quota" for s in statuses.values()):
        return None
    if not task.statement:
        return NO_ISSUE_TEXT
    if any(attempt.status == "quota" for attempt in own):
        return QUOTA_ONLY
    if own and all(attempt.status == "budget" for attempt in own):
        return BUDGET_ONLY
    if own and not all((a.detail or "").startswith("no issue text") for a in own):
        return NOT_STARTED
    return NOT_RUN


def _cross_vendor_problem(raced: Sequence[str], matrices: Mapping[str, Matrix]) -> str | None:
    """Why `cross-vendor` cannot apply to this bout, or None when it can.

    The policy counts an author as independent of a patch only when their vendors differ.
    With an agent's vendor unknown it cannot tell, and with one vendor among all the
    agents no author is ever independent: either way it abstains for want of vendors,
    not of evidence, and a comparison with it would measure nothing. An examiner given
    no vendor at all (None, not `unknown`) is independent of every vendor, as the judge
    has it, so it does not stop the policy.
    """
    vendors: dict[str, str] = {}
    for task in raced:
        matrix = matrices.get(task)
        if matrix is None:
            continue
        named = [
            *((a.name, a.vendor) for a in matrix.authors if a.kind != "suite"),
            *((p.contestant, p.vendor) for p in matrix.patches),
        ]
        for name, vendor in named:
            if vendor is not None:
                vendors[author_identity(name)] = vendor.casefold()
    unknown = sorted(name for name, vendor in vendors.items() if vendor == UNKNOWN_VENDOR)
    if unknown:
        return f"vendors unknown for {', '.join(unknown)}; set `vendor` in bugbout.toml"
    known = sorted(set(vendors.values()))
    if len(known) == 1:
        return f"every agent is of one vendor ({known[0]}), and it needs two"
    return None


def _statuses(
    resolutions: ResolutionSet, attempts: Iterable[Attempt]
) -> dict[str, dict[str, PatchStatus]]:
    """task → contestant → status; a quota attempt not yet in the scores still counts as quota."""
    found: dict[str, dict[str, PatchStatus]] = {
        task: {name: resolution.status for name, resolution in by_name.items()}
        for task, by_name in resolutions.patches.items()
    }
    for attempt in attempts:
        if attempt.role == "contestant" and attempt.status == "quota":
            found.setdefault(attempt.task, {}).setdefault(attempt.contestant, "quota")
    return found


def _rate(count: float, n: int) -> Rate:
    return Rate.of(count, n)


def _spend(every: Sequence[Attempt], costing: Costing) -> Spend:
    """What the attempts spent; one stopped by a budget spent nothing and is left out."""

    def total(values: list[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known else None

    attempts = [a for a in every if a.status != "budget"]
    priced = [costing.cost(a) for a in attempts]
    costs = [cost.usd for cost in priced if cost.usd is not None]
    return Spend(
        attempts=len(attempts),
        seconds=sum(a.seconds for a in attempts),
        tokens=TokenUse(
            input=total([a.tokens.input for a in attempts]),
            output=total([a.tokens.output for a in attempts]),
            cached=total([a.tokens.cached for a in attempts]),
            reported=sum(
                any(v is not None for v in (a.tokens.input, a.tokens.output, a.tokens.cached))
                for a in attempts
            ),
        ),
        cost_usd=sum(costs) if costs else None,
        cost_reported=len(costs),
        cost_priced=sum(cost.basis == "priced" for cost in priced),
        plan=sum(cost.basis == "plan" for cost in priced),
    )


def _flagged(attempts: Iterable[Attempt]) -> list[FlaggedAttempt]:
    found = [
        FlaggedAttempt(
            task=attempt.task,
            contestant=attempt.contestant,
            role=attempt.role,
            files=[change.path for change in attempt.patch.files if change.part == "other"],
        )
        for attempt in attempts
        if any(change.part == "other" for change in attempt.patch.files)
    ]
    return sorted(found, key=lambda item: (item.task, item.role, item.contestant))


def _oversized(attempts: Iterable[Attempt]) -> list[OversizedAttempt]:
    found = [
        OversizedAttempt(
            task=attempt.task,
            contestant=attempt.contestant,
            role=attempt.role,
            detail=attempt.detail or "over a cap",
        )
        for attempt in attempts
        if attempt.status == "oversized"
    ]
    return sorted(found, key=lambda item: (item.task, item.role, item.contestant))


def _agents(
    raced: Sequence[str],
    status: Status,
    attempts: Sequence[Attempt],
    flagged: list[FlaggedAttempt],
    oversized: list[OversizedAttempt],
    contestants: Sequence[str],
    costing: Costing,
) -> AgentsSection:
    rows = []
    for name in contestants:
        found = [status(task, name) for task in raced]
        own = [a for a in attempts if a.role == "contestant" and a.contestant == name]
        too_large = {a.task for a in own if a.status == "oversized"}
        timed = [a.seconds for a in own if a.scorable]
        resolved = found.count("resolved")
        rows.append(
            AgentRow(
                name=name,
                resolved=resolved,
                fixed_but_broke=found.count("fixed-but-broke"),
                wrong_fix=found.count("wrong-fix"),
                no_fix=found.count("no-fix"),
                oversized=sum(
                    task in too_large and status(task, name) == "no-fix" for task in raced
                ),
                quota=found.count("quota"),
                missing=found.count("missing"),
                resolved_rate=_rate(resolved, sum(s in SCORED for s in found)),
                median_seconds=metrics.median(timed),
                timed=len(timed),
                spend=_spend(own, costing),
                flagged=sum(
                    item.role == "contestant" and author_identity(item.contestant) == name
                    for item in flagged
                ),
            )
        )
    return AgentsSection(raced_tasks=len(raced), rows=rows, flagged=flagged, oversized=oversized)


def _picked(
    task: str, policy: Policy, verdicts: Mapping[str, Mapping[Policy, Verdict]]
) -> Verdict | None:
    return verdicts.get(task, {}).get(policy)


def _picking(
    policy: Policy,
    raced: Sequence[str],
    status: Status,
    statuses: Mapping[str, Mapping[str, PatchStatus]],
    verdicts: Mapping[str, Mapping[Policy, Verdict]],
    rows: Sequence[AgentRow],
    contestants: Sequence[str],
    cross_vendor: str | None,
) -> PickingSection:
    """`cross_vendor` is why that policy cannot apply, if it cannot.

    With one trial per task the judge and the best agent are right or wrong on each
    task, compared by the exact McNemar test. With repeated trials an agent's result on
    a task is its resolved rate there, and the comparison is paired on those rates
    (`_versus_rates`).
    """
    n = len(raced)
    rates = {
        name: {task: _task_rate(statuses.get(task, {}), name) for task in raced}
        for name in contestants
    }
    repeated = any(
        trial_number(name) > 1 and agent_of(name) in rates
        for task in raced
        for name in statuses.get(task, {})
    )
    best_name: str | None
    if repeated:
        best_name = min(rates, key=lambda name: (-sum(rates[name].values()), name), default=None)
    else:
        best_row = min(rows, key=lambda row: (-row.resolved, row.name)) if rows else None
        best_name = None if best_row is None else best_row.name
    best_right = {
        task: best_name is not None and status(task, best_name) == "resolved" for task in raced
    }
    oracle_right = {
        task: any(value == "resolved" for value in statuses.get(task, {}).values())
        for task in raced
    }
    sides = []
    for each in POLICIES:
        picks = [_picked(task, each, verdicts) for task in raced]
        right = {
            task: verdict is not None
            and verdict.pick is not None
            and status(task, verdict.pick) == "resolved"
            for task, verdict in zip(raced, picks, strict=True)
        }
        abstained = sum(verdict is None or verdict.pick is None for verdict in picks)
        count = sum(right.values())
        cannot_apply = cross_vendor if each == "cross-vendor" else None
        versus = None
        gap = None
        if best_name is not None and cannot_apply is None:
            gap = _gap_closed(
                best_name,
                [
                    (Fraction(int(right[t])), rates[best_name][t], Fraction(int(oracle_right[t])))
                    for t in raced
                ],
            )
        if best_name is not None and cannot_apply is None and repeated:
            versus = _versus_rates(best_name, [(right[t], rates[best_name][t]) for t in raced])
        elif best_name is not None and cannot_apply is None:
            judge_only = sum(right[task] and not best_right[task] for task in raced)
            agent_only = sum(best_right[task] and not right[task] for task in raced)
            versus = Comparison(
                agent=best_name,
                judge_only=judge_only,
                agent_only=agent_only,
                p_value=metrics.mcnemar_exact(judge_only, agent_only),
            )
        sides.append(
            PolicyPicks(
                policy=each,
                right=count,
                wrong=n - count - abstained,
                abstained=abstained,
                rate=_rate(count, n),
                versus_best=versus,
                gap_closed=gap,
                cannot_apply=cannot_apply,
            )
        )
    chance = Fraction(0)
    for task in raced:
        if contestants:
            here = sum((rates[name][task] for name in contestants), Fraction(0))
            chance += here / len(contestants)
    oracle = sum(oracle_right.values())
    best_rate = None if best_name is None else _rate(float(sum(rates[best_name].values())), n)
    configured = next(side for side in sides if side.policy == policy)
    return PickingSection(
        policy=policy,
        raced_tasks=n,
        policies=sides,
        best_agent=best_name,
        best_agent_rate=best_rate,
        random_agent=_rate(float(chance), n),
        oracle=_rate(oracle, n),
        summary=_summary(configured, best_rate),
    )


def _gap_closed(best: str, tasks: Sequence[tuple[Fraction, Fraction, Fraction]]) -> GapClosed:
    """The share of the gap from `best` to the oracle that the judge closes, from each
    raced task's (judge right, `best`'s resolved rate, any patch right), with why there
    is none when there is no gap."""
    found = metrics.gap_closed(tasks)
    no_gap = None
    if found.value is None:
        no_gap = (
            "no patch resolved any raced task"
            if not any(oracle for _, _, oracle in tasks)
            else f"{best} resolved every task that any patch resolved"
        )
    return GapClosed(
        share=found.value,
        low=None if found.interval is None else found.interval.low,
        high=None if found.interval is None else found.interval.high,
        closed=float(sum((judge - rate for judge, rate, _ in tasks), Fraction(0))),
        gap=float(sum((oracle - rate for _, rate, oracle in tasks), Fraction(0))),
        resamples_without_gap=found.undefined,
        no_gap=no_gap,
    )


def _task_rate(found: Mapping[str, PatchStatus], agent: str) -> Fraction:
    """`agent`'s resolved share of its trials recorded on a task (a quota is not right,
    as with one trial); 0 when none is recorded, as a missing patch is not right."""
    trials = [value for name, value in found.items() if agent_of(name) == agent]
    return Fraction(trials.count("resolved"), len(trials)) if trials else Fraction(0)


def _versus_rates(agent: str, pairs: Sequence[tuple[bool, Fraction]]) -> Comparison:
    """The judge against an agent with repeated trials, task by task: the judge's
    result (1 or 0) minus the agent's resolved rate, their mean with a paired bootstrap
    interval over tasks, and the exact sign-flip test of a zero mean difference."""
    differences = [Fraction(int(right)) - rate for right, rate in pairs]
    interval = metrics.bootstrap_interval([float(d) for d in differences], metrics.mean)
    return Comparison(
        agent=agent,
        judge_only=sum(d > 0 for d in differences),
        agent_only=sum(d < 0 for d in differences),
        p_value=metrics.sign_flip_exact(differences),
        test="sign-flip",
        difference=float(sum(differences) / len(differences)) if differences else None,
        low=None if interval is None else interval.low,
        high=None if interval is None else interval.high,
    )


def _summary(picks: PolicyPicks, best_rate: Rate | None) -> str:
    """The configured policy against the best single agent, so a reader need not do the sums."""
    n = picks.rate.n
    if n == 0:
        return "No task has been scored and raced yet, so there is nothing to compare."
    if picks.cannot_apply is not None:
        return (
            f"The {picks.policy} policy cannot apply to this bout: {picks.cannot_apply}. "
            "Its abstentions measure nothing, so its picks are not compared with the agents'."
        )
    rate = picks.rate
    judge = f"Under the {picks.policy} policy the judge resolved {picks.right} of {n}"
    if rate.share is not None and rate.low is not None and rate.high is not None:
        judge += f" ({rate.share * 100:.0f}%, 95% CI {rate.low * 100:.0f}–{rate.high * 100:.0f}%)"
    versus = picks.versus_best
    if versus is None or best_rate is None:
        return judge + "; there is no contestant to compare it with."
    if versus.test == "sign-flip":
        return _summary_of_rates(judge, versus, best_rate)
    difference = versus.judge_only - versus.agent_only
    ahead = "the judge" if difference > 0 else versus.agent
    gap = (
        "no difference"
        if difference == 0
        else f"a difference of {look.plural(abs(difference), 'bug')} in {ahead}'s favour"
    )
    meaning = (
        "not evidence either is better"
        if versus.p_value >= 0.05
        else f"evidence that {ahead} does better on these bugs"
    )
    return (
        f"{judge}, the best single agent ({versus.agent}) {best_rate.counted()}; "
        f"{gap}, p = {format_p(versus.p_value)}: {meaning}."
    )


def _summary_of_rates(judge: str, versus: Comparison, best_rate: Rate) -> str:
    """The sentence of `_summary` when the agents ran repeated trials."""
    difference = versus.difference or 0.0
    ahead = "the judge" if difference > 0 else versus.agent
    interval = ""
    if versus.low is not None and versus.high is not None:
        interval = f", 95% CI {versus.low:+.2f} to {versus.high:+.2f}"
    meaning = (
        "not evidence either is better"
        if versus.p_value >= 0.05
        else f"evidence that {ahead} does better on these bugs"
    )
    return (
        f"{judge}, the best single agent ({versus.agent}) {best_rate.counted()} per trial "
        f"on average; the judge's result minus its resolved rate, task by task, averages "
        f"{difference:+.2f}{interval}, p = {format_p(versus.p_value)} by an exact "
        f"sign-flip test: {meaning}."
    )


def _gate(
    policy: Policy,
    raced: Sequence[str],
    status: Status,
    verdicts: Mapping[str, Mapping[Policy, Verdict]],
    cannot_apply: str | None,
) -> GateSection:
    right = wrong = approved_right = approved_wrong = 0
    for task in raced:
        verdict = _picked(task, policy, verdicts)
        for assessment in [] if verdict is None else verdict.assessments:
            found = status(task, assessment.patch)
            if found in RIGHT:
                right += 1
                approved_right += assessment.approved
            elif found in WRONG:
                wrong += 1
                approved_wrong += assessment.approved
    approved = approved_right + approved_wrong
    return GateSection(
        policy=policy,
        patches=right + wrong,
        right=right,
        wrong=wrong,
        approved=approved,
        precision=_rate(approved_right, approved),
        wrong_stopped=_rate(wrong - approved_wrong, wrong),
        right_stopped=_rate(right - approved_right, right),
        approve_all=_rate(right, right + wrong),
        cannot_apply=cannot_apply,
    )


def _author_tests(matrix: Matrix) -> dict[tuple[str, AuthorKind], list[tuple[str, str]]]:
    """(author, kind) → its (matrix author name, test) pairs; trials and suite parts pooled.

    A test is the author's when the author lists it or it ran on the unfixed code.
    """
    base = matrix.trees.get("base")
    found: dict[tuple[str, AuthorKind], list[tuple[str, str]]] = {}
    for author in matrix.authors:
        identity = SUITE if author.kind == "suite" else author_identity(author.name)
        ran = [] if base is None else list(base.cells.get(author.name, {}))
        tests = list(dict.fromkeys([*author.tests, *ran]))
        found.setdefault((identity, author.kind), []).extend((author.name, t) for t in tests)
    return {key: tests for key, tests in found.items() if tests}


def _evidence(
    raced: Sequence[str],
    status: Status,
    matrices: Mapping[str, Matrix],
    contestants: Sequence[str],
    examiners: Sequence[str],
) -> EvidenceSection:
    """AUC per author over the scored patches with a source change.

    A patch's score for an author is the share of the author's tests that pass on the
    patch's tree. A tree whose run failed as a whole passes none of them, as the judge
    cannot support it either.
    """
    classes: dict[tuple[str, AuthorKind], tuple[list[float], list[float]]] = {}
    for task in raced:
        matrix = matrices.get(task)
        if matrix is None:
            continue
        tests = _author_tests(matrix)
        for patch in matrix.patches:
            found = status(task, patch.contestant)
            if found not in RIGHT | WRONG:
                continue
            tree = matrix.trees.get(patch.contestant)
            cells = {} if tree is None or tree.error is not None else tree.cells
            for (identity, kind), pairs in tests.items():
                if kind != "suite" and identity == author_identity(patch.contestant):
                    continue
                passed = 0
                for author, test in pairs:
                    cell = cells.get(author, {}).get(test)
                    passed += cell is not None and cell.outcome == "passed"
                positives, negatives = classes.setdefault((identity, kind), ([], []))
                share = float(Fraction(passed, len(pairs)))
                (positives if found in RIGHT else negatives).append(share)
    configured: list[tuple[str, AuthorKind]] = [
        *((name, "contestant") for name in contestants),
        *((name, "examiner") for name in examiners),
    ]
    suite: tuple[str, AuthorKind] = (SUITE, "suite")
    order = [
        *configured,
        *sorted(key for key in classes if key not in configured and key != suite),
    ]
    if suite in classes:
        order.append(suite)
    rows = []
    for identity, kind in order:
        positives, negatives = classes.get((identity, kind), ([], []))
        rows.append(
            AuthorEvidence(
                author=identity,
                kind=kind,
                auc=metrics.auc(positives, negatives),
                positives=len(positives),
                negatives=len(negatives),
            )
        )
    return EvidenceSection(rows=rows)


def _not_scored(task: Task, oracles: OracleSet) -> str | None:
    oracle = oracles.oracles.get(task.id)
    if oracle is None:
        return NO_ORACLE
    if oracle.scored:
        return None
    return oracle.reason or "the ground truth marks it as not scored"


def _funnel(
    taskset: TaskSet,
    standings: Mapping[str, Standing],
    controls: Mapping[str, Resolution],
    oracles: OracleSet,
) -> FunnelSection:
    """Each kept task falls out at its first step: set aside, not scored, grader
    unreliable, not raced. The gold-control share counts over the scored tasks that
    have a control, whatever happens to them after. Beside the steps, the tasks that went
    on to the ground truth by the rung of their environment."""
    rungs: dict[str, list[str]] = {rung: [] for rung in RUNGS}
    set_aside: dict[str, list[str]] = {}
    not_scored: dict[str, list[str]] = {}
    unreliable: dict[str, list[str]] = {}
    not_raced: dict[str, list[str]] = {}
    controlled = resolved = 0
    for task in taskset.tasks:
        unscored, uncounted = standings[task.id]
        if uncounted in (EXCLUDED_BY_YOU, AWAITING_REVIEW):
            set_aside.setdefault(uncounted, []).append(task.id)
            continue
        oracle = oracles.oracles.get(task.id)
        if oracle is not None and oracle.environment is not None:
            rungs[oracle.environment.rung].append(task.id)
        if unscored is not None:
            not_scored.setdefault(unscored, []).append(task.id)
            continue
        if (control := controls.get(task.id)) is not None:
            controlled += 1
            resolved += control.status == "resolved"
        if uncounted in UNRELIABLE:
            unreliable.setdefault(uncounted, []).append(task.id)
        elif uncounted is not None:
            not_raced.setdefault(uncounted, []).append(task.id)
    scored = len(taskset.tasks) - _total(set_aside) - _total(not_scored)
    return FunnelSection(
        examined=taskset.examined,
        kept=len(taskset.tasks),
        excluded=[
            ExclusionCount(reason=Reason(reason), count=count)
            for reason, count in taskset.funnel().items()
        ],
        set_aside=_left_out(set_aside),
        scored=scored,
        not_scored=[
            NotScoredCount(reason=reason, count=len(tasks), tasks=tasks)
            for reason, tasks in not_scored.items()
        ],
        unreliable=_left_out(unreliable),
        gold_controls=_rate(resolved, controlled) if controlled else None,
        raced=scored - _total(unreliable) - _total(not_raced),
        not_raced=_left_out(not_raced),
        environments=[
            RungCount(rung=rung, count=len(tasks), tasks=tasks)
            for rung, tasks in rungs.items()
            if tasks
        ],
    )


def _total(groups: Mapping[str, list[str]]) -> int:
    return sum(len(tasks) for tasks in groups.values())


def _left_out(groups: Mapping[str, list[str]]) -> list[LeftOutCount]:
    return [
        LeftOutCount(reason=reason, count=len(tasks), tasks=tasks)
        for reason, tasks in groups.items()
    ]


def _cost(
    attempts: Sequence[Attempt],
    contestants: Sequence[str],
    examiners: Sequence[str],
    costing: Costing,
) -> CostSection:
    groups: dict[tuple[Role, str], list[Attempt]] = {}
    for attempt in attempts:
        groups.setdefault((attempt.role, author_identity(attempt.contestant)), []).append(attempt)
    configured: list[tuple[Role, str]] = [
        *(("contestant", name) for name in contestants),
        *(("examiner", name) for name in examiners),
    ]
    order = [*configured, *sorted(key for key in groups if key not in configured)]
    prices = costing.prices
    return CostSection(
        total=_spend(attempts, costing),
        by_agent=[
            AgentSpend(name=name, role=role, spend=_spend(groups.get((role, name), []), costing))
            for role, name in order
        ],
        budget_stops=[
            BudgetStop(name=name, role=role, attempts=len(stopped), reason=stopped[-1].detail or "")
            for role, name in order
            if (stopped := [a for a in groups.get((role, name), []) if a.status == "budget"])
        ],
        prices_checked=prices.checked,
        prices_sources=dict(prices.sources),
        prices_overridden=sorted(prices.overridden),
    )


def _workers(attempts: Sequence[Attempt], configured: Sequence[str]) -> WorkersSection | None:
    """Where the attempts whose agent started ran, per place and agent; None when none
    ran on a cluster's worker, so a bout on one machine reports as it always did."""
    ran = [a for a in attempts if a.status not in ("skipped", "budget")]
    if all(attempt.worker is None for attempt in ran):
        return None
    counts: dict[str | None, Counter[str]] = {}
    for attempt in ran:
        counts.setdefault(attempt.worker, Counter())[agent_of(attempt.contestant)] += 1
    every = {agent for counted in counts.values() for agent in counted}
    agents = [*(a for a in configured if a in every), *sorted(every - set(configured))]
    places = sorted((w for w in counts if w is not None), key=look.task_order)
    return WorkersSection(
        rows=[
            WorkerRow(
                worker=worker,
                attempts=sum(counts[worker].values()),
                agents={agent: counts[worker][agent] for agent in agents if counts[worker][agent]},
            )
            for worker in [*places, *([None] if None in counts else [])]
        ]
    )


def _stopping(
    level: float,
    order: Sequence[str],
    by_task: Mapping[str, Sequence[Attempt]],
    resolutions: ResolutionSet,
    attempts: Sequence[Attempt],
    agents: Sequence[str],
    compared: int,
) -> StoppingSection | None:
    """The sequential comparison of the first `compared` of `agents` (the contestants)
    over the race's `order`, as the stored records make it, and what a decided bout did
    not start; None with fewer than two contestants."""
    contestants = first_trials(agents[:compared])
    if len(contestants) < 2:
        return None
    recorded = {
        task
        for task in order
        if all(
            any(a.contestant == name and a.role == "contestant" for a in by_task.get(task, ()))
            for name in contestants
        )
    }
    looks = outcomes_so_far(order, recorded, contestants, resolutions)
    decision = decide(contestants, looks, level=Fraction(str(level)), horizon=len(order))
    after = decision.decided_after
    untouched = [task for task in order if not by_task.get(task)] if after is not None else []
    return StoppingSection(
        level=level,
        pair_level=float(decision.share),
        nominal=float(decision.nominal),
        tasks=len(order),
        looked_at=decision.looks,
        decided_after=order[after - 1] if after is not None else None,
        decided_tasks=after,
        pairs=[
            DecidedPair(
                ahead=pair.first,
                behind=pair.second,
                ahead_only=pair.wins,
                behind_only=pair.losses,
                p_value=float(pair.p_value),
                after_task=order[pair.look - 1] if pair.look is not None else None,
                after_tasks=pair.look,
            )
            for pair in decision.pairs
        ],
        not_started_tasks=untouched,
        not_started=_not_started(len(untouched), attempts, agents) if untouched else [],
    )


def _not_started(
    tasks: int, attempts: Sequence[Attempt], agents: Sequence[str]
) -> list[NotStarted]:
    """Per agent, the attempts `tasks` untouched tasks would have taken (one per task
    and trial), with tokens estimated from its stored attempts' mean."""
    found = []
    for agent in agents:
        own = [a for a in attempts if author_identity(a.contestant) == agent]
        entrants = len({a.contestant for a in own}) or 1
        reported = [
            (a.tokens.input or 0) + (a.tokens.output or 0)
            for a in own
            if a.tokens.input is not None or a.tokens.output is not None
        ]
        count = tasks * entrants
        tokens = round(sum(reported) / len(reported) * count) if reported else None
        found.append(NotStarted(agent=agent, attempts=count, tokens=tokens))
    return found


def _scored_trials(found: Mapping[str, PatchStatus], agent: str) -> list[PatchStatus]:
    """`agent`'s scored trials on one task, in trial order: quota and missing say
    nothing of it, so they are not samples."""
    names = sorted((n for n in found if agent_of(n) == agent), key=lambda n: (trial_number(n), n))
    return [found[name] for name in names if found[name] in SCORED]


def _per_task(
    runs: Sequence[Sequence[PatchStatus]], k: int, estimator: Callable[[int, int, int], float]
) -> PassAtK:
    """A per-task estimator at k, averaged over the tasks with at least k scored trials
    (a task with fewer has no value, rather than a guessed one), with its interval."""
    counted = [(len(results), results.count("resolved")) for results in runs]
    return PassAtK.of(k, metrics.at_k(counted, k, estimator))


def _share_of_trials(pairs: Sequence[tuple[int, int]]) -> float:
    return sum(c for c, _ in pairs) / sum(n for _, n in pairs)


def _trials(
    raced: Sequence[str],
    statuses: Mapping[str, Mapping[str, PatchStatus]],
    contestants: Sequence[str],
) -> TrialsSection | None:
    """pass@k, pass^k, the resolved share over all trials and consistency@k for every
    contestant with more than one scored trial on some task. Every trial stored counts,
    as every stored patch is in the matrices the judge decides from."""
    rows = []
    for agent in contestants:
        runs = [_scored_trials(statuses.get(task, {}), agent) for task in raced]
        most = max((len(results) for results in runs), default=0)
        if most < 2:
            continue
        pairs = [(results.count("resolved"), len(results)) for results in runs if results]
        share = metrics.bootstrap_interval(pairs, _share_of_trials)
        agree = [
            float(all(r == results[0] for r in results[:most]))
            for results in runs
            if len(results) >= most
        ]
        consistency = metrics.bootstrap_interval(agree, metrics.mean)
        resolved, scored = (sum(column) for column in zip(*pairs, strict=True))
        rows.append(
            TrialRow(
                agent=agent,
                trials=most,
                resolved_trials=resolved,
                scored_trials=scored,
                resolved_share=resolved / scored,
                resolved_low=None if share is None else share.low,
                resolved_high=None if share is None else share.high,
                pass_at=[_per_task(runs, k, metrics.pass_at_k) for k in range(1, most + 1)],
                pass_hat=[_per_task(runs, k, metrics.pass_hat_k) for k in range(1, most + 1)],
                consistency=metrics.consistency_at_k(runs, most),
                consistency_tasks=len(agree),
                consistency_low=None if consistency is None else consistency.low,
                consistency_high=None if consistency is None else consistency.high,
            )
        )
    return TrialsSection(rows=rows) if rows else None


def _patch_order(names: Iterable[str], contestants: Sequence[str]) -> list[str]:
    """Configured contestants in config order, each followed by its trials, then the rest."""
    position = {name: index for index, name in enumerate(contestants)}

    def key(name: str) -> tuple[int, int, str]:
        return (
            position.get(author_identity(name), len(position)),
            trial_number(name),
            name,
        )

    return sorted(set(names), key=key)


def _task_row(
    task: Task,
    policy: Policy,
    standing: Standing,
    statuses: Mapping[str, Mapping[str, PatchStatus]],
    verdicts: Mapping[str, Mapping[Policy, Verdict]],
    contestants: Sequence[str],
    control: Resolution | None,
) -> TaskRow:
    reason, uncounted = standing
    counted = reason is None and uncounted is None
    found = statuses.get(task.id, {})
    picks = []
    for each in POLICIES:
        verdict = _picked(task.id, each, verdicts)
        if verdict is None:
            picks.append(PolicyPick(policy=each, abstained=NO_VERDICT))
            continue
        right = None
        if counted and verdict.pick is not None:
            right = found.get(verdict.pick) == "resolved"
        picks.append(
            PolicyPick(
                policy=each,
                pick=verdict.pick,
                right=right,
                abstained=verdict.abstained,
                decided_by=verdict.decided_by,
            )
        )
    configured = _picked(task.id, policy, verdicts)
    gate = {} if configured is None else {a.patch: a.approved for a in configured.assessments}
    names = _patch_order([*contestants, *found, *gate], contestants)
    return TaskRow(
        task=task.id,
        title=task.title,
        scored=reason is None,
        not_scored=reason,
        raced=counted,
        not_raced=uncounted,
        picks=picks,
        patches=[
            PatchRow(contestant=name, status=found.get(name, "missing"), approved=gate.get(name))
            for name in names
        ],
        control=None if control is None else control.status,
    )
