"""The report as data: every figure a renderer shows, with what it was counted from.

Renderers only format; every number is decided in `build.py`. A rate always travels with
its count, its denominator and its 95% interval, so no renderer can show a bare
percentage. The JSON form of this model is the machine-readable report; its schema,
generated from the field docstrings below, is published at `docs/report.schema.json`.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.config import Policy
from bugbout_tui.core.env_models import EnvDefect, RepairStatus
from bugbout_tui.core.models import AuthorKind, Reason, Record, ResolutionStatus, Rung
from bugbout_tui.report import metrics
from bugbout_tui.rules.env_judge import EnvVerdict

PatchStatus = ResolutionStatus | Literal["missing"]
"""A patch's hidden-test status; `missing` when no score is recorded for it yet."""

Role = Literal["contestant", "examiner"]

REPORT_SCHEMA_VERSION = 6

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The dialect pydantic generates, named so a validator need not guess."""

PATHS_LISTED = 10
"""Paths a renderer names for one flagged attempt; the rest it counts."""

EXCLUSION_LABELS: dict[Reason, str] = {
    Reason.NOT_A_FIX: "title does not read like a fix",
    Reason.NOT_A_BUG: "the issue its title closes is no bug",
    Reason.ISSUE_UNREADABLE: "the issue deciding it could not be read",
    Reason.NO_ISSUE: "names no issue or pull request",
    Reason.TOO_MANY_SOURCE_FILES: "changes too many source files",
    Reason.NO_SOURCE_CHANGE: "changes no source file",
    Reason.NO_TEST_ADDED: "adds no test",
    Reason.NO_PROBLEM_TEXT: "its text describes only the change made",
    Reason.NOT_ENV_ONLY: "changes files besides the environment files",
    Reason.ENV_MERGE: "environment files alone, merged from a branch",
    Reason.ENV_REVERT: "environment files alone, undoing an earlier change",
    Reason.ENV_VERSION_ONLY: "environment files alone, only the project's own version",
    Reason.ENV_LOCK_ONLY: "environment files alone, only lock files, which no install reads",
    Reason.ENV_NOT_DEPENDENCIES: "environment files alone, none of what they install",
    Reason.DUPLICATE_ISSUE: "an older fix of an issue that already has a task",
    Reason.BEFORE_SINCE: "before the since date",
    Reason.OVER_LIMIT: "beyond the task limit",
}
"""Why a change was left out, in words; the stored vocabulary stays fixed."""

EXCLUDED_BY_YOU = "excluded by you"
AWAITING_REVIEW = "awaiting your review"
"""Not accepted while `[tasks] require-review` is on."""
NO_ISSUE_TEXT = "no issue text"
NOT_STARTED = "no contestant could be started"
QUOTA_ONLY = "every contestant's attempt hit a usage limit"
BUDGET_ONLY = "every contestant's budget was reached before it"
NOT_RUN = "no contestant has run on it yet"
DECIDED_BEFORE = "the bout was decided before it (stop-when-decided)"


class _Part(BaseModel):
    """Every part of the report: closed to unknown fields, documented in the schema."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Rate(_Part):
    """`count` of `n`, as a share with its 95% Wilson interval.

    `share`, `low` and `high` are None when `n` is 0: there is nothing to divide by, and
    the renderers say "n/a".
    """

    count: float
    """How many; fractional only for an expected count (a random agent's score)."""
    n: int
    """Out of how many."""
    share: float | None = None
    """count / n."""
    low: float | None = None
    """Lower end of the 95% Wilson interval."""
    high: float | None = None
    """Upper end of the 95% Wilson interval."""

    @classmethod
    def of(cls, count: float, n: int) -> Rate:
        """`count` of `n` with its share and Wilson interval (none when `n` is 0)."""
        interval = metrics.wilson(count, n)
        if interval is None:
            return cls(count=count, n=n)
        return cls(count=count, n=n, share=count / n, low=interval.low, high=interval.high)

    def counted(self) -> str:
        """`21 of 30`; an expected count keeps one decimal (`1.3 of 3`)."""
        return f"{_number(self.count)} of {self.n}"

    def percent(self) -> str:
        """`70% (52–83%)`: the share with its interval, or `n/a` with nothing to divide."""
        if self.share is None or self.low is None or self.high is None:
            return "n/a"
        return f"{_pct(self.share)} ({_pct(self.low, sign=False)}–{_pct(self.high)})"


class TokenUse(_Part):
    """Token sums over the attempts that reported each kind; None where none did."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None
    reported: int = 0
    """Attempts that reported any token count: the sums cover only these."""


class Spend(_Part):
    """What a set of attempts cost, as far as the agents reported it."""

    attempts: int = 0
    seconds: float = 0.0
    """Wall-clock time of all the attempts together."""
    tokens: TokenUse = Field(default_factory=TokenUse)
    cost_usd: float | None = None
    """Sum of the known costs; None when no attempt's cost is known."""
    cost_reported: int = 0
    """Attempts whose cost is known (reported by the agent, or its tokens at its model's
    price): `cost_usd` sums only these."""
    cost_priced: int = 0
    """Of those, attempts whose cost is their tokens at their model's list price."""
    plan: int = 0
    """Attempts of agents on a subscription plan: tokens only, no price."""

    def tokens_shown(self) -> str:
        """`300 / 30 / 50` (in / out / cached), with how many attempts when not all said."""
        use = self.tokens
        if use.reported == 0:
            return "n/a"
        parts = " / ".join(
            "–" if v is None else f"{v:,}" for v in (use.input, use.output, use.cached)
        )
        return parts + self._coverage(use.reported)

    def cost_shown(self) -> str:
        """`$1.25`, with how many attempts when not all have a known cost; `plan` for
        attempts on a subscription plan, which have no price."""
        billed = self.attempts - self.plan
        if self.plan and not billed:
            return "plan"
        shown = "n/a" if self.cost_usd is None else f"${self.cost_usd:,.2f}"
        if self.cost_usd is not None and self.cost_reported != billed:
            shown += f" ({self.cost_reported} of {billed})"
        return shown + (" + plan" if self.plan else "")

    def _coverage(self, reported: int) -> str:
        return "" if reported == self.attempts else f" ({reported} of {self.attempts})"


class FlaggedAttempt(_Part):
    """An attempt that changed files outside the source and the tests.

    Those files (a root `conftest.py`, packaging, settings) are never applied, but an
    attempt to change how the tests run is worth seeing.
    """

    task: str
    contestant: str
    """The name the attempt ran under, trial suffix included."""
    role: Role
    files: list[str]
    """The changed paths outside the source and the tests."""


class OversizedAttempt(_Part):
    """An attempt whose patch passed a cap on its files or bytes, so it was not kept.

    The agent finished, but what it changed is not stored and cannot be applied: the
    attempt is scored as no fix, takes no part in cross-examination and is not retried.
    """

    task: str
    contestant: str
    """The name the attempt ran under, trial suffix included."""
    role: Role
    detail: str
    """Which cap the patch passed, and by how much."""


class AgentRow(_Part):
    """One contestant (its first trial) against the hidden tests, over the raced tasks."""

    name: str
    resolved: int = 0
    fixed_but_broke: int = 0
    wrong_fix: int = 0
    no_fix: int = 0
    oversized: int = 0
    """Of its no-fix patches, those too large to keep (attempts recorded as `oversized`)."""
    quota: int = 0
    missing: int = 0
    """Raced tasks with no score recorded for this contestant (not run, or not scored yet)."""
    resolved_rate: Rate
    """Resolved over its scored attempts: quota and missing ones are not held against it."""
    median_seconds: float | None = None
    """Median wall-clock time of its attempts on raced tasks, quota attempts excepted."""
    timed: int = 0
    """Attempts behind the median."""
    spend: Spend
    """Its attempts on raced tasks, quota attempts included."""
    flagged: int = 0
    """Its attempts flagged for `other` files, trials and uncounted tasks included."""


class AgentsSection(_Part):
    """Each contestant's patches against the maintainers' hidden tests."""

    raced_tasks: int
    """The tasks every figure counts over: see `FunnelSection.raced`."""
    rows: list[AgentRow]
    """One per configured contestant, in config order."""
    flagged: list[FlaggedAttempt] = Field(default_factory=list)
    """Every attempt that changed files outside the source and the tests."""
    oversized: list[OversizedAttempt] = Field(default_factory=list)
    """Every attempt whose patch was too large to keep, trials and unscored tasks included."""


class Comparison(_Part):
    """A policy's picks against the best single agent, bug by bug.

    With one trial per task it is the exact McNemar test on right and wrong. With
    repeated trials the agent's result on a task is its resolved rate there, and the
    comparison is paired on those rates: `difference` with its interval, and an exact
    sign-flip test.
    """

    agent: str
    judge_only: int
    """Raced tasks where only the judge's pick was right; with repeated trials, where
    the judge did better than the agent's resolved rate there."""
    agent_only: int
    """Raced tasks where only the agent was right (an abstention is not right); with
    repeated trials, where the agent's rate beat the judge's result there."""
    p_value: float
    """Exact two-sided McNemar test on the discordant tasks; with repeated trials, the
    exact two-sided sign-flip test on the per-task differences."""
    test: Literal["mcnemar", "sign-flip"] = "mcnemar"
    """Which test `p_value` comes from."""
    difference: float | None = None
    """With repeated trials: the mean over raced tasks of the judge's result (1 or 0)
    minus the agent's resolved rate on the task; None with one trial."""
    low: float | None = None
    """Lower end of the difference's 95% paired bootstrap interval over tasks."""
    high: float | None = None
    """Upper end of the difference's 95% paired bootstrap interval over tasks."""


class GapClosed(_Part):
    """How much of the gap from the best single agent to the oracle a policy's picks
    close: (judge right − best agent right) / (oracle − best agent right), over the
    raced tasks (see `metrics.gap_closed`).

    1 is the oracle's score, 0 the best agent's; negative when the judge did worse than
    always taking that agent's patch. Never above 1.
    """

    share: float | None = None
    """None when there is no gap to close (`no_gap` says why)."""
    low: float | None = None
    """Lower end of the 95% percentile bootstrap interval over tasks: resampled whole,
    the judge's, the best agent's and the oracle's results together, the best agent
    fixed as the one chosen on the whole bout. None with no share or below two tasks."""
    high: float | None = None
    """Upper end of that interval."""
    closed: float
    """The judge's right picks minus the best agent's resolved tasks (expected, with
    repeated trials): the numerator."""
    gap: float
    """The oracle's tasks minus the best agent's: the denominator."""
    resamples_without_gap: int = 0
    """Bootstrap resamples that drew no task with a gap, where the share is undefined:
    left out, the interval is taken among the others."""
    no_gap: str | None = None
    """Why there is no gap, in words (`careful resolved every task that any patch
    resolved`, `no patch resolved any raced task`); None when there is one."""

    def shown(self) -> str:
        """`57% (20 to 100%)`, `-50% (-200 to 100%)`, the share alone below two tasks, or
        `no gap`: a share that can be negative reads its interval with `to`."""
        if self.share is None:
            return "no gap"
        if self.low is None or self.high is None:
            return _pct(self.share)
        return f"{_pct(self.share)} ({_pct(self.low, sign=False)} to {_pct(self.high)})"


class PolicyPicks(_Part):
    """One policy's picks over the raced tasks."""

    policy: Policy
    right: int
    """Picks that resolved their task."""
    wrong: int
    """Picks that did not (or have no score)."""
    abstained: int
    """Tasks with no pick, a task with no verdict included."""
    rate: Rate
    """Right picks over every raced task: an abstention counts as not right."""
    versus_best: Comparison | None = None
    """None when there is no contestant to compare with, or the policy cannot apply."""
    gap_closed: GapClosed | None = None
    """The share of the gap from the best single agent to the oracle these picks close;
    None when `versus_best` is (no contestant, or the policy cannot apply)."""
    cannot_apply: str | None = None
    """Why the policy cannot apply to this bout: `cross-vendor` with an agent's vendor
    unknown (`vendors unknown for a, b; set ...`) or with one vendor only. Its counts are
    kept, but they measure nothing: renderers show this instead of its share and its
    comparison."""


class PickingSection(_Part):
    """The judge's picks against the baselines a reader would choose instead."""

    policy: Policy
    """The configured policy, whose figures the summary states."""
    raced_tasks: int
    """The tasks every figure counts over: see `FunnelSection.raced`."""
    policies: list[PolicyPicks]
    """Every policy, in the order the judge lists them."""
    best_agent: str | None = None
    """The contestant with the most resolved tasks (ties broken by name); with repeated
    trials, the one with the highest mean per-task resolved rate."""
    best_agent_rate: Rate | None = None
    """Its resolved tasks over every raced task (a quota counts as not right); with
    repeated trials, the sum of its per-task resolved rates: the tasks one trial of it
    is expected to resolve."""
    random_agent: Rate
    """Expected right tasks when a contestant (and, with repeated trials, one of its
    trials) is drawn at random for each task."""
    oracle: Rate
    """Tasks where any patch was right: the best any pick could do."""
    summary: str
    """The configured policy against the best single agent, in one plain sentence."""


def gap_sentence(section: PickingSection) -> str | None:
    """The configured policy's share of the gap to the oracle, in one sentence; None
    when it has none to report (no contestant, or the policy cannot apply)."""
    picks = next(side for side in section.policies if side.policy == section.policy)
    gap = picks.gap_closed
    if gap is None or section.best_agent_rate is None:
        return None
    if gap.share is None:
        return f"No gap to the oracle to close: {gap.no_gap}."
    sentence = (
        f"Gap to the oracle closed: under {section.policy} the judge closed {gap.shown()} of "
        f"the gap from the best single agent ({section.best_agent}, "
        f"{section.best_agent_rate.counted()}) to the oracle ({section.oracle.counted()})"
    )
    if gap.share < 0:
        sentence += f", doing worse than always taking {section.best_agent}'s patch"
    if gap.resamples_without_gap:
        sentence += (
            f"; {gap.resamples_without_gap} of {metrics.BOOTSTRAP_RESAMPLES} resamples drew "
            "no task with a gap and are left out of the interval"
        )
    return sentence + "."


class GateSection(_Part):
    """Every scored patch of a raced task judged alone, as a merge gate would."""

    policy: Policy
    patches: int
    """Patches judged and scored right or wrong."""
    right: int
    """Resolved patches."""
    wrong: int
    """Fixed-but-broke and wrong-fix patches."""
    approved: int
    precision: Rate
    """Approved patches that were right, over all approvals."""
    wrong_stopped: Rate
    """Wrong patches rejected, over all wrong patches."""
    right_stopped: Rate
    """Right patches rejected, over all right patches."""
    approve_all: Rate
    """Precision of approving every patch: right patches over all patches."""
    cannot_apply: str | None = None
    """Why the configured policy cannot apply to this bout; renderers then show this
    instead of the gate's figures."""


class AuthorEvidence(_Part):
    """How well one author's tests separate right patches from wrong ones."""

    author: str
    """The author with any trial suffix removed; `suite` for the repository's tests."""
    kind: AuthorKind
    auc: float | None = None
    """Mann-Whitney AUC, ties counted half; None when either class is empty."""
    positives: int
    """Right patches scored by this author's tests (its own patches excluded)."""
    negatives: int
    """Wrong patches (fixed but broke, or wrong fix) scored by this author's tests."""


class EvidenceSection(_Part):
    """Which tests tell a right fix from a wrong one: one row per author of tests."""

    rows: list[AuthorEvidence]
    """Contestants and examiners in config order, then any other author, then the suite."""


class ExclusionCount(_Part):
    """Examined changes left out for one reason."""

    reason: Reason
    count: int


class NotScoredCount(_Part):
    """Kept tasks the ground truth cannot score, for one reason."""

    reason: str
    count: int
    tasks: list[str]


class LeftOutCount(_Part):
    """Tasks left out of every figure for one reason other than the ground truth."""

    reason: str
    """`excluded by you`, `awaiting your review`, `no issue text`, ...: see docs/report.md."""
    count: int
    tasks: list[str]


RUNG_LABELS: dict[Rung, str] = {
    "dated": "dated as of the fix",
    "relaxed": "dated, the date lifted for what blocked it",
    "tip": "the tip's environment",
    "none": "no environment",
}
"""The ladder's rungs as the report's funnel names them."""


class RungCount(_Part):
    """Tasks whose ground truth ran on one rung of the environments' ladder."""

    rung: Rung
    count: int
    tasks: list[str]


class FunnelSection(_Part):
    """How the history became tasks, and which of them every figure counts over."""

    examined: int
    """Changes examined in the history."""
    kept: int
    """Changes kept as bug tasks; environment tasks are counted in `env.funnel`."""
    excluded: list[ExclusionCount]
    """Every reason in the fixed vocabulary's order, zeros included."""
    set_aside: list[LeftOutCount] = Field(default_factory=list)
    """Kept tasks a person set aside in bugbout.toml (excluded, or not accepted under
    `require-review`); the other kept tasks go on to the ground truth."""
    scored: int
    """Kept tasks not set aside whose ground truth has a fail-to-pass test."""
    not_scored: list[NotScoredCount] = Field(default_factory=list)
    unreliable: list[LeftOutCount] = Field(default_factory=list)
    """Scored tasks whose gold control (the maintainers' fix scored as a patch) did not
    resolve: their grader is unreliable here, so they count in no figure."""
    gold_controls: Rate | None = None
    """Gold controls resolved over scored tasks (not set aside) with a control made;
    None when no control has been made yet."""
    raced: int = 0
    """Scored tasks at least one contestant was given and ran on (an attempt neither
    skipped nor stopped by a usage limit): the tasks every figure counts over."""
    not_raced: list[LeftOutCount] = Field(default_factory=list)
    """Scored tasks no contestant ran on, by reason."""
    environments: list[RungCount] = Field(default_factory=list)
    """Kept tasks not set aside, by the rung of the ladder their environment stands on
    (dated environments only; empty under `environments = "tip"`), in the ladder's order."""


class AgentSpend(_Part):
    """What one agent spent over the whole bout."""

    name: str
    """The agent with any trial suffix removed: its trials are summed under it."""
    role: Role
    spend: Spend


class BudgetStop(_Part):
    """An agent's attempts not started because a budget would have been passed."""

    name: str
    role: Role
    attempts: int
    reason: str
    """The budget and what was spent of it, as the last such attempt recorded it."""


class CostSection(_Part):
    """Everything the bout spent: every attempt, every task, trials and examiners."""

    total: Spend
    by_agent: list[AgentSpend]
    """Contestants, then examiners, in config order; then anyone else."""
    budget_stops: list[BudgetStop] = Field(default_factory=list)
    """Agents with attempts a budget stopped (status `budget`): not scored, run again by a
    later run once the budget allows."""
    prices_checked: date | None = None
    """When the shipped price table was checked against its sources."""
    prices_sources: dict[str, str] = Field(default_factory=dict)
    """Vendor → the pricing page the shipped prices were checked on."""
    prices_overridden: list[str] = Field(default_factory=list)
    """Models whose price the project's bugbout.toml sets."""


class WorkerRow(_Part):
    """The attempts one place ran: a cluster's worker, or the coordinator's machine."""

    worker: str | None = None
    """The worker's name, as the cluster calls it; None for the machine that ran the
    bout ("this machine")."""
    attempts: int
    agents: dict[str, int]
    """Attempts per agent (a trial counts under its agent): contestants, then examiners,
    in config order; then anyone else by name. Agents with none here are left out."""


class WorkersSection(_Part):
    """Where the attempts ran, for a bout whose agents ran on a cluster's workers: every
    attempt whose agent was started (skipped and budget-stopped ones ran nowhere)."""

    rows: list[WorkerRow]
    """The workers by name, then this machine when it ran any."""


class PassAtK(_Part):
    """pass@k (or pass^k) for one k, with its 95% bootstrap interval over tasks."""

    k: int
    value: float | None = None
    """Mean over the tasks with at least k scored trials; None when there are none."""
    tasks: int
    """Tasks behind the mean."""
    low: float | None = None
    """Lower end of the 95% bootstrap interval over those tasks; None below two tasks."""
    high: float | None = None
    """Upper end of the 95% bootstrap interval over those tasks; None below two tasks."""

    @classmethod
    def of(cls, k: int, found: metrics.TaskMean) -> PassAtK:
        interval = found.interval
        return cls(
            k=k,
            value=found.value,
            tasks=found.tasks,
            low=None if interval is None else interval.low,
            high=None if interval is None else interval.high,
        )


class TrialRow(_Part):
    """One contestant run several times on each task."""

    agent: str
    trials: int
    """The most scored trials it has on any task: the k of consistency@k."""
    resolved_trials: int = 0
    """Its resolved trials over the raced tasks."""
    scored_trials: int = 0
    """Its scored trials over the raced tasks (quota and missing ones left out)."""
    resolved_share: float | None = None
    """resolved_trials / scored_trials; None with no scored trial."""
    resolved_low: float | None = None
    """Lower end of the share's 95% bootstrap interval over tasks (a task's trials are
    resampled together); None below two tasks."""
    resolved_high: float | None = None
    """Upper end of the share's 95% bootstrap interval over tasks."""
    pass_at: list[PassAtK]
    """pass@k for every k from 1 to `trials`: at least one of k trials resolves."""
    pass_hat: list[PassAtK] = Field(default_factory=list)
    """pass^k for every k from 1 to `trials`: all k trials resolve, by the unbiased
    C(c, k)/C(n, k) per task, averaged over the tasks with at least k scored trials."""
    consistency: float | None = None
    """Share of tasks whose `trials` scored trials all got the same status."""
    consistency_tasks: int
    """Tasks with that many scored trials."""
    consistency_low: float | None = None
    """Lower end of consistency's 95% bootstrap interval over those tasks."""
    consistency_high: float | None = None
    """Upper end of consistency's 95% bootstrap interval over those tasks."""


class TrialsSection(_Part):
    """Repeated trials: how often, and how consistently, an agent resolves a task."""

    rows: list[TrialRow]

    def shown_k(self) -> list[int]:
        """The k a table shows: 1, 3 and the most trials run (each as far as there are
        trials); the JSON holds every k."""
        most = max((row.trials for row in self.rows), default=1)
        return sorted({1, min(3, most), most})


def estimate(value: float | None, low: float | None, high: float | None) -> str:
    """`62% (40–85%)`: a share with its bootstrap interval; the share alone without one,
    `n/a` without a value."""
    if value is None:
        return "n/a"
    if low is None or high is None:
        return _pct(value)
    return f"{_pct(value)} ({_pct(low, sign=False)}–{_pct(high)})"


def signed_difference(versus: Comparison) -> str:
    """`+0.25 (−0.10 to +0.60)`: a paired mean difference of rates with its interval."""
    if versus.difference is None:
        return "–"
    if versus.low is None or versus.high is None:
        return f"{versus.difference:+.2f}"
    return f"{versus.difference:+.2f} ({versus.low:+.2f} to {versus.high:+.2f})"


class DecidedPair(_Part):
    """Two contestants compared task by task under `[run] stop-when-decided`."""

    ahead: str
    """The one right on more of the tasks only one of them resolved: the better one,
    once decided."""
    behind: str
    ahead_only: int
    """Tasks only `ahead` resolved, up to the look that decided the pair (or so far)."""
    behind_only: int
    p_value: float
    """The exact McNemar p-value of those two counts."""
    after_task: str | None = None
    """The task after whose score the pair was decided; None while it is not."""
    after_tasks: int | None = None
    """How many tasks, in the race's order, that decision rests on."""


class NotStarted(_Part):
    """The attempts of one agent that a decided bout did not start."""

    agent: str
    attempts: int
    tokens: int | None = None
    """Estimated: the mean tokens (in and out) of its stored attempts that reported
    them, times `attempts`; None when none did."""


class StoppingSection(_Part):
    """`[run] stop-when-decided`: every pair of contestants tested after each task with
    an exact McNemar test at a constant level corrected for looking repeatedly, and the
    race stopped starting tasks once every pair was decided."""

    level: float
    """The family-wise level: the chance, at most, that any decided pair is wrong."""
    pair_level: float
    """Each pair's share of it (the level over the number of pairs)."""
    nominal: float
    """The p-value at or below which a look decides a pair (Pocock's constant level for
    `tasks` looks); 0 when so few tasks can decide nothing."""
    tasks: int
    """The tasks of the bout, in the race's order: the most looks there can be."""
    looked_at: int
    """The tasks, in that order, whose contestants' attempts are all recorded."""
    decided_after: str | None = None
    """The task after whose score every pair was decided; None while one is not."""
    decided_tasks: int | None = None
    pairs: list[DecidedPair]
    not_started_tasks: list[str] = Field(default_factory=list)
    """Tasks of the bout no attempt was started on because it was decided."""
    not_started: list[NotStarted] = Field(default_factory=list)
    """The attempts those tasks would have cost, per agent."""


class PolicyPick(_Part):
    """One task under one policy."""

    policy: Policy
    pick: str | None = None
    """The picked patch (its contestant); None when the judge abstained."""
    right: bool | None = None
    """Whether the pick resolved the task; None when the task is not counted or abstained."""
    abstained: str | None = None
    """Why nothing was picked."""
    decided_by: str | None = None
    """The step that chose the pick among the approved patches, in words ("alpha's patch
    is smaller: 3 lines against 7"); None when the judge abstained."""


class PatchRow(_Part):
    """One patch of a task."""

    contestant: str
    status: PatchStatus
    approved: bool | None = None
    """The merge gate's answer under the configured policy; None when it was not judged."""


class TaskRow(_Part):
    """One task, for drill-down: every policy's pick and every patch's status."""

    task: str
    title: str
    scored: bool
    not_scored: str | None = None
    """Why the task is not scored."""
    raced: bool = False
    """Whether the task counts in the figures: scored, not set aside, and raced."""
    not_raced: str | None = None
    """Why the task does not count: set aside by you (whatever its ground truth), or,
    scored, given to no contestant (`no issue text`, ...). None when it counts, and when
    only the ground truth keeps it out (`not_scored` says why)."""
    picks: list[PolicyPick]
    patches: list[PatchRow]
    control: PatchStatus | None = None
    """How the maintainers' own fix scored through the agents' path (its gold control);
    None when no control was made for the task."""


class TreeEvidence(_Part):
    """A quarantined test's outcomes on one tree."""

    tree: str
    """What the tree is, in words (`fix 1a2b3c4d5`, `codex's patch`)."""
    runs: int
    passes: int
    fails: int


class QuarantinedTest(_Part):
    """A test that both passed and failed on one tree, so it decides nothing."""

    task: str
    author: str
    """`suite` for the repository's own tests, else the agent whose test it is."""
    test: str
    runs: int
    passes: int
    fails: int
    trees: list[TreeEvidence]
    """Every tree it ran on, those it flipped on first."""


EnvBoardName = Literal["all", "lite", "secure", "stochastic"]
"""The environment boards, in the order the report shows them."""

ENV_BOARDS: dict[EnvBoardName, str] = {
    "all": "All: every admitted environment task",
    "lite": "Lite: the built-in set",
    "secure": "Secure: tasks whose original manifest the audit flagged, or with a security label",
    "stochastic": "Stochastic: Lite tasks each agent ran three times or more",
}
"""Each board's title."""

LOOSENED_PIN = (
    "A loosened pin that makes a build pass still loses safe-install points: an unpinned "
    "package installs whatever is newest, which no audit has vouched for."
)
"""What the report says beside the repairs that resolved by dropping pins."""


class EnvConsistency(_Part):
    """consistency@k of what an agent declares: the same repair, trial after trial."""

    k: int
    value: float | None = None
    """Tasks whose first k scored trials declare the same set of normalized names (D¹),
    over `tasks`; None when no task has k scored trials."""
    tasks: int
    """Tasks with at least k scored trials."""


class EnvAgentRow(_Part):
    """One agent (its trials pooled) over the tasks of one environment board."""

    agent: str
    """The agent with any trial suffix removed."""
    tasks: int
    """Tasks of the board it has a scored trial on."""
    resolved: Rate
    """Resolved trials (installed and ran) over scored trials (a trial that did not
    count, `not-run`, is no sample)."""
    pass_at: list[PassAtK]
    """pass@1 and pass@3: per task 1 − C(n−c, k)/C(n, k), averaged over the tasks with at
    least k scored trials; `value` None when no task has k."""
    consistency: EnvConsistency | None = None
    """consistency@k with k its most scored trials on a task; None when no task has two.
    On the Stochastic board k is 3, and it is always given."""
    jaccard: float | None = None
    """Mean pairwise Jaccard similarity of the trials' D¹ name sets, per task, then
    averaged over the tasks with two scored trials or more; two empty sets count as 1."""
    jaccard_tasks: int = 0
    f1: float | None = None
    """Manifest F1 (D¹ against the traced run's D³): per task the mean over its trials
    with an F1, then the mean over those tasks."""
    f1_tasks: int = 0
    safe_install: float | None = None
    """The mean safe-install share over its repairs that declare something (a D¹)."""
    safe_repairs: int = 0
    """Repairs behind `safe_install`."""
    attempts: float | None = None
    """Over the tasks it resolved, the mean number of scored trials up to and including
    its first resolved one, in trial order: 1 when the first trial resolved."""
    attempts_tasks: int = 0
    cost_usd: float | None = None
    """What it spent on a task, all its trials together, averaged over the tasks whose
    every attempt that ran has a known cost; None when none has."""
    cost_tasks: int = 0
    """Tasks behind `cost_usd`."""


class EnvBoard(_Part):
    """One board: a set of admitted environment tasks and every agent ranked over it."""

    board: EnvBoardName
    title: str
    tasks: list[str]
    """The board's tasks, in mining order."""
    ranked_by: str
    """The ranking's order, in words."""
    rows: list[EnvAgentRow]
    """Every agent, best first."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """Task → why it is on the board, where that needs saying (Secure)."""


class NewestRow(_Part):
    """ "Newest is not the same as safe": one pinned package of one repair (or the base)."""

    task: str
    contestant: str
    """The repair's contestant, or `base` for the files as written."""
    name: str
    declared: str
    """The pinned version."""
    newest_today: str | None = None
    newest_at_date: str | None = None
    """The newest version uploaded before the task's date."""
    advisories: dict[str, list[str]] = Field(default_factory=dict)
    """Version → advisory ids, for each of the three versions that has any."""


class LoosenedPin(_Part):
    """A repair that resolved with a lower safe-install share than the known repair,
    because it declares without a pin what the known repair pins."""

    task: str
    contestant: str
    safe_install: float
    gold_safe_install: float
    """The known repair's safe-install share."""
    dropped: list[str]
    """Packages the known repair pins that this repair declares without a pin."""


class EnvRepairRow(_Part):
    """One repair of an environment task, as `repairs.json` keeps it."""

    contestant: str
    status: RepairStatus
    detail: str | None = None
    declared: int = 0
    """How many packages it declares (|D¹|)."""
    safe_install: float | None = None
    f1: float | None = None
    size: int = 0
    """Changed lines in the environment files."""
    rejected_files: list[str] = Field(default_factory=list)
    """Files other than environment files it changed (why it is `rejected`)."""
    blockers: list[str] = Field(default_factory=list)
    """Why the merge gate would refuse it, one entry per package."""


class EnvTaskRow(_Part):
    """One environment task: its controls, every repair and the env judge's verdict."""

    task: str
    title: str
    defect: EnvDefect
    lite: bool
    security: bool
    admitted: bool
    """Whether it counts on the boards: not set aside, controls as expected, raced."""
    left_out: str | None = None
    """Why it does not count; None when it does."""
    base: RepairStatus | None = None
    """The base control's status (the files as written: must fail); None when not made."""
    gold: RepairStatus | None = None
    """The gold control's status (the known repair: must install and run)."""
    gold_safe_install: float | None = None
    flagged: list[str] = Field(default_factory=list)
    """What the audit flagged in the files as written (the base control's D¹)."""
    repairs: list[EnvRepairRow] = Field(default_factory=list)
    verdict: EnvVerdict | None = None
    """The env judge's verdict; None for a task that does not count."""


class EnvFunnel(_Part):
    """Which environment tasks every env figure counts over, and why the others do not."""

    kept: int
    """Environment tasks in tasks.json."""
    lite: int
    """Of them, from the built-in Lite set."""
    set_aside: list[LeftOutCount] = Field(default_factory=list)
    controls_failed: list[LeftOutCount] = Field(default_factory=list)
    """Tasks whose base control installed and ran (nothing to repair), whose known repair
    did not, or whose controls are not made: their scorer is not trusted here."""
    not_raced: list[LeftOutCount] = Field(default_factory=list)
    admitted: int
    """The tasks every env figure counts over."""


class EnvSection(_Part):
    """Environment-repair tasks: the boards, the env judge, the pins, every task."""

    funnel: EnvFunnel
    boards: list[EnvBoard]
    """All, Lite, Secure and Stochastic, always in this order, empty ones included."""
    picked: int
    """Admitted tasks where the env judge picked a repair."""
    approved: int
    """Of those, picks the merge gate approved."""
    newest: list[NewestRow] = Field(default_factory=list)
    """Every pinned package of the admitted tasks' repairs and base controls."""
    loosened: list[LoosenedPin] = Field(default_factory=list)
    tasks: list[EnvTaskRow]
    """Every environment task, counted or not, in mining order."""


class Report(Record):
    """`report.json`: everything the report shows, computed from the stored records."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = REPORT_SCHEMA_VERSION
    """2 since the figures count raced tasks only (`raced_tasks`, the funnel's `raced`);
    4 since environment tasks have their own section (`env`) and the bug sections count
    bug tasks alone; 5 since each policy's picks carry the share of the gap from the best
    single agent to the oracle they close (`gap_closed`), and `credible` is a policy;
    6 since the report says where attempts ran on a cluster (`workers`)."""

    project: str
    policy: Policy
    """The configured judge policy."""
    contestants: list[str]
    examiners: list[str]
    agents: AgentsSection
    picking: PickingSection
    gate: GateSection
    evidence: EvidenceSection
    funnel: FunnelSection
    cost: CostSection
    trials: TrialsSection | None = None
    """Present only when some contestant ran more than one trial of a task."""
    stopping: StoppingSection | None = None
    """Present only under `[run] stop-when-decided` with two contestants or more."""
    tasks: list[TaskRow]
    """Every kept bug task, counted or not, in mining order (environment tasks are in
    `env.tasks`)."""
    quarantined: list[QuarantinedTest] = Field(default_factory=list)
    """Every test the flake ledger quarantined, with its evidence: left out of every
    score, reproduction and breakage."""
    env: EnvSection | None = None
    """Present only when tasks.json holds environment tasks."""
    workers: WorkersSection | None = None
    """Present only when some attempt ran on a cluster's worker."""


def report_json_schema() -> dict[str, Any]:
    """The JSON schema every `report.json` validates against."""
    return {"$schema": SCHEMA_DIALECT, **Report.model_json_schema()}


def format_p(p: float) -> str:
    """A p-value as a reader needs it: two decimals, three below 0.1, never a false zero."""
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _pct(share: float, *, sign: bool = True) -> str:
    return f"{share * 100:.0f}{'%' if sign else ''}"
