"""Where a requirements file says packages come from: the options a repair may not use.

A repair is scored by installing it from the task's index, limited to the task's date,
and the audit checks its packages against that index. A requirements file can change
both from the inside: `--index-url`, `--extra-index-url`, `--find-links`, `--no-index`
and `--trusted-host` change or widen where packages are looked for, an editable URL
(`-e git+https://…`) installs one from anywhere, and `-r`/`-c` with a URL reads more
requirements from anywhere. Such a repair is refused before anything is installed.

A requirement written as a direct URL or a VCS reference (`name @ https://…`) stays
allowed: it is one declared package, audited as such, and the install records it as
not limited by the date.

The file is read the way uv reads it: comments start at a `#` that begins the line or
follows a space, a trailing backslash joins the next line, and an option's value
follows it after a space or an `=` (`-i URL`, `--index-url=URL`). Every word of a line
is looked at, not only the first, so an option uv would reject where it stands is
refused too rather than trusted to be rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SOURCE_OPTIONS = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--no-index",
        "--trusted-host",
    }
)
"""Options that change where packages are looked for, whatever their value."""
_EDITABLE = frozenset({"-e", "--editable"})
_INCLUDES = frozenset({"-r", "--requirement", "-c", "--constraint"})
_VALUED = _EDITABLE | _INCLUDES | (SOURCE_OPTIONS - {"--no-index"})
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|(?:git|hg|svn|bzr)\+)")
"""A URL (`https://`, `file://`) or a VCS reference (`git+ssh…`), as opposed to a path."""
_COMMENT = re.compile(r"(?:^|\s)#.*$")


@dataclass(frozen=True)
class RequirementOption:
    """One option of a requirements file."""

    line: int
    """Where it starts, counting from 1."""
    name: str
    """As written, without its value: `--extra-index-url`, `-e`."""
    value: str | None

    @property
    def changes_source(self) -> bool:
        """It changes where packages, or requirements, come from."""
        if self.name in SOURCE_OPTIONS:
            return True
        return self.name in _EDITABLE | _INCLUDES and _URL.match(self.value or "") is not None

    @property
    def included(self) -> str | None:
        """The file a `-r` or `-c` reads too, as written, when it names a path."""
        if self.name in _INCLUDES and self.value and not self.changes_source:
            return self.value
        return None


def requirement_options(text: str) -> list[RequirementOption]:
    """Every option of a requirements file's `text`, in order."""
    found: list[RequirementOption] = []
    for number, line in _logical_lines(text):
        words = line.split()
        position = 0
        while position < len(words):
            word = words[position]
            position += 1
            name, value = _option(word)
            if name is None:
                continue
            if value is None and name in _VALUED and position < len(words):
                value = words[position]
                position += 1
            found.append(RequirementOption(line=number, name=name, value=value))
    return found


def source_change(text: str) -> RequirementOption | None:
    """The first option of `text` that changes where packages come from, or None."""
    return next((o for o in requirement_options(text) if o.changes_source), None)


def _option(word: str) -> tuple[str | None, str | None]:
    """A word's option and the value attached to it (`--index-url=URL`, `-iURL`), or
    (None, None) for a word that is no option we look at."""
    if word.startswith("--"):
        name, equals, value = word.partition("=")
        if name in SOURCE_OPTIONS | _EDITABLE | _INCLUDES:
            return name, value if equals else None
        return None, None
    short = word[:2]
    if word.startswith("-") and short in SOURCE_OPTIONS | _EDITABLE | _INCLUDES:
        attached = word[2:].removeprefix("=")
        return short, attached or None
    return None, None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """The lines of `text` without comments, those ending in a backslash joined to the
    next, each with the number of its first line."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _COMMENT.sub("", raw)
        start, before = pending if pending is not None else (number, "")
        if line.endswith("\\"):
            pending = (start, before + line[:-1] + " ")
            continue
        pending = None
        joined.append((start, before + line))
    if pending is not None:
        joined.append(pending)
    return joined
