from datetime import date
from decimal import Decimal

from invoicekit.invoice import Invoice, LineItem


def make_invoice(**options):
    invoice = Invoice("INV-0001", "ACME Corp.", date(2024, 2, 1), **options)
    invoice.add_line("Consulting", 3, "120.00")
    invoice.add_line("Travel", 1, "45.50")
    return invoice


def test_line_amount_is_quantity_times_price():
    assert LineItem("Hosting", Decimal("2"), Decimal("19.99")).amount == Decimal("39.98")


def test_line_amount_is_rounded_to_cents():
    assert LineItem("Support", Decimal("1"), Decimal("33.3333")).amount == Decimal("33.33")


def test_total_adds_up_the_lines():
    assert make_invoice().total() == Decimal("405.50")


def test_discount_comes_off_the_total():
    assert make_invoice(discount_percent=Decimal("10")).total() == Decimal("364.95")


def test_total_is_the_same_every_time_it_is_computed():
    invoice = make_invoice(discount_percent=Decimal("10"))
    first = invoice.total()
    assert invoice.total() == first == Decimal("364.95")
    assert invoice.lines[0].unit_price == Decimal("120.00")
