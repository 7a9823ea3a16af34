from datetime import date

from invoicekit.invoice import Invoice
from invoicekit.render import pdf_filename, reminder_text, render_text


def make_invoice():
    invoice = Invoice("INV-0042", "ACME Corp.", date(2024, 3, 1))
    invoice.add_line("Consulting", 2, "150.00")
    invoice.add_line("Hosting", 1, "19.99")
    return invoice


def test_render_text_lists_the_lines_and_the_total():
    text = render_text(make_invoice())
    assert text.startswith("Invoice INV-0042\nCustomer: ACME Corp.\n")
    assert "Consulting  2 x $150.00  $300.00" in text
    assert text.endswith("Total: $319.99\n")


def test_render_text_of_an_invoice_without_lines():
    invoice = Invoice("INV-0043", "ACME Corp.", date(2024, 3, 2))
    assert render_text(invoice).endswith("Total: $0.00\n")


def test_render_text_uses_the_invoice_currency():
    invoice = make_invoice()
    invoice.currency = "EUR"
    assert render_text(invoice).endswith("Total: €319.99\n")


def test_pdf_filename():
    assert pdf_filename(make_invoice()) == "invoice-acme-corp-inv-0042.pdf"


def test_reminder_text():
    text = reminder_text(make_invoice(), date(2024, 4, 10))
    assert text == "Invoice INV-0042 has been overdue since 2024-03-31 (10 days). Please pay $319.99."
