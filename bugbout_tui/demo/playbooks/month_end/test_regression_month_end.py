"""Adding months to a late day of a month lands on the last day of a shorter month."""

from datetime import date

from invoicekit.dates import add_months


def test_add_months_stops_at_the_last_day_of_shorter_months():
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2023, 3, 31), 1) == date(2023, 4, 30)
    assert add_months(date(2023, 1, 30), 2) == date(2023, 3, 30)


def test_add_months_keeps_days_that_every_month_has():
    assert add_months(date(2023, 1, 15), 1) == date(2023, 2, 15)
