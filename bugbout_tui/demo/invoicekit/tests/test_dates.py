from datetime import date

from invoicekit.dates import add_months, due_date, is_overdue


def test_due_date_adds_the_payment_terms():
    assert due_date(date(2024, 1, 15)) == date(2024, 2, 14)
    assert due_date(date(2024, 1, 15), terms_days=14) == date(2024, 1, 29)


def test_add_months_keeps_the_day_of_the_month():
    assert add_months(date(2023, 1, 15), 1) == date(2023, 2, 15)
    assert add_months(date(2023, 10, 31), 3) == date(2024, 1, 31)


def test_add_months_crosses_into_the_next_year():
    assert add_months(date(2023, 12, 5), 1) == date(2024, 1, 5)
    assert add_months(date(2023, 11, 20), 14) == date(2025, 1, 20)


def test_is_overdue_only_after_the_due_date():
    assert not is_overdue(date(2024, 1, 1), date(2024, 1, 31))
    assert is_overdue(date(2024, 1, 1), date(2024, 2, 1))


def test_add_months_stops_at_the_end_of_shorter_months():
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert add_months(date(2023, 5, 31), 1) == date(2023, 6, 30)
