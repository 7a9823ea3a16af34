"""The whole pipeline on a repository built here, every figure worked out by hand first.

`tallykit` has two bugs, each fixed by its maintainers with a new test module that holds
a fail-to-pass test and pass-to-pass tests:

- #1 `chunks(items, size)` drops the last partial chunk (`range(0, len - size + 1, size)`);
  the fix's module has F2P `test_the_last_partial_chunk_is_kept` (5 by 2 and 7 by 3) and
  P2P `test_size_one`, `test_exact_multiple`.
- #2 `median(values)` takes the upper middle value of an even count; the fix's module has
  F2P `test_even_count_averages_the_middle_pair` and P2P `test_odd_count`.

The suite at #1's base is `tests/test_basic.py` (chunks of an exact multiple, chunks of
size one, median of one value); at #2's base it also holds #1's `tests/test_chunks.py`.

Four `command` contestants (`tests/agents/bugfix.py`), with these vendors:

| agent | vendor | #1 chunks | #2 median |
|---|---|---|---|
| right | openai | `range(0, len, size)`, a test | an odd/even branch (3 lines), a test |
| wrong | google | `len - size + 2`, a test | always the middle pair's mean (2 lines), a test |
| idle | anthropic | nothing | nothing |
| tests-only | google | two reproducing tests | two reproducing tests, one that does not |

wrong's chunks keep a remainder only when it is one short of a whole chunk, and size 1
gains an empty chunk at the end; its median breaks every odd count.

## The matrices (F failed, P passed), base / right / wrong

#1:

| author::test | base | right | wrong |
|---|---|---|---|
| right::remainder_is_its_own_chunk (5 by 2) | F | P | P |
| right::size_one_still_works | P | P | F |
| wrong::chunks_keeps_the_remainder (5 by 2) | F | P | P |
| tests-only::reported_example (5 by 2) | F | P | P |
| tests-only::a_longer_remainder ("abcdefg" by 3) | F | P | F |
| suite::chunks_of_an_exact_multiple | P | P | P |
| suite::chunks_of_size_one | P | P | F |
| suite::median_of_one_value | P | P | P |

#2:

| author::test | base | right | wrong |
|---|---|---|---|
| right::median_of_even_and_odd_counts | F | P | F |
| wrong::median_is_the_mean_of_the_middle_values (asserts a float for [7]) | F | F | P |
| tests-only::reported_example | F | P | P |
| tests-only::two_values | F | P | P |
| tests-only::odd_count_unchanged | P | P | F |
| suite (6 tests) | P | P | P |

`idle` changed nothing, so it is neither an author nor a patch; `tests-only` is an author
with no patch. Reproductions: every F on the base above (a contestant's test passing on
the base is not one, and the suite never reproduces).

## The judge

Support is the mean over independent authors of the share of their reproductions that
pass. Under `cross-vendor` the google authors (wrong, tests-only) do not judge each other.

| task | patch | independent: shares | support | cross-vendor: shares | support |
|---|---|---|---|---|---|
| #1 | right | tests-only 2/2, wrong 1/1 | 1 | same (both google) | 1 |
| #1 | wrong | right 1/1, tests-only 1/2 | 3/4 | right 1/1 | 1 |
| #2 | right | tests-only 2/2, wrong 0/1 | 1/2 | same | 1/2 |
| #2 | wrong | right 0/1, tests-only 2/2 | 1/2 | right 0/1 | 0 |

Breakage: #1 wrong fails `suite::test_chunks_of_size_one`, which the one other patch
(right) keeps passing: 1 of 1 > half, so it counts. (right's own `size_one_still_works`
also fails there, but a contestant's test never witnesses breakage.) No other breakage.

| task | patch | majority | unanimous = strict | cross-vendor |
|---|---|---|---|---|
| #1 | right | approved | approved | approved |
| #1 | wrong | rejected (counted breakage) | rejected (2 of 3 reproductions) | rejected (breakage) |
| #2 | right | approved (1/2 meets the threshold) | rejected (2 of 3) | approved |
| #2 | wrong | approved (1/2) | rejected (2 of 3) | rejected (support 0) |
| picks | #1 | right ✓ | right ✓ | right ✓ |
| picks | #2 | wrong ✗ (see below) | abstain | right ✓ |

On #2 majority approves both patches at support 1/2; they tie on support, on counted
breakages (none) and on independent authors (2 each), so the smaller source change wins:
wrong's 2 changed lines against right's 3.

So right / wrong / abstained: majority 1 / 1 / 0, unanimous and strict 1 / 0 / 1,
cross-vendor 2 / 0 / 0. No examiner takes part, so strict equals unanimous.

`credible` decides #1 as `majority` does: every author is confirmed (right's test passes
on wrong, wrong's and tests-only's on right) and both patches reach 1/2, so both
witness the quorum. On #2, right's reproduction passes only on right, and wrong's only
on wrong, so both authors are given no weight; tests-only alone judges, passes both
patches (support 1 each, at least 2/3) and the smaller change wins again: wrong ✗. Two
patches whose tests each pass only on their own are what `credible` cannot tell apart.
credible: 1 / 1 / 0.

## The scores and the report

- Hidden tests: right resolves both; wrong is a wrong fix on #1 (7 by 3 fails the F2P
  test) and fixed-but-broke on #2 (F2P passes, `test_odd_count` fails); idle and
  tests-only are no fix on both. Resolved: right 2, wrong 0, idle 0, tests-only 0.
- Baselines: best single agent right, 2 of 2; a random agent 1/4 + 1/4 = 0.5 of 2; the
  oracle 2 of 2. Against right, every policy has judge-only 0 and agent-only 1 (majority,
  unanimous, strict: #2) or 0 (cross-vendor); McNemar p = 1 either way.
- Merge gate (4 patches: 2 right, 2 wrong; approving everything: 2 of 4):

  | policy | approvals | right among them | wrong stopped | right stopped |
  |---|---|---|---|---|
  | majority | 3 | 2 of 3 | 1 of 2 | 0 of 2 |
  | unanimous, strict | 1 | 1 of 1 | 2 of 2 | 1 of 2 |
  | cross-vendor | 2 | 2 of 2 | 2 of 2 | 0 of 2 |
  | credible | 3 | 2 of 3 | 1 of 2 | 0 of 2 |

- AUC: a patch's score for an author is the share of the author's tests (all of them,
  not just reproductions) that pass on it; an author never scores its own patches.

  | author | right patches' scores | wrong patches' scores | AUC |
  |---|---|---|---|
  | right | (own patches) | #1 1/2, #2 0 | n/a (0 right, 2 wrong) |
  | wrong | #1 1, #2 0 | (own patches) | n/a (2 right, 0 wrong) |
  | idle | none | none | n/a (0, 0) |
  | tests-only | #1 1, #2 1 | #1 1/2, #2 2/3 | 1.0 (2, 2) |
  | suite | #1 1, #2 1 | #1 2/3, #2 6/6 | (1 + ½ + 1 + ½) / 4 = 0.75 (2, 2) |
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from terminals import on_a_terminal, one_line, piped, widest

from bugbout_tui.core.config import Policy
from bugbout_tui.core.models import Matrix, ResolutionSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report
from bugbout_tui.report import Report
from bugbout_tui.rules.judge import VerdictSet
from bugbout_tui.tui.main import make_app
from bugbout_tui.tui.screens.report import ReportScreen
from bugbout_tui.tui.screens.tasks import TasksScreen

pytestmark = pytest.mark.slow  # a whole bout: some thirty subprocesses

AGENTS = Path(__file__).resolve().parents[1] / "agents"
T1, T2 = "tallykit-1", "tallykit-2"
VENDORS = {"right": "openai", "wrong": "google", "idle": "anthropic", "tests-only": "google"}
"""Config order is this order: it fixes the order of the report's rows."""

CHUNKING = '''\
"""Splitting sequences into pieces."""


def chunks(items, size):
    """Consecutive pieces of `items`, each `size` long; the last may be shorter."""
    return [items[i : i + size] for i in range(0, len(items) - size + 1, size)]
'''
STATS = '''\
"""Summary statistics."""


def median(values):
    """The middle value of `values`."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
'''
BASIC_TESTS = """\
from tallykit.chunking import chunks
from tallykit.stats import median


def test_chunks_of_an_exact_multiple():
    assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_chunks_of_size_one():
    assert chunks([1, 2, 3], 1) == [[1], [2], [3]]


def test_median_of_one_value():
    assert median([5]) == 5
"""
CHUNKS_FIX_TESTS = """\
from tallykit.chunking import chunks


def test_the_last_partial_chunk_is_kept():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert chunks([1, 2, 3, 4, 5, 6, 7], 3) == [[1, 2, 3], [4, 5, 6], [7]]


def test_size_one():
    assert chunks([1, 2, 3], 1) == [[1], [2], [3]]


def test_exact_multiple():
    assert chunks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]
"""
MEDIAN_FIX = """\
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
"""
MEDIAN_FIX_TESTS = """\
from tallykit.stats import median


def test_even_count_averages_the_middle_pair():
    assert median([4, 1, 3, 2]) == 2.5


def test_odd_count():
    assert median([3, 1, 2]) == 2
"""
ISSUES = {
    1: (
        "chunks drops the last partial chunk",
        "chunks([1, 2, 3, 4, 5], 2) returns [[1, 2], [3, 4]]: the 5 is lost. "
        "It should return [[1, 2], [3, 4], [5]].",
    ),
    2: (
        "median of an even number of values is wrong",
        "median([1, 2, 3, 4]) returns 3; it should be 2.5, the mean of the two middle values.",
    ),
}

CHUNKS_REGRESSION = "tests/test_chunks_regression.py::"
CHUNKS_FIX = "tests/test_chunks_fix.py::"
CHUNKS_ISSUE = "tests/test_chunks_issue.py::"
MEDIAN_REGRESSION = "tests/test_median_regression.py::"
MEDIAN_FIX_TEST = "tests/test_median_fix.py::"
MEDIAN_ISSUE = "tests/test_median_issue.py::"
BASIC = "tests/test_basic.py::"
SUITE_CHUNKS = "tests/test_chunks.py::"

MATRICES: dict[str, dict[tuple[str, str], str]] = {
    T1: {
        ("right", CHUNKS_REGRESSION + "test_remainder_is_its_own_chunk"): "FPP",
        ("right", CHUNKS_REGRESSION + "test_size_one_still_works"): "PPF",
        ("wrong", CHUNKS_FIX + "test_chunks_keeps_the_remainder"): "FPP",
        ("tests-only", CHUNKS_ISSUE + "test_reported_example"): "FPP",
        ("tests-only", CHUNKS_ISSUE + "test_a_longer_remainder"): "FPF",
        ("suite", BASIC + "test_chunks_of_an_exact_multiple"): "PPP",
        ("suite", BASIC + "test_chunks_of_size_one"): "PPF",
        ("suite", BASIC + "test_median_of_one_value"): "PPP",
    },
    T2: {
        ("right", MEDIAN_REGRESSION + "test_median_of_even_and_odd_counts"): "FPF",
        ("wrong", MEDIAN_FIX_TEST + "test_median_is_the_mean_of_the_middle_values"): "FFP",
        ("tests-only", MEDIAN_ISSUE + "test_reported_example"): "FPP",
        ("tests-only", MEDIAN_ISSUE + "test_two_values"): "FPP",
        ("tests-only", MEDIAN_ISSUE + "test_odd_count_unchanged"): "PPF",
        ("suite", BASIC + "test_chunks_of_an_exact_multiple"): "PPP",
        ("suite", BASIC + "test_chunks_of_size_one"): "PPP",
        ("suite", BASIC + "test_median_of_one_value"): "PPP",
        ("suite", SUITE_CHUNKS + "test_the_last_partial_chunk_is_kept"): "PPP",
        ("suite", SUITE_CHUNKS + "test_size_one"): "PPP",
        ("suite", SUITE_CHUNKS + "test_exact_multiple"): "PPP",
    },
}
"""Each test's outcome on the trees base, right, wrong (the tables above)."""

SUPPORT: dict[tuple[str, str, str], tuple[dict[str, float], bool]] = {
    (T1, "majority", "right"): ({"tests-only": 1.0, "wrong": 1.0}, True),
    (T1, "majority", "wrong"): ({"right": 1.0, "tests-only": 0.5}, False),
    (T1, "unanimous", "right"): ({"tests-only": 1.0, "wrong": 1.0}, True),
    (T1, "unanimous", "wrong"): ({"right": 1.0, "tests-only": 0.5}, False),
    (T1, "strict", "right"): ({"tests-only": 1.0, "wrong": 1.0}, True),
    (T1, "strict", "wrong"): ({"right": 1.0, "tests-only": 0.5}, False),
    (T1, "cross-vendor", "right"): ({"tests-only": 1.0, "wrong": 1.0}, True),
    (T1, "cross-vendor", "wrong"): ({"right": 1.0}, False),
    (T2, "majority", "right"): ({"tests-only": 1.0, "wrong": 0.0}, True),
    (T2, "majority", "wrong"): ({"right": 0.0, "tests-only": 1.0}, True),
    (T2, "unanimous", "right"): ({"tests-only": 1.0, "wrong": 0.0}, False),
    (T2, "unanimous", "wrong"): ({"right": 0.0, "tests-only": 1.0}, False),
    (T2, "strict", "right"): ({"tests-only": 1.0, "wrong": 0.0}, False),
    (T2, "strict", "wrong"): ({"right": 0.0, "tests-only": 1.0}, False),
    (T2, "cross-vendor", "right"): ({"tests-only": 1.0, "wrong": 0.0}, True),
    (T2, "cross-vendor", "wrong"): ({"right": 0.0}, False),
    (T1, "credible", "right"): ({"tests-only": 1.0, "wrong": 1.0}, True),
    (T1, "credible", "wrong"): ({"right": 1.0, "tests-only": 0.5}, False),
    (T2, "credible", "right"): ({"tests-only": 1.0}, True),
    (T2, "credible", "wrong"): ({"tests-only": 1.0}, True),
}
"""(task, policy, patch) → each independent author's share, and the merge gate's answer."""

UNANIMOUS_ABSTAINS = "no patch passes every independent reproduction (best: right at 0.50)"
PICKS: dict[Policy, dict[str, str | None]] = {
    "majority": {T1: "right", T2: "wrong"},
    "unanimous": {T1: "right", T2: None},
    "strict": {T1: "right", T2: None},
    "cross-vendor": {T1: "right", T2: "right"},
    "credible": {T1: "right", T2: "wrong"},
}
PICK_COUNTS: dict[Policy, tuple[int, int, int, int, int]] = {
    # right, wrong, abstained, judge-only, agent-only (versus `right`)
    "majority": (1, 1, 0, 0, 1),
    "unanimous": (1, 0, 1, 0, 1),
    "strict": (1, 0, 1, 0, 1),
    "cross-vendor": (2, 0, 0, 0, 0),
    "credible": (1, 1, 0, 0, 1),
}
GATES: dict[Policy, tuple[int, int, int, int]] = {
    # approved, approved and right, wrong stopped, right stopped (of 2 right, 2 wrong)
    "majority": (3, 2, 1, 0),
    "unanimous": (1, 1, 2, 1),
    "strict": (1, 1, 2, 1),
    "cross-vendor": (2, 2, 2, 0),
    "credible": (3, 2, 1, 0),
}


@dataclass(frozen=True)
class Finished:
    """A bout run to the end: its project and how long it took."""

    root: Path
    seconds: float

    @property
    def store(self) -> Path:
        return self.root / ".bugbout"

    def report(self) -> Report:
        return Report.model_validate_json((self.store / "report.json").read_text())

    def verdicts(self) -> VerdictSet:
        return VerdictSet.model_validate_json((self.store / "verdicts.json").read_text())

    def resolutions(self) -> ResolutionSet:
        return ResolutionSet.model_validate_json((self.store / "resolutions.json").read_text())

    def matrix(self, task: str) -> Matrix:
        return Matrix.model_validate_json((self.store / "matrices" / f"{task}.json").read_text())


def build_project(root: Path) -> Path:
    """The repository with its two fixes, its issues and a bugbout.toml of four agents."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/tallykit/__init__.py": "",
            "src/tallykit/chunking.py": CHUNKING,
            "src/tallykit/stats.py": STATS,
            "tests/test_basic.py": BASIC_TESTS,
        },
    )
    repo.commit(
        "Fix chunks dropping the last partial chunk (#1)",
        files={
            "src/tallykit/chunking.py": CHUNKING.replace("len(items) - size + 1", "len(items)"),
            "tests/test_chunks.py": CHUNKS_FIX_TESTS,
        },
    )
    repo.commit(
        "Fix median of an even number of values (#2)",
        files={
            "src/tallykit/stats.py": STATS.replace(
                "    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n", MEDIAN_FIX
            ),
            "tests/test_median.py": MEDIAN_FIX_TESTS,
        },
    )
    write_issues(root, ISSUES)
    configure(root, "majority")
    return root


def configure(root: Path, policy: Policy) -> None:
    """bugbout.toml: this interpreter, no pytest plugins autoloaded, the suite on, and
    each agent on a quota of its own so the four race side by side."""
    agents = "".join(
        "\n[[contestants]]\n"
        'agent = "command"\n'
        f"name = {json.dumps(name)}\n"
        f"vendor = {json.dumps(vendor)}\n"
        f"quota = {json.dumps(name)}\n"
        f"command = {json.dumps(command(name))}\n"
        for name, vendor in VENDORS.items()
    )
    judge = f'\n[judge]\npolicy = "{policy}"\nrun-suite = true\n'
    path = write_config(root, "tallykit", extra=judge + agents)
    text = path.read_text()
    quiet = 'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n\n[run]\n'
    path.write_text(text.replace("\n[run]\n", "\n" + quiet, 1))


def command(style: str) -> list[str]:
    return [sys.executable, str(AGENTS / "bugfix.py"), style, "{prompt_file}", "{workdir}"]


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Finished]:
    """The whole pipeline, once, in this process."""
    base = tmp_path_factory.mktemp("pipeline")
    root = build_project(base / "tallykit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(base / "home"))
        started = time.monotonic()
        asyncio.run(Bout(Project.load(root)).arun())
        yield Finished(root, time.monotonic() - started)


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / ".bugbout" / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line]


# ---------------------------------------------------------------- the premises


def test_each_agent_did_what_its_style_says(bout: Finished) -> None:
    statuses: dict[tuple[str, str], str] = {}
    sizes: dict[tuple[str, str], int] = {}
    for path in sorted((bout.store / "attempts").glob("*/*.json")):
        record = json.loads(path.read_text())
        key = (record["task"], record["contestant"])
        statuses[key] = record["status"]
        sizes[key] = sum(
            change["added_lines"] + change["removed_lines"]
            for change in record["patch"]["files"]
            if change["part"] == "source"
        )
    expected = {"right": "finished", "wrong": "finished", "idle": "no-change"}
    expected["tests-only"] = "finished"
    assert statuses == {(t, name): s for t in (T1, T2) for name, s in expected.items()}
    # the majority pick on #2 comes down to the smaller source change
    assert (sizes[T2, "wrong"], sizes[T2, "right"]) == (2, 3)
    assert sizes[T1, "tests-only"] == sizes[T2, "tests-only"] == 0


def test_the_matrices_hold_the_outcomes_worked_out_by_hand(bout: Finished) -> None:
    letters = {"passed": "P", "failed": "F"}
    for task, expected in MATRICES.items():
        matrix = bout.matrix(task)
        assert sorted(matrix.trees) == ["base", "right", "wrong"]
        assert [p.contestant for p in matrix.patches] == ["right", "wrong"]
        assert {(a.name, a.kind, a.vendor) for a in matrix.authors} == {
            ("right", "contestant", "openai"),
            ("wrong", "contestant", "google"),
            ("tests-only", "contestant", "google"),
            ("suite", "suite", None),
        }
        found = {
            (author, test): "".join(
                letters.get(matrix.trees[tree].cells[author][test].outcome, "?")
                for tree in ("base", "right", "wrong")
            )
            for author, tests in matrix.trees["base"].cells.items()
            for test in tests
        }
        assert found == expected, task
    # one pytest process per tree: n patches cost n + 1 runs
    stage, started = None, Counter[str]()
    for event in events(bout.root):
        if event["type"] in ("stage-started", "stage-finished"):
            stage = event["stage"] if event["type"] == "stage-started" else None
        elif event["type"] == "test-run-started" and stage == "examine":
            started[event["task"]] += 1
    assert started == {T1: 3, T2: 3}


# ---------------------------------------------------------------- the figures


def test_the_hidden_tests_score_every_patch(bout: Finished) -> None:
    statuses = {
        (task, name): resolution.status
        for task, by_name in bout.resolutions().patches.items()
        for name, resolution in by_name.items()
    }
    assert statuses == {
        (T1, "right"): "resolved",
        (T1, "wrong"): "wrong-fix",
        (T1, "idle"): "no-fix",
        (T1, "tests-only"): "no-fix",
        (T2, "right"): "resolved",
        (T2, "wrong"): "fixed-but-broke",
        (T2, "idle"): "no-fix",
        (T2, "tests-only"): "no-fix",
    }
    report = bout.report()
    rows = {row.name: row for row in report.agents.rows}
    assert list(rows) == list(VENDORS)
    counts = {
        name: (row.resolved, row.fixed_but_broke, row.wrong_fix, row.no_fix, row.quota)
        for name, row in rows.items()
    }
    assert counts == {
        "right": (2, 0, 0, 0, 0),
        "wrong": (0, 1, 1, 0, 0),
        "idle": (0, 0, 0, 2, 0),
        "tests-only": (0, 0, 0, 2, 0),
    }
    assert [(r.resolved_rate.count, r.resolved_rate.n) for r in rows.values()] == [
        (2, 2),
        (0, 2),
        (0, 2),
        (0, 2),
    ]
    assert report.funnel.kept == report.funnel.scored == 2


def test_the_judge_supports_approves_and_picks_as_worked_out(bout: Finished) -> None:
    verdicts = bout.verdicts()
    assert verdicts.policy == "majority"
    support = {
        (task, policy, a.patch): (a.support_by_author, a.approved)
        for task, by_policy in verdicts.verdicts.items()
        for policy, verdict in by_policy.items()
        for a in verdict.assessments
    }
    assert support == SUPPORT
    picks = {
        policy: {task: verdicts.verdicts[task][policy].pick for task in (T1, T2)}
        for policy in PICKS
    }
    assert picks == PICKS
    assert verdicts.verdicts[T2]["unanimous"].abstained == UNANIMOUS_ABSTAINS
    assert verdicts.verdicts[T2]["strict"].abstained == UNANIMOUS_ABSTAINS
    # only the suite witnesses breakage, and the quorum of one other patch counts it
    majority = {a.patch: a for a in verdicts.verdicts[T1]["majority"].assessments}
    ((broken),) = [b for a in majority.values() for b in a.breakages]
    assert (broken.author, broken.test) == ("suite", BASIC + "test_chunks_of_size_one")
    assert (broken.kept_by, broken.others, broken.counted) == (1, 1, True)
    assert majority["wrong"].counted_breakages == 1
    assert majority["wrong"].support == 0.75
    assert verdicts.verdicts[T1]["majority"].reproductions == {
        "right": [CHUNKS_REGRESSION + "test_remainder_is_its_own_chunk"],
        "wrong": [CHUNKS_FIX + "test_chunks_keeps_the_remainder"],
        "tests-only": [
            CHUNKS_ISSUE + "test_a_longer_remainder",
            CHUNKS_ISSUE + "test_reported_example",
        ],
    }
    report = bout.report()
    rows = {task.task: task for task in report.tasks}
    for policy, by_task in PICKS.items():
        for task, pick in by_task.items():
            (shown,) = [p for p in rows[task].picks if p.policy == policy]
            assert shown.pick == pick
            assert shown.right is (None if pick is None else pick == "right")


def test_the_picks_are_set_against_the_baselines(bout: Finished) -> None:
    picking = bout.report().picking
    assert picking.policy == "majority"
    assert picking.best_agent == "right"
    assert picking.best_agent_rate is not None
    assert (picking.best_agent_rate.count, picking.best_agent_rate.n) == (2, 2)
    assert (picking.random_agent.count, picking.random_agent.n) == (0.5, 2)
    assert (picking.oracle.count, picking.oracle.n) == (2, 2)
    found = {}
    for side in picking.policies:
        assert side.versus_best is not None and side.versus_best.agent == "right"
        assert side.versus_best.p_value == 1.0
        versus = side.versus_best
        found[side.policy] = (
            side.right,
            side.wrong,
            side.abstained,
            versus.judge_only,
            versus.agent_only,
        )
    assert found == PICK_COUNTS
    assert "the judge resolved 1 of 2" in picking.summary
    assert "the best single agent (right) 2 of 2" in picking.summary
    assert "a difference of 1 bug in right's favour, p = 1.00" in picking.summary


def test_the_merge_gate_counts_each_patch_alone(bout: Finished) -> None:
    gate = bout.report().gate
    assert gate.policy == "majority"
    assert (gate.patches, gate.right, gate.wrong) == (4, 2, 2)
    assert gate_figures(gate.model_dump()) == GATES["majority"]
    assert (gate.approve_all.count, gate.approve_all.n) == (2, 4)
    rows = {row.task: {p.contestant: (p.status, p.approved) for p in row.patches}
            for row in bout.report().tasks}  # fmt: skip
    assert rows == {
        T1: {
            "right": ("resolved", True),
            "wrong": ("wrong-fix", False),
            "idle": ("no-fix", None),
            "tests-only": ("no-fix", None),
        },
        T2: {
            "right": ("resolved", True),
            "wrong": ("fixed-but-broke", True),
            "idle": ("no-fix", None),
            "tests-only": ("no-fix", None),
        },
    }


def gate_figures(gate: dict[str, Any]) -> tuple[int, int, int, int]:
    """(approved, approved and right, wrong stopped, right stopped), each rate's
    denominator checked on the way."""
    precision, wrong, right = gate["precision"], gate["wrong_stopped"], gate["right_stopped"]
    assert precision["n"] == gate["approved"]
    assert (wrong["n"], right["n"]) == (2, 2)
    return gate["approved"], precision["count"], wrong["count"], right["count"]


def test_each_authors_tests_are_rated_without_its_own_patches(bout: Finished) -> None:
    rows = {
        row.author: (row.kind, row.auc, row.positives, row.negatives)
        for row in bout.report().evidence.rows
    }
    assert list(rows) == [*VENDORS, "suite"]
    assert rows == {
        "right": ("contestant", None, 0, 2),
        "wrong": ("contestant", None, 2, 0),
        "idle": ("contestant", None, 0, 0),
        "tests-only": ("contestant", 1.0, 2, 2),
        "suite": ("suite", 0.75, 2, 2),
    }


# ---------------------------------------------------------------- another policy, later


def bugbout(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout_tui", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={
            "BUGBOUT_HOME": str(root / "no-home"),
            "HOME": str(root.parent),
            "PATH": "/usr/bin:/bin",
        },
        timeout=120,
        check=False,
    )


def test_switching_the_policy_rejudges_without_running_a_test(
    bout: Finished, tmp_path: Path
) -> None:
    """Each policy in turn through the real CLI: the figures change as worked out above,
    and no matrix or score is touched, no test run announced, no scratch tree made."""
    root = tmp_path / "tallykit"
    shutil.copytree(bout.root, root, symlinks=True)
    store = root / ".bugbout"
    ran = [*sorted((store / "matrices").glob("*.json")), store / "resolutions.json"]
    before = {path: path.stat().st_mtime_ns for path in ran}
    runs_before = sum(e["type"] == "test-run-started" for e in events(root))
    for policy, (right, wrong, abstained, _, _) in PICK_COUNTS.items():
        configure(root, policy)
        started = time.monotonic()
        result = bugbout(root, "report", "--format", "json")
        seconds = time.monotonic() - started
        assert result.returncode == 0, result.stderr
        assert seconds < 10, f"reporting under {policy} took {seconds:.1f}s"
        report = Report.model_validate_json(result.stdout)
        assert report.policy == report.picking.policy == report.gate.policy == policy
        (side,) = [s for s in report.picking.policies if s.policy == policy]
        assert (side.right, side.wrong, side.abstained) == (right, wrong, abstained)
        assert gate_figures(report.gate.model_dump()) == GATES[policy]
        gate = {(row.task, p.contestant): p.approved for row in report.tasks for p in row.patches}
        for (task, each, patch), (_, approved) in SUPPORT.items():
            if each == policy:
                assert gate[task, patch] is approved, (task, policy, patch)
        stored = VerdictSet.model_validate_json((store / "verdicts.json").read_text())
        assert stored.policy == policy
        assert {t: stored.verdicts[t][policy].pick for t in (T1, T2)} == PICKS[policy]
    assert {path: path.stat().st_mtime_ns for path in ran} == before
    assert sum(e["type"] == "test-run-started" for e in events(root)) == runs_before
    assert not (root / "no-home").exists(), "reporting made scratch trees"

    configure(root, "unanimous")
    # the judging and the report themselves, without the interpreter's start-up
    started = time.monotonic()
    load_report(Project.load(root))
    assert time.monotonic() - started < 1
    markdown = bugbout(root, "report", "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    text = markdown.stdout
    assert text == (store / "report.md").read_text()
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# bugbout report: tallykit",
        "## Agents",
        "## Picking one patch per bug",
        "## Every patch through a merge gate",
        "## Which tests tell a right fix from a wrong one",
        "## How the tasks were found",
        "## Cost and tokens",
        "## Tasks",
        "## Definitions",
    ]
    assert "the judge's policy is `unanimous`" in text
    assert "| unanimous (configured) | 1 | 0 | 1 |" in text
    assert "| idle | contestant | n/a | 0 | 0 |" in text
    assert "| suite | suite | 0.75 | 2 | 2 |" in text
    assert f"Why the `unanimous` policy abstained:\n\n- {T2}: {UNANIMOUS_ABSTAINS}" in text


# ---------------------------------------------------------------- one store, one answer


async def _tui_report(root: Path, *, exclude: str | None = None) -> Report | None:
    """The Report screen's report, as a person opens it; first excluding `exclude` on the
    Tasks screen with the key a person presses, when given."""
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        if exclude is not None:
            await _until(pilot, lambda: isinstance(app.screen, TasksScreen))
            screen = app.screen
            assert isinstance(screen, TasksScreen)
            await _until(pilot, lambda: exclude in [str(key.value) for key in screen.table.rows])
            screen.table.move_cursor(row=screen.table.get_row_index(exclude))
            await pilot.press("x")
            config = root / "bugbout.toml"
            await _until(pilot, lambda: f'exclude = ["{exclude}"]' in config.read_text())
        await pilot.press("6")
        await _until(
            pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen.report is not None
        )
        assert isinstance(app.screen, ReportScreen)
        return app.screen.report


async def _until(pilot: Any, condition: Any) -> None:
    for _ in range(400):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("the app never got there")


def test_the_run_the_report_command_and_the_tui_agree_after_an_exclusion(
    bout: Finished, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task raced, then excluded in the TUI: the next `bugbout run` writes a report that
    `bugbout report` in each form and the TUI's Report screen repeat exactly, and in which
    the excluded task counts nowhere."""
    root = tmp_path / "tallykit"
    shutil.copytree(bout.root, root, symlinks=True)
    monkeypatch.setenv("BUGBOUT_HOME", str(bout.root.parent / "home"))
    monkeypatch.chdir(root)
    asyncio.run(_tui_report(root, exclude=T1))

    ran = Bout(Project.load(root)).run()
    assert ran is not None
    stored = (root / ".bugbout" / "report.json").read_text()
    assert Report.model_validate_json(stored) == ran
    printed = bugbout(root, "report", "--format", "json")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == stored
    markdown = (root / ".bugbout" / "report.md").read_text()
    assert bugbout(root, "report", "--format", "markdown").stdout == markdown
    assert asyncio.run(_tui_report(root)) == ran

    # T1 was resolved by `right` and picked right by every policy: it counts no more.
    assert ran.picking.raced_tasks == ran.agents.raced_tasks == 1
    assert [(g.reason, g.tasks) for g in ran.funnel.set_aside] == [("excluded by you", [T1])]
    (side,) = [s for s in ran.picking.policies if s.policy == "majority"]
    assert (side.right, side.wrong, side.abstained) == (0, 1, 0)
    assert ran.picking.best_agent_rate is not None
    assert ran.picking.best_agent_rate.counted() == "1 of 1"


# ---------------------------------------------------------------- the report at 80 columns


def shares(report: Report) -> set[str]:
    """Every share with its interval the report shows, as it shows them."""
    rates = [row.resolved_rate for row in report.agents.rows]
    picking = report.picking
    rates += [picking.random_agent, picking.oracle, *(s.rate for s in picking.policies)]
    rates += [report.gate.precision, report.gate.wrong_stopped, report.gate.right_stopped]
    return {rate.percent() for rate in rates if rate.share is not None}


def test_the_report_at_80_columns_cuts_no_share(bout: Finished, tmp_path: Path) -> None:
    root = tmp_path / "tallykit"
    shutil.copytree(bout.root, root, symlinks=True)
    shown = on_a_terminal(["report"], cwd=root, home=tmp_path / "home")
    assert widest(shown) <= 80, shown
    assert "…" not in shown, shown
    expected = shares(bout.report())
    assert len(expected) >= 4
    for share in expected:
        assert one_line(shown, share), (share, shown)
    for name in VENDORS:
        assert one_line(shown, name), (name, shown)


def test_the_report_into_a_pipe_is_never_wrapped(bout: Finished, tmp_path: Path) -> None:
    root = tmp_path / "tallykit"
    shutil.copytree(bout.root, root, symlinks=True)
    shown = piped(["report"], cwd=root, home=tmp_path / "home")
    assert "…" not in shown
    for share in shares(bout.report()):
        assert one_line(shown, share), (share, shown)
    summary = bout.report().picking.summary
    assert one_line(shown, summary), shown
    (row,) = [line for line in shown.splitlines() if line.startswith(T1)]
    assert all(f"{name} " in row for name in VENDORS), row  # every patch on the task's line
    assert widest(shown) > 80
