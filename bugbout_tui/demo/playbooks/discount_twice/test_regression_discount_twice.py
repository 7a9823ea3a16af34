"""Computing a discounted total must not change the invoice it is computed from."""

from datetime import date
from decimal import Decimal

from invoicekit.invoice import Invoice
from invoicekit.render import render_text


def test_total_does_not_change_when_computed_again():
    invoice = Invoice("INV-0107", "Northwind", date(2024, 3, 1), discount_percent=Decimal("10"))
    invoice.add_line("Consulting", 1, "100.00")
    assert invoice.total() == Decimal("90.00")
    assert render_text(invoice).endswith("Total: $90.00\n")
    assert invoice.lines[0].unit_price == Decimal("100.00")
