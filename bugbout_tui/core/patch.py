"""A patch harvested from an agent's working copy, kept in three parts.

The parts exist because they are trusted differently. Only `source` is ever applied when a
patch is scored or cross-examined, so an agent cannot pass the maintainers' tests by
editing them, or by changing how pytest runs. `tests` is the agent's own tests, run as its
evidence against other patches. `other` (packaging, settings, docs, a root `conftest.py`)
is kept and shown, never applied.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Part = Literal["source", "tests", "other"]
ChangeStatus = Literal["added", "modified", "deleted", "renamed"]

MAX_PATCH_FILES = 5000
"""By default, a patch changing more files than this is not kept: the attempt is
`oversized` (`[run] max-patch-files`)."""
MAX_PATCH_BYTES = 10 * 1024 * 1024
"""By default, a patch whose changed files weigh more than this is not kept either
(`[run] max-patch-bytes`)."""

TEST_FILE_NAMES = ("test_*.py", "*_test.py", "conftest.py")
"""File names pytest treats as tests or test configuration, wherever they sit."""
TEST_DIRECTORY_NAMES = frozenset({"test", "tests"})
"""Directories whose contents count as tests even inside the package (`pkg/tests/`)."""


def _directory(setting: str) -> str:
    """`./src/pkg/` → `src/pkg`; the repository root → `""`."""
    text = setting.strip().replace("\\", "/").strip("/")
    while text.startswith("./"):
        text = text[2:].lstrip("/")
    return "" if text in ("", ".") else text


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory + "/")


def split_path(path: str, source_dir: str, tests_dir: str) -> Part:
    """Which part of a patch a changed file belongs to.

    Test rules come first, so an in-package `pkg/tests/helpers.py` or `pkg/test_io.py`
    is a test change, never applied as source. A root `conftest.py` is `other`: it
    configures every test run, the maintainers' hidden tests included, so it must not
    travel with an agent's tests either. A source directory at the root (`.`) holds
    every file that is not a test; a tests directory at the root means "no dedicated
    directory", since everything would otherwise be a test and nothing ever applied.
    """
    if path == "conftest.py":
        return "other"
    tests = _directory(tests_dir)
    if tests and _under(path, tests):
        return "tests"
    *directories, name = path.split("/")
    if not TEST_DIRECTORY_NAMES.isdisjoint(directories):
        return "tests"
    if any(fnmatchcase(name, pattern) for pattern in TEST_FILE_NAMES):
        return "tests"
    source = _directory(source_dir)
    if not source or _under(path, source):
        return "source"
    return "other"


class FileChange(BaseModel):
    """One file of a patch, as git saw it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    """Where the file is after the change (where it was, for a deletion)."""
    old_path: str | None = None
    """Where a renamed file came from."""
    status: ChangeStatus
    part: Part
    binary: bool = False
    """Recorded as a binary patch (git's own test, or text that is not UTF-8)."""
    symlink: bool = False
    """A symbolic link after the change (before it, for a deletion): its target is the text."""
    added_lines: int = 0
    removed_lines: int = 0


class Patch(BaseModel):
    """What an attempt changed on disk: unified diffs, one per part, and a file list."""

    model_config = ConfigDict(extra="forbid")

    source: str = ""
    """Changes under the package directory, not tests: the only part ever applied."""
    tests: str = ""
    """Changes to test files: run as this author's tests, never applied to score."""
    other: str = ""
    """Everything else: listed and flagged, never applied."""
    files: list[FileChange] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """What harvesting left out or found odd, in plain words."""
    oversized: str | None = None
    """Set when the patch passed a cap on its files or bytes and was not kept: which cap,
    and by how much. The diffs and files are then empty and the notes sum up what it held."""

    @property
    def is_empty(self) -> bool:
        """No file changed (notes alone do not make a patch, and a patch too large to keep
        holds no file)."""
        return not self.files

    @property
    def has_source_change(self) -> bool:
        """Whether there is anything to score: a patch without a source change is no fix."""
        return any(change.part == "source" for change in self.files)

    @property
    def source_size(self) -> int:
        """Changed lines in the source part: the judge prefers the smaller of two equals."""
        return sum(
            change.added_lines + change.removed_lines
            for change in self.files
            if change.part == "source"
        )
