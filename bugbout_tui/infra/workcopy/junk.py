"""What never belongs in a patch: caches, virtualenvs, editor files, agents' state."""

from __future__ import annotations

import re
from fnmatch import translate

JUNK_PATTERNS = (
    "__pycache__/",
    "*.py[co]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".coverage.*",
    ".tox/",
    ".nox/",
    ".venv/",
    "venv/",
    "*.egg-info/",
    ".eggs/",
    "node_modules/",
    "*.swp",
    "*.swo",
    "*~",
    ".#*",
    ".DS_Store",
    ".codex/",
    ".claude/",
    ".gemini/",
    ".aider*",
)
"""Never part of a patch unless the repository tracks them (gitignore syntax, any depth).

A directory holding `pyvenv.cfg` is a virtualenv whatever its name, and is left out too.
"""


def is_junk(path: str) -> bool:
    """Whether `path` (a trailing `/` marks a directory) matches `JUNK_PATTERNS`."""
    directory = path.endswith("/")
    parts = path.rstrip("/").split("/")
    return any(
        junk_name(part, directory or position < len(parts) - 1)
        for position, part in enumerate(parts)
    )


_JUNK_FILE = re.compile("|".join(translate(p) for p in JUNK_PATTERNS if not p.endswith("/")))
_JUNK_DIRECTORY = re.compile("|".join(translate(p.removesuffix("/")) for p in JUNK_PATTERNS))
"""`JUNK_PATTERNS` as one expression each for a file's name and a directory's (which the
file patterns match as well), so a name is matched once, not once per pattern."""


def junk_name(name: str, directory: bool) -> bool:
    """Whether one name, of a directory or of a file, matches `JUNK_PATTERNS`."""
    return (_JUNK_DIRECTORY if directory else _JUNK_FILE).match(name) is not None
