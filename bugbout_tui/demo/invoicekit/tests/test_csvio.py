from datetime import date
from decimal import Decimal

from invoicekit.csvio import read_lines, write_lines
from invoicekit.invoice import Invoice


def test_read_lines():
    text = "description,quantity,unit_price\nConsulting,3,$120.00\nTravel,1,45.50\n"
    lines = read_lines(text.splitlines())
    assert [(line.description, line.quantity, line.unit_price) for line in lines] == [
        ("Consulting", Decimal("3"), Decimal("120.00")),
        ("Travel", Decimal("1"), Decimal("45.50")),
    ]


def test_write_lines():
    invoice = Invoice("INV-0042", "ACME Corp.", date(2024, 3, 1))
    invoice.add_line("Consulting", 2, "150.00")
    assert write_lines(invoice) == (
        "description,quantity,unit_price,amount,currency\n"
        "Consulting,2,150.00,300.00,USD\n"
    )
