"""Turning problems in `bugbout.toml` into sentences that point at a line.

pydantic reports a problem as a location inside the parsed data and a message written for
programmers. A person editing the file needs the line to look at and plain words, so this
module finds each location's line in the source text (a small scanner that follows table
headers, dotted keys, inline tables and multi-line values) and rewrites each message.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from bugbout_tui.core.errors import UsageError

Loc = tuple[str | int, ...]
ProblemKind = Literal["unknown-key", "invalid-value", "missing-key", "syntax"]

CUSTOM_ERROR = "bugbout_config"
"""The error type our own validators raise, so their wording is kept as written."""

ARRAY_TABLES = frozenset({"contestants", "examiners"})


@dataclass(frozen=True)
class Explain:
    """Field metadata: what a person should be told when the value is wrong or missing.

    pydantic's own wording ("Input should be a valid integer") says what failed in terms
    of types; these phrases say what the key is for, which is what fixes the file.
    """

    invalid: str | None = None
    missing: str | None = None


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong in `bugbout.toml`, anchored to a line so an editor can jump to it.

    `key` is the dotted path into the data with 0-based indices (`contestants[1].model`);
    the sentence from `str()` numbers array tables from 1 as a reader counts them.
    """

    file: Path
    line: int
    key: str
    kind: ProblemKind
    message: str = ""
    suggestion: str | None = None
    column: int | None = None
    section: str | None = None
    """`[judge]`, `[[contestants]] #2`, or None for the top level."""
    name: str = ""
    """The key as written inside its section (`timeout`, `env.PORT`)."""
    is_table: bool = False

    @property
    def where(self) -> str:
        place = f"{display_path(self.file)}:{self.line}"
        return place if self.column is None else f"{place}:{self.column}"

    def __str__(self) -> str:
        inside = f" in {self.section}" if self.section else ""
        if self.kind == "syntax":
            return f"invalid TOML at {self.where}: {self.message}"
        if self.kind == "unknown-key":
            what = f"table {self.name}" if self.is_table else f"key '{self.name}'"
            text = f"unknown {what}{inside} at {self.where}"
            if self.message:
                text += f": {self.message}"
            if self.suggestion:
                hint = f"[{self.suggestion}]" if self.is_table else f"'{self.suggestion}'"
                if self.is_table and self.name.startswith("[["):
                    hint = f"[[{self.suggestion}]]"
                text += f"; did you mean {hint}?"
            return text
        if self.kind == "missing-key":
            text = f"missing key '{self.name}'{inside} at {self.where}"
            return text + (f": {self.message}" if self.message else "")
        subject = f"'{self.name}'{inside}" if self.name else (self.section or "the file")
        text = f"invalid value for {subject} at {self.where}: {self.message}"
        if self.suggestion:
            text += f"; did you mean '{self.suggestion}'?"
        return text


class ConfigError(UsageError):
    """Everything wrong with one `bugbout.toml`, reported together so one edit fixes all."""

    def __init__(self, problems: Sequence[ConfigProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def display_path(path: Path) -> str:
    """The path relative to the working directory when it lies below it, as a user typed it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def config_error(
    message: str,
    *,
    suggestion: str | None = None,
    kind: ProblemKind = "invalid-value",
) -> PydanticCustomError:
    """An error for a validator to raise whose `message` reaches the user unchanged."""
    context: dict[str, Any] = {"kind": kind}
    if suggestion is not None:
        context["suggestion"] = suggestion
    # The message goes in as context, not as the template, so braces in user values are safe.
    context["text"] = message
    return PydanticCustomError(CUSTOM_ERROR, "{text}", context)


def raise_all(title: str, errors: Iterable[tuple[Loc, PydanticCustomError]]) -> None:
    """Raise every collected error at once; pydantic prefixes each with the caller's location."""
    details = [InitErrorDetails(type=error, loc=loc, input=None) for loc, error in errors]
    if details:
        raise ValidationError.from_exception_data(title, details)


def suggest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The closest choice to a mistyped word, if one is close enough to be the intent."""
    options = list(choices)
    folded = word.replace("_", "-").lower()
    if folded in options and folded != word:
        return folded
    matches = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    return matches[0] if matches else None


# --- where each key sits in the source -----------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = frozenset(",]}\n#")


class _Scanner:
    """Records the line of every table, key and array item in TOML text.

    It relies on the text having parsed already, so it only needs to follow structure,
    not check it; anything it does not understand simply leaves that key unrecorded.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.lines: dict[Loc, int] = {}
        self.array_counts: dict[Loc, int] = {}
        self.table: Loc = ()
        self.defined: set[Loc] = set()
        self.redefined: list[tuple[Loc, int]] = []

    def scan(self) -> dict[Loc, int]:
        try:
            while self.pos < len(self.text):
                start = self.pos
                self._skip_blank(newlines=True)
                if self.pos >= len(self.text):
                    break
                if self.text[self.pos] == "[":
                    self._header()
                else:
                    self._key_value(self.table)
                if self.pos == start:
                    self._advance()
        except (IndexError, ValueError):
            pass
        return self.lines

    def _advance(self, count: int = 1) -> None:
        for _ in range(count):
            if self.pos < len(self.text):
                if self.text[self.pos] == "\n":
                    self.line += 1
                self.pos += 1

    def _peek(self, count: int = 1) -> str:
        return self.text[self.pos : self.pos + count]

    def _skip_blank(self, *, newlines: bool) -> None:
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t\r" or (newlines and char == "\n"):
                self._advance()
            elif char == "#":
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self.pos += 1
            else:
                return

    def _skip_line(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] != "\n":
            self.pos += 1

    def _record(self, loc: Loc, line: int) -> None:
        for size in range(1, len(loc)):
            self.lines.setdefault(loc[:size], line)
        self.lines.setdefault(loc, line)

    def _resolve(self, parts: Sequence[str]) -> Loc:
        """Follow a header's keys, stepping into the latest table of each array of tables."""
        loc: Loc = ()
        for part in parts:
            loc = (*loc, part)
            if loc in self.array_counts:
                loc = (*loc, self.array_counts[loc] - 1)
        return loc

    def _header(self) -> None:
        line = self.line
        is_array = self._peek(2) == "[["
        self._advance(2 if is_array else 1)
        parts = self._key()
        if is_array:
            base = (*self._resolve(parts[:-1]), parts[-1])
            index = self.array_counts.get(base, 0)
            self.array_counts[base] = index + 1
            self.table = (*base, index)
        else:
            self.table = self._resolve(parts)
            self._define(self.table, line)
        self._record(self.table, line)
        self._skip_line()

    def _define(self, loc: Loc, line: int) -> None:
        if loc in self.defined:
            self.redefined.append((loc, line))
        self.defined.add(loc)

    def _key(self) -> list[str]:
        parts: list[str] = []
        while True:
            self._skip_blank(newlines=False)
            char = self._peek()
            if char in ('"', "'"):
                parts.append(self._string())
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if match is None:
                    raise ValueError("not a key")
                parts.append(match.group())
                self.pos = match.end()
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return parts
            self._advance()

    def _key_value(self, table: Loc) -> None:
        line = self.line
        loc = (*table, *self._key())
        self._define(loc, line)
        self._record(loc, line)
        self._skip_blank(newlines=False)
        if self._peek() != "=":
            raise ValueError("expected '='")
        self._advance()
        self._skip_blank(newlines=False)
        self._value(loc)

    def _value(self, loc: Loc) -> None:
        char = self._peek()
        if char in ('"', "'"):
            self._string()
        elif char == "[":
            self._array(loc)
        elif char == "{":
            self._inline_table(loc)
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in _SCALAR_END:
                self.pos += 1

    def _array(self, loc: Loc) -> None:
        self._advance()
        index = 0
        while True:
            self._skip_blank(newlines=True)
            if self._peek() in ("]", ""):
                self._advance()
                return
            self._record((*loc, index), self.line)
            start = self.pos
            self._value((*loc, index))
            self._skip_blank(newlines=True)
            if self._peek() == ",":
                self._advance()
            elif self.pos == start:
                raise ValueError("array did not advance")
            index += 1

    def _inline_table(self, loc: Loc) -> None:
        self._advance()
        while True:
            self._skip_blank(newlines=True)
            if self._peek() in ("}", ""):
                self._advance()
                return
            self._key_value(loc)
            self._skip_blank(newlines=True)
            if self._peek() == ",":
                self._advance()

    def _string(self) -> str:
        quote = self._peek()
        if self._peek(3) == quote * 3:
            self._advance(3)
            end = self.text.index(quote * 3, self.pos)
            while self.text.startswith(quote, end + 3):  # up to two quotes may close it
                end += 1
            value = self.text[self.pos : end]
            self._advance(end + 3 - self.pos)
            return value
        self._advance()
        chars: list[str] = []
        while self.pos < len(self.text) and self.text[self.pos] not in (quote, "\n"):
            if quote == '"' and self.text[self.pos] == "\\":
                chars.append(self._escape())
                continue
            chars.append(self.text[self.pos])
            self.pos += 1
        self._advance()
        return "".join(chars)

    def _escape(self) -> str:
        """Decode one escape so quoted keys compare equal to their parsed form."""
        code = self.text[self.pos + 1]
        simple = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
        if code in simple:
            self.pos += 2
            return simple[code]
        width = {"u": 4, "U": 8}.get(code, 0)
        digits = self.text[self.pos + 2 : self.pos + 2 + width]
        self.pos += 2 + width
        return chr(int(digits, 16)) if width else code


def key_lines(text: str) -> dict[Loc, int]:
    """The 1-based line of every table header, key and array item in `text`."""
    return _Scanner(text).scan()


def redefinitions(text: str) -> list[tuple[Loc, int]]:
    """Keys and tables defined a second time, with the line of the repeat.

    tomlkit reports some of these without a position, so the scanner supplies it.
    """
    scanner = _Scanner(text)
    scanner.scan()
    return scanner.redefined


def line_of(lines: dict[Loc, int], loc: Loc) -> int:
    """The line of `loc`, else of its nearest enclosing table, else line 1 (absent table)."""
    for size in range(len(loc), 0, -1):
        if loc[:size] in lines:
            return lines[loc[:size]]
    return 1


# --- rewriting pydantic's errors ----------------------------------------------------------

_TYPE_PHRASES: dict[str, str] = {
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be text in quotes",
    "list_type": 'must be a list, e.g. ["a", "b"]',
    "tuple_type": "must be a list",
    "dict_type": 'must be a table, e.g. { name = "value" }',
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "date_type": "must be a date such as 2024-01-31",
    "date_from_datetime_inexact": "must be a date without a time",
}


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated, Optional, list and dict down to the type an item is validated as."""
    while True:
        origin = get_origin(annotation)
        args = get_args(annotation)
        if origin is Annotated:
            annotation = args[0]
        elif origin in (Union, types.UnionType):
            rest = [arg for arg in args if arg is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        elif origin in (list, tuple, set, frozenset) and args:
            annotation = args[0]
        elif origin is dict and len(args) == 2:
            annotation = args[1]
        else:
            return annotation


def _fields_by_key(model: type[BaseModel]) -> dict[str, FieldInfo]:
    return {(info.alias or name): info for name, info in model.model_fields.items()}


def _walk(root: type[BaseModel], loc: Loc) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The model that owns the last key of `loc`, and the deepest field met on the way."""
    current: Any = root
    field: FieldInfo | None = None
    owner: type[BaseModel] | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            owner = current
            info = _fields_by_key(current).get(part)
            if info is None:
                return owner, field
            field = info
            current = _unwrap(info.annotation)
        else:
            owner = None
    return owner, field


def _explain(field: FieldInfo | None) -> Explain | None:
    if field is None:
        return None
    for item in field.metadata:
        if isinstance(item, Explain):
            return item
    return None


def _describe(loc: Loc) -> tuple[str | None, Loc]:
    """Split a location into the section a reader sees and the key path inside it."""
    if loc and loc[0] in ARRAY_TABLES and len(loc) > 1 and isinstance(loc[1], int):
        return f"[[{loc[0]}]] #{loc[1] + 1}", loc[2:]
    if len(loc) > 1:
        return f"[{loc[0]}]", loc[1:]
    return None, loc


def dotted(loc: Loc) -> str:
    """`("contestants", 1, "model")` as `contestants[1].model`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _quoted_choices(expected: str) -> list[str]:
    return re.findall(r"'([^']*)'", expected)


def _reason(error: Any, explain: Explain | None) -> tuple[str, str | None]:
    """Plain words for one pydantic error, and a suggested value when one fits."""
    kind = error["type"]
    context = error.get("ctx") or {}
    value = error.get("input")
    if kind == "literal_error":
        choices = _quoted_choices(str(context.get("expected", "")))
        listed = ", ".join(f"'{choice}'" for choice in choices)
        hint = suggest(value, choices) if isinstance(value, str) else None
        return f"must be one of {listed}", hint
    if explain is not None and explain.invalid is not None:
        return explain.invalid, None
    if kind in _TYPE_PHRASES:
        return _TYPE_PHRASES[kind], None
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {
            "greater_than_equal": "at least",
            "greater_than": "more than",
            "less_than_equal": "at most",
            "less_than": "less than",
        }[kind]
        bound = next(iter(context.values()), "")
        return f"must be {words} {bound}", None
    if kind in ("too_short", "string_too_short"):
        return "must not be empty", None
    if kind == "value_error":
        return str(context.get("error", error["msg"])), None
    message = str(error["msg"])
    if message.startswith("Input should be "):
        return "must be " + message.removeprefix("Input should be "), None
    return message, None


def _home_of(root: type[BaseModel], key: str) -> str | None:
    """Where a key put in the wrong table belongs, said so that moving it is obvious."""
    fields = _fields_by_key(root)
    if key in fields:
        return "it belongs at the top level, above the first [table]"
    for table, info in fields.items():
        model = _unwrap(info.annotation)
        if table in ARRAY_TABLES or not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        if key in _fields_by_key(model):
            return f"it belongs in [{table}]"
    return None


def problems_from(
    exc: ValidationError,
    *,
    root: type[BaseModel],
    file: Path,
    text: str,
) -> list[ConfigProblem]:
    """Every error in `exc` as a problem with its line in `text`, in file order."""
    lines = key_lines(text)
    problems: list[ConfigProblem] = []
    for error in exc.errors():
        loc: Loc = tuple(part for part in error["loc"] if part != "[key]")
        section, inner = _describe(loc)
        line = line_of(lines, loc)
        name = dotted(inner)
        owner, field = _walk(root, loc)
        explain = _explain(field)
        kind = error["type"]
        problem = ConfigProblem(
            file=file, line=line, key=dotted(loc), kind="invalid-value", section=section, name=name
        )
        if kind == CUSTOM_ERROR:
            context = error.get("ctx") or {}
            problem = replace(
                problem,
                kind=context.get("kind", "invalid-value"),
                message=str(context.get("text", error["msg"])),
                suggestion=context.get("suggestion"),
            )
        elif kind == "extra_forbidden":
            choices = list(_fields_by_key(owner)) if owner is not None else []
            value = error.get("input")
            is_table = section is None and isinstance(value, dict | list)
            label = name
            if is_table:
                label = f"[[{name}]]" if isinstance(value, list) else f"[{name}]"
            home = _home_of(root, str(inner[-1])) if section and len(inner) == 1 else None
            problem = replace(
                problem,
                kind="unknown-key",
                name=label,
                message=home or "",
                suggestion=None if home else suggest(str(inner[-1]), choices) if inner else None,
                is_table=is_table,
            )
        elif kind == "missing":
            missing = explain.missing if explain is not None else None
            problem = replace(problem, kind="missing-key", message=missing or "")
        else:
            message, hint = _reason(error, explain)
            problem = replace(problem, message=message, suggestion=hint)
        problems.append(problem)
    problems.sort(key=lambda problem: problem.line)
    return problems
