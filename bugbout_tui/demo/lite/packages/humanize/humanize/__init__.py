"""Turn numbers into text people read at a glance."""

from __future__ import annotations

__all__ = ["intcomma", "naturalsize"]

_DECIMAL = ("kB", "MB", "GB", "TB", "PB")
_BINARY = ("KiB", "MiB", "GiB", "TiB", "PiB")


def naturalsize(value: float | str, binary: bool = False, format: str = "%.1f") -> str:
    """A size in bytes as `'1.5 kB'` (powers of 1000) or `'1.5 KiB'` (`binary`)."""
    base = 1024 if binary else 1000
    size = float(value)
    if abs(size) == 1:
        return f"{int(size)} Byte"
    if abs(size) < base:
        return f"{int(size)} Bytes"
    for power, unit in enumerate(_BINARY if binary else _DECIMAL, start=2):
        if abs(size) < base**power or unit in ("PB", "PiB"):
            return (format + " %s") % (size / base ** (power - 1), unit)
    raise AssertionError("unreachable")


def intcomma(value: int | float | str) -> str:
    """`1234567` as `'1,234,567'`."""
    number = float(value)
    return f"{number:,.0f}" if number.is_integer() else f"{number:,}"
