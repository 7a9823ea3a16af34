"""The judge's records: what it decided for each patch and task, and the cells behind it.

They are stored in `verdicts.json` and shown on the Verdicts screen, so every field is
something a reader can check against the matrix without re-running the judge.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.config import Policy
from bugbout_tui.core.models import CellOutcome, Record

POLICIES: tuple[Policy, ...] = ("majority", "unanimous", "strict", "cross-vendor", "credible")
"""Every policy, in the order reports show them side by side."""


class CellRef(BaseModel):
    """One matrix cell a decision rests on: where to look, and what was there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tree: str
    author: str
    """The author's name as the matrix spells it, trial suffix included."""
    test: str
    outcome: CellOutcome


class Breakage(BaseModel):
    """A test that passed on the unfixed code and fails with the patch applied."""

    model_config = ConfigDict(extra="forbid")

    author: str
    test: str
    kept_by: int
    """How many of the other patches that ran keep this test passing."""
    others: int
    """How many other patches ran at all: the quorum's denominator."""
    counted: bool
    """Whether it counts against the patch: no other patch, or more than half keep it."""
    cells: list[CellRef] = Field(default_factory=list)
    """Its cell on the base and on the patch."""


class Discount(BaseModel):
    """An author `credible` gives no weight: no patch by another author passes any of its
    reproductions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    author: str
    """Who, as the judge compares authors: trial suffix removed."""
    reproductions: dict[str, list[str]] = Field(default_factory=dict)
    """Its reproductions, by the author name the matrix files them under."""
    passed_by: list[str] = Field(default_factory=list)
    """The patches that pass any of them, all its own; empty when none does."""


class Assessment(BaseModel):
    """One patch under one policy: the merge gate's answer and the evidence for it."""

    model_config = ConfigDict(extra="forbid")

    patch: str
    """The contestant whose patch this is, trial suffix included."""
    author: str
    """Who wrote it, as the judge compares authors: trial suffix removed."""
    independent: list[str] = Field(default_factory=list)
    """Authors (trial suffix removed) whose reproductions may support this patch."""
    support_by_author: dict[str, float] = Field(default_factory=dict)
    """Independent author → share of its reproductions that pass on this patch."""
    support: float | None = None
    """Mean of `support_by_author`; None when no author is independent."""
    breakages: list[Breakage] = Field(default_factory=list)
    counted_breakages: int = 0
    approved: bool
    reason: str
    """Why it was approved or rejected, in one sentence."""
    cells: list[CellRef] = Field(default_factory=list)
    """Cells behind its support and behind each counted breakage."""


class Verdict(BaseModel):
    """One task under one policy: the pick, or why there is none."""

    model_config = ConfigDict(extra="forbid")

    task: str
    policy: Policy
    pick: str | None = None
    abstained: str | None = None
    """Why nothing was picked; None exactly when `pick` is set."""
    decided_by: str | None = None
    """The step of the pick order that chose the pick over the runner-up, in words; None
    when nothing was picked. Defaulted so records stored before it existed still load."""
    assessments: list[Assessment] = Field(default_factory=list)
    """One per patch, by patch name."""
    reproductions: dict[str, list[str]] = Field(default_factory=dict)
    """Author (as the matrix spells it) → its tests that fail on the unfixed code."""
    discounted: list[Discount] = Field(default_factory=list)
    """Under `credible`, the authors given no weight; empty under the others."""
    witnesses: list[str] | None = None
    """Under `credible`, the patches whose outcomes make the breakage quorum (those with
    support of at least 0.5); None under the others, where every patch that ran does."""
    notes: list[str] = Field(default_factory=list)
    """What `credible` discounted and why, in sentences for the rule trail."""


class VerdictSet(Record):
    """`verdicts.json`: every task under every policy, and the policy the project chose."""

    policy: Policy
    verdicts: dict[str, dict[Policy, Verdict]] = Field(default_factory=dict)
    """Task id → policy → verdict; all five are kept so a policy can be switched offline."""
