"""What a model's tokens cost, and budgets written as amounts with a unit.

Most agents report tokens but not money (Codex, Gemini CLI), so bugbout prices their
tokens from a table: the one shipped as package data (`data/prices.toml`, dated, with
the vendor page each price was checked on), with a project's own `[prices."<model>"]`
entries over it. A model the table does not hold has no price, and its cost stays
unknown: never a guess, never zero.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib.resources import files
from typing import Literal

PER_MILLION = 1_000_000

BudgetUnit = Literal["usd", "tokens", "attempts"]

_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_PROVIDER = re.compile(r"^[\w.-]+/")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens: fresh input, input read from a cache, output."""

    input: float
    output: float
    cached: float

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> float:
        """The cost of one attempt's tokens. Input counts cached tokens too (as every
        adapter reports it), so only the rest of it is priced as fresh input."""
        cached = min(max(cached_tokens, 0), input_tokens)
        return (
            (input_tokens - cached) * self.input
            + cached * self.cached
            + output_tokens * self.output
        ) / PER_MILLION


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name, and where they came from."""

    prices: Mapping[str, Price]
    checked: date | None = None
    """When the shipped prices were checked against their sources."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """Vendor → the pricing page the shipped prices were checked on."""
    overridden: frozenset[str] = frozenset()
    """Models whose price comes from the project's bugbout.toml."""

    def price(self, model: str | None) -> Price | None:
        """The price of `model`, also as `provider/model` (LiteLLM's names) or with a
        date after it (`claude-haiku-4-5-20251001`); None when the table has none."""
        if not model:
            return None
        for name in _spellings(model):
            found = self.prices.get(name)
            if found is not None:
                return found
        return None

    def with_overrides(self, overrides: Mapping[str, Price]) -> PriceTable:
        """This table with a project's own prices over it."""
        return PriceTable(
            prices={**self.prices, **overrides},
            checked=self.checked,
            sources=self.sources,
            overridden=self.overridden | frozenset(overrides),
        )


def _spellings(model: str) -> list[str]:
    names = [model]
    bare = _PROVIDER.sub("", model)
    for name in (bare, _DATED.sub("", bare)):
        if name not in names:
            names.append(name)
    return names


@cache
def shipped_prices() -> PriceTable:
    """The price table that ships with bugbout."""
    text = files("bugbout_tui").joinpath("data", "prices.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    prices = {
        name: Price(
            input=float(entry["input"]),
            output=float(entry["output"]),
            cached=float(entry.get("cached", entry["input"])),
        )
        for name, entry in data["models"].items()
    }
    checked = data.get("checked")
    return PriceTable(
        prices=prices,
        checked=checked if isinstance(checked, date) else None,
        sources=dict(data.get("sources", {})),
    )


@dataclass(frozen=True)
class Budget:
    """A limit on what a bout (or one contestant) may spend, in one unit."""

    amount: float
    unit: BudgetUnit
    text: str
    """As written in bugbout.toml, for messages."""

    def __str__(self) -> str:
        return self.text


BUDGET_EXAMPLE = '"$20", "2M tokens" or "40 attempts"'

_USD = re.compile(r"^\$\s*(\d+(?:\.\d+)?)$|^(\d+(?:\.\d+)?)\s*(?:usd|dollars?)$", re.IGNORECASE)
_TOKENS = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmb]?)\s*tokens?$", re.IGNORECASE)
_ATTEMPTS = re.compile(r"^(\d+)\s*attempts?$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}


def parse_budget(text: str) -> Budget:
    """`"$20"`, `"20 USD"`, `"2M tokens"`, `"500k tokens"`, `"40 attempts"`.

    Raises:
        ValueError: the text is none of those, with a message that says what is.
    """
    written = text.strip()
    if match := _USD.match(written):
        return Budget(float(match.group(1) or match.group(2)), "usd", written)
    if match := _TOKENS.match(written):
        amount = float(match.group(1)) * _SCALE[match.group(2).lower()]
        return Budget(round(amount), "tokens", written)
    if match := _ATTEMPTS.match(written):
        return Budget(int(match.group(1)), "attempts", written)
    raise ValueError(f"must be an amount with its unit, e.g. {BUDGET_EXAMPLE}")


def usd(amount: float | None) -> str:
    """`$1.25`, or `$0.004` for less than a cent; `n/a` for an unknown amount."""
    if amount is None:
        return "n/a"
    if 0 < amount < 0.01:
        return f"${amount:.3f}"
    return f"${amount:,.2f}"


def token_amount(count: float | None) -> str:
    """`1.2M`, `350k`, `900`; `n/a` for an unknown count."""
    if count is None:
        return "n/a"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{count / 1000:.0f}k"
    return f"{count:.0f}"
