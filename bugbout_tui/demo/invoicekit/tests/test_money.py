from decimal import Decimal

import pytest

from invoicekit.money import format_amount, parse_amount, round_money


def test_round_money_keeps_whole_cents():
    assert round_money(Decimal("12.30")) == Decimal("12.30")
    assert round_money(Decimal("7")) == Decimal("7.00")


def test_round_money_rounds_below_half_a_cent_down():
    assert round_money(Decimal("10.624")) == Decimal("10.62")
    assert round_money(Decimal("0.004")) == Decimal("0.00")


def test_round_money_rounds_above_half_a_cent_up():
    assert round_money(Decimal("10.626")) == Decimal("10.63")


def test_parse_amount_reads_plain_amounts_and_symbols():
    assert parse_amount("12.50") == Decimal("12.50")
    assert parse_amount(" $7 ") == Decimal("7")
    assert parse_amount("€0.99") == Decimal("0.99")


def test_parse_amount_rejects_text():
    with pytest.raises(ValueError, match="not an amount"):
        parse_amount("twelve")


def test_format_amount():
    assert format_amount(Decimal("1234.5")) == "$1,234.50"
    assert format_amount(Decimal("-3.2"), "EUR") == "-€3.20"
    assert format_amount(Decimal("5"), "CHF") == "CHF 5.00"


def test_round_money_rounds_half_a_cent_up():
    assert round_money(Decimal("10.625")) == Decimal("10.63")
    assert round_money(Decimal("1.005")) == Decimal("1.01")
    assert round_money(Decimal("-10.625")) == Decimal("-10.63")


def test_parse_amount_accepts_thousands_separators():
    assert parse_amount("$1,200.00") == Decimal("1200.00")
    assert parse_amount("1,234,567.89") == Decimal("1234567.89")
