"""Invoice numbers: a prefix and a zero-padded counter, such as INV-0042."""

from __future__ import annotations


def first_invoice_number(prefix: str = "INV") -> str:
    """The number of a customer's first invoice."""
    return f"{prefix}-0001"


def next_invoice_number(last: str) -> str:
    """The number that follows `last`: "INV-0041" -> "INV-0042"."""
    prefix, _, digits = last.rpartition("-")
    if not digits.isdigit():
        raise ValueError(f"{last!r} does not end in a number")
    return f"{prefix}-{int(digits) + 1:0{len(digits)}d}"
