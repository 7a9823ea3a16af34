"""The estimate before a race: what each agent is expected to spend per attempt, and in all.

Per attempt, an agent is expected to spend what its past attempts in this project spent
on average (tokens, dollars, seconds), counting only attempts whose agent ran. With no
past attempt, the default of its agent type stands in (`DEFAULTS`): a rough order of
magnitude for one bug fixed by that kind of agent, replaced by the project's own figures
as soon as one attempt is stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from bugbout_tui.core.config import Config
from bugbout_tui.core.estimate import AgentEstimate, Estimate, LaneEstimate
from bugbout_tui.core.models import Attempt, Task
from bugbout_tui.core.prices import Budget, token_amount, usd
from bugbout_tui.rules.cost import Costing, Tally, ran, tally, tokens_of
from bugbout_tui.rules.judge import author_identity

if TYPE_CHECKING:  # the race asks this module what an attempt is expected to spend
    from bugbout_tui.engine.agent_run import Entrant


@dataclass(frozen=True)
class Default:
    """One attempt of an agent type: input tokens (cached ones included), the cached
    part of them, output tokens, and wall-clock seconds."""

    input: int | None
    cached: int | None
    output: int | None
    seconds: float


DEFAULTS: Mapping[str, Default] = {
    "codex": Default(input=1_000_000, cached=850_000, output=15_000, seconds=600),
    "claude-code": Default(input=1_000_000, cached=900_000, output=15_000, seconds=600),
    "gemini-cli": Default(input=800_000, cached=400_000, output=10_000, seconds=600),
    "mini-swe-agent": Default(input=400_000, cached=0, output=10_000, seconds=400),
}
"""Per agent type, what one attempt on one bug is taken to spend before the project has
an attempt of its own. Agentic CLIs resend their growing context on every turn, so a
few dozen turns make input tokens in the hundreds of thousands to millions, most of
them read from the provider's cache. A `command` agent (or a plug-in) reports nothing,
so only `OTHER`'s time is assumed for it."""

OTHER = Default(input=None, cached=None, output=None, seconds=600)


@dataclass(frozen=True)
class Expected:
    """What one more attempt of an agent is expected to spend."""

    tokens: float | None
    usd: float | None
    seconds: float
    basis: Literal["history", "default"]
    history: int


def expect(
    kind: str, model: str | None, history: Sequence[Attempt], name: str, costing: Costing
) -> Expected:
    """One more attempt of agent `name` (type `kind`): the mean of its past attempts that
    ran, else its type's default priced at its model's price."""
    past = [attempt for attempt in history if ran(attempt)]
    plan = costing.on_plan(name)
    if past:
        counts = [t for a in past if (t := tokens_of(a)) is not None]
        costs = [c for a in past if (c := costing.cost(a).usd) is not None]
        return Expected(
            tokens=sum(counts) / len(counts) if counts else None,
            usd=None if plan or not costs else sum(costs) / len(costs),
            seconds=sum(a.seconds for a in past) / len(past),
            basis="history",
            history=len(past),
        )
    default = DEFAULTS.get(kind, OTHER)
    price = costing.prices.price(model)
    cost = None
    if not plan and price is not None and default.input is not None:
        cost = price.cost(default.input, default.output or 0, default.cached or 0)
    tokens = None if default.input is None else default.input + (default.output or 0)
    return Expected(tokens=tokens, usd=cost, seconds=default.seconds, basis="default", history=0)


def amount(expected: Expected, budget: Budget) -> float | None:
    """One attempt in the budget's unit; None when it cannot be told (no tokens
    reported, no price)."""
    if budget.unit == "attempts":
        return 1.0
    return expected.tokens if budget.unit == "tokens" else expected.usd


def shown(value: float, budget: Budget) -> str:
    if budget.unit == "usd":
        return usd(value)
    if budget.unit == "tokens":
        return f"{token_amount(value)} tokens"
    return f"{value:.0f} attempts"


def estimate_race(
    pending: Sequence[tuple[Task, Entrant]],
    *,
    tasks: int,
    entrants: Sequence[Entrant],
    stored: Sequence[Attempt],
    config: Config,
    costing: Costing,
    notes: Sequence[str] = (),
) -> Estimate:
    """The estimate of a race that would start `pending` over `tasks` tasks, with the
    bout's `stored` attempts (all of them, any task) as history."""
    by_name: dict[str, list[Attempt]] = {}
    for attempt in stored:
        by_name.setdefault(author_identity(attempt.contestant), []).append(attempt)
    to_run: dict[str, int] = {}
    for _, entrant in pending:
        name = author_identity(entrant.agent.name)
        to_run[name] = to_run.get(name, 0) + 1
    per_name: dict[str, list[Entrant]] = {}
    for entrant in entrants:
        per_name.setdefault(author_identity(entrant.agent.name), []).append(entrant)
    agents: list[AgentEstimate] = []
    said = list(notes)
    for name, group in per_name.items():
        first = group[0]
        history = by_name.get(name, [])
        expected = expect(first.agent.harness, first.agent.model, history, name, costing)
        attempts = to_run.get(name, 0)
        plan = costing.on_plan(name)
        agents.append(
            AgentEstimate(
                name=name,
                role=first.role,
                agent=first.agent.harness,
                quota=first.agent.quota,
                attempts=attempts,
                stored=tasks * len(group) - attempts,
                basis=expected.basis,
                history=expected.history,
                billing="plan" if plan else "api",
                tokens_each=expected.tokens,
                cost_each=expected.usd,
                seconds_each=expected.seconds,
            )
        )
        if attempts and not plan and expected.usd is None:
            model = first.agent.model
            said.append(
                f"{name}: cost unknown"
                + (
                    f" (no price for {model}; add [prices.{model!r}])"
                    if model
                    else " (no model set, so no price)"
                )
            )
        said.extend(_budget_notes(name, history, attempts, expected, config, costing))
    said.extend(_bout_budget_note(agents, stored, config, costing))
    return Estimate(
        tasks=tasks,
        attempts=len(pending),
        agents=agents,
        lanes=_lanes(agents, config),
        notes=said,
    )


def _lanes(agents: Sequence[AgentEstimate], config: Config) -> list[LaneEstimate]:
    lanes: dict[str, tuple[int, float]] = {}
    for agent in agents:
        attempts, seconds = lanes.get(agent.quota, (0, 0.0))
        lanes[agent.quota] = (
            attempts + agent.attempts,
            seconds + agent.attempts * agent.seconds_each,
        )
    return [
        LaneEstimate(
            quota=quota,
            attempts=attempts,
            capacity=config.run.capacity(quota),
            seconds=seconds / config.run.capacity(quota),
        )
        for quota, (attempts, seconds) in lanes.items()
    ]


def _budget_notes(
    name: str,
    history: Sequence[Attempt],
    attempts: int,
    expected: Expected,
    config: Config,
    costing: Costing,
) -> list[str]:
    entry = next((a for a in config.agents if a.name == name), None)
    limit = entry.budget_limit if entry is not None else None
    if limit is None:
        return []
    spent = spent_in(tally(history, costing), limit)
    each = amount(expected, limit)
    if each is None or each <= 0:
        return [
            f"{name}: budget {limit}, {shown(spent, limit)} spent; cannot tell how "
            "many attempts it allows"
        ]
    room = max(int((limit.amount - spent) // each), 0)
    if room >= attempts:
        return [
            f"{name}: budget {limit}, {shown(spent, limit)} spent, room for all {attempts} attempts"
        ]
    return [
        f"{name}: budget {limit}, {shown(spent, limit)} spent; it stops this agent "
        f"after about {room} of its {attempts} attempts"
    ]


def _bout_budget_note(
    agents: Sequence[AgentEstimate], stored: Sequence[Attempt], config: Config, costing: Costing
) -> list[str]:
    limit = config.run.budget_limit
    if limit is None:
        return []
    counted = [a for a in stored if not (limit.unit == "usd" and costing.on_plan(a.contestant))]
    spent = spent_in(tally(counted, costing), limit)
    needed = 0.0
    for agent in agents:
        if limit.unit == "usd" and agent.billing == "plan":
            continue
        each = {"attempts": 1.0, "tokens": agent.tokens_each, "usd": agent.cost_each}[limit.unit]
        needed += (each or 0.0) * agent.attempts
    verdict = (
        "enough for this run"
        if spent + needed <= limit.amount
        else ("this run is expected to reach it; attempts past it are recorded `budget`")
    )
    plan = " (agents on a plan are not counted in dollars)" if limit.unit == "usd" else ""
    return [
        f"bout budget {limit}: {shown(spent, limit)} spent, about "
        f"{shown(needed, limit)} to go; {verdict}{plan}"
    ]


def spent_in(spent: Tally, budget: Budget) -> float:
    """What a tally spent, in the budget's unit (known dollars only)."""
    if budget.unit == "attempts":
        return float(spent.attempts)
    return float(spent.tokens) if budget.unit == "tokens" else spent.usd
