"""Untrusted text made inert: no sequence survives, nothing else changes."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic import BaseModel

from bugbout_tui.core.models import Reason
from bugbout_tui.core.text import (
    inert,
    inert_fields,
    inert_json,
    inert_line,
    markdown_code,
    markdown_text,
)

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What no inert text may hold: C0 but tab and newline (so ESC and CR), DEL, C1, bidi."""

SEQUENCES = [
    "\x1b]52;c;aGVsbG8=\x07",  # clipboard, BEL-terminated
    "\x1b]52;c;aGVsbG8=\x1b\\",  # clipboard, ST-terminated
    "\x9d52;c;aGVsbG8=\x9c",  # clipboard, 8-bit OSC and ST
    "\x1b]0;pwned\x07",  # window title
    "\x1b]8;;http://evil.example/\x1b\\",  # hyperlink
    "\x1b[31m",
    "\x1b[2J",
    "\x1b[?1049h",
    "\x1b[6n",  # asks the terminal to answer on stdin
    "\x9b2J",  # 8-bit CSI
    "\x1bP+q544e\x1b\\",  # DCS
    "\x1b_payload\x1b\\",  # APC
    "\x1b^privacy\x1b\\",  # PM
    "\x1bXstart\x1b\\",  # SOS
    "\x1bc",  # full reset
    "\x1b(0",  # line drawing charset
    "\x1b#8",  # fill the screen with E
    "\x1b7",
    "\x07",
    "\x08",
    "\x00",
    "\x7f",
    "\x85",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200f",
]

DENSE = ["a", "Z", "0", " ", "\n", "\t", "\r", "\x1b", "[", "]", "\\", ";", "P", "_", "^",
         "X", "c", "m", "7", "\x07", "\x9b", "\x9c", "\x9d", "\x90", "\x00", "\x7f", "\u202e",
         "\u2067", "é", "✓", "|", "`", "<", "&"]  # fmt: skip
cheap_text = st.text(alphabet=st.sampled_from(DENSE), max_size=60)


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_every_kind_of_sequence_leaves_nothing_behind(sequence: str) -> None:
    assert inert(f"before{sequence}after") == "beforeafter"
    assert inert_line(f"before{sequence}after") == "beforeafter"


@given(st.text())
@example("\x1b]52;c;aGk=\x1b\x1b\\\\")
@example("\x1b\x1b[31m")
@example("\x1b]0;\x9d0;t\x07")
def test_nothing_dangerous_survives_and_a_second_pass_changes_nothing(text: str) -> None:
    once = inert(text)
    assert FORBIDDEN.search(once) is None
    assert inert(once) == once
    line = inert_line(text)
    assert FORBIDDEN.search(line) is None
    assert "\n" not in line and "\t" not in line
    assert inert_line(line) == line


@given(cheap_text)
def test_the_same_holds_for_text_dense_in_escapes(text: str) -> None:
    once = inert(text)
    assert FORBIDDEN.search(once) is None
    assert inert(once) == once


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"])))
def test_text_without_controls_is_left_exactly_as_it_was(text: str) -> None:
    text = FORBIDDEN.sub("", text)
    assert inert(text) == text


def test_carriage_returns_never_overwrite_and_newlines_and_tabs_stay() -> None:
    assert inert("rm -rf /\rharmless") == "rm -rf /\nharmless"
    assert inert("a\r\nb\n\tc") == "a\nb\n\tc"
    assert inert_line("rm -rf /\rharmless\tnow\n") == "rm -rf / harmless now "


def test_an_unterminated_string_ends_with_its_line() -> None:
    assert inert("\x1b]0;title never ends\nthe issue goes on") == "\nthe issue goes on"


def test_markup_like_text_is_not_touched() -> None:
    # rich markup is the renderers' business: they show text as Text, never as markup
    assert inert("[bold]x[/] [link=http://evil]y[/link]") == "[bold]x[/] [link=http://evil]y[/link]"


def test_a_long_plain_line_costs_a_scan() -> None:
    line = "x" * 500
    started = time.perf_counter()
    for _ in range(20_000):
        inert_line(line)
    per_line = (time.perf_counter() - started) / 20_000
    assert inert_line(line) is line
    assert per_line < 50e-6, per_line


class _Excluded(BaseModel):
    title: str
    reason: Reason


class _Record(BaseModel):
    name: str
    note: str | None
    count: int
    files: list[str]
    excluded: list[_Excluded]
    by_agent: dict[str, _Excluded]


def test_every_string_of_a_record_is_cleaned_and_its_vocabulary_kept() -> None:
    hostile = "a\x1b]0;title\x07\x9b2J\u202eb\nc"
    excluded = _Excluded(title=hostile, reason=Reason.NOT_A_FIX)
    record = _Record(
        name=hostile, note=None, count=3, files=[hostile], excluded=[excluded],
        by_agent={hostile: excluded},
    )  # fmt: skip
    shown = inert_fields(record)
    assert shown.name == "ab c"
    assert shown.files == ["ab c"]
    assert shown.excluded[0].title == "ab c"
    assert shown.excluded[0].reason is Reason.NOT_A_FIX
    assert list(shown.by_agent) == ["ab c"]
    assert (shown.note, shown.count) == (None, 3)
    assert record.name == hostile  # the record itself keeps the agent's bytes
    assert inert_fields(record, inert).name == "ab\nc"


# --- Markdown ----------------------------------------------------------------------------

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
TASK_LABEL = "calc-1"
"""What goes before a text in the report's lists: a text never starts a line."""


def _escape_html(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


printable = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from(
        ["\n", "\t", "\r", "\x1b", "\u202e", "é", "✓"]
    ),
    max_size=80,
)  # fmt: skip


@given(printable)
@example("[x](http://evil)")
@example("![img](http://evil/pixel.png)")
@example("<img src=x onerror=alert(1)>")
@example("| a | b |\n|---|---|\n| c | d |")
@example("# heading\n\n```\nfence\n```")
@example("- item")
@example("1. item")
@example("    indented code")
@example("&#x202e;&lt;&#27;")
@example("*em* __strong__ ~~gone~~ `code` $x$")
@example("a  \nb")
@example("\\[x](y)")
def test_markdown_text_renders_as_exactly_its_own_characters(text: str) -> None:
    shown = inert_line(text).strip()
    html = MARKDOWN.render(f"- {TASK_LABEL}: {markdown_text(text)}")
    item = f"{TASK_LABEL}: {_escape_html(shown)}".rstrip()
    assert html == f"<ul>\n<li>{item}</li>\n</ul>\n"


@given(printable)
@example("| a | b |")
@example("x\n|---|\ny")
def test_markdown_text_keeps_a_table_row_to_its_cells(text: str) -> None:
    row = f"| {markdown_text(text)} | second |"
    html = MARKDOWN.render(f"| one | two |\n|---|---|\n{row}\n")
    assert html.count("<tr>") == 2
    assert html.count("<td>") == 2
    assert "<td>second</td>" in html
    assert "<a " not in html and "<img" not in html


@given(printable)
@example("a ` b")
@example("``")
@example("`start")
@example(" padded ")
@example("")
def test_markdown_code_shows_exactly_its_text(text: str) -> None:
    shown = inert_line(text) or " "
    html = MARKDOWN.render(f"see {markdown_code(text)}")
    assert html == f"<p>see <code>{_escape_html(shown)}</code></p>\n"


# --- JSON --------------------------------------------------------------------------------


@given(st.text())
def test_json_spells_what_a_terminal_would_obey_and_means_the_same(text: str) -> None:
    document = json.dumps({"title": text}, ensure_ascii=False)
    safe = inert_json(document)
    assert FORBIDDEN.search(safe) is None
    assert json.loads(safe) == {"title": text}
