"""Amounts round to the nearest cent, and half a cent rounds up (away from zero)."""

from decimal import Decimal

from invoicekit.invoice import LineItem
from invoicekit.money import round_money


def test_half_a_cent_rounds_up_and_less_rounds_down():
    assert LineItem("Stickers", Decimal("5"), Decimal("2.125")).amount == Decimal("10.63")
    assert round_money(Decimal("1.005")) == Decimal("1.01")
    assert round_money(Decimal("-10.625")) == Decimal("-10.63")
    assert round_money(Decimal("10.624")) == Decimal("10.62")


def test_whole_cents_are_kept():
    assert round_money(Decimal("12.30")) == Decimal("12.30")
