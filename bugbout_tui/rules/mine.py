"""Mining: find, in one streamed pass over the history, the fixes that came with a new test.

One `git log --first-parent` walks the branch; each change on it is seen once, whether
it landed as a squashed commit, a rebased commit or a pull request's merge commit (which
is diffed against its first parent, so it shows the whole pull request). The output is
read line by line from the pipe while git produces it: per change, the message, the list
of changed files (`--raw`), and the patch text of test modules only.

Only test modules need their patch, to see which test functions were added, and patches
are what make a log slow. So the pass hands git a throw-away attributes file that marks
every other path `-diff`: git then prints one "Binary files differ" line for them instead
of computing and printing their diff.

The rules run in a fixed order, so each change left out has exactly one reason:
before-since → not-a-fix → no-source-change → too-many-source-files → no-test-added →
no-issue. Duplicate issues and the task limit are the caller's business: they need the
pull request → issue resolution that only the issue source can do.

Mining for environment tasks (`kinds` holding `env`) reads the same pass. A change whose
every file is an environment file (`rules.env_files`) is judged as one, never as a fix:
a branch's merge (env-merge) and a revert (env-revert) are left out, and so is a change
that alters nothing the files install (env-not-dependencies), only the project's own
version (env-version-only), or only lock files, which the clean install never reads
(env-lock-only). That needs the files' content on both sides, which the log
does not print: it gives their blob ids (`--raw --no-abbrev`), and once the pass is over
one `git cat-file --batch` reads every blob the comparisons need (`rules.env_changes`).
Mining for environment tasks alone leaves out every other change as not-env-only, and
asks git for no patch at all.

Two kinds of change pass `not-a-fix` on condition, because their message alone cannot
tell: a title whose only fix word is in a closing phrase ("... (fixes #519)"), decided by
whether the issue it names reports a bug, and a pull request's merge whose message holds
no title, only "Merge pull request #N from user/branch", decided by the pull request's
own title. A branch name never decides: `fix/table-copy` held a feature just as well.
The condition travels with the candidate (`Candidate.confirm`) for the issue source to
settle, so only the changes that pass every other rule cost a lookup.
"""

from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Collection, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path, PurePosixPath

from bugbout_tui.core.env_models import TaskKind
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import Exclusion, IssueRef, Reason
from bugbout_tui.infra.git import ensure_full_history, head_commit, read_objects, stream_git
from bugbout_tui.rules.env_changes import (
    FileChange,
    change_kind,
    content_change,
    file_change,
    installs_nothing,
    reads_content,
)
from bugbout_tui.rules.env_files import is_env_file
from bugbout_tui.rules.fixwords import closing_reference, is_fix_title, is_revert
from bugbout_tui.rules.refs import find_references

FIXES: tuple[TaskKind, ...] = ("bug",)
"""What is mined unless told otherwise: fixes with a new test."""


@dataclass(frozen=True)
class LinkedIssue:
    """A title whose only fix word is in a closing phrase: the issue it names must be a bug."""

    ref: IssueRef


@dataclass(frozen=True)
class PullTitle:
    """A pull request's merge whose message has no title: the pull request's must read
    like a fix."""

    number: int


@dataclass(frozen=True)
class Candidate:
    """A change that passed every mining rule: a fix, small, tested, naming an issue."""

    commit: str
    """Full sha of the change (the merge commit, for a merged pull request)."""
    base_commit: str
    """Its first parent: the code before the fix."""
    title: str
    """The change's title; for a merge, the pull request's title from the message body."""
    body: str
    date: datetime
    """Committer date, with the committer's offset."""
    refs: tuple[IssueRef, ...]
    """References in priority order: closing phrases, the merged pull request, `(#N)`."""
    source_files: tuple[str, ...]
    """Python files changed under the package directory (deleted ones included)."""
    test_files: tuple[str, ...]
    """Test modules the change left in place (added, modified or renamed to)."""
    added_tests: tuple[str, ...]
    """Test functions added: `test_x` or `TestY::test_z`."""
    test_data_files: tuple[str, ...] = ()
    """Other files changed in test directories (fixtures, data) that the new tests may read."""
    confirm: LinkedIssue | PullTitle | None = None
    """What the issue source must confirm before this is a task; None when the title
    alone reads like a fix."""


@dataclass(frozen=True)
class EnvCandidate:
    """A change to the environment files alone that changed what they install."""

    commit: str
    base_commit: str
    title: str
    body: str
    date: datetime
    """Committer date, with the committer's offset: the task's install is limited to it."""
    refs: tuple[IssueRef, ...]
    """References in priority order, as for a fix; often none."""
    env_files: tuple[str, ...]
    """Every environment file the change touched (both names of a renamed one)."""


@dataclass
class MiningResult:
    """Everything one pass saw: the candidates, and each change left out with its reason."""

    head: str
    examined: int = 0
    """Changes seen on the branch; always `len(candidates) + len(excluded)`."""
    candidates: list[Candidate | EnvCandidate] = field(default_factory=list)
    """Newest first, both kinds together; duplicates and the limit not yet applied."""
    excluded: list[Exclusion] = field(default_factory=list)


_TEST_DIRECTORY_NAMES = frozenset({"test", "tests"})
_SAFE_PATTERN = re.compile(r"[A-Za-z0-9._/-]+")


def _under(path: str, directory: str) -> bool:
    return not directory or path == directory or path.startswith(directory + "/")


def _directory_setting(value: str, key: str) -> str:
    path = PurePosixPath(value.strip().replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise UsageError(
            f"project.{key} must be a directory inside the repository, got {value!r}.",
            hint="Give it relative to the repository root, e.g. `src/mypkg` or `tests`.",
        )
    text = path.as_posix()
    return "" if text == "." else text


@dataclass(frozen=True)
class Layout:
    """Which paths of the repository are the package's source, and which are its tests."""

    source: str
    """The package directory, `""` for the repository root."""
    tests: str

    @classmethod
    def from_settings(cls, source: str, tests: str) -> Layout:
        """Normalise `project.source` / `project.tests` (`./src/pkg/` → `src/pkg`)."""
        return cls(_directory_setting(source, "source"), _directory_setting(tests, "tests"))

    def in_test_directory(self, path: str) -> bool:
        """Under the tests directory, or under any directory named `test` or `tests`."""
        if self.tests and _under(path, self.tests):
            return True
        return not _TEST_DIRECTORY_NAMES.isdisjoint(path.split("/")[:-1])

    def is_test_module(self, path: str) -> bool:
        """A Python file pytest would treat as part of the tests."""
        if not path.endswith(".py"):
            return False
        name = path.rsplit("/", 1)[-1]
        if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            return True
        return self.in_test_directory(path)

    def is_source_file(self, path: str) -> bool:
        """A Python file of the package that is not part of its tests."""
        return path.endswith(".py") and _under(path, self.source) and not self.is_test_module(path)

    def is_test_data(self, path: str) -> bool:
        """A file the tests may read: anything but Python in a test directory."""
        return not path.endswith(".py") and self.in_test_directory(path)

    def diff_attributes(self) -> str | None:
        """gitattributes that leave only test modules diffable, or None when the tests
        directory cannot be written as an attributes pattern (then every file is diffed:
        slower, still correct)."""
        lines = [
            "* -diff",
            "test_*.py !diff",
            "*_test.py !diff",
            "conftest.py !diff",
            *(f"**/{name}/**/*.py !diff" for name in sorted(_TEST_DIRECTORY_NAMES)),
        ]
        if self.tests:
            if not _SAFE_PATTERN.fullmatch(self.tests):
                return None
            lines.append(f"/{self.tests}/**/*.py !diff")
        return "\n".join(lines) + "\n"


_RECORD_FORMAT = "--format=%x00%H%x00%P%x00%cI%x00%B%x00"
"""A change's record: NUL, sha, parents, committer date, message, NUL. A commit message
cannot hold a NUL, so a line starting with one always starts a record."""

_DEFAULT_FUNCNAME = "^[[:alpha:]$_].*$"
"""git's built-in hunk-header rule (the nearest line starting at column 0): it names the
top-level `class` a new method sits in. Also forced on the `python` diff driver, whose
own rule would name the nearest, possibly indented, `def` instead."""


@contextmanager
def history_log(
    layout: Layout, head: str, kinds: Collection[TaskKind] = FIXES
) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The arguments and one-off settings of the mining pass's `git log`.

    Every option that user or repository configuration could change (colour, prefixes,
    renames, signatures, encoding, external diff tools) is pinned on the command line.
    The first commit shows no diff (`log.showRoot=false`): it creates the project rather
    than changing earlier code, and it has no parent to start a task from.
    Patches are only asked for when fixes are mined: only their added tests need them.
    The attributes file lives as long as the context.
    """
    patch = ["--patch", "--unified=0"] if "bug" in kinds else []
    args = [
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--find-renames",
        "--raw",
        "--no-abbrev",
        *patch,
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-relative",
        "--no-show-signature",
        "--submodule=short",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--encoding=UTF-8",
        _RECORD_FORMAT,
        head,
        "--",
    ]
    config = {
        "core.quotePath": "off",
        "diff.python.xfuncname": _DEFAULT_FUNCNAME,
        "log.showRoot": "false",
    }
    attributes = layout.diff_attributes()
    if attributes is None:
        yield args, config
        return
    with tempfile.TemporaryDirectory(prefix="bugbout-mine-") as scratch:
        path = Path(scratch) / "attributes"
        path.write_text(attributes, encoding="utf-8")
        yield args, {**config, "core.attributesFile": str(path)}


@dataclass(frozen=True)
class _Record:
    sha: str
    parents: tuple[str, ...]
    date: datetime
    message: str


@dataclass(frozen=True)
class _FileChange:
    status: str
    path: str
    old_path: str | None
    """The path before a rename or copy."""
    old_blob: str
    new_blob: str
    """The content's object ids on each side; all zeros where the file is absent."""

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if self.old_path is None else (self.old_path, self.path)


_C_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
}


def _path(raw: bytes) -> str:
    """A path as git prints it: C-quoted when it holds a control character, `"` or `\\`."""
    if len(raw) >= 2 and raw[:1] == b'"' and raw[-1:] == b'"':
        out = bytearray()
        i, end = 1, len(raw) - 1
        while i < end:
            byte = raw[i]
            if byte != 0x5C:  # backslash
                out.append(byte)
                i += 1
            elif 0x30 <= raw[i + 1] <= 0x37:
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
            else:
                out.append(_C_ESCAPES.get(raw[i + 1], raw[i + 1]))
                i += 2
        raw = bytes(out)
    return raw.decode("utf-8", "replace")


def _patch_path(line: bytes) -> str | None:
    """The path of a `+++ b/path` line; None for `/dev/null`. git ends a name holding a
    space with a tab, for patch(1)'s sake."""
    raw = line[4:].rstrip(b"\n")
    raw = raw.removesuffix(b"\t")
    if raw == b"/dev/null":
        return None
    return _path(raw).removeprefix("b/")


_NAME = rb"([^\s(:]+)"
"""An identifier, as far as it matters here: bytes patterns know only ASCII `\\w`, and
Python names may be any Unicode letters."""
_CLASS = re.compile(rb"class[ \t]+" + _NAME)
_FUNCTION = re.compile(rb"(?:async[ \t]+)?def[ \t]+" + _NAME)
_METHOD = re.compile(rb"[ \t]+(?:async[ \t]+)?def[ \t]+(test[^\s(:]*)")
_HUNK_HEADER = re.compile(rb"@@ [^@]* @@ ?(.*)")

_Scope = tuple[str, str | None]
"""Where a line sits: ("class", name), ("function", None) or ("module", None)."""
_MODULE: _Scope = ("module", None)


def _scope_of(statement: bytes) -> tuple[_Scope, str | None]:
    """The scope a top-level statement opens, and the test it defines, if any."""
    if match := _CLASS.match(statement):
        return ("class", match[1].decode("utf-8", "replace")), None
    if match := _FUNCTION.match(statement):
        name = match[1].decode("utf-8", "replace")
        return ("function", None), name if name.startswith("test") else None
    return _MODULE, None


def _qualified(scope: _Scope, name: str) -> str | None:
    """The test name of an indented `def test...` in `scope`; None for a nested helper."""
    kind, owner = scope
    if kind == "class":
        return f"{owner}::{name}"
    return name if kind == "module" else None  # module: under a top-level `if` or `try`


class _TestDefinitions:
    """Test functions one file's patch defines on its `+` side and on its `-` side.

    A `def test...` inside a class is named `Class::test`; one inside a function is a
    helper pytest never collects. The enclosing class comes from the hunk header (the
    nearest top-level line above the hunk) and from top-level lines inside the hunk.
    An indented `def` is a method only at the shallowest indentation the patch shows,
    which tells a method from a helper nested in one; a hunk showing nothing shallower
    than such a helper cannot tell them apart, and takes it for a method.
    """

    def __init__(self) -> None:
        self.added: list[str] = []
        self.removed: set[str] = set()
        self._old: _Scope = _MODULE
        self._new: _Scope = _MODULE
        self._level = 1 << 16

    def hunk(self, line: bytes) -> None:
        match = _HUNK_HEADER.match(line)
        heading = match[1].rstrip(b"\r\n") if match else b""
        self._old = self._new = _scope_of(heading)[0] if heading else _MODULE

    def line(self, content: bytes, *, old: bool, new: bool) -> None:
        first = content[:1]
        if first == b" " or first == b"\t":
            body = content.lstrip(b" \t")
            if not body.strip():
                return
            indent = len(content) - len(body)
            self._level = min(self._level, indent)
            match = _METHOD.match(content)
            if match is None or indent > self._level:
                return
            name = match[1].decode("utf-8", "replace")
            if old and (qualified := _qualified(self._old, name)):
                self.removed.add(qualified)
            if new and (qualified := _qualified(self._new, name)):
                self.added.append(qualified)
        elif first.isalpha() or first in (b"_", b"@"):
            scope, test = _scope_of(content)
            if old:
                self._old = scope
                if test:
                    self.removed.add(test)
            if new:
                self._new = scope
                if test:
                    self.added.append(test)

    def new_tests(self) -> list[str]:
        """Added on the `+` side under a name the `-` side did not have (a rename counts)."""
        return [name for name in self.added if name not in self.removed]


class _LogReader:
    """Pulls records, file lists and test patches off the streamed log, in that order.

    Each step is optional: asking for the next record skips whatever is left of the
    current one, which is how changes that fail an early rule cost almost nothing.
    """

    def __init__(self, lines: Iterator[bytes]) -> None:
        self._lines = lines
        self._pending: bytes | None = None

    def _source(self) -> Iterator[bytes]:
        if self._pending is None:
            return self._lines
        pending, self._pending = self._pending, None
        return itertools.chain((pending,), self._lines)

    def next_record(self) -> _Record | None:
        header = None
        for line in self._source():
            if line[:1] == b"\0":
                header = line
                break
        if header is None:
            return None
        _, sha, parents, when, rest = header.split(b"\0", 4)
        message = [rest]
        while b"\0" not in rest:
            rest = next(self._lines, b"\0")
            message.append(rest)
        text = b"".join(message)
        return _Record(
            sha=sha.decode(),
            parents=tuple(parents.decode().split()),
            date=datetime.fromisoformat(when.decode()),
            message=text[: text.index(b"\0")].decode("utf-8", "replace"),
        )

    def files(self) -> list[_FileChange]:
        changes: list[_FileChange] = []
        for line in self._source():
            if line[:1] == b":":
                meta, *paths = line.rstrip(b"\n").split(b"\t")
                _, _, old_blob, new_blob, kind = meta.decode("ascii", "replace").split(" ")
                status = kind[0]
                if len(paths) == 2:
                    path, old_path = _path(paths[1]), _path(paths[0])
                else:
                    path, old_path = _path(paths[0]), None
                changes.append(_FileChange(status, path, old_path, old_blob, new_blob))
            elif line == b"\n":
                if changes:
                    break
            else:
                self._pending = line
                break
        return changes

    def added_tests(self, layout: Layout) -> list[str]:
        found: list[str] = []
        current: _TestDefinitions | None = None
        in_header = False
        path: str | None = None
        for line in self._source():
            first = line[:1]
            if first == b"\0":
                self._pending = line
                break
            if first == b"d" and line.startswith(b"diff --git "):
                if current is not None:
                    found += current.new_tests()
                current, in_header, path = None, True, None
            elif in_header:
                if line.startswith(b"+++ "):
                    path = _patch_path(line)
                elif first == b"@":
                    in_header = False
                    if path is not None and layout.is_test_module(path):
                        current = _TestDefinitions()
                        current.hunk(line)
            elif current is None:
                continue
            elif first == b"+":
                current.line(line[1:], old=False, new=True)
            elif first == b"-":
                current.line(line[1:], old=True, new=False)
            elif first == b" ":
                current.line(line[1:], old=True, new=True)
            elif first == b"@":
                current.hunk(line)
        if current is not None:
            found += current.new_tests()
        return list(dict.fromkeys(found))


_GITHUB_MERGE = re.compile(r"Merge pull request #(\d+) from \S+")
_BITBUCKET_MERGE = re.compile(r"Merged in \S+ \(pull request #(\d+)\)")
_BRANCH_MERGE = re.compile(r"Merge (?:remote-tracking )?branch ")


def is_merge_subject(title: str) -> bool:
    """Whether `title` is a merge commit's own subject, which names only a branch."""
    return any(pattern.match(title) for pattern in (_GITHUB_MERGE, _BITBUCKET_MERGE, _BRANCH_MERGE))


def split_message(message: str, *, merge: bool) -> tuple[str, str, int | None]:
    """A change's title, body, and the pull request a merge commit's subject names.

    A pull request's merge commit says "Merge pull request #12 from user/branch" and
    keeps the pull request's title as the first line of its body: that line is the
    title that says what the change does.
    """
    subject, _, rest = message.strip().partition("\n")
    subject, rest = subject.strip(), rest.strip()
    if not merge:
        return subject, rest, None
    pull = None
    if match := _GITHUB_MERGE.match(subject) or _BITBUCKET_MERGE.match(subject):
        pull = int(match[1])
    elif not _BRANCH_MERGE.match(subject):
        return subject, rest, None
    first, _, remainder = rest.partition("\n")
    if first.strip() and not first.lstrip("# ").startswith("Conflicts"):
        return first.strip(), remainder.strip(), pull
    return subject, rest, pull


def _unique(paths: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))


def _source_files(changes: list[_FileChange], layout: Layout) -> tuple[str, ...]:
    """Each changed source file once: a renamed file is one change, under its new name."""
    found = []
    for change in changes:
        if layout.is_source_file(change.path):
            found.append(change.path)
        elif change.status == "R" and change.old_path and layout.is_source_file(change.old_path):
            found.append(change.old_path)
    return _unique(found)


def mine(
    repo: Path,
    *,
    ref: str,
    source: str,
    tests: str,
    since: date | None,
    max_source_files: int,
    kinds: Collection[TaskKind] = FIXES,
) -> MiningResult:
    """Walk `ref`'s first-parent history once and sort every change into kept or left out.

    `kinds` says what is mined: fixes with a new test (`bug`), changes to the
    environment files alone (`env`), both, or nothing (a bout of the Lite set alone,
    which walks no history). Changes dated before `since` (by the
    committer's calendar day) are left out without reading their diffs: the history is
    newest first, so the pass stops at the first one and the rest of the branch is only
    listed, to record each as `before-since`.
    Raises `EmptyRepositoryError` for a repository without commits, and a `BugboutError`
    for a shallow clone.
    """
    layout = Layout.from_settings(source, tests)
    ensure_full_history(repo)
    head = head_commit(repo, ref)
    result = MiningResult(head=head)
    if not kinds:
        return result
    outcomes: list[Candidate | Exclusion | _EnvChange] = []
    cut: str | None = None
    with (
        history_log(layout, head, kinds) as (args, config),
        closing(stream_git(repo, *args, config=config)) as lines,
    ):
        reader = _LogReader(lines)
        while (record := reader.next_record()) is not None:
            if since is not None and record.date.date() < since:
                cut = record.sha
                break
            result.examined += 1
            outcomes.append(_judge(record, reader, layout, max_source_files, kinds))
    settled = _settle_env_changes(repo, [o for o in outcomes if isinstance(o, _EnvChange)])
    for outcome in outcomes:
        kept = settled[outcome.sha] if isinstance(outcome, _EnvChange) else outcome
        if isinstance(kept, Exclusion):
            result.excluded.append(kept)
        else:
            result.candidates.append(kept)
    if cut is not None:
        _record_before_since(repo, cut, result)
    return result


def _judge(
    record: _Record,
    reader: _LogReader,
    layout: Layout,
    max_source_files: int,
    kinds: Collection[TaskKind],
) -> Candidate | Exclusion | _EnvChange:
    """Which kind of task a change may be, judged by that kind's rules."""
    if "env" not in kinds:
        return _judge_fix(record, reader, layout, max_source_files)
    changes = reader.files()
    if changes and all(is_env_file(path) for change in changes for path in change.paths):
        return _judge_env(record, changes)
    if "bug" in kinds:
        return _judge_fix(record, reader, layout, max_source_files, changes)
    title, _, _ = split_message(record.message, merge=len(record.parents) > 1)
    return Exclusion(commit=record.sha, title=title, reason=Reason.NOT_ENV_ONLY)


def _judge_fix(
    record: _Record,
    reader: _LogReader,
    layout: Layout,
    max_source_files: int,
    changes: list[_FileChange] | None = None,
) -> Candidate | Exclusion:
    """Apply the rules in their order; the first one that fails is the reason.
    `changes` are the change's files when they have been read already."""
    merge = len(record.parents) > 1
    title, body, pull = split_message(record.message, merge=merge)

    def left_out(reason: Reason) -> Exclusion:
        return Exclusion(commit=record.sha, title=title, reason=reason)

    confirm: LinkedIssue | PullTitle | None = None
    if merge and is_merge_subject(title):
        if pull is None:
            return left_out(Reason.NOT_A_FIX)  # a branch name is no title to judge
        confirm = PullTitle(pull)
    elif not is_fix_title(title):
        linked = closing_reference(title)
        if linked is None:
            return left_out(Reason.NOT_A_FIX)
        confirm = LinkedIssue(linked)
    if changes is None:
        changes = reader.files()
    source_files = _source_files(changes, layout)
    if not source_files:
        return left_out(Reason.NO_SOURCE_CHANGE)
    if len(source_files) > max_source_files:
        return left_out(Reason.TOO_MANY_SOURCE_FILES)
    added = reader.added_tests(layout)
    if not added:
        return left_out(Reason.NO_TEST_ADDED)
    refs = find_references(title, body, pull=pull)
    if not refs:
        return left_out(Reason.NO_ISSUE)
    kept = [c.path for c in changes if c.status != "D"]
    return Candidate(
        commit=record.sha,
        base_commit=record.parents[0],
        title=title,
        body=body,
        date=record.date,
        refs=refs,
        source_files=source_files,
        test_files=_unique([p for p in kept if layout.is_test_module(p)]),
        added_tests=tuple(added),
        test_data_files=_unique([p for p in kept if layout.is_test_data(p)]),
        confirm=confirm,
    )


@dataclass(frozen=True)
class _EnvChange:
    """A change to environment files alone, waiting for its files' content to tell
    whether it changed what they install."""

    candidate: EnvCandidate
    changes: tuple[_FileChange, ...]

    @property
    def sha(self) -> str:
        return self.candidate.commit


def _judge_env(record: _Record, changes: list[_FileChange]) -> Exclusion | _EnvChange:
    """A change to the environment files alone: one change (not a branch's merge), not
    undoing another; whether it changed what is installed is settled after the pass."""
    merge = len(record.parents) > 1
    title, body, pull = split_message(record.message, merge=merge)
    if merge and pull is None:
        return Exclusion(commit=record.sha, title=title, reason=Reason.ENV_MERGE)
    if is_revert(title):
        return Exclusion(commit=record.sha, title=title, reason=Reason.ENV_REVERT)
    candidate = EnvCandidate(
        commit=record.sha,
        base_commit=record.parents[0],
        title=title,
        body=body,
        date=record.date,
        refs=find_references(title, body, pull=pull),
        env_files=_unique([path for change in changes for path in change.paths]),
    )
    return _EnvChange(candidate, tuple(changes))


_ENV_REASONS: dict[FileChange, Reason] = {
    "lock": Reason.ENV_LOCK_ONLY,
    "version": Reason.ENV_VERSION_ONLY,
    "other": Reason.ENV_NOT_DEPENDENCIES,
}
"""Why a change to environment files alone that changed no dependency is left out."""


def _absent(blob: str) -> bool:
    return not blob.strip("0")


def _settle_env_changes(
    repo: Path, pending: list[_EnvChange]
) -> dict[str, EnvCandidate | Exclusion]:
    """Each change kept, or left out because it changed nothing installed (or only the
    version, or only lock files); one `git cat-file` reads every blob the comparisons
    need."""
    wanted = [
        blob
        for change in pending
        for file in change.changes
        if reads_content(file.path)
        for blob in (file.old_blob, file.new_blob)
        if not _absent(blob)
    ]
    blobs = read_objects(repo, wanted)
    settled: dict[str, EnvCandidate | Exclusion] = {}
    for change in pending:
        kind = change_kind(_file_change(file, blobs) for file in change.changes)
        candidate = change.candidate
        if kind == "dependencies":
            settled[change.sha] = candidate
            continue
        settled[change.sha] = Exclusion(
            commit=change.sha, title=candidate.title, reason=_ENV_REASONS[kind]
        )
    return settled


def _file_change(file: _FileChange, blobs: dict[str, bytes | None]) -> FileChange:
    if file.old_blob == file.new_blob or installs_nothing(file.path):
        return "other"  # its mode alone changed, or nothing a task runs with
    if reads_content(file.path):
        before = None if _absent(file.old_blob) else blobs[file.old_blob]
        after = None if _absent(file.new_blob) else blobs[file.new_blob]
        return file_change(file.path, before, after)
    return content_change(file.path)


def _record_before_since(repo: Path, cut: str, result: MiningResult) -> None:
    """List the branch from `cut` down without diffs: cheap, yet each change is named."""
    args = ["log", "--first-parent", "--no-show-signature", "--encoding=UTF-8", _RECORD_FORMAT]
    args += [cut, "--"]
    with closing(stream_git(repo, *args)) as lines:
        reader = _LogReader(lines)
        while (record := reader.next_record()) is not None:
            title, _, _ = split_message(record.message, merge=len(record.parents) > 1)
            result.examined += 1
            result.excluded.append(
                Exclusion(commit=record.sha, title=title, reason=Reason.BEFORE_SINCE)
            )
