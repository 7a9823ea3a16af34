"""The demo's sample project: invoicekit, its git history, its issues and its bugbout.toml.

The history is written commit by commit with plain `git`, with a fixed identity and fixed
dates and without the user's git configuration, so every machine gets the same shas. It
holds six real bug fixes (each with the maintainers' new test and an issue reference in a
different form) among features, a refactor, docs, a release and four fixes the mining
rules leave out, so the funnel in the report has every step to show.

Layout of the demo directory:

    bugbout.toml      the bout: five scripted agents in two quota lanes
    issues.json       the project's issues and pull requests, shaped like GitHub's
    invoicekit/       the sample repository
    agent-state/      the rationed agent's usage counter (its `state-dirs`)
    .bugbout/         results, written by the bout
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.core.store import Store
from bugbout_tui.demo.bugs import (
    BUGS,
    DISCOUNT_TWICE,
    HALF_CENTS,
    MONTH_END,
    NUMBER_WIDTH,
    SLUG_ACCENTS,
    THOUSANDS,
    Bug,
    Edit,
    Issue,
    Style,
)

DEMO_VERSION = "1"
"""Written into the marker file; a demo directory of another version is rebuilt."""
MARKER = ".bugbout-demo"
REPOSITORY = "invoicekit"
PACKAGE = "invoicekit"
ISSUES_FILE = "issues.json"
STATE_DIR = "agent-state"
GITHUB = "invoicekit/invoicekit"
"""The repository the issue links point at; it exists only in the issues file."""

CONTESTANTS: tuple[tuple[Style, str], ...] = (
    ("careful", "lane-a"),
    ("hasty", "lane-a"),
    ("slow", "lane-b"),
    ("rationed", "lane-b"),
)
"""Each contestant's style (also its name) and quota lane. The slow and the rationed agent
share a lane, so when the rationed one runs out the lane parks, as a shared plan would."""
EXAMINER_LANE = "lane-a"
RATIONED_ALLOWANCE = 2
"""Attempts the rationed agent gets before its usage limit; the third one stops."""

_IDENTITY = {
    "GIT_AUTHOR_NAME": "invoicekit maintainers",
    "GIT_AUTHOR_EMAIL": "maintainers@invoicekit.invalid",
    "GIT_COMMITTER_NAME": "invoicekit maintainers",
    "GIT_COMMITTER_EMAIL": "maintainers@invoicekit.invalid",
}
_START = datetime(2024, 2, 5, 9, 30, tzinfo=UTC)


# ---------------------------------------------------------------- the sample package

PYPROJECT = """\
[project]
name = "invoicekit"
version = "0.3.0"
description = "Invoices with exact amounts, due dates, numbering and plain-text rendering."
readme = "README.md"
requires-python = ">=3.10"
dependencies = []

[project.optional-dependencies]
test = ["pytest"]

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
"""

README = """\
# invoicekit

Small, exact building blocks for invoices: amounts as decimals, line items, discounts,
due dates, invoice numbers, and plain-text rendering for e-mails and PDFs.

```python
from datetime import date
from invoicekit.invoice import Invoice

invoice = Invoice("INV-0042", "ACME Corp.", date(2024, 3, 1))
invoice.add_line("Consulting", 2, "150.00")
invoice.total()  # Decimal('300.00')
```

Run the tests with `pytest` from the repository root.

See [the changelog](CHANGES.md) for what changed.
"""

GITIGNORE = "__pycache__/\n*.egg-info/\n.pytest_cache/\n.venv/\n"

INIT = '''\
"""invoicekit: invoices with exact amounts, due dates, numbering and plain-text rendering."""

__version__ = "0.3.0"
'''

MONEY = '''\
"""Money amounts as exact decimals: read from what people type, rounded, and shown."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def round_money(amount: Decimal) -> Decimal:
    """An amount rounded to whole cents."""
    return amount.quantize(CENT)


def parse_amount(text: str) -> Decimal:
    """An amount as typed in a form or found in a CSV file: "12.50", "$12.50", "€7"."""
    cleaned = text.strip().lstrip("$€£").strip()
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None


def format_amount(amount: Decimal, currency: str = "USD") -> str:
    """An amount for people: "$1,234.50", "-€3.20", "CHF 5.00"."""
    symbol = SYMBOLS.get(currency, currency + " ")
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(round_money(amount)):,.2f}"
'''

INVOICE = '''\
"""Invoices and their lines, with amounts in exact decimals."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from invoicekit.money import round_money


@dataclass
class LineItem:
    """One line of an invoice: so many units at a unit price."""

    description: str
    quantity: Decimal
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        """What the line costs, in whole cents."""
        return round_money(self.quantity * self.unit_price)


@dataclass
class Invoice:
    """An invoice to one customer; `discount_percent` comes off every line."""

    number: str
    customer: str
    issued: date
    lines: list[LineItem] = field(default_factory=list)
    discount_percent: Decimal = Decimal("0")

    def add_line(
        self, description: str, quantity: int | str | Decimal, unit_price: str | Decimal
    ) -> LineItem:
        """Add a line; give quantities and prices as text or decimals to keep them exact."""
        line = LineItem(description, Decimal(quantity), Decimal(unit_price))
        self.lines.append(line)
        return line

    def discounted_lines(self) -> list[LineItem]:
        """The lines with the invoice's discount taken off each unit price."""
        factor = 1 - self.discount_percent / 100
        for line in self.lines:
            line.unit_price = line.unit_price * factor
        return self.lines

    def total(self) -> Decimal:
        """What the customer pays: the discounted lines, added up."""
        return sum((line.amount for line in self.discounted_lines()), Decimal("0"))
'''

TEST_MONEY = """\
from decimal import Decimal

import pytest

from invoicekit.money import format_amount, parse_amount, round_money


def test_round_money_keeps_whole_cents():
    assert round_money(Decimal("12.30")) == Decimal("12.30")
    assert round_money(Decimal("7")) == Decimal("7.00")


def test_round_money_rounds_below_half_a_cent_down():
    assert round_money(Decimal("10.624")) == Decimal("10.62")
    assert round_money(Decimal("0.004")) == Decimal("0.00")


def test_round_money_rounds_above_half_a_cent_up():
    assert round_money(Decimal("10.626")) == Decimal("10.63")


def test_parse_amount_reads_plain_amounts_and_symbols():
    assert parse_amount("12.50") == Decimal("12.50")
    assert parse_amount(" $7 ") == Decimal("7")
    assert parse_amount("€0.99") == Decimal("0.99")


def test_parse_amount_rejects_text():
    with pytest.raises(ValueError, match="not an amount"):
        parse_amount("twelve")


def test_format_amount():
    assert format_amount(Decimal("1234.5")) == "$1,234.50"
    assert format_amount(Decimal("-3.2"), "EUR") == "-€3.20"
    assert format_amount(Decimal("5"), "CHF") == "CHF 5.00"
"""

TEST_INVOICE = """\
from datetime import date
from decimal import Decimal

from invoicekit.invoice import Invoice, LineItem


def make_invoice(**options):
    invoice = Invoice("INV-0001", "ACME Corp.", date(2024, 2, 1), **options)
    invoice.add_line("Consulting", 3, "120.00")
    invoice.add_line("Travel", 1, "45.50")
    return invoice


def test_line_amount_is_quantity_times_price():
    assert LineItem("Hosting", Decimal("2"), Decimal("19.99")).amount == Decimal("39.98")


def test_line_amount_is_rounded_to_cents():
    assert LineItem("Support", Decimal("1"), Decimal("33.3333")).amount == Decimal("33.33")


def test_total_adds_up_the_lines():
    assert make_invoice().total() == Decimal("405.50")


def test_discount_comes_off_the_total():
    assert make_invoice(discount_percent=Decimal("10")).total() == Decimal("364.95")
"""

DATES = '''\
"""Due dates and monthly renewals."""

from __future__ import annotations

from datetime import date, timedelta


def due_date(issued: date, terms_days: int = 30) -> date:
    """When an invoice issued on `issued` must be paid, with `terms_days` days to pay."""
    return issued + timedelta(days=terms_days)


def add_months(day: date, months: int) -> date:
    """The same day of the month, `months` later: when a monthly subscription renews."""
    month = day.month - 1 + months
    return day.replace(year=day.year + month // 12, month=month % 12 + 1)


def is_overdue(issued: date, today: date, terms_days: int = 30) -> bool:
    """Whether an invoice issued on `issued` is unpaid past its due date on `today`."""
    return today > due_date(issued, terms_days)
'''

TEST_DATES = """\
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
"""

NUMBERING = '''\
"""Invoice numbers: a prefix and a zero-padded counter, such as INV-0042."""

from __future__ import annotations


def first_invoice_number(prefix: str = "INV") -> str:
    """The number of a customer's first invoice."""
    return f"{prefix}-0001"


def next_invoice_number(last: str) -> str:
    """The number that follows `last`: "INV-0041" -> "INV-0042"."""
    prefix, _, digits = last.rpartition("-")
    if not digits.isdigit():
        raise ValueError(f"{last!r} does not end in a number")
    return f"{prefix}-{int(digits) + 1:04d}"
'''

TEST_NUMBERING = """\
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
"""

SLUG = '''\
"""Slugs: lower-case, dash-separated names that are safe in file names and URLs."""

from __future__ import annotations

import re


def slugify(text: str) -> str:
    """"ACME Corp." -> "acme-corp"."""
    text = text.lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    return text.strip("-")
'''

TEST_SLUG = """\
from invoicekit.slug import slugify


def test_slugify_lowers_and_joins_words():
    assert slugify("ACME Corp.") == "acme-corp"
    assert slugify("  Northwind   Traders ") == "northwind-traders"


def test_slugify_keeps_digits():
    assert slugify("INV-0042") == "inv-0042"
    assert slugify("Studio 54") == "studio-54"
"""

RENDER = '''\
"""Invoices as plain text, for e-mail bodies and the PDF renderer, and their file names."""

from __future__ import annotations

from invoicekit.invoice import Invoice
from invoicekit.money import format_amount
from invoicekit.slug import slugify


def render_text(invoice: Invoice, currency: str = "USD") -> str:
    """The invoice as text: a header, one row per line, the discount and the total."""
    width = max(len(line.description) for line in invoice.lines)
    rows = [
        f"Invoice {invoice.number}",
        f"Customer: {invoice.customer}",
        f"Date: {invoice.issued.isoformat()}",
        "",
    ]
    for line in invoice.lines:
        price = format_amount(line.unit_price, currency)
        amount = format_amount(line.amount, currency)
        rows.append(f"{line.description:<{width}}  {line.quantity} x {price}  {amount}")
    if invoice.discount_percent:
        rows.append(f"Discount: {invoice.discount_percent}%")
    rows.append(f"Total: {format_amount(invoice.total(), currency)}")
    return "\\n".join(rows) + "\\n"


def pdf_filename(invoice: Invoice) -> str:
    """Where an invoice's PDF is saved: "invoice-acme-corp-inv-0042.pdf"."""
    return f"invoice-{slugify(invoice.customer)}-{slugify(invoice.number)}.pdf"
'''

TEST_RENDER = """\
from datetime import date

from invoicekit.invoice import Invoice
from invoicekit.render import pdf_filename, render_text


def make_invoice():
    invoice = Invoice("INV-0042", "ACME Corp.", date(2024, 3, 1))
    invoice.add_line("Consulting", 2, "150.00")
    invoice.add_line("Hosting", 1, "19.99")
    return invoice


def test_render_text_lists_the_lines_and_the_total():
    text = render_text(make_invoice())
    assert text.startswith("Invoice INV-0042\\nCustomer: ACME Corp.\\n")
    assert "Consulting  2 x $150.00  $300.00" in text
    assert text.endswith("Total: $319.99\\n")


def test_pdf_filename():
    assert pdf_filename(make_invoice()) == "invoice-acme-corp-inv-0042.pdf"
"""

CSVIO = '''\
"""Invoice lines to and from CSV, as shops and spreadsheets export them."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal

from invoicekit.invoice import Invoice, LineItem
from invoicekit.money import parse_amount

COLUMNS = ("description", "quantity", "unit_price")


def read_lines(rows: Iterable[str]) -> list[LineItem]:
    """Line items from CSV text with a header row: description, quantity, unit_price."""
    return [
        LineItem(row["description"], Decimal(row["quantity"]), parse_amount(row["unit_price"]))
        for row in csv.DictReader(rows)
    ]


def write_lines(invoice: Invoice) -> str:
    """The invoice's lines as CSV text, amounts as plain numbers."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\\n")
    writer.writerow([*COLUMNS, "amount"])
    for line in invoice.lines:
        writer.writerow([line.description, line.quantity, line.unit_price, line.amount])
    return out.getvalue()
'''

TEST_CSVIO = """\
from datetime import date
from decimal import Decimal

from invoicekit.csvio import read_lines, write_lines
from invoicekit.invoice import Invoice


def test_read_lines():
    text = "description,quantity,unit_price\\nConsulting,3,$120.00\\nTravel,1,45.50\\n"
    lines = read_lines(text.splitlines())
    assert [(line.description, line.quantity, line.unit_price) for line in lines] == [
        ("Consulting", Decimal("3"), Decimal("120.00")),
        ("Travel", Decimal("1"), Decimal("45.50")),
    ]


def test_write_lines():
    invoice = Invoice("INV-0042", "ACME Corp.", date(2024, 3, 1))
    invoice.add_line("Consulting", 2, "150.00")
    assert write_lines(invoice) == (
        "description,quantity,unit_price,amount\\nConsulting,2,150.00,300.00\\n"
    )
"""

# ---------------------------------------------------------------- the history


@dataclass(frozen=True)
class Change:
    """One change on the main branch: whole files, edits, text appended, or all three.

    A change with `pull` is a pull request: committed on a side branch and merged with
    GitHub's merge message, so the main branch sees one merge commit.
    """

    message: str
    files: Mapping[str, str | None] = field(default_factory=dict)
    edits: tuple[Edit, ...] = ()
    appends: Mapping[str, str] = field(default_factory=dict)
    pull: int | None = None
    branch: str = ""


def _fix(bug: Bug, message: str, *, pull: int | None = None, branch: str = "") -> Change:
    """The maintainers' fix of `bug`: their source change and their new test."""
    return Change(
        message, edits=bug.fix, appends={bug.test_module: bug.test}, pull=pull, branch=branch
    )


_REMINDER = '''

def reminder_text(invoice: Invoice, today: date, terms_days: int = 30) -> str:
    """The e-mail sent when an invoice is not paid on time."""
    due = due_date(invoice.issued, terms_days)
    return (
        f"Invoice {invoice.number} is overdue since {due.isoformat()} "
        f"({(today - due).days} days). Please pay {format_amount(invoice.total())}."
    )
'''

_REMINDER_TEST = """

def test_reminder_text():
    text = reminder_text(make_invoice(), date(2024, 4, 10))
    assert text == "Invoice INV-0042 is overdue since 2024-03-31 (10 days). Please pay $319.99."
"""


def history() -> list[Change]:
    """Every change of the sample repository, oldest first."""
    render = "src/invoicekit/render.py"
    test_render = "tests/test_render.py"
    changes = [
        Change(
            "Start invoicekit: money amounts, invoices and line items",
            files={
                "pyproject.toml": PYPROJECT,
                "README.md": README,
                ".gitignore": GITIGNORE,
                "src/invoicekit/__init__.py": INIT,
                "src/invoicekit/money.py": MONEY,
                "src/invoicekit/invoice.py": INVOICE,
                "tests/test_money.py": TEST_MONEY,
                "tests/test_invoice.py": TEST_INVOICE,
            },
        ),
        Change(
            "Add due dates and monthly renewals",
            files={"src/invoicekit/dates.py": DATES, "tests/test_dates.py": TEST_DATES},
        ),
        Change(
            "Add invoice numbering",
            files={
                "src/invoicekit/numbering.py": NUMBERING,
                "tests/test_numbering.py": TEST_NUMBERING,
            },
        ),
        Change(
            "Render invoices as text, and name their PDF files",
            files={
                render: RENDER,
                "src/invoicekit/slug.py": SLUG,
                test_render: TEST_RENDER,
                "tests/test_slug.py": TEST_SLUG,
            },
        ),
        _fix(DISCOUNT_TWICE, "Fix discounted totals shrinking each time they are computed (#4)"),
        Change(
            "Document how amounts are parsed and rounded",
            edits=(
                Edit(
                    "README.md",
                    "Run the tests",
                    "Amounts are `Decimal`s throughout. `parse_amount` reads what people "
                    "type\n(`12.50`, `$12.50`), and every line amount is rounded to whole "
                    "cents.\n\nRun the tests",
                ),
            ),
        ),
        _fix(MONTH_END, "fix(dates): add_months crashes at the end of long months (fixes #7)"),
        Change(
            "Add CSV import and export of invoice lines (fixes #8)",
            files={"src/invoicekit/csvio.py": CSVIO, "tests/test_csvio.py": TEST_CSVIO},
        ),
        Change(
            "Fix a crash rendering an invoice without lines",
            edits=(
                Edit(
                    render,
                    "    width = max(len(line.description) for line in invoice.lines)\n",
                    "    width = max((len(line.description) for line in invoice.lines), "
                    "default=0)\n",
                ),
                Edit(
                    test_render,
                    "\n\ndef test_pdf_filename():",
                    "\n\ndef test_render_text_of_an_invoice_without_lines():\n"
                    '    invoice = Invoice("INV-0043", "ACME Corp.", date(2024, 3, 2))\n'
                    '    assert render_text(invoice).endswith("Total: $0.00\\n")\n'
                    "\n\ndef test_pdf_filename():",
                ),
            ),
        ),
        _fix(NUMBER_WIDTH, "Fix six-digit invoice numbers losing digits (#11)"),
        Change(
            "Add payment reminders",
            edits=(
                Edit(
                    render,
                    "from invoicekit.invoice import Invoice\n",
                    "from datetime import date\n\nfrom invoicekit.dates import due_date\n"
                    "from invoicekit.invoice import Invoice\n",
                ),
                Edit(
                    test_render,
                    "import pdf_filename, render_text\n",
                    "import pdf_filename, reminder_text, render_text\n",
                ),
            ),
            appends={render: _REMINDER, test_render: _REMINDER_TEST},
        ),
        _fix(HALF_CENTS, "Fix half-cent rounding of line amounts (#5)"),
        Change(
            "Refactor: lay out the rows of render_text in one helper",
            edits=(
                Edit(
                    render,
                    "    for line in invoice.lines:\n"
                    "        price = format_amount(line.unit_price, currency)\n"
                    "        amount = format_amount(line.amount, currency)\n"
                    '        rows.append(f"{line.description:<{width}}  {line.quantity} x '
                    '{price}  {amount}")\n',
                    "    rows += [_line_row(line, width, currency) for line in invoice.lines]\n",
                ),
                Edit(
                    render,
                    "\n\ndef pdf_filename(",
                    "\n\ndef _line_row(line: LineItem, width: int, currency: str) -> str:\n"
                    "    price = format_amount(line.unit_price, currency)\n"
                    "    amount = format_amount(line.amount, currency)\n"
                    '    return f"{line.description:<{width}}  {line.quantity} x {price}  '
                    '{amount}"\n'
                    "\n\ndef pdf_filename(",
                ),
                Edit(
                    render,
                    "from invoicekit.invoice import Invoice\n",
                    "from invoicekit.invoice import Invoice, LineItem\n",
                ),
            ),
        ),
        Change(
            "Fix amounts shown without the invoice's currency (#14)",
            edits=(
                Edit(
                    "src/invoicekit/invoice.py",
                    '    discount_percent: Decimal = Decimal("0")\n',
                    '    discount_percent: Decimal = Decimal("0")\n    currency: str = "USD"\n',
                ),
                Edit(
                    render,
                    'def render_text(invoice: Invoice, currency: str = "USD") -> str:\n',
                    "def render_text(invoice: Invoice) -> str:\n",
                ),
                Edit(
                    render,
                    "    width = max((len(line.description) for line in invoice.lines), "
                    "default=0)\n",
                    "    width = max((len(line.description) for line in invoice.lines), "
                    "default=0)\n    currency = invoice.currency\n",
                ),
                Edit(
                    render,
                    "Please pay {format_amount(invoice.total())}.",
                    "Please pay {format_amount(invoice.total(), invoice.currency)}.",
                ),
                Edit(
                    "src/invoicekit/csvio.py",
                    '    writer.writerow([*COLUMNS, "amount"])\n',
                    '    writer.writerow([*COLUMNS, "amount", "currency"])\n',
                ),
                Edit(
                    "src/invoicekit/csvio.py",
                    "line.unit_price, line.amount])\n",
                    "line.unit_price, line.amount, invoice.currency])\n",
                ),
                Edit(
                    "tests/test_csvio.py",
                    '"description,quantity,unit_price,amount\\nConsulting,2,150.00,300.00\\n"',
                    '"description,quantity,unit_price,amount,currency\\n"\n'
                    '        "Consulting,2,150.00,300.00,USD\\n"',
                ),
                Edit(
                    test_render,
                    "\n\ndef test_pdf_filename():",
                    "\n\ndef test_render_text_uses_the_invoice_currency():\n"
                    "    invoice = make_invoice()\n"
                    '    invoice.currency = "EUR"\n'
                    '    assert render_text(invoice).endswith("Total: €319.99\\n")\n'
                    "\n\ndef test_pdf_filename():",
                ),
            ),
        ),
        _fix(THOUSANDS, "Fix parse_amount for amounts with thousands separators (#16)"),
        Change(
            "Fix wording of the payment reminder (#17)",
            edits=(
                Edit(render, "is overdue since", "has been overdue since"),
                Edit(test_render, "is overdue since", "has been overdue since"),
            ),
        ),
        _fix(
            SLUG_ACCENTS,
            "Fix slugs of customer names with accents\n\nFixes #18. Letters are decomposed "
            '(NFKD) and their accents dropped,\nso the PDF of "Café Olé" is '
            "invoice-cafe-ole-....pdf again.",
            pull=19,
            branch="slug-accents",
        ),
        Change(
            "Fix broken link in the README",
            edits=(Edit("README.md", "(CHANGES.md)", "(CHANGELOG.md)"),),
        ),
        Change(
            "Release 0.4.0",
            files={
                "CHANGELOG.md": "# Changelog\n\n## 0.4.0\n\n"
                "- CSV import and export of invoice lines.\n"
                "- Payment reminders.\n"
                "- Amounts are shown in the invoice's currency.\n"
                "- Fixes: half-cent rounding, thousands separators, six-digit invoice "
                "numbers,\n  month ends, accented customer names, repeated discounts.\n",
            },
            edits=(
                Edit("pyproject.toml", 'version = "0.3.0"', 'version = "0.4.0"'),
                Edit("src/invoicekit/__init__.py", '"0.3.0"', '"0.4.0"'),
            ),
        ),
    ]
    return changes


# ---------------------------------------------------------------- writing the repository


def _git_env(when: datetime) -> dict[str, str]:
    """git without the user's configuration, as the maintainers, at `when`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_DATE=when.isoformat(),
        GIT_COMMITTER_DATE=when.isoformat(),
        LC_ALL="C",
    )
    return env


def _git(repo: Path, *args: str, when: datetime = _START, stdin: str | None = None) -> None:
    argv = ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args]
    try:
        subprocess.run(
            argv,
            cwd=repo,
            env=_git_env(when),
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )
    except FileNotFoundError:
        raise BugboutError(
            "The demo needs git to build its sample repository, and git is not installed.",
            hint="Install git with your package manager, e.g. `apt-get install git`.",
        ) from None
    except subprocess.CalledProcessError as error:
        raise BugboutError(
            f"git {args[0]} failed while building the demo repository in {repo}: "
            f"{error.stderr.strip() or error.stdout.strip()}"
        ) from None


def _apply(repo: Path, change: Change) -> None:
    for name, text in change.files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for edit in change.edits:
        path = repo / edit.path
        path.write_text(edit.apply(path.read_text(encoding="utf-8")), encoding="utf-8")
    for name, text in change.appends.items():
        path = repo / name
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def write_repository(repo: Path) -> None:
    """Create the sample repository at `repo` (which must not exist) with its whole history.

    Changes land a day or two apart at working hours, from a fixed start, so the shas are
    the same on every machine.
    """
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main")
    when = _START
    for index, change in enumerate(history()):
        when += timedelta(days=1 + index % 3, hours=(index * 5) % 7 - 3)
        if change.pull is None:
            _commit(repo, change, change.message, when)
            continue
        _git(repo, "switch", "--quiet", "--create", change.branch, when=when)
        _commit(repo, change, change.message.splitlines()[0], when - timedelta(hours=20))
        _git(repo, "switch", "--quiet", "main", when=when)
        merge = f"Merge pull request #{change.pull} from contributor/{change.branch}"
        message = f"{merge}\n\n{change.message}\n"
        _git(repo, "merge", "--quiet", "--no-ff", "-m", message, change.branch, when=when)
        _git(repo, "branch", "--quiet", "-d", change.branch, when=when)


def _commit(repo: Path, change: Change, message: str, when: datetime) -> None:
    _apply(repo, change)
    _git(repo, "add", "--all", when=when)
    _git(
        repo, "commit", "--quiet", "--cleanup=verbatim", "-F", "-", when=when, stdin=message + "\n"
    )


# ---------------------------------------------------------------- issues and configuration

OTHER_ISSUES: tuple[Issue, ...] = (
    Issue(
        8,
        "Import invoice lines from a CSV file",
        "Our shop exports orders as CSV (description, quantity, unit_price). It would save us "
        "a lot of typing if invoicekit could read those lines directly, and write them back "
        "out for the accountant.",
    ),
    Issue(
        14,
        "EUR invoices show their amounts in dollars",
        "An invoice for a customer in Lyon renders as `Total: $1,250.00`. The CSV export has "
        "no currency either.\n\nExpected: `Total: €1,250.00`, and a currency column.",
    ),
    Issue(
        16,
        "Accept thousands separators in parse_amount",
        "Fixes #15\n\n## Changes\n\n- drop `,` before handing the text to `Decimal`\n"
        "- a test with one and with several separators",
        pull_request=True,
    ),
    Issue(
        17,
        "Payment reminder reads awkwardly",
        'The reminder says "Invoice INV-0042 is overdue since 2024-03-31". Several customers '
        'pointed out it should be "has been overdue since".',
    ),
    Issue(
        19,
        "Fix slugs of customer names with accents",
        "Fixes #18.\n\n## Approach\n\nDecompose (NFKD) and drop what is not ASCII.",
        pull_request=True,
    ),
    Issue(
        20,
        "Support credit notes",
        "We sometimes need to refund part of an invoice. A credit note is an invoice with "
        "negative lines that refers to the original one.",
    ),
)


def issues() -> list[dict[str, object]]:
    """The issues file: every issue and pull request the history names, GitHub-shaped."""
    found = sorted([bug.report for bug in BUGS] + list(OTHER_ISSUES), key=lambda i: i.number)
    items: list[dict[str, object]] = []
    for issue in found:
        kind = "pull" if issue.pull_request else "issues"
        url = f"https://github.com/{GITHUB}/{kind}/{issue.number}"
        item: dict[str, object] = {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": "open" if issue.number == 20 else "closed",
            "html_url": url,
        }
        if issue.pull_request:
            item["pull_request"] = {"html_url": url}
        items.append(item)
    return items


def agent_command(python: str, style: Style, state_dir: Path | None = None) -> list[str]:
    """The command line of one scripted agent."""
    argv = [python, "-m", "bugbout_tui.demo.agent", "--style", style]
    argv += ["--prompt-file", "{prompt_file}"]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir), "--allowance", str(RATIONED_ALLOWANCE)]
    return argv


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def config_text(python: str, state_dir: Path) -> str:
    """The demo's bugbout.toml: the running Python, two quota lanes, five agents."""
    lines = [
        "# The built-in demo: a sample project (invoicekit) whose history holds fixed bugs,",
        "# raced by scripted agents that run offline. Written by `bugbout demo`; edit it and",
        "# run `bugbout -C <this directory> run` to try other settings.",
        "",
        "[project]",
        f'repository = "{REPOSITORY}"',
        f'source = "src/{PACKAGE}"',
        'tests = "tests"',
        f'issues-file = "{ISSUES_FILE}"',
        f"interpreter = {json.dumps(python)}",
        "# The sample needs no pytest plugin; whatever plugins this Python has stay out.",
        'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }',
        "",
        "[run]",
        "timeout = 60",
        "test-timeout = 60",
        'quotas = { "lane-a" = 2, "lane-b" = 1 }',
        "",
        "[judge]",
        'policy = "majority"',
    ]
    for style, lane in CONTESTANTS:
        rationed = style == "rationed"
        command = agent_command(python, style, state_dir if rationed else None)
        lines += [
            "",
            "[[contestants]]",
            'agent = "command"',
            f'name = "{style}"',
            f'vendor = "{style}"',
            f'quota = "{lane}"',
            f"command = {_toml_list(command)}",
        ]
        if rationed:
            lines.append(f"state-dirs = {_toml_list([str(state_dir)])}")
    lines += [
        "",
        "[[examiners]]",
        'agent = "command"',
        'name = "examiner"',
        'vendor = "examiner"',
        f'quota = "{EXAMINER_LANE}"',
        'assignment = "specify"',
        f"command = {_toml_list(agent_command(python, 'examiner'))}",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the demo directory


@dataclass(frozen=True)
class DemoProject:
    """A demo directory: where each part of it lives."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "bugbout.toml"

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def issues_path(self) -> Path:
        return self.root / ISSUES_FILE

    @property
    def state_dir(self) -> Path:
        """The rationed agent's usage counter; delete it to give the agent a new allowance."""
        return self.root / STATE_DIR / "rationed"

    @property
    def report_path(self) -> Path:
        return Store(self.root).report_markdown_path

    def is_current(self) -> bool:
        """Whether this directory is a demo built by this version of the demo."""
        marker = self.root / MARKER
        return marker.is_file() and marker.read_text(encoding="utf-8").strip() == DEMO_VERSION


def default_demo_dir() -> Path:
    return bugbout_home() / "demo"


def check_pytest(python: str = sys.executable) -> None:
    """The demo runs every test with this Python; say so plainly if it lacks pytest."""
    if python == sys.executable and importlib.util.find_spec("pytest") is not None:
        return
    if python != sys.executable:
        probe = subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False)
        if probe.returncode == 0:
            return
    raise BugboutError(
        f"The demo runs its tests with {python}, which cannot import pytest.",
        hint=f"Install it there: `{python} -m pip install pytest` "
        "(bugbout-tui normally brings it along).",
    )


def _check_interpreter(demo: DemoProject) -> None:
    """A reused demo runs with the Python it was built with, which may be gone since."""
    try:
        settings = tomllib.loads(demo.config_path.read_text(encoding="utf-8"))
        python = settings["project"]["interpreter"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return  # edited by hand: loading the config will say what is wrong
    if isinstance(python, str) and not Path(python).is_file():
        raise BugboutError(
            f"The demo in {demo.root} was built for {python}, which no longer exists.",
            hint="`bugbout demo --fresh` builds it again for the Python running now.",
        )


def build_demo(root: Path, *, python: str = sys.executable) -> DemoProject:
    """Write a fresh demo into `root`, which must not exist or be empty."""
    demo = DemoProject(root.resolve())
    demo.root.mkdir(parents=True, exist_ok=True)
    write_repository(demo.repository)
    write_atomic(demo.issues_path, json.dumps(issues(), indent=2, ensure_ascii=False) + "\n")
    demo.state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(demo.config_path, config_text(python, demo.state_dir))
    write_atomic(demo.root / MARKER, DEMO_VERSION + "\n")
    return demo


def prepare_demo(
    root: Path | None = None, *, fresh: bool = False, python: str = sys.executable
) -> tuple[DemoProject, bool]:
    """The demo in `root` (default: under BUGBOUT_HOME), built unless it is already there.

    Returns the demo and whether it was built now. A directory that holds anything but a
    demo is never touched; a demo of another version, or any demo with `fresh`, is
    deleted and built again (its results go with it).
    """
    demo = DemoProject((root or default_demo_dir()).expanduser().resolve())
    if demo.root.exists() and not demo.root.is_dir():
        raise UsageError(f"{demo.root} is a file; the demo needs a directory.")
    has_content = demo.root.is_dir() and any(demo.root.iterdir())
    if has_content and not (demo.root / MARKER).is_file():
        raise UsageError(
            f"{demo.root} already holds something other than a bugbout demo; "
            "the demo will not write into it.",
            hint="Give `bugbout demo` an empty or new directory.",
        )
    if has_content and demo.is_current() and not fresh:
        _check_interpreter(demo)
        return demo, False
    try:
        if has_content:
            shutil.rmtree(demo.root)
        return build_demo(demo.root, python=python), True
    except OSError as exc:  # read-only, full: leave no half-built demo to trip over
        if demo.root.is_dir():
            for child in demo.root.iterdir():
                with contextlib.suppress(OSError):
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
        raise BugboutError(
            f"cannot write the demo in {demo.root}: {exc.strerror or exc}"
            + (f" ({exc.filename})." if exc.filename else "."),
            hint="Free some space there, or give `bugbout demo` a directory you can write.",
        ) from None
