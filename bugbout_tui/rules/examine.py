"""Cross-examination decided without touching a disk: who the authors of a task's tests
are, where each author's tests sit in a tree, whose test a pytest node id is, and what a
stored matrix still lacks.

Each author's tests run apart from everyone else's (see `engine.examine`), in a tree
holding the base's test files with that author's test changes applied, under
`.bugbout_authors/<package>/`; each directory on the way from there to a module it runs
is made a package. pytest then imports the module as `<package>.tests.test_x` instead of
`test_x`: an author's in-place edit of a suite module is not the suite's module, and an
author's ids are told from the suite's by where they sit. The suite runs from where it
lives, exactly as the project runs it. Why packages rather than `--import-mode=importlib`
is in `docs/cross-examination.md`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from bugbout_tui.core.agent_facts import UNKNOWN_VENDOR
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import (
    BASE,
    SUITE,
    Attempt,
    Author,
    AuthorKind,
    Cell,
    CellOutcome,
    Matrix,
    PatchFacts,
    TreeRun,
)
from bugbout_tui.core.patch import Patch, split_path
from bugbout_tui.infra.pytest_run import TestResult
from bugbout_tui.rules.judge import author_identity

AUTHORS_DIR = ".bugbout_authors"
"""Where authors' tests are installed in a tree. With its leading dot it is no module
name, so each author's directory in it is a top-level package of its own, and pytest
never recurses into it when collecting a directory above it."""

_TEST_MODULE_NAMES = ("test_*.py", "*_test.py")
_NORECURSE = ("*.egg", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
"""pytest's default `norecursedirs` besides dot-directories: what it would skip in `.`."""
_KIND_ORDER: dict[AuthorKind, int] = {"contestant": 0, "examiner": 1, "suite": 2}
_MESSAGE_LIMIT = 600


def is_test_module(path: str) -> bool:
    """A file pytest collects by default; helpers, conftests and data are installed, not run."""
    name = PurePosixPath(path).name
    return any(fnmatchcase(name, pattern) for pattern in _TEST_MODULE_NAMES)


def takes_part(attempt: Attempt) -> bool:
    """Whether an attempt's patch and tests enter the matrix.

    Only an attempt that ran to its end and left a patch counts: a timed-out agent's
    half-written change is scored as no fix, so it must not be judged as a patch either,
    and its tests were never finished; an `oversized` attempt's patch was never kept.
    """
    return attempt.status == "finished"


@dataclass(frozen=True)
class AuthorSpec:
    """An author whose tests take part, and what installing them takes.

    Attributes:
        name: The contestant's or examiner's name, or `suite`.
        kind: contestant, examiner or suite.
        vendor: Who made the model; None for the suite and unnamed examiners.
        tests_diff: The attempt's test changes, laid over the base's test files.
        modules: The test modules it added or changed, in its own paths: what runs.
        hidden: The base's files its checkout lacked, which its overlay lacks too; None
            for a record from before this was kept (it lacked the fix's test files).
    """

    name: str
    kind: AuthorKind
    vendor: str | None
    tests_diff: str = ""
    modules: tuple[str, ...] = ()
    hidden: tuple[str, ...] | None = None

    @property
    def digest(self) -> str | None:
        """A hash of what its overlay is made of: its test changes, and the files its
        checkout lacked when that is known."""
        if self.kind == "suite":
            return None
        if self.hidden is None:
            return _digest(self.tests_diff)
        return _digest("\0".join([self.tests_diff, "hidden", *self.hidden]))


@dataclass(frozen=True)
class PatchSpec:
    """A contestant's patch as a tree of the matrix: its facts and its source changes."""

    facts: PatchFacts
    source: str

    @property
    def digest(self) -> str:
        return _digest(self.source)


@dataclass(frozen=True)
class Cast:
    """Everyone taking part in one task's cross-examination."""

    authors: tuple[AuthorSpec, ...]
    patches: tuple[PatchSpec, ...]

    @property
    def trees(self) -> tuple[str, ...]:
        return (BASE, *(patch.facts.contestant for patch in self.patches))

    def author(self, name: str) -> AuthorSpec:
        return next(author for author in self.authors if author.name == name)

    def patch(self, tree: str) -> PatchSpec | None:
        return next((p for p in self.patches if p.facts.contestant == tree), None)

    def without(self, names: Iterable[str]) -> Cast:
        """The cast with some authors left out (the suite when there is none to run, an
        author whose test changes cannot be installed)."""
        dropped = set(names)
        return Cast(tuple(a for a in self.authors if a.name not in dropped), self.patches)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def modules_written(patch: Patch) -> tuple[str, ...]:
    """The test modules a patch added or changed: the tests its author stands behind."""
    return tuple(
        sorted(
            change.path
            for change in patch.files
            if change.part == "tests" and change.status != "deleted" and is_test_module(change.path)
        )
    )


def _vendor(vendors: Mapping[str, str], name: str) -> str | None:
    """A trial (`codex#2`) has its agent's vendor when only the agent is listed."""
    return vendors.get(name) or vendors.get(author_identity(name))


def cast_for(attempts: Iterable[Attempt], *, vendors: Mapping[str, str], run_suite: bool) -> Cast:
    """Who takes part: each finished attempt with test modules is an author (an examiner's
    source changes are dropped), each finished contestant with a source change is a
    tree, and the suite is an author when `run-suite` is on.

    Raises:
        UsageError: an agent is named `base` or `suite`, the names the matrix keeps for
            the unfixed tree and the repository's tests.
    """
    authors: list[AuthorSpec] = []
    patches: list[PatchSpec] = []
    for attempt in attempts:
        if not takes_part(attempt):
            continue
        name, patch = attempt.contestant, attempt.patch
        modules = modules_written(patch)
        wrote_tests = bool(modules)
        is_tree = attempt.role == "contestant" and patch.has_source_change
        if (wrote_tests and name == SUITE) or (is_tree and name == BASE):
            raise UsageError(
                f"An agent is named '{name}', which the cross-examination matrix keeps for "
                f"{'the repository suite' if name == SUITE else 'the unfixed code'}.",
                hint="Give it another `name` in bugbout.toml.",
            )
        vendor = _vendor(vendors, name)
        if wrote_tests:
            if attempt.role == "contestant":
                vendor = vendor or UNKNOWN_VENDOR
            hidden = tuple(attempt.hidden) if attempt.hidden is not None else None
            authors.append(AuthorSpec(name, attempt.role, vendor, patch.tests, modules, hidden))
        if is_tree:
            facts = PatchFacts(
                contestant=name, vendor=vendor or UNKNOWN_VENDOR, source_size=patch.source_size
            )
            patches.append(PatchSpec(facts, patch.source))
    if run_suite:
        authors.append(AuthorSpec(SUITE, "suite", None))
    authors.sort(key=lambda a: (_KIND_ORDER[a.kind], a.name))
    patches.sort(key=lambda p: p.facts.contestant)
    return Cast(tuple(authors), tuple(patches))


# --- the layout of a tree ------------------------------------------------------------------


def package_name(index: int, name: str) -> str:
    """An author's directory under `AUTHORS_DIR`: an importable name, unique in the tree,
    readable in pytest's output."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:32]
    return f"author_{index}_{slug}" if slug else f"author_{index}"


def installed(package: str, path: str) -> str:
    """Where an author's file `path` sits in a tree, relative to the tree."""
    return f"{AUTHORS_DIR}/{package}/{path}"


def package_dirs(module: str) -> list[str]:
    """The directories, relative to an author's directory, that must be packages for
    `module` to import under that directory's name (`""` is the author's directory)."""
    parts = PurePosixPath(module).parent.parts
    return ["/".join(parts[:depth]) for depth in range(len(parts) + 1)]


def _under(path: str, directories: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def overlay_files(
    paths: Iterable[str], *, source: str, tests: str, hidden: Sequence[str]
) -> list[str]:
    """The base's files an author's tests are laid over: every test file (test modules,
    helpers, conftests, data), minus the files kept out of its checkout (`hidden`).

    These are what the author's test changes were made against, so they apply; and they
    are what its tests import and read when they ran in the agent's working copy.
    """
    return sorted(
        path
        for path in paths
        if split_path(path, source, tests) == "tests" and not _under(path, hidden)
    )


def suite_paths(tests: str, top_level: Iterable[tuple[str, bool]]) -> list[str]:
    """What to give pytest to run the suite from the base's entries `(name, is_dir)`.

    With a tests directory, that directory. With the tests at the root, not `.`: pytest
    drops a directory argument that holds another argument (the authors' modules), so
    the root's entries are listed instead, minus what pytest would not recurse into.
    """
    if tests not in ("", "."):
        return [tests]
    return sorted(
        name
        for name, is_dir in top_level
        if not name.startswith(".")
        and not any(fnmatchcase(name, pattern) for pattern in _NORECURSE)
        and (is_dir or is_test_module(name))
    )


def run_paths(
    authors: Sequence[AuthorSpec], packages: Mapping[str, str], suite: Sequence[str]
) -> list[str]:
    """pytest's arguments for one tree: the suite's paths, and each author's modules."""
    paths: list[str] = []
    for author in authors:
        if author.kind == "suite":
            paths.extend(suite)
        else:
            paths.extend(installed(packages[author.name], module) for module in author.modules)
    return paths


# --- reading a run back --------------------------------------------------------------------


def owner(node_id: str, packages: Mapping[str, str], *, suite: bool) -> tuple[str, str] | None:
    """The author of a node id and the id as that author wrote it.

    `.bugbout_authors/<package>/tests/test_x.py::test_y` is the author of `<package>`'s
    `tests/test_x.py::test_y`; anything outside `AUTHORS_DIR` is the suite's when the
    suite ran. `packages` maps each installed directory to its author.
    """
    prefix = AUTHORS_DIR + "/"
    if not node_id.startswith(prefix):
        return (SUITE, node_id) if suite else None
    package, _, own = node_id[len(prefix) :].partition("/")
    name = packages.get(package)
    if name is None:
        return None
    return name, own or "."


def cells_of(
    outcomes: Mapping[str, TestResult], packages: Mapping[str, str], *, suite: bool
) -> dict[str, dict[str, Cell]]:
    """author → own test id → cell, from one run's outcomes.

    A module or directory that failed to collect is one entry without `::`; its error
    becomes `uncollected` here, and `assemble` spreads it over the tests it stands for.
    """
    found: dict[str, dict[str, Cell]] = {}
    for node_id, result in outcomes.items():
        who = owner(node_id, packages, suite=suite)
        if who is None:
            continue
        name, own = who
        outcome: CellOutcome = result.outcome
        if "::" not in own and outcome == "error":
            outcome = "uncollected"
        found.setdefault(name, {})[own] = Cell(outcome=outcome, message=result.message)
    return found


def unrun_cells(author: AuthorSpec, suite: Sequence[str], reason: str) -> dict[str, Cell]:
    """An author's cells on a tree where even a run of its tests alone failed as a whole.

    One entry per module (per suite path) marks them all `uncollected`: nothing was
    observed, which is not a failure of the behaviour the tests check.
    """
    first = next((line for line in reason.splitlines() if line.strip()), reason)
    message = _cap(f"its tests could not run on this tree: {first}")
    entries = suite if author.kind == "suite" else author.modules
    return {
        entry.rstrip("/") or ".": Cell(outcome="uncollected", message=message) for entry in entries
    }


def _cap(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


# --- the stored matrix ---------------------------------------------------------------------


def still_valid(stored: Matrix | None, cast: Cast) -> Matrix | None:
    """What of a stored matrix still describes `cast`.

    A patch or an author's tests that changed under the same name (an attempt raced
    again after its record was removed) make the stored tree, or that author's cells,
    stale: they are dropped here so they run again. Records without digests are kept.
    """
    if stored is None:
        return None
    patches = {patch.facts.contestant: patch.digest for patch in cast.patches}
    authors = {author.name: author.digest for author in cast.authors}
    stale_trees = {
        facts.contestant
        for facts in stored.patches
        if facts.digest is not None and patches.get(facts.contestant, facts.digest) != facts.digest
    }
    stale_authors = {
        author.name
        for author in stored.authors
        if author.digest is not None and authors.get(author.name, author.digest) != author.digest
    }
    if not stale_trees and not stale_authors:
        return stored
    return stored.model_copy(
        update={
            "authors": [a for a in stored.authors if a.name not in stale_authors],
            "patches": [f for f in stored.patches if f.contestant not in stale_trees],
            "trees": {
                name: run.model_copy(
                    update={"cells": {a: c for a, c in run.cells.items() if a not in stale_authors}}
                )
                for name, run in stored.trees.items()
                if name not in stale_trees
            },
        }
    )


def still_to_run(stored: Matrix | None, cast: Cast) -> dict[str, tuple[str, ...]]:
    """tree → the authors whose tests must still run there.

    A tree not in the matrix runs every author. A stored tree runs only authors the
    matrix does not know yet; one whose run failed as a whole (its patch does not
    apply) runs nothing more. `stored` is what `still_valid` kept of the stored matrix.
    A task without a patch runs nothing: the unfixed code alone judges no patch.
    """
    if not cast.patches:
        return {}
    known = {author.name for author in stored.authors} if stored else set()
    names = tuple(author.name for author in cast.authors)
    plan: dict[str, tuple[str, ...]] = {}
    for tree in cast.trees:
        old = stored.trees.get(tree) if stored else None
        if old is None:
            plan[tree] = names
        elif old.error is None:
            new = tuple(name for name in names if name not in known)
            if new:
                plan[tree] = new
    return plan


def _covers(entry: str, test: str) -> bool:
    path = test.partition("::")[0]
    return entry == "." or path == entry or path.startswith(entry + "/")


def assemble(task: str, stored: Matrix | None, cast: Cast, runs: Mapping[str, TreeRun]) -> Matrix:
    """The matrix of `cast`: the stored one's cells kept, the new runs' cells added.

    Authors and trees that no longer take part are dropped. An author's test ids are
    every test id it showed on any tree, so a module that could not be imported on one
    tree is spread there over the tests it showed elsewhere, each `uncollected` (or
    `skipped`, if it skipped itself); a module that imported nowhere stays one entry.
    """
    wanted = {author.name for author in cast.authors}
    errors: dict[str, str | None] = {}
    cells: dict[str, dict[str, dict[str, Cell]]] = {}
    for tree in cast.trees:
        old = stored.trees.get(tree) if stored else None
        new = runs.get(tree)
        if old is None and new is None:
            continue
        found = {a: dict(c) for a, c in (old.cells if old else {}).items() if a in wanted}
        if new is not None:
            found.update((a, dict(c)) for a, c in new.cells.items() if a in wanted)
        cells[tree] = found
        errors[tree] = old.error if old is not None else new.error if new is not None else None
    stored_tests = {a.name: a.tests for a in stored.authors} if stored else {}
    authors = []
    for spec in cast.authors:
        known = {test for test in stored_tests.get(spec.name, ()) if "::" in test}
        for by_author in cells.values():
            known.update(test for test in by_author.get(spec.name, {}) if "::" in test)
        entries: set[str] = set()
        for by_author in cells.values():
            if spec.name in by_author:
                entries |= _spread(by_author[spec.name], known)
        authors.append(
            Author(
                name=spec.name,
                kind=spec.kind,
                vendor=spec.vendor,
                tests=sorted(known | entries),
                digest=spec.digest,
            )
        )
    return Matrix(
        task=task,
        authors=authors,
        patches=[patch.facts.model_copy(update={"digest": patch.digest}) for patch in cast.patches],
        trees={tree: TreeRun(tree=tree, error=errors[tree], cells=cells[tree]) for tree in cells},
    )


def _spread(cells: dict[str, Cell], known: set[str]) -> set[str]:
    """Replace each collection-level cell by a cell per known test it stands for; return
    the entries that stand for no known test, which stay as they are."""
    kept: set[str] = set()
    for entry in sorted((e for e in cells if "::" not in e), key=len, reverse=True):
        cell = cells.pop(entry)
        covered = [test for test in known if _covers(entry, test)]
        if not covered:
            cells[entry] = cell
            kept.add(entry)
        for test in covered:
            cells.setdefault(test, cell)
    return kept
