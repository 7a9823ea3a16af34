from decimal import Decimal

from invoicekit.money import parse_amount


def test_comma():
    assert parse_amount("$1,200.00") == Decimal("1200.00")
