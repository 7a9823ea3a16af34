"""Amounts with thousands separators (reported: "$1,200.00" raised ValueError)."""

from decimal import Decimal

import pytest

from invoicekit.money import parse_amount


def test_reported_amount_is_read():
    assert parse_amount("$1,200.00") == Decimal("1200.00")


def test_separators_in_larger_amounts_are_read():
    assert parse_amount("1,234,567.89") == Decimal("1234567.89")
    assert parse_amount("€12,000") == Decimal("12000")


def test_plain_amounts_are_still_read():
    assert parse_amount("12.50") == Decimal("12.50")
    assert parse_amount("$7") == Decimal("7")


def test_text_is_still_rejected():
    with pytest.raises(ValueError):
        parse_amount("n/a")
