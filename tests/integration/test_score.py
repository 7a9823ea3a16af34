"""Scoring by the maintainers' hidden tests: the rules on hand-made outcomes, then real
patches on a real project, its oracle from a real ground-truth run, in the real sandbox.

The project and the way attempts are made are the cross-examination tests' (`Bench`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_examine import OPS, RIGHT_OPS, WRONG_OPS, Bench

import bugbout_tui.engine.testing as testing_engine
from bugbout_tui.core import events as ev
from bugbout_tui.core.models import Attempt, Oracle, OracleSet, Resolution, ResolutionSet
from bugbout_tui.core.patch import Patch
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.environments import Environments
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.score import Scoring
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_run import PytestCommand, TestResult, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox
from bugbout_tui.rules.score import (
    PATCH_DOES_NOT_APPLY,
    classify,
    run_outcomes,
    score_without_run,
    took_a_run,
)

NOW = datetime(2024, 5, 1, tzinfo=UTC)
F2P = "tests/test_ops.py::test_mean_empty"
P2P = "tests/test_ops.py::test_div"
FLAKY = "tests/test_ops.py::test_flaky"
ORACLE = Oracle(fail_to_pass=[F2P], pass_to_pass=[P2P], unstable=[FLAKY], scored=True)

# --- the rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcomes", "status", "broken"),
    [
        ({F2P: "passed", P2P: "passed"}, "resolved", []),
        ({F2P: "xfailed", P2P: "passed"}, "resolved", []),  # as the ground truth counts it
        ({F2P: "passed", P2P: "failed"}, "fixed-but-broke", [P2P]),
        ({F2P: "passed", P2P: "skipped"}, "fixed-but-broke", [P2P]),
        ({F2P: "passed"}, "fixed-but-broke", [P2P]),  # never reported: did not pass
        ({F2P: "failed", P2P: "passed"}, "wrong-fix", []),
        ({F2P: "uncollected", P2P: "failed"}, "wrong-fix", [P2P]),
        ({P2P: "passed"}, "wrong-fix", []),
    ],
)
def test_classification(outcomes: dict[str, str], status: str, broken: list[str]) -> None:
    found = classify("calc-3", "codex", ORACLE, outcomes)  # type: ignore[arg-type]
    assert (found.status, found.broken) == (status, broken)
    assert found.fail_to_pass == {F2P: outcomes.get(F2P, "uncollected")}


def test_unstable_tests_decide_nothing_even_when_listed_elsewhere() -> None:
    oracle = Oracle(
        fail_to_pass=[F2P, FLAKY], pass_to_pass=[P2P, FLAKY], unstable=[FLAKY], scored=True
    )
    found = classify("calc-3", "codex", oracle, {F2P: "passed", P2P: "passed", FLAKY: "failed"})
    assert found.status == "resolved"
    assert found.fail_to_pass == {F2P: "passed"}


def test_a_module_that_failed_to_import_marks_its_tests_uncollected() -> None:
    run = TestRun(
        outcomes={
            "tests/test_ops.py": TestResult(outcome="error", message="ImportError"),
            "tests/test_io.py::test_read": TestResult(outcome="error", message="fixture"),
        },
        collected=1,
        exit_code=1,
        duration=0.1,
        error=None,
    )
    assert run_outcomes(run, [F2P, P2P, "tests/test_io.py::test_read"]) == {
        F2P: "uncollected",
        P2P: "uncollected",
        "tests/test_io.py::test_read": "error",  # a test's own setup error stays an error
    }


def _attempt(status: str, patch: Patch | None = None) -> Attempt:
    return Attempt.model_validate(
        {
            "task": "calc-3",
            "contestant": "codex",
            "status": status,
            "detail": "usage limit reached" if status == "quota" else None,
            "started_at": NOW,
            "ended_at": NOW,
            "seconds": 1.0,
            "patch": patch or Patch(),
            "logdir": "/nowhere",
        }
    )


def test_what_is_decided_without_a_run() -> None:
    scores = {s: score_without_run(_attempt(s)) for s in ("quota", "timeout", "crashed")}
    assert {s: (r.status if r else None) for s, r in scores.items()} == {
        "quota": "quota",
        "timeout": "no-fix",
        "crashed": "no-fix",
    }
    assert scores["quota"] is not None and scores["quota"].detail == "usage limit reached"
    no_change = score_without_run(_attempt("finished"))
    assert no_change is not None and no_change.detail == "no change to the source code"
    # Such scores are redone when the attempt is retried; a run's score is kept.
    assert not any(took_a_run(r) for r in [*scores.values(), no_change] if r is not None)
    ran = Resolution(
        task="calc-3", contestant="codex", status="no-fix", detail=PATCH_DOES_NOT_APPLY
    )
    assert took_a_run(ran)


def test_an_oversized_patch_is_no_fix_for_the_reason_its_attempt_gives() -> None:
    detail = "12 MB of changed files, 2.0 MB over the cap of 10 MB"
    record = _attempt("oversized").model_copy(update={"detail": detail})
    score = score_without_run(record)
    assert score is not None and score.status == "no-fix"
    assert score.detail == f"the patch was too large to keep: {detail}"
    assert not took_a_run(score)  # redone from the record, like any score read off it


# --- for real ------------------------------------------------------------------------------

FLAKY_TEST = (
    "\n\ndef test_flaky():\n"
    "    from pathlib import Path\n\n"
    "    counter = Path(__file__).with_name('counter.txt')\n"
    "    n = int(counter.read_text()) if counter.exists() else 0\n"
    "    counter.write_text(str(n + 1))\n"
    "    assert n % 2 == 1\n"
)
"""Fails, then passes, in one tree: unstable on the fix, and failing on every fresh tree
(each patch is scored in a fresh copy)."""
CHEAT_CONFTEST = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    outcome.get_result().outcome = 'passed'\n"
)


class Scorer:
    """The scoring stage over a bench, counting the pytest runs it starts."""

    def __init__(self, bench: Bench, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bench = bench
        self.runs: list[PytestCommand] = []
        """The runs of the agents' patches."""
        self.gold: list[PytestCommand] = []
        """The runs of the gold controls (the maintainers' fix scored as a patch)."""
        self.results: dict[str, TestRun] = {}
        self.environment = Environment(
            python=Path(sys.executable), root=None, key="test", built=False
        )
        self.sandbox = select_sandbox("bubblewrap")

        self.machine_broken = False
        """Fail every control run, as a full disk would."""

        async def counted(cmd: PytestCommand, sandbox: Sandbox, **kwargs: Path) -> TestRun:
            if cmd.tree.name == "control":
                if self.machine_broken:
                    return TestRun(
                        outcomes={}, collected=0, exit_code=-9, duration=0.1,
                        error="pytest was killed by SIGKILL without writing a JUnit report.",
                    )  # fmt: skip
                return await run_pytest(cmd, sandbox, **kwargs)
            (self.gold if cmd.tree.parent.name == "+gold" else self.runs).append(cmd)
            run = await run_pytest(cmd, sandbox, **kwargs)
            self.results[cmd.tree.parent.name] = run
            return run

        monkeypatch.setattr(testing_engine, "run_pytest", counted)

    def score(self, oracles: OracleSet, attempts: list[Attempt]) -> ResolutionSet:
        stage = Scoring(
            StageContext(
                self.bench.project,
                self.bench.repo.root,
                Environments.single(
                    self.environment, self.bench.repo.root, self.bench.project.config.project
                ),
                self.sandbox,
                self.bench.bus,
            ),
            parallel=2,
        )
        return asyncio.run(stage.run([self.bench.task], oracles, {self.bench.task.id: attempts}))


def test_every_status_and_no_patch_grades_itself(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path, fix_tests=FLAKY_TEST)
    scorer = Scorer(bench, monkeypatch)
    # As the ground truth finds it (its own tests run this project): the flaky test
    # failed once and passed once on the fix. It fails on every patch below.
    oracles = OracleSet(oracles={"calc-3": ORACLE})
    broke_ops = RIGHT_OPS.replace("a / b", "a // b")
    cheat = bench.attempt(
        "cheat",
        {
            "src/calc/ops.py": WRONG_OPS,
            # The fix's own test file, rewritten to pass, and a root conftest that turns
            # every failure into a pass: neither is ever applied.
            "tests/test_ops.py": "def test_mean_empty():\n    pass\n\n\ndef test_div():\n"
            "    pass\n",
            "conftest.py": CHEAT_CONFTEST,
        },
    )
    assert {f.path: f.part for f in cheat.patch.files} == {
        "conftest.py": "other",
        "src/calc/ops.py": "source",
        "tests/test_ops.py": "tests",
    }
    stale = bench.attempt(
        "stale",
        {"src/calc/ops.py": RIGHT_OPS.replace("return 0.0", "return 0")},
        commit=bench.task.fix_commit,
    )
    slow = bench.attempt("slow", {"src/calc/ops.py": RIGHT_OPS})
    spent = bench.attempt("spent", {})
    attempts = [
        bench.attempt("right", {"src/calc/ops.py": RIGHT_OPS}),
        bench.attempt("broke", {"src/calc/ops.py": broke_ops}),
        bench.attempt("wrong", {"src/calc/ops.py": WRONG_OPS}),
        cheat,
        bench.attempt("tests-only", {"tests/test_mine.py": "def test_it():\n    pass\n"}),
        stale,
        slow.model_copy(update={"status": "timeout", "detail": "stopped after 1800s"}),
        spent.model_copy(update={"status": "quota", "detail": "You've hit your usage limit"}),
        spent.model_copy(update={"contestant": "skipped", "status": "skipped"}),
        bench.attempt(
            "examiner", {"tests/test_issue.py": "def test_x():\n    pass\n"}, role="examiner"
        ),
    ]
    scores = scorer.score(oracles, attempts)

    found = scores.patches["calc-3"]
    assert {name: r.status for name, r in found.items()} == {
        "right": "resolved",
        "broke": "fixed-but-broke",
        "wrong": "wrong-fix",
        "cheat": "wrong-fix",
        "tests-only": "no-fix",
        "stale": "no-fix",
        "slow": "no-fix",
        "spent": "quota",
    }
    # Four patches ran, side by side; the rest were decided from their records.
    assert sorted(cmd.tree.parent.name for cmd in scorer.runs) == [
        "broke",
        "cheat",
        "right",
        "wrong",
    ]
    assert all(cmd.paths == ["tests/test_ops.py"] for cmd in scorer.runs)
    assert found["right"].fail_to_pass == {F2P: "passed"}
    # The maintainers' fix went the same way, once, from the commits alone.
    assert len(scorer.gold) == 1
    assert scores.controls["calc-3"].status == "resolved"
    assert scores.controls["calc-3"].fail_to_pass == {F2P: "passed"}
    assert scorer.results["right"].outcomes[FLAKY].outcome == "failed"  # unstable: ignored
    assert found["broke"].broken == [P2P]
    assert found["cheat"].fail_to_pass == {F2P: "failed"}
    assert (found["stale"].detail or "").startswith(PATCH_DOES_NOT_APPLY)
    assert found["slow"].detail == "the agent ran out of time (stopped after 1800s)"
    assert found["spent"].detail == "You've hit your usage limit"
    store = bench.project.store
    assert store.read(store.root / "resolutions.json", ResolutionSet) == scores

    # Stored scores are not run again; a retried quota attempt is scored now.
    scorer.runs.clear()
    again = scorer.score(oracles, attempts)
    assert scorer.runs == []
    assert len(scorer.gold) == 1
    assert again == scores
    retried = bench.attempt("spent", {"src/calc/ops.py": RIGHT_OPS})
    later = scorer.score(oracles, [*attempts[:7], retried])
    assert [cmd.tree.parent.name for cmd in scorer.runs] == ["spent"]
    assert later.patches["calc-3"]["spent"].status == "resolved"


def test_unscored_tasks_get_no_scores(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    scorer = Scorer(bench, monkeypatch)
    unscored = OracleSet(oracles={"calc-3": Oracle(scored=False, reason="no fail-to-pass")})
    attempts = [bench.attempt("right", {"src/calc/ops.py": OPS.replace("a / b", "a / b  # x")})]
    assert scorer.score(unscored, attempts).patches == {}
    assert scorer.score(OracleSet(), attempts).patches == {}
    assert scorer.runs == []


def test_a_patch_killing_its_run_is_scored_and_a_failing_machine_is_not(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A patch can fake a passing failure (kill its own run) to stay unscored; a control
    run on an empty test tells that from the machine's own trouble."""
    bench = Bench(tmp_path)
    scorer = Scorer(bench, monkeypatch)
    oracles = OracleSet(oracles={"calc-3": ORACLE})
    killer = bench.attempt(
        "killer",
        {"src/calc/ops.py": "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGKILL)\n"},
    )
    scorer.machine_broken = True
    assert scorer.score(oracles, [killer]).patches == {}
    errors = [e.message for e in bench.events if isinstance(e, ev.ErrorRaised)]
    assert any("control run failed too" in m for m in errors), errors
    stored = bench.project.store.read(bench.project.store.resolutions_path, ResolutionSet)
    assert stored is not None and stored.patches == {}  # the gold control alone

    scorer.machine_broken = False
    found = scorer.score(oracles, [killer]).patches["calc-3"]["killer"]
    assert found.status == "no-fix"
    assert "SIGKILL" in (found.detail or "")


def test_changed_conditions_score_again_and_older_scores_are_trusted(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = Bench(tmp_path)
    scorer = Scorer(bench, monkeypatch)
    oracles = OracleSet(oracles={"calc-3": ORACLE})
    attempts = [bench.attempt("right", {"src/calc/ops.py": RIGHT_OPS})]
    first = scorer.score(oracles, attempts).patches["calc-3"]["right"]
    assert first.conditions is not None and first.conditions.pytest_args == []

    path = bench.project.store.root / "resolutions.json"
    data = json.loads(path.read_text())
    del data["patches"]["calc-3"]["right"]["conditions"]
    path.write_text(json.dumps(data))
    scorer.runs.clear()
    assert scorer.score(oracles, attempts).patches["calc-3"]["right"] == first
    assert scorer.runs == []

    config = bench.repo.root / "bugbout.toml"
    config.write_text(
        config.read_text().replace("[run]", 'pytest-args = ["-p", "no:doctest"]\n[run]')
    )
    bench.project = Project.load(bench.repo.root)
    again = scorer.score(oracles, attempts).patches["calc-3"]["right"]
    assert len(scorer.runs) == 1
    assert again.status == "resolved"
    assert again.conditions is not None and again.conditions.pytest_args == ["-p", "no:doctest"]
