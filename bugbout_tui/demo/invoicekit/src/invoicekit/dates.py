"""Due dates and monthly renewals."""

from __future__ import annotations

from calendar import monthrange
from datetime import date, timedelta


def due_date(issued: date, terms_days: int = 30) -> date:
    """When an invoice issued on `issued` must be paid, with `terms_days` days to pay."""
    return issued + timedelta(days=terms_days)


def add_months(day: date, months: int) -> date:
    """The same day of the month, `months` later: when a monthly subscription renews."""
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, monthrange(year, month)[1]))


def is_overdue(issued: date, today: date, terms_days: int = 30) -> bool:
    """Whether an invoice issued on `issued` is unpaid past its due date on `today`."""
    return today > due_date(issued, terms_days)
