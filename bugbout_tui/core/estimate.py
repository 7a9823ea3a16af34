"""What a race is expected to cost before it starts: attempts, tokens, dollars, time.

The engine works it out (`engine.estimate`) and says it as an event, so the CLI board,
the TUI and a `--watch` of the journal all show the same figures before any agent runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.prices import token_amount, usd


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentEstimate(_Part):
    """One agent's share of the race: all its trials together."""

    name: str
    role: Literal["contestant", "examiner"] = "contestant"
    agent: str
    """The agent type (`codex`, `command`, ...), whose default applies without history."""
    quota: str
    attempts: int
    """Attempts this run would start."""
    stored: int = 0
    """Attempts of this run's tasks already stored, not run again."""
    basis: Literal["history", "default"] = "default"
    history: int = 0
    """Past attempts of this agent in this project the figures are the mean of."""
    billing: Literal["api", "plan"] = "api"
    tokens_each: float | None = None
    cost_each: float | None = None
    seconds_each: float = 0.0

    @property
    def tokens(self) -> float | None:
        return None if self.tokens_each is None else self.tokens_each * self.attempts

    @property
    def cost_usd(self) -> float | None:
        return None if self.cost_each is None else self.cost_each * self.attempts

    def cost_shown(self) -> str:
        if self.billing == "plan":
            return "plan"
        return usd(self.cost_usd)

    def tokens_shown(self) -> str:
        return token_amount(self.tokens)

    def tokens_shown_each(self) -> str:
        return token_amount(self.tokens_each)


class LaneEstimate(_Part):
    """A quota lane: its attempts and how long they take at its capacity."""

    quota: str
    attempts: int
    capacity: int = 1
    seconds: float = 0.0


class Estimate(_Part):
    tasks: int
    attempts: int
    agents: list[AgentEstimate] = Field(default_factory=list)
    lanes: list[LaneEstimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """What the figures rest on or leave out (no history, no price, stages not run
    yet), and where a budget will stop attempts."""

    @property
    def cost_usd(self) -> float | None:
        """The dollars of the agents billed at API prices whose cost is known."""
        known = [a.cost_usd for a in self.agents if a.billing == "api" and a.attempts]
        counted = [cost for cost in known if cost is not None]
        return sum(counted) if counted else None

    @property
    def seconds(self) -> float:
        """Wall time: the lanes run side by side, so the slowest one."""
        return max((lane.seconds for lane in self.lanes), default=0.0)
