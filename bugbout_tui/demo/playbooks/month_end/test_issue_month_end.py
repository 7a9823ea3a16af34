"""add_months at the end of a month (reported: 2023-01-31 plus one month crashed)."""

from datetime import date

from invoicekit.dates import add_months


def test_reported_date():
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)


def test_late_days_land_on_the_last_day_of_shorter_months():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2023, 5, 31), 1) == date(2023, 6, 30)
    assert add_months(date(2023, 8, 31), 6) == date(2024, 2, 29)


def test_other_days_are_kept():
    assert add_months(date(2023, 1, 15), 1) == date(2023, 2, 15)
    assert add_months(date(2023, 10, 31), 3) == date(2024, 1, 31)
    assert add_months(date(2023, 12, 5), 1) == date(2024, 1, 5)
