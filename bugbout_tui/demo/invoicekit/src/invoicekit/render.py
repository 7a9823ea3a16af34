"""Invoices as plain text, for e-mail bodies and the PDF renderer, and their file names."""

from __future__ import annotations

from datetime import date

from invoicekit.dates import due_date
from invoicekit.invoice import Invoice, LineItem
from invoicekit.money import format_amount
from invoicekit.slug import slugify


def render_text(invoice: Invoice) -> str:
    """The invoice as text: a header, one row per line, the discount and the total."""
    width = max((len(line.description) for line in invoice.lines), default=0)
    currency = invoice.currency
    rows = [
        f"Invoice {invoice.number}",
        f"Customer: {invoice.customer}",
        f"Date: {invoice.issued.isoformat()}",
        "",
    ]
    rows += [_line_row(line, width, currency) for line in invoice.lines]
    if invoice.discount_percent:
        rows.append(f"Discount: {invoice.discount_percent}%")
    rows.append(f"Total: {format_amount(invoice.total(), currency)}")
    return "\n".join(rows) + "\n"


def _line_row(line: LineItem, width: int, currency: str) -> str:
    price = format_amount(line.unit_price, currency)
    amount = format_amount(line.amount, currency)
    return f"{line.description:<{width}}  {line.quantity} x {price}  {amount}"


def pdf_filename(invoice: Invoice) -> str:
    """Where an invoice's PDF is saved: "invoice-acme-corp-inv-0042.pdf"."""
    return f"invoice-{slugify(invoice.customer)}-{slugify(invoice.number)}.pdf"


def reminder_text(invoice: Invoice, today: date, terms_days: int = 30) -> str:
    """The e-mail sent when an invoice is not paid on time."""
    due = due_date(invoice.issued, terms_days)
    return (
        f"Invoice {invoice.number} has been overdue since {due.isoformat()} "
        f"({(today - due).days} days). Please pay {format_amount(invoice.total(), invoice.currency)}."
    )
