"""Invoices and their lines, with amounts in exact decimals."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from invoicekit.money import round_money


@dataclass
class LineItem:
    """One line of an invoice: so many units at a unit price."""

    description: str
    quantity: Decimal
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        """What the line costs, in whole cents."""
        return round_money(self.quantity * self.unit_price)


@dataclass
class Invoice:
    """An invoice to one customer; `discount_percent` comes off every line."""

    number: str
    customer: str
    issued: date
    lines: list[LineItem] = field(default_factory=list)
    discount_percent: Decimal = Decimal("0")
    currency: str = "USD"

    def add_line(
        self, description: str, quantity: int | str | Decimal, unit_price: str | Decimal
    ) -> LineItem:
        """Add a line; give quantities and prices as text or decimals to keep them exact."""
        line = LineItem(description, Decimal(quantity), Decimal(unit_price))
        self.lines.append(line)
        return line

    def discounted_lines(self) -> list[LineItem]:
        """The lines with the invoice's discount taken off each unit price."""
        factor = 1 - self.discount_percent / 100
        return [
            LineItem(line.description, line.quantity, line.unit_price * factor)
            for line in self.lines
        ]

    def total(self) -> Decimal:
        """What the customer pays: the discounted lines, added up."""
        return sum((line.amount for line in self.discounted_lines()), Decimal("0"))
