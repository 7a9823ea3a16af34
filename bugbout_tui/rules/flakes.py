"""The flake ledger: every test outcome bugbout sees, and the tests it quarantines.

A test that both passed and failed on one tree (the same code under the same
conditions) answers at random, so from then on it decides nothing anywhere: it is not
fail-to-pass or pass-to-pass when a patch is scored, and its cells are not reproductions
or breakages when the judge weighs a patch. A tree is named by what ran: the commits,
the digest of a patch's source part, the digest of an author's tests, and the
conditions, so two runs share a tree exactly when nothing that could change the answer
differed.

Everything here is pure: the stages collect what they saw, and the ledger is merged and
written once per stage.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass

from bugbout_tui.core import look
from bugbout_tui.core.models import (
    SUITE,
    Conditions,
    Ledger,
    Matrix,
    Oracle,
    OutcomeTally,
    Resolution,
    TreeTally,
)
from bugbout_tui.rules.ground_truth import FAILING, PASSING
from bugbout_tui.rules.score import status_of

_RAN_TESTS = frozenset({"resolved", "fixed-but-broke", "wrong-fix"})


@dataclass(frozen=True)
class Tree:
    """What ran: an identity for the ledger, and the words a person reads for it."""

    id: str
    label: str


def tree_of(label: str, conditions: Conditions, *code: str) -> Tree:
    """The tree made of `code` (commits, digests), run under `conditions`."""
    text = "\0".join([*code, conditions.model_dump_json()])
    return Tree(hashlib.sha256(text.encode()).hexdigest()[:20], label)


def digest(text: str) -> str:
    """The digest that names a patch's source part or the tests laid into a tree."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Observation:
    """One test's outcome on one tree, as a stage saw it."""

    task: str
    author: str
    test: str
    tree: Tree
    outcome: str


def observe(task: str, author: str, where: Tree, outcomes: Mapping[str, str]) -> list[Observation]:
    """The observations of one run: test-level outcomes only (a module that did not
    import says nothing of one test)."""
    return [
        Observation(task, author, test, where, outcome)
        for test, outcome in outcomes.items()
        if "::" in test
    ]


def merge(ledger: Ledger, seen: Iterable[Observation]) -> Ledger:
    """`ledger` with `seen` added (a new record; `ledger` is left as it is)."""
    merged = ledger.model_copy(deep=True)
    for item in seen:
        tests = merged.tasks.setdefault(item.task, {}).setdefault(item.author, {})
        tally = tests.setdefault(item.test, OutcomeTally())
        on_tree = tally.trees.setdefault(item.tree.id, TreeTally(label=item.tree.label))
        on_tree.runs += 1
        on_tree.passes += item.outcome in PASSING
        on_tree.fails += item.outcome in FAILING
    return merged


def quarantined(ledger: Ledger | None, task: str) -> dict[str, set[str]]:
    """author → the task's tests of that author that are quarantined."""
    if ledger is None:
        return {}
    return {author: set(tests) for author, tests in ledger.quarantined(task).items()}


def repository_tests(ledger: Ledger | None, task: str) -> set[str]:
    """The task's quarantined tests of the repository (hidden tests and suite alike)."""
    return quarantined(ledger, task).get(SUITE, set())


def oracle_without(oracle: Oracle, flaky: Set[str]) -> Oracle:
    """The oracle with quarantined tests set aside as unstable; a task left with no
    fail-to-pass test is not scored, and says so."""
    moved = [t for t in [*oracle.fail_to_pass, *oracle.pass_to_pass] if t in flaky]
    if not moved:
        return oracle
    fail_to_pass = [t for t in oracle.fail_to_pass if t not in flaky]
    update: dict[str, object] = {
        "fail_to_pass": fail_to_pass,
        "pass_to_pass": [t for t in oracle.pass_to_pass if t not in flaky],
        "unstable": sorted({*oracle.unstable, *moved}),
    }
    if oracle.scored and not fail_to_pass:
        quarantine = look.plural(len(moved), "test")
        update["scored"] = False
        update["reason"] = (
            "no test fails before the fix and passes after it once flaky tests are "
            f"quarantined ({quarantine} quarantined)"
        )
    return oracle.model_copy(update=update)


def resolution_without(resolution: Resolution, flaky: Set[str]) -> Resolution:
    """A score from a run, decided again without the quarantined tests, by the rules of
    `rules.score.classify`; a score that took no run is as it was."""
    if resolution.status not in _RAN_TESTS:
        return resolution
    fail_to_pass = {t: o for t, o in resolution.fail_to_pass.items() if t not in flaky}
    broken = [t for t in resolution.broken if t not in flaky]
    if fail_to_pass == resolution.fail_to_pass and broken == resolution.broken:
        return resolution
    return resolution.model_copy(
        update={
            "status": status_of(fail_to_pass, broken),
            "fail_to_pass": fail_to_pass,
            "broken": broken,
        }
    )


def matrix_without(matrix: Matrix, flaky: Mapping[str, Set[str]]) -> Matrix:
    """The matrix with every quarantined test's cells taken out, so the judge's rules,
    unchanged, count none of them as a reproduction or a breakage."""
    if not any(flaky.values()):
        return matrix
    authors = [
        author.model_copy(
            update={"tests": [t for t in author.tests if t not in flaky.get(author.name, ())]}
        )
        for author in matrix.authors
    ]
    trees = {
        name: run.model_copy(
            update={
                "cells": {
                    author: {t: c for t, c in cells.items() if t not in flaky.get(author, ())}
                    for author, cells in run.cells.items()
                }
            }
        )
        for name, run in matrix.trees.items()
    }
    return matrix.model_copy(update={"authors": authors, "trees": trees})
