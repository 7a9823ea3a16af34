"""Money amounts as exact decimals: read from what people type, rounded, and shown."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def round_money(amount: Decimal) -> Decimal:
    """An amount rounded to whole cents."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def parse_amount(text: str) -> Decimal:
    """An amount as typed in a form or found in a CSV file: "12.50", "$12.50", "€7"."""
    cleaned = text.strip().lstrip("$€£").strip()
    cleaned = cleaned.replace(",", "")  # thousands: "1,200.00"
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None


def format_amount(amount: Decimal, currency: str = "USD") -> str:
    """An amount for people: "$1,234.50", "-€3.20", "CHF 5.00"."""
    symbol = SYMBOLS.get(currency, currency + " ")
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(round_money(amount)):,.2f}"
