"""A task's problem statement: the text of an issue or pull request, cut to the problem.

Agents must be told the problem the maintainers faced, not how it was solved. Issue and
pull request texts often carry the solution too, in three shapes, and each is cut here:

- **sections** whose heading names the fix or the change made (Solution, Root cause,
  Changes, Testing, ...), including a paragraph led by such a name as a label
  (`**Fix:** the helper now ...`);
- **diff blocks**, whatever their section;
- **sentences about the change**. In any text, a sentence whose subject is the fix or the
  pull request ("The fix computes ...", "This PR makes ...") or in which the writer says
  they fixed it ("I fixed it by ..."), and a sentence that is nothing but a closing
  reference ("Fixes #12."). In a pull request's text, which its author wrote knowing the
  answer, also a sentence in which the writer says what they did ("I changed ...",
  "We now ...") or that opens with a verb of change ("Added a regression test.",
  "Route the value into ..."), and any sentence naming "the fix", "this change" or "the
  patch". A paragraph is cut from the first such sentence to its end, since what follows
  in it explains the change; a code block that the cut text introduces (it ended with a
  colon), and a paragraph that goes on with its sentence after that block (it starts in
  lower case), go with it.

A pull request's title is its author's name for the change ("Limit parser nesting depth
instead of crashing"), so it is never part of the statement. An issue's title is the
reporter's, written before anyone knew the answer, so it heads the statement. When
nothing of a pull request's text is left, the statement describes no problem at all.

Reproducer code and tracebacks stay wherever they are: they describe the problem.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from bugbout_tui.rules.refs import CLOSING_PHRASE

Writer = Literal["reporter", "fixer"]
"""Who wrote a text: the reporter of an issue, or the author of the change (a PR)."""

# ---------------------------------------------------------------- markdown blocks

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
"""Any indentation: fences inside list items are indented, and their code is still code."""
_ATX_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<name>.*?))?(?:[ \t]+#+)?[ \t]*$")
_BOLD_HEADING = re.compile(r"^ {0,3}(?P<mark>\*\*|__)(?P<name>.+?)(?P=mark)[ \t]*:?[ \t]*$")
_BOLD_LEVEL = 7
"""A whole-line bold "heading" ranks below every real heading: any heading ends it."""
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")
_TRAILER = re.compile(r"^[ \t]*(?:(?:[A-Za-z]+-)+by|Change-Id):[ \t]", re.IGNORECASE)
"""Git trailers (`Signed-off-by:`, `Co-authored-by:`, `Change-Id:`): who, not what."""


@dataclass
class _Fence:
    """A fenced code block, kept verbatim (blank lines and `#` lines are code there)."""

    marker: str
    info: str
    lines: list[str] = field(default_factory=list)
    """Every line, the fences included."""

    def closed_by(self, line: str) -> bool:
        stripped = line.strip()
        return len(stripped) >= len(self.marker) and set(stripped) == {self.marker[0]}

    @property
    def content(self) -> list[str]:
        return self.lines[1:-1] if len(self.lines) > 1 else []


_Block = str | _Fence


def _without_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The parts of `line` outside HTML comments, and whether a comment is still open."""
    kept: list[str] = []
    rest = line
    while True:
        if in_comment:
            end = rest.find("-->")
            if end < 0:
                return "".join(kept), True
            rest = rest[end + 3 :]
            in_comment = False
        start = rest.find("<!--")
        if start < 0:
            kept.append(rest)
            return "".join(kept), False
        kept.append(rest[:start])
        rest = rest[start + 4 :]
        in_comment = True


def blocks(text: str) -> list[_Block]:
    """Lines and fenced blocks, with HTML comments gone from the lines.

    Comments are removed outside code only: reproducer code may well contain `<!--`.
    A comment that was a whole line leaves nothing behind, not even a blank line.
    An unclosed comment hides the rest of the text, as it does when GitHub renders it.
    """
    found: list[_Block] = []
    fence: _Fence | None = None
    in_comment = False
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if fence is not None:
            fence.lines.append(raw)
            if len(fence.lines) > 1 and fence.closed_by(raw):
                found.append(fence)
                fence = None
            continue
        line, in_comment_after = _without_comments(raw, in_comment)
        touched = in_comment or "<!--" in raw
        in_comment = in_comment_after
        if touched and not line.strip():
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = _Fence(opening["fence"], opening["info"].strip(), [line])
            continue
        found.append(line)
    if fence is not None:
        found.append(fence)
    return found


def prose_lines(text: str) -> list[str]:
    """The lines of `text` outside code blocks and HTML comments."""
    return [block for block in blocks(text) if isinstance(block, str)]


def text_lines(text: str) -> list[str]:
    """The lines of `text` outside HTML comments, code blocks' contents included."""
    lines: list[str] = []
    for block in blocks(text):
        lines.extend(block.content if isinstance(block, _Fence) else [block])
    return lines


# ---------------------------------------------------------------- sections about the fix

_FIX_SECTION = re.compile(
    r"""
    (?:the\ |my\ |our\ |a\ |proposed\ |possible\ |suggested\ |potential\ )?
        (?:solution|fix|fixes|bug\ ?fix|patch|resolution|approach|implementation)s?
    | (?:proposed\ |suggested\ |breaking\ |code\ |behaviou?r\ )?changes?
        (?:\ made|\ proposed|\ introduced|\ included|\ in\ this\ (?:pr|pull\ request))?
    | what\ (?:changed|was\ changed|has\ changed|i\ changed|i\ did
        |this\ (?:pr|pull\ request)\ does|does\ this\ (?:pr|pull\ request)\ do)
    | how(?:\ (?:it\ was\ fixed|this\ was\ fixed|was\ this\ fixed|to\ fix(?:\ it)?
        |it\ works|this\ works|does\ this\ fix\ it|this\ fixes\ it))?
    | (?:summary|description|list|overview)\ of\ (?:the\ )?changes
    | (?:fix|change|pr|pull\ request)\ (?:description|summary)
    | (?:pr\ |pull\ request\ )?checklist
    | testing(?:\ done|\ performed|\ instructions)?
    | tests?(?:\ (?:plan|added|performed|done|coverage))?
    | verification | validation
    | how\ (?:has\ this\ been|was\ this|is\ this|was\ it|to)\ tested?
    | (?:(?:suspected|likely|possible|probable)\ )?(?:root\ )?causes?(?:\ analysis)?
    | analysis | diagnosis | explanation | technical\ details
    | alternatives?(?:\ considered)? | scope
    | changelog(?:\ entry)? | release\ notes? | news\ entry
    """,
    re.VERBOSE,
)
_DIFF_INFO = frozenset({"diff", "patch", "udiff"})
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _heading(line: str) -> tuple[int, str] | None:
    """The level and the plain name of a heading line, or None for other lines."""
    atx = _ATX_HEADING.match(line)
    if atx is not None:
        return len(atx["marks"]), atx["name"] or ""
    bold = _BOLD_HEADING.match(line)
    if bold is not None and bold["mark"] not in bold["name"]:
        return _BOLD_LEVEL, bold["name"]
    return None


def _plain(name: str) -> str:
    """`**✅ Proposed Fix:**` → `proposed fix`: the words, lower case, nothing around them."""
    words = re.sub(r"[*_`]", "", name).casefold()
    words = re.sub(r"^[^\w]+|[^\w]+$", "", words)
    return re.sub(r"\s+", " ", words)


def is_fix_section(name: str) -> bool:
    """Whether a heading names a section in which the author describes a fix.

    A root cause counts: whoever names the faulty line has done the search the agent
    is being measured on.
    """
    return _FIX_SECTION.fullmatch(_plain(name)) is not None


def _is_diff(fence: _Fence) -> bool:
    info = fence.info.split()
    if info and info[0].casefold() in _DIFF_INFO:
        return True
    content = fence.content
    if any(line.startswith("diff --git ") for line in content):
        return True
    return (
        any(line.startswith("--- ") for line in content)
        and any(line.startswith("+++ ") for line in content)
        and any(_HUNK.match(line) for line in content)
    )


_LABEL = re.compile(
    r"""^[ \t]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?
    (?:(?P<mark>\*\*|__)(?P<bold>[^*_:\n]{1,60}?)[ \t]*(?::[ \t]*(?P=mark)|(?P=mark)[ \t]*:)
      | (?P<plain>[A-Za-z][A-Za-z ]{0,40}?)[ \t]*:)""",
    re.VERBOSE,
)
"""A paragraph led by a name and a colon: `**Root cause:** ...`, `Fix: ...`."""


def _label(paragraph: str) -> str | None:
    """The name a paragraph is led by, when that name is a fix section's."""
    match = _LABEL.match(paragraph)
    if match is None:
        return None
    name = (match["bold"] or match["plain"] or "").strip()
    return name if is_fix_section(name) else None


# ---------------------------------------------------------------- sentences about the change

_VERBS = r"""
    add(?:s|ed)? | chang(?:e|es|ed) | fix(?:es|ed)? | updat(?:e|es|ed) | modif(?:y|ies|ied)
  | replac(?:e|es|ed) | refactor(?:s|ed)? | mov(?:e|es|ed) | remov(?:e|es|ed)
  | renam(?:e|es|ed) | introduc(?:e|es|ed) | implement(?:s|ed)? | rework(?:s|ed)?
  | rewr(?:ite|ites|ote|itten) | rout(?:e|es|ed) | reus(?:e|es|ed) | us(?:e|es|ed)
  | ma(?:ke|kes|de) | ensur(?:e|es|ed) | handl(?:e|es|ed) | guard(?:s|ed)?
  | convert(?:s|ed)? | switch(?:es|ed)? | adjust(?:s|ed)? | extend(?:s|ed)?
  | drop(?:s|ped)? | keep(?:s)? | kept | merg(?:e|es|ed) | wrap(?:s|ped)? | splits?
  | clear(?:s|ed)? | skip(?:s|ped)? | avoid(?:s|ed)? | restor(?:e|es|ed)
  | normali[sz](?:e|es|ed) | simplif(?:y|ies|ied) | prevent(?:s|ed)? | bump(?:s|ed)?
  | initiali[sz](?:e|es|ed) | delegat(?:e|es|ed) | track(?:s|ed)? | forc(?:e|es|ed)
  | stor(?:e|es|ed) | teach(?:es)? | taught | limit(?:s|ed)? | special-?cas(?:e|es|ed)
  | check(?:s|ed)? | comput(?:e|es|ed)
"""
"""Verbs of change, in the forms a change's description uses (`add`, `adds`, `added`)."""
_ING = r"""(?:add|chang|fix|updat|modify|replac|refactor|mov|remov|renam|introduc|implement
  |rework|rewrit|rout|reus|us|mak|ensur|handl|guard|convert|switch|adjust|extend|dropp|keep
  |merg|wrapp|split|clear|skipp|avoid|restor|normali[sz]|simplify|prevent|bump|initiali[sz]
  |delegat|track|forc|stor|limit|check|comput)ing"""
_OPENER = r"[ \t]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?[*_>\s]*"
"""What may stand before a sentence's first word: a list marker, emphasis, a quote."""
_WE = (
    r"(?:i|we)(?:['’](?:ve|m|re|ll)|\s+(?:have|am|are|will|also|just|then|simply|now|instead"
    r"|therefore|only))*"
)
"""`I`, `we`, and what may stand between them and their verb (`I've also`, `we now`)."""

_ABOUT_THE_FIX = re.compile(
    _OPENER
    + r"""(?:
        (?:this|the|my|our|a|one)\s+(?:(?:proposed|suggested|possible|simple|one-line|actual|real)\s+)?
            (?:fix|bug\s?fix|patch|pr|pull\s+request|merge\s+request)\b
            (?!\s+(?:release|version|level|number)\b)
      | """
    + _WE
    + r"""\s+(?:fixed|patched|solved|resolved)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""A sentence whose subject is the fix, in any text."""

_BY_THE_FIXER = re.compile(
    _OPENER
    + r"""(?:
        (?:this|the)\s+(?:change|changes|changeset|commit|implementation|approach|solution
            |new\s+code|rewrite|refactor(?:ing)?)\b
      | this\s+(?:(?:now|also|simply|just|instead)\s+)*(?:"""
    + _VERBS
    + r""")\b
      | now\s+(?:the|it|we|this|a|an|`)
      | (?:"""
    + _VERBS
    + r""")\b(?!\s+(?:by|of|to|in)\b)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""A sentence of a change's author that opens on the change or on a verb of change."""

_IN_THE_FIXERS_WORDS = re.compile(
    r"(?<![\w'’])"
    + _WE
    + r"\s+(?:"
    + _VERBS
    + "|"
    + _ING
    + r""")\b
    | \bwe\s+now\b
    | \b(?:is|are)\s+now\b
    | \bnow\s+(?:also\s+)?(?:raise|return|stop|accept|reject|handle|keep|use|emit|render
        |parse|work|skip|check|guard|route|clear)s?\b
    | \b(?:the|this|my|our)\s+(?:same\s+|proposed\s+|new\s+)?
        (?:fix|patch|change|pr|pull\s+request)\b""",
    re.IGNORECASE | re.VERBOSE,
)
"""Anywhere in a sentence of a change's author: the writer doing a change ("so I merge
its contents there"), the code's behaviour after it ("keys ... now raise `ParseError`",
"parsing is now a loop"), or the change named ("so the fix belongs in `as_string`")."""

_SENTENCE_END = re.compile(r"""[.!?]["')\]`*_]*\s+|\n(?=[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t])""")
_CLOSING_LED = re.compile(
    _OPENER + r"(?:" + CLOSING_PHRASE.pattern + r")(?P<rest>.*)$",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
"""A sentence led by a closing reference: "Fixes #459.", "Fixes #459 (picking this up
since #468 went stale).". One that goes on to say how ("Fixes #12 by ...") is about the
change."""
_HOW = re.compile(r"\b(?:by|using|via|through|with)\b", re.IGNORECASE)


def _sentences(paragraph: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: they end at `.`, `!` or `?` and a space."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(paragraph):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(paragraph):
        spans.append((start, len(paragraph)))
    return spans


def _about_the_change(sentence: str, writer: Writer) -> bool:
    if _ABOUT_THE_FIX.match(sentence):
        return True
    if writer == "reporter":
        return False
    return bool(_BY_THE_FIXER.match(sentence) or _IN_THE_FIXERS_WORDS.search(sentence))


@dataclass(frozen=True)
class _Cut:
    """What is left of a paragraph before its first sentence about the change."""

    kept: str
    sentences: int
    """Sentences cut, from the first about the change to the paragraph's end."""
    references: int
    """Sentences dropped that were nothing but a closing reference (`Fixes #12.`)."""


def _change_cut(paragraph: str, writer: Writer) -> _Cut:
    kept: list[str] = []
    references = 0
    spans = _sentences(paragraph)
    for index, (start, end) in enumerate(spans):
        sentence = paragraph[start:end]
        led = _CLOSING_LED.match(sentence)
        if led is not None and not _HOW.search(led["rest"]):
            references += 1
        elif _about_the_change(sentence, writer):
            return _Cut("".join(kept).rstrip(), len(spans) - index, references)
        else:
            kept.append(sentence)
    return _Cut("".join(kept).rstrip(), 0, references)


# ---------------------------------------------------------------- cutting


@dataclass(frozen=True)
class Problem:
    """A text cut to the problem it reports."""

    text: str
    """Markdown: an issue's title as a heading, then what is left of the body."""
    cut: tuple[str, ...]
    """What was removed, shortly (`section "Root cause"`, `3 sentences about the change`)."""
    body_left: bool
    """Whether anything of the body besides headings is left."""


_SENTENCES = "sentence about the change", "sentences about the change"
_DIFFS = "diff block", "diff blocks"
_CODE = "code block about the change", "code blocks about the change"
_REFERENCES = "closing reference", "closing references"


@dataclass
class _Paragraph:
    lines: list[str]


_Item = _Fence | _Paragraph | tuple[int, str, str] | None
"""A fence, a paragraph, a heading (level, name, line), or a blank line (None)."""


def _items(found: list[_Block]) -> list[_Item]:
    """Blocks grouped into paragraphs; a blank line, a heading, a fence or a list item
    starts a new one."""
    items: list[_Item] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            items.append(_Paragraph(list(current)))
            current.clear()

    for block in found:
        if isinstance(block, _Fence):
            flush()
            items.append(block)
        elif not block.strip():
            flush()
            items.append(None)
        elif (heading := _heading(block)) is not None:
            flush()
            items.append((heading[0], heading[1], block))
        else:
            if _LIST_ITEM.match(block):
                flush()
            current.append(block)
    flush()
    return items


@dataclass
class _Cutter:
    """One pass over a text's items, keeping what reports the problem."""

    writer: Writer
    out: list[_Block] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipping: int | None = None
    """The level of the fix section being skipped; it ends at a heading as high or higher."""
    introduced: bool = False
    """The last cut text ended with a colon: the code block it introduces goes too."""
    after_cut_code: bool = False
    """A code block was just cut with the text before it: text going on in lower case goes."""
    turned: bool = False
    """A change's author turned to the change: the rest of the section's prose is about
    it too (its code blocks stay unless the cut text introduces them)."""

    def take(self, item: _Item) -> None:
        if item is None:
            if self.skipping is None:
                self.out.append("")
        elif isinstance(item, tuple):
            self.heading(*item)
        elif isinstance(item, _Fence):
            self.fence(item)
        else:
            self.paragraph(item.lines)

    def section(self, name: str) -> None:
        label = f'section "{_plain(name)}"'
        if label not in self.sections:
            self.sections.append(label)

    def heading(self, level: int, name: str, line: str) -> None:
        self.introduced = self.after_cut_code = self.turned = False
        if self.skipping is not None and level > self.skipping:
            return
        self.skipping = level if is_fix_section(name) else None
        if self.skipping is not None:
            self.section(name)
        else:
            self.out.append(line)

    def fence(self, fence: _Fence) -> None:
        if self.skipping is not None:
            return
        if _is_diff(fence):
            self.counts[_DIFFS] += 1
        elif self.introduced:
            self.counts[_CODE] += 1
            self.after_cut_code = True
        else:
            self.after_cut_code = False
            self.out.append(fence)
        self.introduced = False

    def paragraph(self, lines: list[str]) -> None:
        if self.skipping is not None:
            return
        text = "\n".join(line for line in lines if not _TRAILER.match(line))
        if not text.strip():
            return
        continues = self.after_cut_code and text.lstrip()[:1].islower()
        self.after_cut_code = False
        ends_introducing = text.rstrip().endswith(":")
        if continues or self.turned:
            self.counts[_SENTENCES] += len(_sentences(text))
            self.introduced = ends_introducing
            return
        label = _label(text)
        if label is not None:
            self.section(label)
            self.introduced = ends_introducing
            return
        cut = _change_cut(text, self.writer)
        self.introduced = bool(cut.sentences) and ends_introducing
        self.turned = bool(cut.sentences) and self.writer == "fixer"
        self.counts[_SENTENCES] += cut.sentences
        self.counts[_REFERENCES] += cut.references
        if _LIST_ITEM.sub("", cut.kept).strip():
            self.out.extend(cut.kept.split("\n"))

    def cuts(self) -> tuple[str, ...]:
        counted = [
            f"{n} {singular if n == 1 else plural}"
            for singular, plural in (_SENTENCES, _REFERENCES, _CODE, _DIFFS)
            if (n := self.counts[singular, plural])
        ]
        return (*self.sections, *counted)


def _without_empty_sections(found: list[_Block]) -> list[_Block]:
    """Headings left with nothing under them before the next heading as high, dropped."""
    kept: list[_Block] = []
    for index, block in enumerate(found):
        if isinstance(block, str) and (heading := _heading(block)) is not None:
            level = heading[0]
            empty = True
            for later in found[index + 1 :]:
                if isinstance(later, str) and not later.strip():
                    continue
                if isinstance(later, str) and (under := _heading(later)) is not None:
                    if under[0] <= level:
                        break
                    continue
                empty = False
                break
            if empty:
                continue
        kept.append(block)
    return kept


def _render(found: list[_Block]) -> str:
    """Markdown again, with runs of blank lines outside code collapsed to one."""
    lines: list[str] = []
    for block in found:
        if isinstance(block, _Fence):
            lines.extend(block.lines)
        elif block.strip():
            lines.append(block)
        elif lines and lines[-1] != "":
            lines.append("")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def cut_to_problem(title: str, body: str | None, *, writer: Writer = "reporter") -> Problem:
    """The problem `title` and `body` report, with every description of the fix removed.

    Removed: HTML comments (templates' instructions), git trailers, sections whose
    heading names the fix or the change (Solution, Root cause, Changes, Checklist, Test
    plan, ...) up to the next heading as high, paragraphs led by such a name, fenced
    blocks holding a diff, and sentences about the change (see the module docstring).
    Kept: everything else, tracebacks and reproducer code above all. A pull request's
    title (`writer="fixer"`) is left out; an issue's heads the text.
    """
    cutter = _Cutter(writer)
    for item in _items(blocks(body or "")):
        cutter.take(item)
    kept = _without_empty_sections(cutter.out)
    body_text = _render(kept)
    body_left = any(
        isinstance(block, _Fence) or (block.strip() and _heading(block) is None) for block in kept
    )
    cuts = cutter.cuts()
    if writer == "fixer":
        return Problem(body_text, ("the title", *cuts), body_left)
    heading = "# " + " ".join(title.split())
    text = f"{heading}\n\n{body_text}" if body_text else heading
    return Problem(text, cuts, body_left)
