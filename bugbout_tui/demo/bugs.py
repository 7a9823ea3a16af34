"""The demo's six bugs, seen from two sides that never meet.

`BUGS` is the maintainers' side: each bug's report as it was filed, and the patch in
`history/` that fixed it with the test that came with it. Only `demo.repository` and
`demo.project` read it, to write the sample repository's history and its issues file.

`PLAYBOOKS` is the agents' side: for each bug, the words that give it away in a report
and what each scripted agent does once it recognises them, written as edits to the code
a working copy holds and the test modules under `playbooks/` it adds. `demo.agent` reads
only this, plus the prompt and the files in front of it, exactly what a real agent gets:
never the fix, its tests or the history.

The bugs are chosen so the judge has something to decide. The hasty agent's wrong fixes
pass its own narrow test but fail everyone else's, so no policy approves them; the
discount bug is found by the careful agent alone while the examiner cannot reproduce
it, so its one patch has no independent support and the judge abstains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

Style = Literal["careful", "hasty", "slow", "rationed", "examiner"]
STYLES: tuple[Style, ...] = ("careful", "hasty", "slow", "rationed", "examiner")


def read_data(path: str) -> str:
    """A file of the demo's package data, by its `/`-separated path; read from a wheel too."""
    data = resources.files("bugbout_tui.demo").joinpath(*path.split("/"))
    return data.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Edit:
    """Replace `old` with `new` in one file, where `old` occurs exactly once."""

    path: str
    old: str
    new: str

    def apply(self, text: str) -> str:
        """`text` edited; `ValueError` when the expected code is absent or ambiguous."""
        found = text.count(self.old)
        if found != 1:
            where = "is not there" if found == 0 else f"is there {found} times"
            raise ValueError(f"{self.path}: the code to change {where}")
        return text.replace(self.old, self.new)


@dataclass(frozen=True)
class NewFile:
    """A test module an agent writes: `path` in its working copy, `source` in `playbooks/`."""

    path: str
    source: str

    @property
    def text(self) -> str:
        return read_data(self.source)


@dataclass(frozen=True)
class Issue:
    """An issue or pull request as the issues file holds it."""

    number: int
    title: str
    body: str
    pull_request: bool = False


@dataclass(frozen=True)
class Bug:
    """A bug as its maintainers met it: the report, the fix, the test that proves it."""

    topic: str
    report: Issue
    patch: str
    """The fix's commit in `history/`: the maintainers' source change and their new test."""


@dataclass(frozen=True)
class Recipe:
    """What one scripted agent does about one bug, from the issue and the code alone."""

    reads: tuple[str, ...]
    edits: tuple[Edit, ...] = ()
    tests: NewFile | None = None
    says: str = ""
    """The agent's closing words."""


@dataclass(frozen=True)
class Playbook:
    """How the scripted agents recognise one bug and what each of them does about it."""

    topic: str
    keywords: tuple[str, ...]
    """Words that must all appear in the issue text (whole words, any case)."""
    careful: Recipe
    hasty: Recipe
    examiner: Recipe

    def matches(self, issue_text: str) -> bool:
        text = issue_text.lower()
        return all(re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", text) for k in self.keywords)

    def recipe(self, style: Style) -> Recipe:
        """The slow and the rationed agent fix like the careful one, under their own names."""
        if style in ("careful", "hasty", "examiner"):
            recipe: Recipe = getattr(self, style)
            return recipe
        tests = self.careful.tests
        named = (
            None if tests is None else NewFile(f"tests/test_{self.topic}_{style}.py", tests.source)
        )
        return Recipe(self.careful.reads, self.careful.edits, named, self.careful.says)


def recognise(issue_text: str) -> Playbook | None:
    """The playbook whose keywords the issue text contains, if any."""
    return next((book for book in PLAYBOOKS if book.matches(issue_text)), None)


def _written(topic: str, name: str) -> NewFile:
    """The test module `name` an agent writes about `topic`, kept in `playbooks/<topic>/`."""
    return NewFile(f"tests/{name}", f"playbooks/{topic}/{name}")


# ---------------------------------------------------------------- slugs of accented names

_SLUG = "src/invoicekit/slug.py"

SLUG_ACCENTS = Bug(
    topic="slug_accents",
    report=Issue(
        18,
        "PDF file names drop accented letters from customer names",
        """\
Invoices for our customer "Café Olé" are saved as `invoice-caf-ol-inv-0042.pdf`: the
accented letters simply disappear, which makes the files hard to find in the archive.

### Steps to reproduce

```python
from invoicekit.slug import slugify

slugify("Café Olé")
```

### Expected

`'cafe-ole'`

### Actual

`'caf-ol'`

Quite a few of our customers have names like this, German and Spanish ones mostly.
""",
    ),
    patch="17-fix-slug-accents.patch",
)

_SLUG_PLAYBOOK = Playbook(
    topic="slug_accents",
    keywords=("accented", "slugify"),
    careful=Recipe(
        reads=(_SLUG, "src/invoicekit/render.py", "tests/test_render.py"),
        edits=(
            Edit(_SLUG, "import re\n", "import re\nimport unicodedata\n"),
            Edit(
                _SLUG,
                "    text = text.lower()\n",
                '    decomposed = unicodedata.normalize("NFKD", text)\n'
                '    text = "".join(c for c in decomposed if not unicodedata.combining(c))\n'
                "    text = text.lower()\n",
            ),
        ),
        tests=_written("slug_accents", "test_regression_slug_accents.py"),
        says="slugify() dropped every non-ASCII letter. It now decomposes letters (NFKD) and "
        "drops only the accents, so 'Café Olé' becomes 'cafe-ole' and 'Müller' 'muller'. "
        "Added a regression test with names from several languages.",
    ),
    hasty=Recipe(
        reads=(_SLUG,),
        edits=(
            Edit(
                _SLUG,
                "    text = text.lower()\n",
                '    text = text.lower().replace("é", "e")\n',
            ),
        ),
        tests=_written("slug_accents", "test_slug_fix.py"),
        says="Replaced 'é' with 'e' before slugging. Done.",
    ),
    examiner=Recipe(
        reads=(_SLUG,),
        tests=_written("slug_accents", "test_issue_accented_names.py"),
        says="test_reported_name_keeps_its_letters: the example from the issue. "
        "test_accented_letters_of_other_languages_keep_their_letters: the rule behind it, "
        "for letters other than 'é'. test_names_without_accents_are_unchanged: what works "
        "today and must keep working.",
    ),
)

# ---------------------------------------------------------------- thousands separators

_MONEY = "src/invoicekit/money.py"
_PARSE_LINE = '    cleaned = text.strip().lstrip("$€£").strip()\n'

THOUSANDS = Bug(
    topic="thousands",
    report=Issue(
        15,
        "CSV import rejects amounts with thousands separators",
        """\
Importing the line items our shop exports fails as soon as a price is 1,000 or more:

```
Traceback (most recent call last):
  File "import_lines.py", line 12, in <module>
    lines = read_lines(handle)
  File ".../invoicekit/csvio.py", line 20, in read_lines
    LineItem(row["description"], Decimal(row["quantity"]), parse_amount(row["unit_price"]))
  File ".../invoicekit/money.py", line 25, in parse_amount
    raise ValueError(f"not an amount: {text!r}") from None
ValueError: not an amount: '$1,200.00'
```

The same file imports fine once I delete the commas by hand.

**Expected:** `parse_amount("$1,200.00") == Decimal("1200.00")`
**Actual:** `ValueError`
""",
    ),
    patch="15-fix-thousands.patch",
)

_THOUSANDS_PLAYBOOK = Playbook(
    topic="thousands",
    keywords=("thousands", "parse_amount"),
    careful=Recipe(
        reads=(_MONEY, "src/invoicekit/csvio.py"),
        edits=(
            Edit(
                _MONEY,
                _PARSE_LINE,
                '    cleaned = text.strip().lstrip("$€£").strip().replace(",", "")\n',
            ),
        ),
        tests=_written("thousands", "test_regression_thousands.py"),
        says="parse_amount() handed '1,200.00' to Decimal, which rejects the comma. It now "
        "removes thousands separators first. Added a regression test, and one that "
        "text is still rejected.",
    ),
    hasty=Recipe(
        reads=(_MONEY,),
        edits=(
            Edit(
                _MONEY,
                _PARSE_LINE,
                _PARSE_LINE + '    cleaned = cleaned.replace(",", "")\n',
            ),
        ),
        tests=_written("thousands", "test_parse_fix.py"),
        says="Strip commas before parsing. Done.",
    ),
    examiner=Recipe(
        reads=(_MONEY,),
        tests=_written("thousands", "test_issue_thousands_separators.py"),
        says="test_reported_amount_is_read: the example from the issue. "
        "test_separators_in_larger_amounts_are_read: several separators, other currencies. "
        "test_plain_amounts_are_still_read and test_text_is_still_rejected: behaviour "
        "that must not change.",
    ),
)

# ---------------------------------------------------------------- half-cent rounding

_ROUND_LINE = "    return amount.quantize(CENT)\n"
_DECIMAL_IMPORT = "from decimal import Decimal, InvalidOperation\n"

HALF_CENTS = Bug(
    topic="half_cents",
    report=Issue(
        5,
        "Line amounts round half a cent down",
        """\
A line of 5 stickers at 2.125 each comes out as 10.62 on our invoices. Our accounting
software, and the paper invoices we wrote before, say 10.63.

Steps to reproduce:

```python
from decimal import Decimal
from invoicekit.invoice import LineItem

LineItem("Stickers", Decimal("5"), Decimal("2.125")).amount
```

Expected `Decimal('10.63')`, got `Decimal('10.62')`.

Oddly it does not happen with every amount: 5 × 2.135 gives 10.68, as it should.
""",
    ),
    patch="12-fix-half-cents.patch",
)

_HALF_CENTS_PLAYBOOK = Playbook(
    topic="half_cents",
    keywords=("round", "cent"),
    careful=Recipe(
        reads=(_MONEY, "src/invoicekit/invoice.py"),
        edits=(
            Edit(
                _MONEY,
                _DECIMAL_IMPORT,
                "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation\n",
            ),
            Edit(_MONEY, _ROUND_LINE, "    return amount.quantize(CENT, rounding=ROUND_HALF_UP)\n"),
        ),
        tests=_written("half_cents", "test_regression_half_cents.py"),
        says="round_money() used Decimal's default rounding, which sends a half to the even "
        "neighbour (10.625 -> 10.62, but 10.675 -> 10.68): that is why only some amounts "
        "were off. It now rounds half a cent up. The regression test checks both sides "
        "of the half.",
    ),
    hasty=Recipe(
        reads=(_MONEY,),
        edits=(
            Edit(
                _MONEY, _DECIMAL_IMPORT, "from decimal import ROUND_UP, Decimal, InvalidOperation\n"
            ),
            Edit(_MONEY, _ROUND_LINE, "    return amount.quantize(CENT, rounding=ROUND_UP)\n"),
        ),
        tests=_written("half_cents", "test_rounding_fix.py"),
        says="Amounts now round up. Done.",
    ),
    examiner=Recipe(
        reads=(_MONEY, "src/invoicekit/invoice.py"),
        tests=_written("half_cents", "test_issue_half_cents.py"),
        says="test_reported_line_amount: the example from the issue. "
        "test_amounts_round_to_the_nearest_cent_with_halves_up: the rule, on both sides of "
        "a half. test_amounts_off_the_half_round_as_before: what works today.",
    ),
)

# ---------------------------------------------------------------- invoice number width

_NUMBERING = "src/invoicekit/numbering.py"
_NEXT_LINE = '    return f"{prefix}-{int(digits) + 1:04d}"\n'

NUMBER_WIDTH = Bug(
    topic="number_width",
    report=Issue(
        11,
        "next_invoice_number shortens six-digit invoice numbers",
        """\
Our invoice numbers have six digits, e.g. `INV-000123`. The number invoicekit suggests
after it is `INV-0124`, which breaks the sorting in our archive and our accountant's
import.

```python
>>> from invoicekit.numbering import next_invoice_number
>>> next_invoice_number("INV-000123")
'INV-0124'
```

Expected `'INV-000124'`. Four-digit numbers work fine (`INV-0041` → `INV-0042`).
""",
    ),
    patch="10-fix-number-width.patch",
)

_NUMBER_WIDTH_PLAYBOOK = Playbook(
    topic="number_width",
    keywords=("next_invoice_number",),
    careful=Recipe(
        reads=(_NUMBERING,),
        edits=(
            Edit(
                _NUMBERING,
                _NEXT_LINE,
                '    width = len(digits)\n    return f"{prefix}-{int(digits) + 1:0{width}d}"\n',
            ),
        ),
        tests=_written("number_width", "test_regression_number_width.py"),
        says="next_invoice_number() always padded to four digits. It now pads to the width "
        "of the number it continues. Added a regression test for several widths.",
    ),
    hasty=Recipe(
        reads=(_NUMBERING,),
        edits=(
            Edit(
                _NUMBERING,
                _NEXT_LINE,
                '    return f"{prefix}-{str(int(digits) + 1).zfill(len(digits))}"\n',
            ),
        ),
        tests=_written("number_width", "test_numbering_fix.py"),
        says="Pad to the length of the old number. Done.",
    ),
    examiner=Recipe(
        reads=(_NUMBERING,),
        tests=_written("number_width", "test_issue_number_width.py"),
        says="test_reported_number: the example from the issue. "
        "test_numbers_of_any_width_keep_it: the rule for other widths. "
        "test_four_digit_numbers_work_as_before: what works today.",
    ),
)

# ---------------------------------------------------------------- end of the month

_DATES = "src/invoicekit/dates.py"
_ADD_MONTHS_BODY = (
    "    month = day.month - 1 + months\n"
    "    return day.replace(year=day.year + month // 12, month=month % 12 + 1)\n"
)
_DATETIME_IMPORT = "from datetime import date, timedelta\n"

MONTH_END = Bug(
    topic="month_end",
    report=Issue(
        7,
        "add_months crashes for dates at the end of a month",
        """\
Monthly subscriptions that start on the 31st cannot be renewed:

```
>>> from datetime import date
>>> from invoicekit.dates import add_months
>>> add_months(date(2023, 1, 31), 1)
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File ".../invoicekit/dates.py", line 17, in add_months
    return day.replace(year=day.year + month // 12, month=month % 12 + 1)
ValueError: day is out of range for month
```

Expected: `date(2023, 2, 28)`, the last day of February.
""",
    ),
    patch="07-fix-month-end.patch",
)

_MONTH_END_PLAYBOOK = Playbook(
    topic="month_end",
    keywords=("add_months",),
    careful=Recipe(
        reads=(_DATES, "tests/test_render.py"),
        edits=(
            Edit(_DATES, _DATETIME_IMPORT, "import calendar\n" + _DATETIME_IMPORT),
            Edit(
                _DATES,
                _ADD_MONTHS_BODY,
                "    month = day.month - 1 + months\n"
                "    year, month = day.year + month // 12, month % 12 + 1\n"
                "    last_day = calendar.monthrange(year, month)[1]\n"
                "    return date(year, month, min(day.day, last_day))\n",
            ),
        ),
        tests=_written("month_end", "test_regression_month_end.py"),
        says="add_months() kept the day of the month even where the target month is "
        "shorter. It now stops at the month's last day (leap years included). Added a "
        "regression test.",
    ),
    hasty=Recipe(
        reads=(_DATES,),
        edits=(
            Edit(
                _DATES,
                "    month = day.month - 1 + months\n",
                "    day = day.replace(day=min(day.day, 28))\n    month = day.month - 1 + months\n",
            ),
        ),
        tests=_written("month_end", "test_dates_fix.py"),
        says="Cap the day at 28 so every month has it. Done.",
    ),
    examiner=Recipe(
        reads=(_DATES,),
        tests=_written("month_end", "test_issue_month_end.py"),
        says="test_reported_date: the example from the issue. "
        "test_late_days_land_on_the_last_day_of_shorter_months: the rule, leap years "
        "included. test_other_days_are_kept: what works today.",
    ),
)

# ---------------------------------------------------------------- discounts applied twice

_INVOICE = "src/invoicekit/invoice.py"
_DISCOUNT_LOOP = (
    "        for line in self.lines:\n"
    "            line.unit_price = line.unit_price * factor\n"
    "        return self.lines\n"
)

DISCOUNT_TWICE = Bug(
    topic="discount_twice",
    report=Issue(
        4,
        "Totals on the PDF and in the e-mail differ for discounted invoices",
        """\
We send every invoice as an e-mail with the PDF attached. For customers with a
discount, the total printed in the PDF is lower than the total in the e-mail body.
Invoices without a discount look fine.

Example from yesterday: INV-0107 for Northwind, a single line "Consulting, 1 × 100.00"
with a 10% discount. The e-mail said $90.00, the PDF said $81.00.

Expected: both say $90.00.

Both are made from the same invoice. invoicekit 0.1.0, Python 3.12.
""",
    ),
    patch="05-fix-discount-twice.patch",
)

_DISCOUNT_PLAYBOOK = Playbook(
    topic="discount_twice",
    keywords=("discount", "e-mail"),
    careful=Recipe(
        reads=(_INVOICE, "src/invoicekit/render.py"),
        edits=(
            Edit(
                _INVOICE,
                "from dataclasses import dataclass, field\n",
                "from dataclasses import dataclass, field, replace\n",
            ),
            Edit(
                _INVOICE,
                _DISCOUNT_LOOP,
                "        return [replace(line, unit_price=line.unit_price * factor)"
                " for line in self.lines]\n",
            ),
        ),
        tests=_written("discount_twice", "test_regression_discount_twice.py"),
        says="discounted_lines() took the discount off each line's unit price in place, so "
        "every call to total() discounted the invoice once more: the e-mail computed 90.00, "
        "the PDF rendered next computed 81.00. It now returns discounted copies. The "
        "regression test computes the total twice, as sending an invoice does.",
    ),
    hasty=Recipe(
        reads=(_INVOICE,),
        says="Tried the example: total() gives $90.00 here. I cannot reproduce the "
        "difference, so I left the code alone.",
    ),
    examiner=Recipe(
        reads=(_INVOICE, "src/invoicekit/render.py"),
        tests=_written("discount_twice", "test_issue_discount_totals.py"),
        says="None of these tests fails on this code: the example from the issue totals "
        "$90.00 both ways here, so I could not reproduce the difference. The tests pin the "
        "totals the issue expects.",
    ),
)

BUGS: tuple[Bug, ...] = (
    SLUG_ACCENTS,
    THOUSANDS,
    HALF_CENTS,
    NUMBER_WIDTH,
    MONTH_END,
    DISCOUNT_TWICE,
)
"""Newest fix first, as mining lists the tasks."""

PLAYBOOKS: tuple[Playbook, ...] = (
    _SLUG_PLAYBOOK,
    _THOUSANDS_PLAYBOOK,
    _HALF_CENTS_PLAYBOOK,
    _NUMBER_WIDTH_PLAYBOOK,
    _MONTH_END_PLAYBOOK,
    _DISCOUNT_PLAYBOOK,
)
