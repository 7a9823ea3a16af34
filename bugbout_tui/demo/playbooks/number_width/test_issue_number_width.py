"""Width of invoice numbers (reported: INV-000123 was followed by INV-0124)."""

from invoicekit.numbering import next_invoice_number


def test_reported_number():
    assert next_invoice_number("INV-000123") == "INV-000124"


def test_numbers_of_any_width_keep_it():
    assert next_invoice_number("A-07") == "A-08"
    assert next_invoice_number("X-00000009") == "X-00000010"


def test_four_digit_numbers_work_as_before():
    assert next_invoice_number("INV-0041") == "INV-0042"
    assert next_invoice_number("ACME-EU-0007") == "ACME-EU-0008"
    assert next_invoice_number("INV-9999") == "INV-10000"
