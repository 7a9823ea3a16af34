"""Whether a change's title says it fixes something.

The title is the only place where the maintainers say what a change is for, so the test
is a short list of words matched as whole words: `fix` must not fire inside `prefix`,
`suffix`, `fixture` or a `fix_paths` identifier, nor in `auto-fix` or a `--fix` option.

Two traps are handled explicitly:

- a fix word inside a closing phrase only says which issue the change closes, not that
  it is a fix: "Add pre-commit hook support (fixes #537)" is a feature, and "Keep
  statistics visible when wrapped (fixes #519)" a bug fix. Such a title is not a fix by
  itself; `closing_reference` names the issue that decides (see `evidence`). The
  exception is a title that *starts* with the phrase ("Fix #12", "Fixed #45: empty
  input"): there the author chose the verb for the whole change;
- a revert of a fix ("Revert \"Fix crash\"") undoes a fix rather than making one.

"resolve" and "close" are left out on purpose: outside closing phrases they mostly
describe housekeeping ("Resolve merge conflicts", "Close files in tests").
"""

from __future__ import annotations

import re

from bugbout_tui.core.models import IssueRef
from bugbout_tui.rules.refs import CLOSING_PHRASE, references_in

FIX_WORDS: tuple[str, ...] = (
    "fix",
    "fixes",
    "fixed",
    "fixing",
    "bugfix",
    "bugfixes",
    "hotfix",
    "hotfixes",
    "hot-fix",
    "bug",
    "bugs",
    "crash",
    "crashes",
    "crashed",
    "crashing",
    "segfault",
    "segfaults",
    "regression",
    "regressions",
    "repair",
    "repairs",
    "repaired",
    "repairing",
    "broken",
    "incorrect",
    "incorrectly",
    "wrong",
    "wrongly",
)
"""Lower-case; matched case-insensitively. A conventional-commit `fix:`, `fix(parser):`
or `fix!:` is simply the word `fix`."""

_FIX_WORD = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(re.escape(w) for w in sorted(FIX_WORDS, key=len, reverse=True))
    + r")(?!\w)",
    re.IGNORECASE,
)
_REVERT = re.compile(r"\s*revert\b", re.IGNORECASE)


def is_revert(title: str) -> bool:
    """Whether `title` is a revert's (`Revert "Pin six"`, `revert: ...`): it undoes an
    earlier change rather than making one."""
    return _REVERT.match(title) is not None


def is_fix_title(title: str) -> bool:
    """Whether `title` reads like a bug fix (see the module docstring for the rules)."""
    if is_revert(title):
        return False
    start = len(title) - len(title.lstrip())

    def closing(match: re.Match[str]) -> str:
        leads = match.start() == start and match["keyword"].lower().startswith("fix")
        return match.group(0) if leads else " "

    return _FIX_WORD.search(CLOSING_PHRASE.sub(closing, title)) is not None


def closing_reference(title: str) -> IssueRef | None:
    """The first issue a closing phrase in `title` names ("... (fixes #519)", "Closes
    #12"); None for a revert, which undoes whatever it names."""
    if is_revert(title):
        return None
    for phrase in CLOSING_PHRASE.finditer(title):
        refs = references_in(phrase.group(0))
        if refs:
            return refs[0]
    return None
