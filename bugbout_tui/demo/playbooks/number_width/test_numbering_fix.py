from invoicekit.numbering import next_invoice_number


def test_six_digits():
    assert next_invoice_number("INV-000123") == "INV-000124"
