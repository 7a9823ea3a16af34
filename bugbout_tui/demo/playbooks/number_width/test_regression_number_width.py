"""The next invoice number is as wide as the last one, whatever its width."""

from invoicekit.numbering import next_invoice_number


def test_next_number_keeps_the_width_of_the_last_number():
    assert next_invoice_number("INV-000123") == "INV-000124"
    assert next_invoice_number("A-07") == "A-08"
    assert next_invoice_number("INV-0041") == "INV-0042"


def test_next_number_still_grows_past_its_width():
    assert next_invoice_number("INV-999") == "INV-1000"
