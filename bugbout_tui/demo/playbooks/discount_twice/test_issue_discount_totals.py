"""Totals of discounted invoices (reported: $81.00 in the PDF, $90.00 in the e-mail)."""

from datetime import date
from decimal import Decimal

from invoicekit.invoice import Invoice
from invoicekit.render import render_text


def reported_invoice(discount="10"):
    invoice = Invoice("INV-0107", "Northwind", date(2024, 3, 1), discount_percent=Decimal(discount))
    invoice.add_line("Consulting", 1, "100.00")
    return invoice


def test_reported_invoice_totals_90():
    assert reported_invoice().total() == Decimal("90.00")


def test_rendered_invoice_shows_90():
    assert "Total: $90.00" in render_text(reported_invoice())


def test_invoice_without_discount_is_unchanged():
    assert reported_invoice(discount="0").total() == Decimal("100.00")
