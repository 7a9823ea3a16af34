"""Invoice lines to and from CSV, as shops and spreadsheets export them."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal

from invoicekit.invoice import Invoice, LineItem
from invoicekit.money import parse_amount

COLUMNS = ("description", "quantity", "unit_price")


def read_lines(rows: Iterable[str]) -> list[LineItem]:
    """Line items from CSV text with a header row: description, quantity, unit_price."""
    return [
        LineItem(row["description"], Decimal(row["quantity"]), parse_amount(row["unit_price"]))
        for row in csv.DictReader(rows)
    ]


def write_lines(invoice: Invoice) -> str:
    """The invoice's lines as CSV text, amounts as plain numbers."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, "amount", "currency"])
    for line in invoice.lines:
        writer.writerow([line.description, line.quantity, line.unit_price, line.amount, invoice.currency])
    return out.getvalue()
