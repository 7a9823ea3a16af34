import pytest

from invoicekit.numbering import first_invoice_number, next_invoice_number


def test_first_number():
    assert first_invoice_number() == "INV-0001"
    assert first_invoice_number("ACME") == "ACME-0001"


def test_next_number_counts_up():
    assert next_invoice_number("INV-0041") == "INV-0042"
    assert next_invoice_number("INV-0099") == "INV-0100"


def test_next_number_keeps_a_prefix_with_dashes():
    assert next_invoice_number("ACME-EU-0007") == "ACME-EU-0008"


def test_next_number_grows_past_the_padding():
    assert next_invoice_number("INV-9999") == "INV-10000"


def test_next_number_needs_a_number():
    with pytest.raises(ValueError):
        next_invoice_number("INV-")


def test_next_number_keeps_the_width_of_the_last_one():
    assert next_invoice_number("INV-000123") == "INV-000124"
    assert next_invoice_number("A-07") == "A-08"
