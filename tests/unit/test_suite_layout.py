"""The suite imports its test modules by their file names (the helpers beside them are
imported that way too), so two modules with one name in different folders stop the whole
run at collection with "import file mismatch"."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
