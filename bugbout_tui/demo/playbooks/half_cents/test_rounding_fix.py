from decimal import Decimal

from invoicekit.invoice import LineItem


def test_stickers():
    assert LineItem("Stickers", Decimal("5"), Decimal("2.125")).amount == Decimal("10.63")
