"""Making untrusted text inert before anyone reads it.

Agents, the repositories they work in and the issues they are given all choose the text
bugbout shows: output lines, summaries, file and test names, failure messages, issue
titles and bodies, error messages. Every place that text reaches a terminal, a log line,
a TUI widget or a Markdown report passes it through one function here first, so that no
byte an agent picked can act on the terminal (set the clipboard with OSC 52, retitle the
window, move the cursor, clear the screen), disguise itself (bidi overrides), or make
the report show a link, an image, HTML or a table it did not earn.

The records keep the bytes the agent produced: they are evidence. Cleaning happens where
text is shown, never where it is stored.

`\r` never overwrites: `\r\n` is a line break, and so is a lone `\r`, so both texts it
separates stay visible. Tabs and newlines are kept by `inert`; `inert_line` turns them
into spaces for places that show one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_INVISIBLE_TRICKS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidi marks, embeddings, overrides and isolates: they reorder what the eye reads."""

_SUSPECT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE_TRICKS}]")
"""Any character `inert` would change; most text has none and is returned as it is."""

_STRING = "[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\\\|\x9c)?"
"""The body of a control string (OSC, DCS, SOS, PM, APC) up to BEL or ST; one left open
ends at the end of its line, so it cannot swallow what follows."""
_CSI = "[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
"""The body of a CSI: parameters, intermediates and the final byte."""

_SEQUENCES = re.compile(
    # ESC and what it introduces: a control string, a CSI, or intermediates and a final
    # byte (ESC c resets the terminal).
    f"\x1b(?:[]PX^_]{_STRING}|\\[{_CSI}|[\x20-\x2f]*[\x30-\x7e]?)"
    # The same, introduced by an 8-bit control.
    f"|[\x90\x98\x9d\x9e\x9f]{_STRING}|\x9b{_CSI}"
    # What is left: C0 controls but tab and newline, DEL, C1, bidi tricks.
    f"|[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE_TRICKS}]"
)
"""Alternatives led by a literal or a class, which the regex engine tries quickly."""

_ONE_LINE = str.maketrans("\n\t", "  ")


def inert(text: str) -> str:
    """`text` with every terminal control sequence and control character removed.

    Newlines and tabs stay; a carriage return becomes a newline. The result holds no
    ESC, no C0 control but tab and newline, no DEL, no C1 control (so no 8-bit CSI or
    OSC either) and no bidi control, and `inert(inert(t)) == inert(t)`.
    """
    if _SUSPECT.search(text) is None:
        return text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SEQUENCES.sub("", text)


def inert_line(text: str) -> str:
    """`inert(text)` on one line: line breaks and tabs become spaces."""
    text = inert(text)
    if "\n" in text or "\t" in text:
        return text.translate(_ONE_LINE)
    return text


def inert_fields(model: M, clean: Callable[[str], str] = inert_line) -> M:
    """A copy of `model` with `clean` applied to every string in it, however deep.

    For a renderer that shows many fields of a record: cleaning the record once, where it
    is shown, leaves no field to forget. Enum members (a fixed vocabulary) stay as they are.
    """
    return model.model_copy(
        update={
            name: _clean_value(getattr(model, name), clean) for name in type(model).model_fields
        }
    )


def _clean_value(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, BaseModel):
        return inert_fields(value, clean)
    if isinstance(value, list | tuple):
        return type(value)(_clean_value(item, clean) for item in value)
    if isinstance(value, dict):
        return {_clean_value(k, clean): _clean_value(v, clean) for k, v in value.items()}
    return value


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#!|~&$])")
"""Characters that can start Markdown inline syntax: links and images (`[`, `!`), HTML
and autolinks (`<`), entities (`&`, which could spell a control character again), code
spans, emphasis, strikethrough, math, table cells (`|`), and `\\` itself."""


def markdown_text(text: str) -> str:
    """`text` as Markdown that shows exactly its characters, where a line goes on after
    other text: in a table cell, a list item after its label, a heading after its words.

    Every character that could start inline syntax is backslash-escaped, and the text is
    folded onto one line, so it cannot make a link, an image, HTML, an entity, a heading,
    a list, a code block or fence, or a table row, and a `|` stays inside its cell. A bare
    web address may still be made a link by renderers that autolink; it then shows
    exactly where it points.
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", inert_line(text).strip())


def markdown_code(text: str) -> str:
    """`text` as a Markdown code span (its fences included), on one line.

    The fence is one backtick longer than the longest run of backticks inside, so the
    text cannot close it early. Not for table cells, where `|` would still split the
    cell.
    """
    shown = inert_line(text)
    longest = max((len(run) for run in re.findall("`+", shown)), default=0)
    fence = "`" * (longest + 1)
    if not shown:
        shown = " "  # a span cannot be empty; spaces alone are kept as they are
    elif shown.strip(" ") and (
        shown[0] == "`" or shown[-1] == "`" or (shown[0] == " " and shown[-1] == " ")
    ):
        shown = f" {shown} "  # one space each side is taken off again
    return f"{fence}{shown}{fence}"


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_INVISIBLE_TRICKS}]")


def inert_json(document: str) -> str:
    """A JSON document whose strings spell DEL, C1 and bidi controls as `\\uXXXX`.

    JSON escapes the C0 controls, ESC included, but lets these through, and a terminal
    showing the document would obey them. The escaped form is the same JSON value.
    """
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", document)
