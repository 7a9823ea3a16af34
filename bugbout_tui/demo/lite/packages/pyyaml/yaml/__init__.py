"""A small YAML reader and writer: block mappings, block sequences and plain scalars."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["YAMLError", "safe_dump", "safe_load"]

_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


class YAMLError(Exception):
    """The text is not YAML this reader understands."""


def _scalar(text: str) -> Any:
    text = text.strip()
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _lines(text: str) -> list[tuple[int, str]]:
    found = []
    for raw in text.splitlines():
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if line.strip() and line.strip() != "---":
            found.append((len(line) - len(line.lstrip(" ")), line.strip()))
    return found


def _block(lines: list[tuple[int, str]], at: int, indent: int) -> tuple[Any, int]:
    if lines[at][1].startswith("- ") or lines[at][1] == "-":
        items: list[Any] = []
        while at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("-"):
            rest = lines[at][1][1:].strip()
            if not rest:
                value, at = _block(lines, at + 1, lines[at + 1][0])
            elif ":" in rest and not rest.startswith(("'", '"')):
                inner = indent + 2
                lines[at] = (inner, rest)
                value, at = _block(lines, at, inner)
            else:
                value, at = _scalar(rest), at + 1
            items.append(value)
        return items, at
    mapping: dict[str, Any] = {}
    while at < len(lines) and lines[at][0] == indent:
        key, sep, rest = lines[at][1].partition(":")
        if not sep:
            raise YAMLError(f"expected 'key: value', found {lines[at][1]!r}")
        if rest.strip():
            mapping[key.strip()] = _scalar(rest)
            at += 1
        elif (
            at + 1 < len(lines)
            and lines[at + 1][0] >= indent
            and (lines[at + 1][0] > indent or lines[at + 1][1].startswith("-"))
        ):
            mapping[key.strip()], at = _block(lines, at + 1, lines[at + 1][0])
        else:
            mapping[key.strip()] = None
            at += 1
    return mapping, at


def safe_load(stream: str) -> Any:
    """The document in `stream`, as plain Python values."""
    lines = _lines(stream)
    if not lines:
        return None
    if len(lines) == 1 and ":" not in lines[0][1] and not lines[0][1].startswith("-"):
        return _scalar(lines[0][1])
    value, at = _block(lines, 0, lines[0][0])
    if at != len(lines):
        raise YAMLError(f"unexpected indentation at {lines[at][1]!r}")
    return value


def _dump(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        out = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                out += [f"{pad}{key}:", *_dump(item, indent + 2)]
            else:
                out.append(f"{pad}{key}: {_plain(item)}")
        return out
    if isinstance(value, list):
        return [f"{pad}- {_plain(item)}" for item in value]
    return [f"{pad}{_plain(value)}"]


def _plain(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    return str(value)


def safe_dump(data: Any) -> str:
    """`data` written as block-style YAML."""
    return "\n".join(_dump(data, 0)) + "\n"
