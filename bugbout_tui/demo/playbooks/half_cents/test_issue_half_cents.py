"""Rounding of half cents (reported: 5 x 2.125 came out as 10.62, not 10.63)."""

from decimal import Decimal

from invoicekit.invoice import LineItem
from invoicekit.money import round_money


def test_reported_line_amount():
    assert LineItem("Stickers", Decimal("5"), Decimal("2.125")).amount == Decimal("10.63")


def test_amounts_round_to_the_nearest_cent_with_halves_up():
    assert round_money(Decimal("1.005")) == Decimal("1.01")
    assert round_money(Decimal("0.125")) == Decimal("0.13")
    assert round_money(Decimal("0.124")) == Decimal("0.12")


def test_amounts_off_the_half_round_as_before():
    assert round_money(Decimal("10.626")) == Decimal("10.63")
    assert round_money(Decimal("33.3333")) == Decimal("33.33")
    assert round_money(Decimal("12.30")) == Decimal("12.30")
