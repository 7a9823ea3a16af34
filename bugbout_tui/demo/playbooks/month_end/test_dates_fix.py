from datetime import date

from invoicekit.dates import add_months


def test_jan_31():
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)
