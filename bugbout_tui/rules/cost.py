"""What one attempt cost, and what a set of attempts spent, decided from records alone.

An attempt's cost is, in this order:

1. `plan` when its agent is billed by a subscription (`billing = "plan"`): its tokens
   cost nothing more each, and a price would be made up, so none is shown; not even the
   one the agent itself reports (Claude Code reports an API-equivalent price on a plan).
2. what the agent itself reported (Claude Code, mini-swe-agent): it knows the models it
   really called, cache writes and long-prompt rates, which a table cannot see;
3. its tokens at its model's price (`core.prices`);
4. unknown, which is never counted as zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from bugbout_tui.core.config import Billing, Config
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.prices import PriceTable
from bugbout_tui.rules.judge import author_identity

CostBasis = Literal["reported", "priced", "plan", "unknown"]

NOT_RUN = frozenset({"skipped", "budget"})
"""Statuses of attempts whose agent never ran: they spent nothing."""


@dataclass(frozen=True)
class AttemptCost:
    usd: float | None
    basis: CostBasis


@dataclass(frozen=True)
class Billed:
    """What pricing needs of an agent: its model and how it is paid."""

    model: str | None
    billing: Billing = "api"


@dataclass(frozen=True)
class Costing:
    """Prices the attempts of a bout. `agents` maps each agent's name (without a trial
    suffix) to its model and billing; an agent it does not name is billed at API prices
    with no model known, so only a cost it reported counts."""

    prices: PriceTable
    agents: Mapping[str, Billed] = field(default_factory=dict)

    def billed(self, contestant: str) -> Billed:
        return self.agents.get(author_identity(contestant), Billed(None))

    def on_plan(self, contestant: str) -> bool:
        return self.billed(contestant).billing == "plan"

    def cost(self, attempt: Attempt) -> AttemptCost:
        billed = self.billed(attempt.contestant)
        if billed.billing == "plan":
            return AttemptCost(None, "plan")
        if attempt.cost_usd is not None:
            return AttemptCost(attempt.cost_usd, "reported")
        tokens = attempt.tokens
        price = self.prices.price(billed.model)
        if price is None or (tokens.input is None and tokens.output is None):
            return AttemptCost(None, "unknown")
        usd = price.cost(tokens.input or 0, tokens.output or 0, tokens.cached or 0)
        return AttemptCost(usd, "priced")


def costing_for(config: Config, others: Mapping[str, str | None] | None = None) -> Costing:
    """The costing of a project: its agents' models and billing from bugbout.toml, its
    prices the shipped ones under its own; `others` adds agents given as objects
    (name → model), billed at API prices."""
    agents = {name: Billed(model) for name, model in (others or {}).items()}
    agents.update({a.name: Billed(a.model, a.billing) for a in config.agents})
    return Costing(config.price_table(), agents)


def ran(attempt: Attempt) -> bool:
    """Whether the attempt's agent was started: one recorded before it had a folder (a
    lane already out of quota, a budget already reached) or never given the task spent
    nothing."""
    return attempt.status not in NOT_RUN and bool(attempt.logdir)


def tokens_of(attempt: Attempt) -> int | None:
    """Input and output tokens together (cached input is part of input), or None."""
    tokens = attempt.tokens
    if tokens.input is None and tokens.output is None:
        return None
    return (tokens.input or 0) + (tokens.output or 0)


@dataclass
class Tally:
    """What a set of attempts spent: how many ran, their tokens, their known dollars."""

    attempts: int = 0
    tokens: int = 0
    usd: float = 0.0
    unknown_usd: int = 0
    """Attempts that ran at API prices with no known cost: not in `usd`."""

    def add(self, attempt: Attempt, costing: Costing, sign: int = 1) -> None:
        if not ran(attempt):
            return
        self.attempts += sign
        self.tokens += sign * (tokens_of(attempt) or 0)
        cost = costing.cost(attempt)
        if cost.usd is not None:
            self.usd += sign * cost.usd
        elif cost.basis == "unknown":
            self.unknown_usd += sign


def tally(attempts: Iterable[Attempt], costing: Costing) -> Tally:
    total = Tally()
    for attempt in attempts:
        total.add(attempt, costing)
    return total
