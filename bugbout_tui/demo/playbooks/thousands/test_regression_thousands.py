"""Amounts written with thousands separators are read, and text is still rejected."""

from decimal import Decimal

import pytest

from invoicekit.money import parse_amount


def test_thousands_separators_are_accepted():
    assert parse_amount("$1,200.00") == Decimal("1200.00")
    assert parse_amount("1,234,567.89") == Decimal("1234567.89")


def test_text_is_still_rejected():
    with pytest.raises(ValueError):
        parse_amount("twelve hundred")
