"""The judge: pick one patch per task from executed tests alone, or refuse to.

Every rule reads the cross-examination matrix and nothing else, so a verdict can be
recomputed (or a policy switched) from the stored matrix, and every decision names the
cells it rests on. The rules, and the readings taken where the design leaves room, are
in `docs/judge.md`; the short version:

- a test reproduces the bug when it fails (or errors) on the unfixed code;
- a patch is supported only by other authors' reproductions, each author weighing the
  same however many tests it wrote;
- a suite test the patch breaks counts against it only when most other patches keep it
  passing, because a change nearly every patch makes was probably asked for;
- with no approved patch the judge abstains and says why.

`credible`, the fifth policy, reads the same matrix with two discounts: an author none
of whose reproductions passes on another author's patch carries no weight (its tests are
evidence about it, not about the bug), and only patches with support of at least one
half vote in the breakage quorum (a patch that fails the other authors' reproductions
is no witness to what the code should keep doing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction

from bugbout_tui.core import look
from bugbout_tui.core.config import Policy
from bugbout_tui.core.models import Author, Cell, Matrix, PatchFacts, TreeRun
from bugbout_tui.core.trials import agent_of
from bugbout_tui.rules.judge_models import (
    POLICIES,
    Assessment,
    Breakage,
    CellRef,
    Discount,
    Verdict,
    VerdictSet,
)

__all__ = [
    "POLICIES",
    "Assessment",
    "Breakage",
    "CellRef",
    "Discount",
    "Policy",
    "Verdict",
    "VerdictSet",
    "author_identity",
    "breaks",
    "judge",
    "judge_all",
    "reproductions",
]

BASE = "base"
THRESHOLD = Fraction(1, 2)
"""`majority` and `cross-vendor` approve at this support or more; under `credible` it is
the support that makes a patch a witness in the breakage quorum."""
CREDIBLE_THRESHOLD = Fraction(2, 3)
"""`credible` approves at this support or more. Once unconfirmed authors are set aside,
what is left is evidence other authors' patches agree with, so a patch should pass a
clear majority of it. On the judge benchmark one half let more partial fixes through
and unanimity lost right picks wherever a right author also wrote a test only its own
patch passes; two thirds kept both (docs/judge.md)."""

_REPRODUCES = frozenset({"failed", "error"})
"""Outcomes on the base that make a test a reproduction. `uncollected` is missing on
purpose: a module that cannot even be imported says nothing about the bug."""
_BROKEN = frozenset({"failed", "error", "uncollected"})
"""Outcomes on a patch that turn a test passing on the base into a breakage."""
_PASSES = "passed"
"""The only outcome that counts as passing: an `xfailed` test still failed."""


def author_identity(name: str) -> str:
    """The author behind a name: `codex#2` is the second trial of `codex`, not a new voice.

    Trials of one agent share its habits and blind spots, so letting one vouch for
    another would let an agent support itself.
    """
    return agent_of(name)


class _Gate(IntEnum):
    """How far a patch got through the rules; abstention reports the furthest reached."""

    NO_INDEPENDENT = 0
    RUN_FAILED = 1
    LOW_SUPPORT = 2
    BROKE = 3
    APPROVED = 4


@dataclass(frozen=True)
class _Reproduction:
    """A test that fails on the base, under the author name the matrix files it by."""

    author: str
    test: str
    base: CellRef


@dataclass(frozen=True)
class _Vote:
    """One author's reproductions on one patch: how many pass, and the cells that say so."""

    passing: int
    total: int
    cells: list[CellRef]


@dataclass(frozen=True)
class _Candidate:
    """A test that passed on the base, so a patch that fails it may have broken it."""

    author: str
    test: str
    kind: str
    base: CellRef
    kept_by: int
    """How many patches that ran keep it passing."""


@dataclass(frozen=True)
class _Judged:
    """An assessment with what the pick and the abstention need beyond it."""

    assessment: Assessment
    gate: _Gate
    support: Fraction | None
    """Exact, so ties and the threshold never depend on float rounding."""
    size: int


@dataclass(frozen=True)
class _Support:
    """One patch's support under one policy, before any breakage is looked at."""

    independent: list[str]
    votes: dict[str, _Vote]
    shares: dict[str, Fraction]
    support: Fraction | None


class _Evidence:
    """The policy-independent facts of one matrix, worked out once for all five policies."""

    def __init__(self, matrix: Matrix) -> None:
        self.task = matrix.task
        authors = sorted(matrix.authors, key=lambda author: author.name)
        base = matrix.trees.get(BASE)
        self.base_failure = _base_failure(base)
        base_cells = {} if base is None or self.base_failure else base.cells
        self.patches = sorted(matrix.patches, key=lambda patch: patch.contestant)
        self.failures = {
            patch.contestant: _tree_failure(matrix.trees.get(patch.contestant))
            for patch in self.patches
        }
        self.ran = {
            patch.contestant: matrix.trees[patch.contestant]
            for patch in self.patches
            if self.failures[patch.contestant] is None
        }
        self.by_author: dict[str, list[_Reproduction]] = {}
        self.by_identity: dict[str, list[_Reproduction]] = {}
        self.vendors: dict[str, set[str | None]] = {}
        self.candidates: list[_Candidate] = []
        self._votes: dict[tuple[str, bool], dict[str, _Vote]] = {}
        self._cells: dict[tuple[str, bool, tuple[str, ...]], list[CellRef]] = {}
        self._credible: dict[str, list[_Reproduction]] | None = None
        self._discounts: list[Discount] = []
        self._witnesses: list[str] | None = None
        for author in authors:
            cells = base_cells.get(author.name, {})
            if author.kind != "suite":
                found = [
                    _Reproduction(author.name, test, _ref(BASE, author.name, test, cells[test]))
                    for test in sorted(cells)
                    if cells[test].outcome in _REPRODUCES
                ]
                self.by_author[author.name] = found
                identity = author_identity(author.name)
                self.by_identity.setdefault(identity, []).extend(found)
                self.vendors.setdefault(identity, set()).add(_vendor(author.vendor))
            if author.kind != "contestant":
                self.candidates.extend(self._candidates(author, cells))
        self.by_identity = {name: reps for name, reps in self.by_identity.items() if reps}

    def _candidates(self, author: Author, cells: Mapping[str, Cell]) -> Iterable[_Candidate]:
        for test in sorted(cells):
            if cells[test].outcome != _PASSES:
                continue
            kept = sum(_outcome(tree, author.name, test) == _PASSES for tree in self.ran.values())
            base = _ref(BASE, author.name, test, cells[test])
            yield _Candidate(author.name, test, author.kind, base, kept)

    def reproductions(self) -> dict[str, list[str]]:
        return {name: [rep.test for rep in reps] for name, reps in self.by_author.items()}

    def support(self, patch: PatchFacts, policy: Policy) -> _Support:
        """Who may vouch for a patch and how much of their evidence it passes."""
        credible = policy == "credible"
        pool = self.credible_pool() if credible else self.by_identity
        author = author_identity(patch.contestant)
        independent = [
            name
            for name in sorted(pool)
            if name != author
            and (policy != "cross-vendor" or _vendor(patch.vendor) not in self.vendors[name])
        ]
        votes = self._votes_on(patch.contestant, credible)
        shares = {name: Fraction(votes[name].passing, votes[name].total) for name in independent}
        support = sum(shares.values(), Fraction(0)) / len(shares) if shares else None
        return _Support(independent, votes, shares, support)

    def assess(self, patch: PatchFacts, policy: Policy) -> _Judged:
        author = author_identity(patch.contestant)
        found = self.support(patch, policy)
        independent, support = found.independent, found.support
        breakages = self._breakages(patch.contestant, policy)
        counted = [breakage for breakage in breakages if breakage.counted]
        cells = self._support_cells(patch.contestant, tuple(independent), policy == "credible")
        if counted:
            cells = sorted([*cells, *(ref for b in counted for ref in b.cells)], key=_cell_order)
        passing = {name: found.votes[name].passing for name in independent}
        gate, reason = self._decide(patch.contestant, policy, passing, support, counted)
        assessment = Assessment(
            patch=patch.contestant,
            author=author,
            independent=independent,
            support_by_author={name: float(share) for name, share in found.shares.items()},
            support=None if support is None else float(support),
            breakages=breakages,
            counted_breakages=len(counted),
            approved=gate is _Gate.APPROVED,
            reason=reason,
            cells=cells,
        )
        return _Judged(assessment, gate, support, patch.source_size)

    def credible_pool(self) -> dict[str, list[_Reproduction]]:
        """The authors whose reproductions `credible` counts: those with at least one
        reproduction that passes on a patch by another author.

        An author none of whose reproductions any other author's patch satisfies is
        discounted whole (see `discounts`): its tests may pin down its own reading
        of the bug rather than the bug. A counted author keeps all its reproductions,
        unconfirmed ones included, so a patch cannot shed a test it fails just because
        the other patches fail it too. Confirmation may come from any patch that ran and
        is not by the author, so who counts is the same whichever patch is judged.
        """
        if self._credible is None:
            self._credible = {}
            for identity, reps in self.by_identity.items():
                passing = sorted(
                    name
                    for name, tree in self.ran.items()
                    if any(_outcome(tree, rep.author, rep.test) == _PASSES for rep in reps)
                )
                if any(author_identity(name) != identity for name in passing):
                    self._credible[identity] = reps
                    continue
                tests: dict[str, list[str]] = {}
                for rep in reps:
                    tests.setdefault(rep.author, []).append(rep.test)
                self._discounts.append(
                    Discount(author=identity, reproductions=tests, passed_by=passing)
                )
        return self._credible

    def discounts(self) -> list[Discount]:
        """The authors `credible` gives no weight, in author order."""
        self.credible_pool()
        return self._discounts

    def witnesses(self) -> list[str]:
        """The patches `credible` lets vote in the breakage quorum: those that ran and
        have support of at least `THRESHOLD`, breakages aside (so nothing is circular)."""
        if self._witnesses is None:
            self._witnesses = []
            for patch in self.patches:
                if patch.contestant not in self.ran:
                    continue
                support = self.support(patch, "credible").support
                if support is not None and support >= THRESHOLD:
                    self._witnesses.append(patch.contestant)
        return self._witnesses

    def _votes_on(self, patch: str, credible: bool) -> dict[str, _Vote]:
        """Every author's vote on a patch, worked out once and shared by the policies
        that read the same reproductions."""
        key = (patch, credible)
        if key not in self._votes:
            tree = self.ran.get(patch)
            votes: dict[str, _Vote] = {}
            pool = self.credible_pool() if credible else self.by_identity
            for name, reps in pool.items():
                cells: list[CellRef] = []
                passing = 0
                for rep in reps:
                    cells.append(rep.base)
                    cell = None if tree is None else tree.cells.get(rep.author, {}).get(rep.test)
                    if cell is not None:
                        cells.append(_ref(patch, rep.author, rep.test, cell))
                        passing += cell.outcome == _PASSES
                votes[name] = _Vote(passing, len(reps), cells)
            self._votes[key] = votes
        return self._votes[key]

    def _support_cells(
        self, patch: str, independent: tuple[str, ...], credible: bool
    ) -> list[CellRef]:
        """The cells behind a patch's support, in display order.

        Three policies share one set of independent authors, so the list is kept. A cell
        appears once: each reproduction belongs to one author.
        """
        key = (patch, credible, independent)
        if key not in self._cells:
            votes = self._votes_on(patch, credible)
            found = [ref for name in independent for ref in votes[name].cells]
            self._cells[key] = sorted(found, key=_cell_order)
        return self._cells[key]

    def _breakages(self, patch: str, policy: Policy) -> list[Breakage]:
        """Regressions of suite tests (and, under `strict`, examiner tests) on this patch.

        A patch that never ran has no observed regressions; its rejection comes from the
        failed run itself. Under `credible` the quorum is taken among the witnesses only.
        """
        tree = self.ran.get(patch)
        if tree is None:
            return []
        voters = None
        if policy == "credible":
            voters = [self.ran[name] for name in self.witnesses() if name != patch]
        others = len(self.ran) - 1 if voters is None else len(voters)
        found: list[Breakage] = []
        for candidate in self.candidates:
            if candidate.kind == "examiner" and policy != "strict":
                continue
            cell = tree.cells.get(candidate.author, {}).get(candidate.test)
            if cell is None or cell.outcome not in _BROKEN:
                continue
            kept_by = candidate.kept_by
            if voters is not None:
                kept_by = sum(
                    _outcome(voter, candidate.author, candidate.test) == _PASSES for voter in voters
                )
            found.append(
                Breakage(
                    author=candidate.author,
                    test=candidate.test,
                    kept_by=kept_by,
                    others=others,
                    counted=others == 0 or 2 * kept_by > others,
                    cells=[candidate.base, _ref(patch, candidate.author, candidate.test, cell)],
                )
            )
        return found

    def _decide(
        self,
        patch: str,
        policy: Policy,
        passing: Mapping[str, int],
        support: Fraction | None,
        counted: list[Breakage],
    ) -> tuple[_Gate, str]:
        if support is None:
            if policy == "credible":
                return (
                    _Gate.NO_INDEPENDENT,
                    "no independent reproduction that counts: no other author has a test "
                    "that fails on the unfixed code and passes on a patch not its own",
                )
            whose = "an author of another vendor" if policy == "cross-vendor" else "another author"
            return (
                _Gate.NO_INDEPENDENT,
                f"no independent reproduction: no test by {whose} fails on the unfixed code",
            )
        failure = self.failures[patch]
        if failure is not None:
            return _Gate.RUN_FAILED, f"cannot be supported: {failure}"
        if policy in ("unanimous", "strict"):
            reps = sum(len(self.by_identity[name]) for name in passing)
            passed = sum(passing.values())
            if passed < reps:
                return (
                    _Gate.LOW_SUPPORT,
                    f"passes {passed} of {reps} independent reproductions; every one must pass",
                )
        elif support < _bar(policy):
            return _Gate.LOW_SUPPORT, f"support {_floor(support)} is below {_shown(policy)}"
        if counted:
            tests = ", ".join(f"{breakage.test} ({breakage.author})" for breakage in counted)
            keepers = "supported patches" if policy == "credible" else "other patches"
            return (
                _Gate.BROKE,
                f"breaks {look.plural(len(counted), 'test')} most {keepers} keep passing: {tests}",
            )
        return (
            _Gate.APPROVED,
            f"support {_floor(support)} from {look.plural(len(passing), 'independent author')}, "
            "no counted breakage",
        )

    def abstention(self, policy: Policy, judged: list[_Judged]) -> str:
        """Why no patch was picked, told by the furthest any patch got through the rules."""
        if self.base_failure is not None:
            return self.base_failure
        if not self.patches:
            return "no patch changed the source code"
        if not self.by_identity:
            return "no contestant's or examiner's test fails on the unfixed code"
        furthest = max(item.gate for item in judged)
        if furthest is _Gate.NO_INDEPENDENT and policy == "credible" and not self.ran:
            return "the test run failed on every patch, so no reproduction could be confirmed"
        if furthest is _Gate.NO_INDEPENDENT and policy == "credible":
            return (
                "no patch has a reproduction by another author that a patch not by that "
                "author passes"
            )
        if furthest is _Gate.NO_INDEPENDENT:
            whose = "an author of another vendor" if policy == "cross-vendor" else "another author"
            return f"no patch has a reproduction by {whose}"
        if furthest is _Gate.RUN_FAILED:
            return "the test run failed on every patch that has an independent reproduction"
        if furthest is _Gate.LOW_SUPPORT:
            best = min(
                (item for item in judged if item.gate is _Gate.LOW_SUPPORT),
                key=lambda item: (-(item.support or 0), item.assessment.patch),
            )
            at = f"best: {best.assessment.patch} at {_floor(best.support or Fraction(0))}"
            if policy in ("unanimous", "strict"):
                return f"no patch passes every independent reproduction ({at})"
            return f"no patch reached support {_shown(policy)} ({at})"
        if policy in ("unanimous", "strict"):
            supported = "that passes every independent reproduction"
        else:
            supported = f"with support of at least {_shown(policy)}"
        which = "suite or examiner test" if policy == "strict" else "suite test"
        keepers = "supported patches" if policy == "credible" else "other patches"
        return f"every patch {supported} breaks a {which} that most {keepers} keep passing"


def breaks(author: Author, base: Cell | None, patched: Cell | None) -> bool:
    """Whether a patch broke this test: not a contestant's, passing on the unfixed code,
    failing (or erroring, or uncollectable) with the patch applied.

    The same reading `_Evidence` makes of every candidate. Whether a breakage then counts
    against the patch depends on the other patches and the policy: suite tests count
    under every policy, examiners' only under `strict`, each when most others keep it.
    """
    return (
        author.kind != "contestant"
        and base is not None
        and base.outcome == _PASSES
        and patched is not None
        and patched.outcome in _BROKEN
    )


def reproductions(matrix: Matrix) -> dict[str, list[str]]:
    """Each contestant's and examiner's tests that fail on the unfixed code, by author.

    The repository's suite never reproduces: its tests were written before the issue, so
    one that fails on the unfixed code is an old failure or the environment, not the bug.
    """
    return _Evidence(matrix).reproductions()


def judge(matrix: Matrix, policy: Policy) -> Verdict:
    """The verdict on one task under one policy."""
    return _verdict(_Evidence(matrix), policy)


def judge_all(matrix: Matrix) -> dict[Policy, Verdict]:
    """The verdict under every policy, so reports can set them side by side."""
    evidence = _Evidence(matrix)
    return {policy: _verdict(evidence, policy) for policy in POLICIES}


def _verdict(evidence: _Evidence, policy: Policy) -> Verdict:
    judged = [evidence.assess(patch, policy) for patch in evidence.patches]
    approved = sorted((item for item in judged if item.gate is _Gate.APPROVED), key=_pick_order)
    credible = policy == "credible"
    return Verdict(
        task=evidence.task,
        policy=policy,
        pick=approved[0].assessment.patch if approved else None,
        abstained=None if approved else evidence.abstention(policy, judged),
        decided_by=_decided_by(approved),
        assessments=[item.assessment for item in judged],
        reproductions=evidence.reproductions(),
        discounted=list(evidence.discounts()) if credible else [],
        witnesses=list(evidence.witnesses()) if credible else None,
        notes=_credible_notes(evidence) if credible else [],
    )


def _credible_notes(evidence: _Evidence) -> list[str]:
    """What `credible` set aside, in sentences: the rule trail needs the why, not the ids."""
    notes: list[str] = []
    for discount in evidence.discounts():
        count = sum(len(tests) for tests in discount.reproductions.values())
        them = "it" if count == 1 else "them"
        if discount.passed_by:
            why = f"only {discount.author}'s own patch passes {them}"
        else:
            why = f"no patch passes {them}"
        notes.append(
            f"{discount.author}'s {look.plural(count, 'reproduction')} given no weight: "
            f"{why}, which says more about {discount.author}'s reading of the bug than "
            "about the bug"
        )
    witnesses = evidence.witnesses()
    left_out = [name for name in evidence.ran if name not in witnesses]
    if left_out and evidence.candidates:
        kept = ", ".join(witnesses) if witnesses else "no patch"
        notes.append(
            f"the breakage quorum counts {kept}: {', '.join(left_out)} "
            f"{'has' if len(left_out) == 1 else 'have'} support below {float(THRESHOLD)}, "
            "and a patch that fails the other authors' reproductions is no witness to what "
            "the code should keep doing"
        )
    return notes


def _pick_order(item: _Judged) -> tuple[Fraction, int, int, int, str]:
    """Highest support, fewest counted breakages, most independent authors, smallest
    source diff, then name: best first under `min`."""
    assessment = item.assessment
    return (
        -(item.support or Fraction(0)),
        assessment.counted_breakages,
        -len(assessment.independent),
        item.size,
        assessment.patch,
    )


def _decided_by(approved: list[_Judged]) -> str | None:
    """The first step of the pick order on which the pick beats the runner-up, in words.

    Approved patches often tie on support, so a reader needs to see which later step
    chose; the runner-up is the only patch that step had to beat. Counted breakages are
    not compared: every policy approves only patches with none.
    """
    if not approved:
        return None
    pick = approved[0]
    name = pick.assessment.patch
    if len(approved) == 1:
        return f"{name} is the only approved patch"
    other = approved[1]
    rival = other.assessment.patch
    if pick.support != other.support:
        return (
            f"{name} has the higher support: {_floor(pick.support or Fraction(0))} "
            f"against {_floor(other.support or Fraction(0))} for {rival}"
        )
    mine, theirs = pick.assessment, other.assessment
    if len(mine.independent) != len(theirs.independent):
        return (
            f"{name} has more independent authors: {len(mine.independent)} "
            f"against {len(theirs.independent)} for {rival}"
        )
    if pick.size != other.size:
        return (
            f"{name}'s patch is smaller: {look.plural(pick.size, 'line')} "
            f"against {other.size} for {rival}"
        )
    return (
        f"{name} comes first by name: it ties with {rival} on support, independent "
        f"authors and size ({look.plural(pick.size, 'line')})"
    )


def _base_failure(base: TreeRun | None) -> str | None:
    if base is None:
        return "the matrix has no run on the unfixed code, so no test can reproduce the bug"
    if base.error is not None:
        return (
            f"the run on the unfixed code failed as a whole ({base.error}), "
            "so no test can reproduce the bug"
        )
    return None


def _tree_failure(tree: TreeRun | None) -> str | None:
    if tree is None:
        return "the matrix has no run on this patch"
    if tree.error is not None:
        return f"its test run failed as a whole ({tree.error})"
    return None


def _vendor(vendor: str | None) -> str | None:
    """Vendors compare without case: `OpenAI` set by hand is the guessed `openai`."""
    return None if vendor is None else vendor.casefold()


def _outcome(tree: TreeRun, author: str, test: str) -> str | None:
    cell = tree.cells.get(author, {}).get(test)
    return None if cell is None else cell.outcome


def _ref(tree: str, author: str, test: str, cell: Cell) -> CellRef:
    return CellRef(tree=tree, author=author, test=test, outcome=cell.outcome)


def _cell_order(ref: CellRef) -> tuple[bool, str, str, str]:
    return (ref.tree != BASE, ref.tree, ref.author, ref.test)


def _bar(policy: Policy) -> Fraction:
    """The support a policy that counts shares approves at."""
    return CREDIBLE_THRESHOLD if policy == "credible" else THRESHOLD


def _shown(policy: Policy) -> str:
    """The bar as a reader would write it: 0.5, but 2/3 rather than a rounded 0.67."""
    bar = _bar(policy)
    return str(float(bar)) if bar.denominator <= 2 else f"{bar.numerator}/{bar.denominator}"


def _floor(value: Fraction) -> str:
    """Two decimals rounded down, so a support just under 0.5 never prints as 0.50."""
    return f"{math.floor(value * 100) / 100:.2f}"
