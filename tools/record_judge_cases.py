"""`python tools/record_judge_cases.py [NAME=]CHECKOUT ... [--out FILE]`: the judge
benchmark's recorded cases, from real histories.

Each CHECKOUT is a bugbout project (a clone with its `bugbout.toml`). Its bugs are mined
and given their ground truth as `bugbout run --until ground-truth` does; then, for every
bug whose ground truth scores a patch, three patches are made the way an agent's are, in
a working copy of the base harvested by the race's own code:

- `right`: the maintainers' fix, with the fix's test files as its own tests, so its
  reproductions are the bug's;
- `partial`: the first half of the fix's source hunks (rounded up), when it has two or
  more: a real fix, left unfinished;
- `wrong`: a comment line added at the end of the first source file the fix changes,
  which passes nothing the bug's tests need.

bugbout's own cross-examination runs every author's tests (the `right` author's and the
repository's suite, which is always on here) on the base and on each patch, and its
scoring stage scores each patch with the hidden tests. A case keeps that matrix, slimmed
(only the suite tests whose outcome differs between trees, no cell messages, no run
conditions), and each patch's status. The stages keep their results in the checkout's
store, so a second recording runs only what changed; record in a checkout kept for it,
since its matrices then hold the three archetypes alone, whatever a bout stored before.

A task is left out, with its reason printed, when its ground truth scores nothing, when
its cross-examination or its `right` tree could not be made, or when the maintainers'
fix scored as a patch (the gold control) is not resolved here: a grader that fails the
very fix is no judge of the others. Cases of projects not named on this run are kept
from the existing file. NAME (`owner/name`) defaults to `[project] github`, else to the
GitHub repository `origin` points to.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from benchkit.judge_cases import ARCHETYPES, CASES, Archetype, JudgeCase, JudgeCases

from bugbout_tui.cli.live import plain_line
from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.events import (
    BaseEvent,
    ErrorRaised,
    StageFinished,
    TestRunFinished,
)
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.models import (
    SUITE,
    Attempt,
    Cell,
    Matrix,
    ResolutionSet,
    Task,
    TreeRun,
)
from bugbout_tui.core.patch import Patch
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import attempt_path, hidden_files
from bugbout_tui.engine.score import Scoring
from bugbout_tui.engine.state import BoutState
from bugbout_tui.engine.testing import tests_dir_at
from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.detect import github_from_remote
from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy import commit_patch, harvest, prepare_working_copy

RIGHT: Archetype = "right"
PARTIAL: Archetype = "partial"
WRONG: Archetype = "wrong"
KEPT_AUTHORS = (RIGHT, SUITE)
"""The matrix's authors a case keeps: `partial` and `wrong` write no tests."""
NEUTRAL_LINE = "# recorded for the judge benchmark: a line that changes no behaviour\n"
"""What the `wrong` patch adds."""
_FILE_START = re.compile(r"^(?=diff --git )", re.MULTILINE)
_HUNK_START = re.compile(r"^(?=@@ )", re.MULTILINE)

Edit = Callable[[Path], None]
"""A change made in a working copy of the base, as an agent would make it."""


@dataclasses.dataclass(frozen=True)
class Checkout:
    """One history to record: its directory and the name its cases are filed under."""

    name: str
    path: Path


@dataclasses.dataclass
class Recording:
    """One project's cases, the commit its history was mined at, and what was left out."""

    head: str
    cases: list[JudgeCase]
    dropped: dict[str, str]
    """task → why it has no case."""


# --- the patches --------------------------------------------------------------------------


def split_hunks(diff: str) -> list[tuple[str, list[str]]]:
    """A unified diff as its files, each its header and its hunks (none for a binary
    patch or a change of mode alone)."""
    files = []
    for section in _FILE_START.split(diff):
        if not section:
            continue
        header, *hunks = _HUNK_START.split(section)
        files.append((header, hunks))
    return files


def first_half(diff: str) -> str | None:
    """The diff's first half of hunks, rounded up, in the diff's order (a file without
    hunks counts as one); None when it has fewer than two, which cannot be halved."""
    files = split_hunks(diff)
    units = [(index, hunk) for index, (_, hunks) in enumerate(files) for hunk in hunks or [""]]
    if len(units) < 2:
        return None
    kept: dict[int, list[str]] = {}
    for index, hunk in units[: math.ceil(len(units) / 2)]:
        kept.setdefault(index, []).append(hunk)
    return "".join(files[index][0] + "".join(hunks) for index, hunks in kept.items())


def _add_neutral_line(path: Path) -> None:
    text = path.read_bytes()
    if text and not text.endswith(b"\n"):
        text += b"\n"
    path.write_bytes(text + NEUTRAL_LINE.encode())


def archetype_edits(project: Project, repo: Path, task: Task) -> dict[Archetype, Edit]:
    """How each archetype changes the base; `partial` is left out when the fix has a
    single hunk, `wrong` when the fix changes no source file the base has."""
    cfg = project.config.project
    base = pristine_tree(repo, task.base_commit)
    tests = tests_dir_at(base, cfg.tests, task.test_files) or cfg.tests
    fix = commit_patch(repo, task.base_commit, task.fix_commit, (cfg.source, tests))
    edits: dict[Archetype, Edit] = {RIGHT: lambda tree: apply_patch(tree, fix.source + fix.tests)}
    partial = first_half(fix.source)
    if partial is not None:
        edits[PARTIAL] = lambda tree: apply_patch(tree, partial)
    changed = [f.path for f in fix.files if f.part == "source" and (base / f.path).is_file()]
    if changed:
        edits[WRONG] = lambda tree: _add_neutral_line(tree / changed[0])
    return edits


def harvested(project: Project, repo: Path, task: Task, edit: Edit, scratch: Path) -> Patch:
    """The patch `edit` leaves in a fresh working copy of the base, harvested and split
    as the race harvests an agent's."""
    cfg = project.config
    copy = prepare_working_copy(
        repo,
        task.base_commit,
        scratch / "workdir",
        hidden=hidden_files(task, hide_touched_tests=cfg.run.hide_touched_tests),
        scratch=scratch / "git",
    )
    edit(copy.path)
    return harvest(
        copy,
        source_dir=cfg.project.source,
        tests_dir=cfg.project.tests,
        max_files=cfg.run.max_patch_files,
        max_bytes=cfg.run.max_patch_bytes,
    )


def store_attempts(project: Project, repo: Path, tasks: Sequence[Task]) -> dict[str, list[Attempt]]:
    """Each task's archetype attempts, stored where the race stores an attempt. One
    stored with the same patch is kept as it is, so its matrix and score stay valid."""
    store = project.store
    found: dict[str, list[Attempt]] = {}
    with tempfile.TemporaryDirectory(prefix="bugbout-record-") as scratch:
        for task in tasks:
            for name, edit in archetype_edits(project, repo, task).items():
                patch = harvested(project, repo, task, edit, Path(scratch) / task.id / name)
                path = attempt_path(store.attempts_dir, task.id, name)
                stored = store.read(path, Attempt)
                if stored is None or stored.patch != patch or stored.status != "finished":
                    now = datetime.now(UTC)
                    stored = Attempt(
                        task=task.id,
                        contestant=name,
                        status="finished",
                        detail=f"the judge benchmark's {name} patch",
                        started_at=now,
                        ended_at=now,
                        seconds=0.0,
                        patch=patch,
                        logdir="",
                        hidden=hidden_files(
                            task, hide_touched_tests=project.config.run.hide_touched_tests
                        ),
                    )
                    store.write(path, stored)
                found.setdefault(task.id, []).append(stored)
    return found


# --- the run ------------------------------------------------------------------------------


def _print(event: BaseEvent) -> None:
    if isinstance(event, StageFinished | TestRunFinished | ErrorRaised):
        line = plain_line(event, BoutState())
        if line is not None:
            print(line, flush=True)


def recording_project(path: Path) -> Project:
    """The project at `path`, with the repository's suite on in the cross-examination
    whatever its `[judge] run-suite` says: the cases need it."""
    project = Project.load(path)
    judge = project.config.judge.model_copy(update={"run_suite": True})
    return dataclasses.replace(project, config=project.config.model_copy(update={"judge": judge}))


async def _examine_and_score(
    bout: Bout, tasks: Sequence[Task], attempts: Mapping[str, Sequence[Attempt]]
) -> tuple[dict[str, Matrix], ResolutionSet]:
    """The stages after the race, run as the bout runs them, on the archetypes alone."""
    assert bout.oracles is not None
    with bout.project.store.lock():
        try:
            context = await bout.context()
            vendors: dict[str, str] = {name: name for name in ARCHETYPES}
            matrices = await CrossExamination(context, vendors=vendors).run(tasks, attempts)
            scores = await Scoring(context).run(tasks, bout.oracles, attempts)
        finally:
            bout.sources().close()
            bout.bus.close()
    return matrices, scores


async def record(checkout: Checkout) -> Recording:
    """One history's cases: ground truth, the archetypes' attempts, their matrices and
    scores, every stage bugbout's own, in one event loop as a bout runs them."""
    project = recording_project(checkout.path)
    bout = Bout(project)
    bout.subscribe(_print)
    await bout.arun(until="ground-truth")
    assert bout.taskset is not None and bout.oracles is not None
    dropped = {
        task.id: f"its ground truth scores nothing: {oracle.reason}"
        for task in bout.raceable_tasks()
        if task.kind == "bug" and (oracle := bout.oracles.oracles.get(task.id)) is not None
        if not oracle.scored
    }
    tasks = [task for task in bout.scored_tasks() if task.kind == "bug"]
    attempts = await asyncio.to_thread(store_attempts, project, bout.repo(), tasks)
    matrices, scores = await _examine_and_score(bout, tasks, attempts)
    cases = []
    for task in tasks:
        case = case_of(checkout.name, task.id, matrices.get(task.id), scores)
        if isinstance(case, str):
            dropped[task.id] = case
        else:
            cases.append(case)
    return Recording(head=bout.taskset.head, cases=cases, dropped=dropped)


# --- the cases ----------------------------------------------------------------------------


def case_of(
    project: str, task: str, matrix: Matrix | None, scores: ResolutionSet
) -> JudgeCase | str:
    """The task's case, or why it has none."""
    control = scores.controls.get(task)
    if control is None or control.status != "resolved":
        status = "not scored" if control is None else control.status
        return f"the maintainers' fix is {status} as a patch here (an unreliable grader)"
    if matrix is None:
        return "its cross-examination could not be set up"
    right = matrix.trees.get(RIGHT)
    if right is None or right.error is not None:
        why = "was not made" if right is None else f"failed: {right.error}"
        return f"the right patch's tree {why}"
    if not any(author.name == RIGHT for author in matrix.authors):
        return "the fix's tests could not be installed as the right author's"
    patches = scores.patches.get(task, {})
    truth = {tree: patches[tree].status for tree in matrix.trees if tree in patches}
    return JudgeCase.model_validate(
        {"project": project, "task": task, "matrix": slim(matrix), "truth": truth}
    )


def slim(matrix: Matrix) -> Matrix:
    """The matrix as a case keeps it: the right author and the suite, only the suite
    tests whose outcome is not the same on every tree, no messages, no conditions."""
    trees = list(matrix.trees.values())
    suite = sorted({test for tree in trees for test in tree.cells.get(SUITE, {})})
    telling = {test for test in suite if len({_outcome(tree, SUITE, test) for tree in trees}) > 1}

    def kept(tree: TreeRun) -> TreeRun:
        cells: dict[str, dict[str, Cell]] = {}
        for author, tests in tree.cells.items():
            if author in KEPT_AUTHORS:
                cells[author] = {
                    test: Cell(outcome=cell.outcome)
                    for test, cell in sorted(tests.items())
                    if author != SUITE or test in telling
                }
        return tree.model_copy(update={"cells": cells})

    authors = [
        author.model_copy(
            update={"tests": [t for t in author.tests if t in telling]}
            if author.name == SUITE
            else {}
        )
        for author in matrix.authors
        if author.name in KEPT_AUTHORS
    ]
    return matrix.model_copy(
        update={
            "authors": authors,
            "trees": {name: kept(tree) for name, tree in matrix.trees.items()},
            "conditions": None,
        }
    )


def _outcome(tree: TreeRun, author: str, test: str) -> str | None:
    cell = tree.cells.get(author, {}).get(test)
    return None if cell is None else cell.outcome


def merged(old: JudgeCases | None, recordings: Mapping[str, Recording]) -> JudgeCases:
    """The new cases, and the old file's cases of every project not recorded now,
    sorted by project then task."""
    kept = [c for c in old.cases if c.project not in recordings] if old else []
    heads = {p: h for p, h in old.recorded_from.items() if p not in recordings} if old else {}
    heads.update({project: rec.head for project, rec in recordings.items()})
    cases = kept + [case for rec in recordings.values() for case in rec.cases]
    return JudgeCases(
        recorded_from=dict(sorted(heads.items())),
        cases=sorted(cases, key=lambda case: (case.project, case.task)),
    )


def write_cases(path: Path, cases: JudgeCases) -> int:
    """Store the cases atomically, compact (what is None is left out) and in a fixed
    order; returns the file's size in bytes."""
    text = cases.model_dump_json(indent=1, exclude_none=True) + "\n"
    write_atomic(path, text)
    return len(text.encode())


# --- the command line ---------------------------------------------------------------------


def parse_checkout(text: str) -> Checkout:
    """`owner/name=DIR` or `DIR`, whose name is then read from its config or origin."""
    name, sep, path = text.rpartition("=")
    directory = Path(path if sep else text).expanduser().resolve()
    if sep and name:
        return Checkout(name, directory)
    project = Project.load(directory)
    found = project.config.project.github or github_from_remote(directory)
    if found is None:
        raise UsageError(
            f"cannot tell which project {directory} is: it sets no [project] github and "
            "its origin is not on GitHub",
            hint=f"Name it on the command line: owner/name={directory}",
        )
    return Checkout(found, directory)


def summary(name: str, recording: Recording) -> list[str]:
    """What was recorded of one project, for the person who ran it."""
    lines = [f"{name} at {recording.head[:12]}: {len(recording.cases)} cases"]
    for archetype in ARCHETYPES:
        statuses = [case.truth[archetype] for case in recording.cases if archetype in case.truth]
        counts = {s: statuses.count(s) for s in sorted(set(statuses))}
        lines.append(f"  {archetype}: {counts}")
    lines += [f"  left out {task}: {why}" for task, why in sorted(recording.dropped.items())]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("checkouts", nargs="+", metavar="[NAME=]CHECKOUT")
    parser.add_argument("--out", type=Path, default=CASES, help=f"default: {CASES}")
    args = parser.parse_args(argv)
    try:
        checkouts = [parse_checkout(text) for text in args.checkouts]
        recordings = {checkout.name: asyncio.run(record(checkout)) for checkout in checkouts}
    except BugboutError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(exc.hint, file=sys.stderr)
        return 1
    out: Path = args.out
    old = JudgeCases.model_validate_json(out.read_text(encoding="utf-8")) if out.exists() else None
    size = write_cases(out, merged(old, recordings))
    for name, recording in recordings.items():
        print("\n".join(summary(name, recording)))
    print(f"wrote {out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
