"""Budgets during a race: whether one more attempt of an agent may start.

What has been spent is counted over the bout's stored attempts (every run, every task,
all of an agent's trials), so a run that resumes carries on from the same total; an
attempt run again replaces its record, and with it what the earlier one is counted to
have spent. An attempt may start only when what is spent, plus what the attempts
already under way and this one are expected to spend, stays within every budget that
applies to it: its agent's own, and the bout's. A dollar budget does not count an agent
on a plan (it spends no dollars per attempt), and cannot stop an agent whose cost is
unknown (the estimate says so before the run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bugbout_tui.core.models import Attempt
from bugbout_tui.core.prices import Budget
from bugbout_tui.engine.estimate import amount, expect, shown, spent_in
from bugbout_tui.rules.cost import Costing, Tally, ran
from bugbout_tui.rules.judge import author_identity


@dataclass(frozen=True)
class Spender:
    """An agent as the budgets see it: its type and model decide its default."""

    kind: str
    model: str | None


@dataclass
class _Account:
    spent: Tally = field(default_factory=Tally)
    in_flight: int = 0


class BudgetKeeper:
    """Admits attempts while the budgets allow, and counts each one recorded."""

    def __init__(
        self,
        *,
        bout: Budget | None,
        own: Mapping[str, Budget],
        spenders: Mapping[str, Spender],
        costing: Costing,
        stored: Iterable[Attempt],
    ) -> None:
        self.bout = bout
        self.own = dict(own)
        self.spenders = dict(spenders)
        self.costing = costing
        self._records: dict[str, Attempt] = {}
        self._history: dict[str, dict[str, Attempt]] = {}
        self._accounts: dict[str, _Account] = {}
        self._total = _Account()
        self._admitted: dict[str, bool] = {}
        """Attempts under way → whether the bout's budget counts them."""
        for attempt in stored:
            self._count(attempt)

    @property
    def active(self) -> bool:
        return self.bout is not None or bool(self.own)

    def admit(self, attempt_id: str, contestant: str) -> str | None:
        """None, and the attempt counted as under way, when it may start; else why not."""
        if not self.active:
            return None
        name = author_identity(contestant)
        account = self._accounts.setdefault(name, _Account())
        checks = [(self.own.get(name), account, f"the budget {{}} of {name}")]
        in_bout = self.bout is not None and not (
            self.bout.unit == "usd" and self.costing.on_plan(name)
        )
        if in_bout:
            checks.append((self.bout, self._total, "the bout's budget {}"))
        for budget, counted, what in checks:
            if budget is None:
                continue
            reason = self._refusal(name, budget, counted, what.format(budget))
            if reason is not None:
                return reason
        account.in_flight += 1
        self._total.in_flight += in_bout
        self._admitted[attempt_id] = in_bout
        return None

    def recorded(self, attempt: Attempt) -> None:
        """Count an attempt just stored, in place of any earlier record of it."""
        name = author_identity(attempt.contestant)
        if attempt.id in self._admitted:
            self._total.in_flight -= self._admitted.pop(attempt.id)
            self._accounts[name].in_flight -= 1
        self._count(attempt)

    def _count(self, attempt: Attempt) -> None:
        name = author_identity(attempt.contestant)
        account = self._accounts.setdefault(name, _Account())
        old = self._records.get(attempt.id)
        if old is not None:
            account.spent.add(old, self.costing, sign=-1)
            self._total.spent.add(old, self.costing, sign=-1)
        self._records[attempt.id] = attempt
        account.spent.add(attempt, self.costing)
        self._total.spent.add(attempt, self.costing)
        history = self._history.setdefault(name, {})
        if ran(attempt):
            history[attempt.id] = attempt
        else:
            history.pop(attempt.id, None)

    def _refusal(self, name: str, budget: Budget, counted: _Account, what: str) -> str | None:
        spender = self.spenders.get(name, Spender("command", None))
        expected = expect(
            spender.kind,
            spender.model,
            list(self._history.get(name, {}).values()),
            name,
            self.costing,
        )
        each = amount(expected, budget)
        if each is None:
            return None
        spent = spent_in(counted.spent, budget)
        if spent + each * (counted.in_flight + 1) <= budget.amount + 1e-9:
            return None
        under_way = f", {counted.in_flight} under way" if counted.in_flight else ""
        if budget.unit == "attempts":
            return f"{what} would be passed: {spent:.0f} run{under_way}"
        return (
            f"{what} would be passed: {shown(spent, budget)} spent{under_way}, "
            f"about {shown(each, budget)} per attempt"
        )
