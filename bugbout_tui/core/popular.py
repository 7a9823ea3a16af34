"""The PyPI projects downloaded most, and the names one typo away from them.

A declared name one edit away from a popular project (and not popular itself) is a typo,
or a name chosen to be mistaken for a popular one: the dependency audit says so. The list
ships as package data (`data/popular.toml`), saying where and when it was taken, so a
report can tell how old the yardstick was.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib.resources import files

from bugbout_tui.core.env_models import normalize_name


@dataclass(frozen=True)
class PopularList:
    names: tuple[str, ...]
    """Normalized names, most downloaded first."""
    source: str
    taken: date


@cache
def popular_packages() -> PopularList:
    """The list that ships with bugbout."""
    text = files("bugbout_tui").joinpath("data", "popular.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    names = tuple(normalize_name(str(name)) for name in data["names"])
    return PopularList(names=names, source=str(data["source"]), taken=data["taken"])


def one_edit_away(name: str, popular: Iterable[str]) -> str | None:
    """The first popular name one edit (an insertion, a deletion, a substitution or two
    neighbours swapped: Damerau–Levenshtein distance 1) from `name`, both normalized as
    PEP 503; None when there is none or `name` is popular itself."""
    wanted = normalize_name(name)
    candidates = [normalize_name(other) for other in popular]
    if wanted in candidates:
        return None
    return next((other for other in candidates if _one_edit(wanted, other)), None)


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by exactly one edit (no full distance table needed)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    start = 0
    while start < len(a) and a[start] == b[start]:
        start += 1
    if len(a) < len(b):
        return a[start:] == b[start + 1 :]
    if a[start + 1 :] == b[start + 1 :]:
        return True
    swapped = start + 1 < len(a) and a[start] == b[start + 1] and a[start + 1] == b[start]
    return swapped and a[start + 2 :] == b[start + 2 :]
