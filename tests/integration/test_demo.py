"""The built-in demo: its sample history, its scripted agents, and the whole bout.

The sample is built with real git and mined by the real miner; every agent runs as the
subprocess bugbout would start, in a real history-free working copy; the maintainers'
tests are taken from the fix commits and run with real pytest. The end-to-end tests run
`bugbout demo` itself, twice.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatch
from pathlib import Path

import pytest
from terminals import bugbout

import bugbout_tui
from bugbout_tui.agents.quota import ANY_LIMIT, find_limit, limit_resets
from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.events import (
    AttemptQueued,
    AttemptStarted,
    QuotaParked,
    QuotaResumed,
    RaceEstimated,
    parse_event,
)
from bugbout_tui.core.models import Attempt, OracleSet, Reason, Task, TaskSet
from bugbout_tui.core.patch import Patch
from bugbout_tui.demo import agent as demo_agent
from bugbout_tui.demo.bugs import BUGS, PLAYBOOKS, STYLES, Bug, Style, read_data, recognise
from bugbout_tui.demo.project import (
    MARKER,
    OTHER_ISSUES,
    DemoProject,
    build_demo,
    check_pytest,
    prepare_demo,
)
from bugbout_tui.demo.repository import history
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.workcopy import WorkingCopy, harvest, prepare_working_copy
from bugbout_tui.rules.problem_text import cut_to_problem
from bugbout_tui.rules.prompts import Role, render_prompt

TEST_COMMAND = f"PYTHONPATH=src:. {sys.executable} -m pytest -p no:cacheprovider tests"
QUIET = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": "src"}
BY_TOPIC = {bug.topic: bug for bug in BUGS}
DEMO_DATA = Path(demo_agent.__file__).parent
"""The demo's package: its modules, and the sample project and patches they read."""

HASTY: dict[str, str] = {
    "slug_accents": "wrong",
    "thousands": "right",
    "half_cents": "wrong",
    "number_width": "right",
    "month_end": "wrong",
    "discount_twice": "gives up",
}
"""What the hasty agent's patch does to each bug, by design."""


@dataclass(frozen=True)
class Fix:
    """What a bug's fix commit changes, read from its patch in the package data."""

    source_files: list[str]
    test_module: str
    added_test: str


def fix_of(bug: Bug) -> Fix:
    patch = read_data(f"history/{bug.patch}")
    paths = re.findall(r"^diff --git a/(\S+) b/", patch, re.MULTILINE)
    (module,) = [path for path in paths if path.startswith("tests/")]
    (added,) = re.findall(r"^\+def (test_\w+)\(", patch, re.MULTILINE)
    return Fix(sorted(path for path in paths if path.startswith("src/")), module, added)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def demo(home: Path) -> DemoProject:
    return build_demo(home / "demo")


@pytest.fixture(scope="module")
def taskset(demo: DemoProject) -> TaskSet:
    return mine_tasks(Project.load(demo.root))


def head(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def task_of(taskset: TaskSet, bug: Bug) -> Task:
    return next(t for t in taskset.tasks if t.issue == bug.report.number)


# ---------------------------------------------------------------- the sample project


def test_the_history_is_mined_into_the_six_bugs_and_a_full_funnel(taskset: TaskSet) -> None:
    assert [t.id for t in taskset.tasks] == [f"invoicekit-{b.report.number}" for b in BUGS]
    assert taskset.examined == 19
    assert Counter(e.reason for e in taskset.excluded) == {
        Reason.NOT_A_FIX: 8,
        Reason.NOT_A_BUG: 1,
        Reason.NO_SOURCE_CHANGE: 1,
        Reason.TOO_MANY_SOURCE_FILES: 1,
        Reason.NO_TEST_ADDED: 1,
        Reason.NO_ISSUE: 1,
    }
    for bug in BUGS:
        task = task_of(taskset, bug)
        fix = fix_of(bug)
        assert task.test_files == [fix.test_module]
        assert task.added_tests == [fix.added_test]
        assert task.source_files == fix.source_files
        assert task.statement == cut_to_problem(bug.report.title, bug.report.body).text
    # a squash commit naming its pull request is led to the issue the PR closes
    thousands = task_of(taskset, BY_TOPIC["thousands"])
    assert (thousands.reference.number, thousands.issue) == (16, 15)
    # a merged pull request whose body says "Fixes #18"
    assert task_of(taskset, BY_TOPIC["slug_accents"]).title == (
        "Fix slugs of customer names with accents"
    )
    # a feature that closes an issue is left out by that issue, which reports no bug
    (feature,) = [e for e in taskset.excluded if "(fixes #8)" in e.title]
    assert feature.reason == Reason.NOT_A_BUG
    assert feature.detail == (
        "the linked issue #8 shows no bug label, bug-report template, traceback or failure "
        "in its title"
    )


def test_the_suite_passes_at_head(demo: DemoProject) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=demo.repository,
        env=QUIET,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "34 passed" in done.stdout


def test_the_sample_is_the_same_whatever_the_users_git_config(
    demo: DemoProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".gitconfig").write_text(
        "[user]\n\tname = Someone Else\n[commit]\n\tgpgsign = true\n"
        "[core]\n\tautocrlf = true\n[init]\n\tdefaultBranch = trunk\n"
    )
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
    again = build_demo(tmp_path / "again")
    assert head(again.repository) == head(demo.repository)


def test_ground_truth_scores_every_bug(demo: DemoProject, taskset: TaskSet) -> None:
    asyncio.run(Bout(Project.load(demo.root)).arun(until="ground-truth"))
    store = Project.load(demo.root).store
    oracles = store.read(store.oracles_path, OracleSet)
    assert oracles is not None
    for bug in BUGS:
        oracle = oracles.oracles[task_of(taskset, bug).id]
        assert oracle.scored, oracle.reason
        fix = fix_of(bug)
        assert oracle.fail_to_pass == [f"{fix.test_module}::{fix.added_test}"]
        assert oracle.pass_to_pass, "each fix's module keeps tests that must keep passing"


def test_the_issues_file_holds_every_referenced_issue(demo: DemoProject) -> None:
    items = json.loads(demo.issues_path.read_text(encoding="utf-8"))
    numbers = {item["number"] for item in items}
    assert numbers >= {bug.report.number for bug in BUGS} | {4, 5, 7, 8, 11, 14, 16, 17, 18, 19}
    pulls = {item["number"] for item in items if "pull_request" in item}
    assert pulls == {16, 19}


def test_the_shipped_sample_is_the_project_as_its_history_leaves_it(
    demo: DemoProject, tmp_path: Path
) -> None:
    """`invoicekit/` in the package, which a reader opens, lints and tests, is what the
    patches in `history/` build, file for file."""
    archive = subprocess.run(
        ["git", "archive", "main"], cwd=demo.repository, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp_path / "built", filter="data")
    shipped = DEMO_DATA / "invoicekit"
    ignored = [line.rstrip("/") for line in (shipped / ".gitignore").read_text().splitlines()]

    def files(root: Path) -> dict[str, bytes]:
        """Every file under `root` but those the sample's .gitignore names."""
        found = (path.relative_to(root) for path in root.rglob("*") if path.is_file())
        return {
            name.as_posix(): (root / name).read_bytes()
            for name in found
            if not any(fnmatch(part, pattern) for part in name.parts for pattern in ignored)
        }

    built = files(tmp_path / "built")
    assert len(built) == 19
    assert files(shipped) == built


def test_every_file_of_the_demo_data_is_used() -> None:
    patches = sorted(path.name for path in (DEMO_DATA / "history").glob("*"))
    assert patches == [change.patch for change in history()]
    written = {
        recipe.tests.source
        for book in PLAYBOOKS
        for style in STYLES
        if (recipe := book.recipe(style)).tests is not None
    }
    shipped = {p.relative_to(DEMO_DATA).as_posix() for p in (DEMO_DATA / "playbooks").rglob("*")}
    assert {name for name in shipped if name.endswith(".py")} == written


def test_the_sample_is_built_from_a_zipped_package(demo: DemoProject, tmp_path: Path) -> None:
    """The patches and the agents' tests are read as package data, not as files beside the
    modules, so a zipped install builds the same history."""
    package = Path(bugbout_tui.__file__).parent
    zipped = tmp_path / "bugbout_tui.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in package.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(package.parent).as_posix())
    script = (
        "import sys; from pathlib import Path\n"
        "from bugbout_tui.demo import bugs, repository\n"
        "assert repository.__file__.startswith(sys.argv[1]), repository.__file__\n"
        "repository.write_repository(Path(sys.argv[2]))\n"
        "print(bugs.PLAYBOOKS[0].careful.tests.text)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, str(zipped), str(tmp_path / "repo")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(zipped)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert head(tmp_path / "repo") == head(demo.repository)
    assert ran.stdout == PLAYBOOKS[0].careful.tests.text + "\n"


# ---------------------------------------------------------------- the scripted agents


def test_each_playbook_recognises_its_own_report_and_no_other() -> None:
    for bug, book in zip(BUGS, PLAYBOOKS, strict=True):
        text = cut_to_problem(bug.report.title, bug.report.body).text
        assert [b.topic for b in PLAYBOOKS if b.matches(text)] == [bug.topic]
        assert book.topic == bug.topic
    for issue in OTHER_ISSUES:
        if not issue.pull_request:  # a pull request describes the bug it fixes
            assert recognise(cut_to_problem(issue.title, issue.body).text) is None


def test_the_agent_knows_only_the_playbooks() -> None:
    """The scripted agents may not learn the answer from the maintainers' side."""
    tree = ast.parse(Path(demo_agent.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "bugbout_tui.demo.bugs"
        for alias in node.names
    }
    assert imported <= {"STYLES", "Recipe", "Style", "recognise", "Playbook", "PLAYBOOKS"}
    assert not any(
        isinstance(node, ast.ImportFrom) and node.module == "bugbout_tui.demo.project"
        for node in ast.walk(tree)
    )


@dataclass
class Run:
    copy: WorkingCopy
    result: subprocess.CompletedProcess[str]
    patch: Patch


def run_agent(
    demo: DemoProject, task: Task, style: Style, where: Path, *extra: str, base: bool = True
) -> Run:
    """The agent in a fresh working copy of the task's base, as the race starts it."""
    assert task.statement is not None
    copy = prepare_working_copy(
        demo.repository,
        task.base_commit,
        where / style,
        hidden=task.test_files,
        scratch=where / f"{style}.git",
    )
    role: Role = "specify" if style == "examiner" else "contestant"
    prompt = render_prompt(
        role, statement=task.statement, test_command=TEST_COMMAND, tests_dir="tests"
    )
    prompt_file = where / f"{style}.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    argv = [sys.executable, "-m", "bugbout_tui.demo.agent", "--style", style]
    argv += ["--prompt-file", str(prompt_file), "--pace", "0", *extra]
    result = subprocess.run(argv, cwd=copy.path, capture_output=True, text=True, check=False)
    patch = harvest(copy, source_dir="src/invoicekit", tests_dir="tests")
    return Run(copy, result, patch)


def finished_run(demo: DemoProject, task: Task, style: Style, where: Path, *extra: str) -> Run:
    """`run_agent`, which must exit 0; its output is the message when it does not."""
    run = run_agent(demo, task, style, where, *extra)
    assert run.result.returncode == 0, run.result.stdout + run.result.stderr
    return run


def maintainers_tests_pass(demo: DemoProject, task: Task, tree: Path, *also: str) -> bool:
    """The fix's own test modules (and `also`), put into `tree` and run there."""
    for module in task.test_files:
        text = subprocess.run(
            ["git", "show", f"{task.fix_commit}:{module}"],
            cwd=demo.repository,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (tree / module).write_text(text, encoding="utf-8")
    return pytest_passes(tree, *also, *task.test_files)


def pytest_passes(tree: Path, *paths: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=tree,
        env=QUIET,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode == 0


def source_paths(patch: Patch) -> list[str]:
    return [f.path for f in patch.files if f.part == "source"]


def changed_tests(patch: Patch) -> list[str]:
    return [f.path for f in patch.files if f.part == "tests"]


@pytest.mark.parametrize("bug", BUGS, ids=[b.topic for b in BUGS])
def test_careful_fixes_every_bug_with_a_test_that_reproduces_it(
    bug: Bug, demo: DemoProject, taskset: TaskSet, tmp_path: Path
) -> None:
    task = task_of(taskset, bug)
    run = finished_run(demo, task, "careful", tmp_path)
    assert "running the tests" in run.result.stdout
    assert source_paths(run.patch) == task.source_files
    (own,) = changed_tests(run.patch)
    assert maintainers_tests_pass(demo, task, run.copy.path, own)
    untouched = prepare_working_copy(
        demo.repository, task.base_commit, tmp_path / "base", hidden=task.test_files
    )
    (untouched.path / own).write_text((run.copy.path / own).read_text())
    assert not pytest_passes(untouched.path, own), "its test must fail on the unfixed code"


@pytest.mark.parametrize("bug", BUGS, ids=[b.topic for b in BUGS])
def test_hasty_is_right_on_some_bugs_and_wrong_on_the_case_next_to_others(
    bug: Bug, demo: DemoProject, taskset: TaskSet, tmp_path: Path
) -> None:
    task = task_of(taskset, bug)
    run = finished_run(demo, task, "hasty", tmp_path)
    assert "running the tests" not in run.result.stdout
    if HASTY[bug.topic] == "gives up":
        assert run.patch.is_empty
        assert "cannot reproduce" in run.result.stdout
        return
    (own,) = changed_tests(run.patch)
    assert pytest_passes(run.copy.path, own), "its own test passes on its own fix"
    right = HASTY[bug.topic] == "right"
    assert maintainers_tests_pass(demo, task, run.copy.path) is right


@pytest.mark.parametrize("bug", BUGS, ids=[b.topic for b in BUGS])
def test_the_examiner_writes_tests_only(
    bug: Bug, demo: DemoProject, taskset: TaskSet, tmp_path: Path
) -> None:
    task = task_of(taskset, bug)
    run = finished_run(demo, task, "examiner", tmp_path)
    assert source_paths(run.patch) == []
    (own,) = changed_tests(run.patch)
    reproduced = not pytest_passes(run.copy.path, own)
    # the discount bug shows only on a second total; the examiner never gets that far
    assert reproduced is (bug.topic != "discount_twice")
    expected = "fail on this code" if reproduced else "none of my 3 tests fails"
    assert expected in run.result.stdout


def test_slow_fixes_like_careful_and_shows_its_work(
    demo: DemoProject, taskset: TaskSet, tmp_path: Path
) -> None:
    task = task_of(taskset, BY_TOPIC["thousands"])
    run = finished_run(demo, task, "slow", tmp_path)
    lines = run.result.stdout.splitlines()
    assert "running the tests before changing anything..." in lines
    assert len(lines) >= 10, "the slow agent streams its progress"
    assert changed_tests(run.patch) == ["tests/test_thousands_slow.py"]
    assert maintainers_tests_pass(demo, task, run.copy.path)


def test_rationed_stops_on_its_third_attempt_with_a_usage_limit(
    demo: DemoProject, taskset: TaskSet, tmp_path: Path
) -> None:
    task = task_of(taskset, BY_TOPIC["number_width"])
    state = tmp_path / "state"
    plan = ("--state-dir", str(state), "--allowance", "2")
    for attempt in (1, 2):
        run = finished_run(demo, task, "rationed", tmp_path / str(attempt), *plan)
        assert maintainers_tests_pass(demo, task, run.copy.path)
    third = run_agent(demo, task, "rationed", tmp_path / "3", *plan)
    assert third.result.returncode == 1
    assert third.patch.is_empty
    message = find_limit([third.result.stdout], ANY_LIMIT)
    assert message is not None and message.startswith("You've hit your usage limit.")
    # the plan refills once its window has passed since it turned the third away
    now = time.time()
    assert demo_agent.spend_allowance(state, 2, 600, now) is not None
    assert demo_agent.spend_allowance(state, 2, 600, now + 601) is None


def test_the_rationed_plan_names_its_reset_and_caps_its_attempts(tmp_path: Path) -> None:
    """Two attempts, then a wait of `window` from the first one turned away, named to the
    second; at most `cap` attempts in ten minutes, refills or not."""
    state, start = tmp_path / "state", 1_000_000.0
    spend = functools.partial(demo_agent.spend_allowance, state, 2, 20.0, cap=4)
    assert spend(start) is None and spend(start + 1) is None
    limit = spend(start + 50)  # however late the third comes, it is turned away
    assert limit is not None
    named = limit_resets(limit, datetime.fromtimestamp(start + 50, UTC))
    assert named == datetime.fromtimestamp(start + 70, UTC)
    assert spend(start + 69.5) == limit, "the same reset until it comes"
    assert spend(start + 70) is None and spend(start + 71) is None
    capped = spend(start + 200)
    assert capped is not None
    assert limit_resets(capped, datetime.fromtimestamp(start + 200, UTC)) == (
        datetime.fromtimestamp(start + demo_agent.CAP_WINDOW, UTC)
    )
    # the cap lifts; the two attempts since the last refill still count
    lifted = start + demo_agent.CAP_WINDOW
    short = spend(lifted)
    assert short is not None
    assert limit_resets(short, datetime.fromtimestamp(lifted, UTC)) == (
        datetime.fromtimestamp(lifted + 20, UTC)
    )
    assert spend(lifted + 20) is None


# ---------------------------------------------------------------- the demo directory


def test_a_demo_directory_is_reused_rebuilt_or_refused(home: Path, tmp_path: Path) -> None:
    first, built = prepare_demo(tmp_path / "demo")
    assert built and first.is_current()
    (first.root / ".bugbout").mkdir()
    again, built = prepare_demo(tmp_path / "demo")
    assert not built and (again.root / ".bugbout").is_dir()
    config = again.config_path.read_text()
    again.config_path.write_text(config.replace(sys.executable, str(tmp_path / "gone")))
    with pytest.raises(BugboutError, match="no longer exists") as stale:
        prepare_demo(tmp_path / "demo")
    assert stale.value.hint is not None and "--fresh" in stale.value.hint
    fresh, built = prepare_demo(tmp_path / "demo", fresh=True)
    assert built and not (fresh.root / ".bugbout").exists()
    assert sys.executable in fresh.config_path.read_text()
    (fresh.root / MARKER).write_text("0\n")
    _, built = prepare_demo(tmp_path / "demo")
    assert built, "a demo of another version is rebuilt"
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="other than a bugbout demo"):
        prepare_demo(foreign, fresh=True)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_a_python_without_pytest_is_named(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
                   check=True)  # fmt: skip
    python = str(tmp_path / "venv" / "bin" / "python")
    with pytest.raises(BugboutError, match="cannot import pytest") as caught:
        check_pytest(python)
    assert caught.value.hint is not None and "pip install pytest" in caught.value.hint
    check_pytest()


# ---------------------------------------------------------------- the whole demo, twice


TEST_WINDOW = 5.0
"""The rationed agent's refill in the whole-demo tests: the demo's twenty seconds, shorter,
so the lane waits as the demo's does at a quarter of the cost."""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`bugbout demo` in a fresh BUGBOUT_HOME: the demo directory and what it printed."""
    home = tmp_path_factory.mktemp("e2e")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        build_demo(home / "demo", window=TEST_WINDOW)
    result = bugbout("demo", home=home, timeout=600)
    assert result.returncode == 0, result.stderr
    return home / "demo", result.stdout


def statuses(root: Path) -> dict[str, list[str]]:
    """Each agent's attempt statuses, in task order."""
    project = Project.load(root)
    store = project.store
    taskset = store.read(store.tasks_path, TaskSet)
    assert taskset is not None
    found: dict[str, list[str]] = {}
    for task in taskset.tasks:
        for path in sorted((store.attempts_dir / task.id).glob("*.json")):
            attempt = store.read(path, Attempt)
            assert attempt is not None
            found.setdefault(attempt.contestant, []).append(attempt.status)
    return found


@pytest.mark.slow
def test_the_demo_races_every_agent_as_designed(finished: tuple[Path, str]) -> None:
    root, _ = finished
    got = statuses(root)
    done = ["finished"] * 6
    assert got["careful"] == done
    assert got["hasty"] == ["finished"] * 5 + ["no-change"]
    assert got["examiner"] == done
    # the rationed agent's plan runs out on the third task: the lane it shares waits for
    # the refill and resumes; on the fifth its ten-minute cap parks the lane for the run
    assert got["rationed"] == ["finished"] * 4 + ["quota"] * 2
    assert got["slow"] == ["finished"] * 5 + ["quota"]
    store = Project.load(root).store
    limited = store.read(store.attempts_dir / "invoicekit-7" / "rationed.json", Attempt)
    assert limited is not None and limited.detail is not None
    assert limited.detail.startswith("You've hit your usage limit.")
    assert limited.resets_at is not None
    events = [parse_event(line) for line in store.events_path.read_text().splitlines()]
    waited, parked = [e for e in events if isinstance(e, QuotaParked)]
    (resumed,) = [e for e in events if isinstance(e, QuotaResumed)]
    assert waited.quota == parked.quota == resumed.quota == "lane-b"
    assert waited.resets_at is not None and waited.resumes_at == waited.resets_at
    took = (resumed.at - waited.at).total_seconds()
    assert TEST_WINDOW - 1 <= took < TEST_WINDOW + 10, took
    # the attempt that hit the limit ran again first, and finished
    rerun = [e for e in events[events.index(resumed) :] if isinstance(e, AttemptStarted)]
    assert rerun[0].attempt == "invoicekit-5/rationed"
    assert parked.resumes_at is None and parked.resets_at == limited.resets_at
    assert parked.resets_at is not None and parked.resets_at > parked.at + timedelta(minutes=5)


@pytest.mark.slow
def test_the_estimate_comes_before_any_attempt_and_names_the_attempts_the_race_ran(
    finished: tuple[Path, str],
) -> None:
    root, _ = finished
    store = Project.load(root).store
    events = [parse_event(line) for line in store.events_path.read_text().splitlines()]
    (estimated,) = [e for e in events if isinstance(e, RaceEstimated)]
    first_start = next(i for i, e in enumerate(events) if isinstance(e, AttemptStarted))
    assert events.index(estimated) < first_start
    # Every attempt the estimate counted was queued, and no other; one queued again
    # after its lane waited out the limit is the same attempt.
    queued = [e for e in events if isinstance(e, AttemptQueued)]
    distinct = Counter(e.contestant for e in {e.attempt: e for e in queued}.values())
    assert {a.name: a.attempts for a in estimated.estimate.agents} == dict(distinct)
    assert estimated.estimate.attempts == sum(distinct.values()) == 30
    assert len(queued) > 30
    assert len(list(store.attempts_dir.glob("*/*.json"))) == 30


@pytest.mark.slow
def test_the_demo_report_has_the_designed_figures(finished: tuple[Path, str]) -> None:
    from bugbout_tui.report import Report

    root, printed = finished
    report = Report.model_validate_json((root / ".bugbout" / "report.json").read_text())
    rows = {row.name: row for row in report.agents.rows}
    resolved = {name: row.resolved for name, row in rows.items()}
    assert resolved == {"careful": 6, "hasty": 2, "slow": 5, "rationed": 4}
    hasty = rows["hasty"]
    assert (hasty.fixed_but_broke, hasty.wrong_fix, hasty.no_fix) == (1, 2, 1)
    assert (rows["slow"].quota, rows["rationed"].quota) == (1, 2)
    (majority,) = [p for p in report.picking.policies if p.policy == "majority"]
    assert (majority.right, majority.wrong, majority.abstained) == (5, 0, 1)
    (abstained,) = [
        pick
        for task in report.tasks
        for pick in task.picks
        if pick.policy == "majority" and pick.pick is None
    ]
    assert abstained.abstained == "no patch has a reproduction by another author"
    gate = report.gate
    assert (gate.right, gate.wrong, gate.approved) == (17, 3, 16)
    auc = {row.author: row.auc for row in report.evidence.rows}
    assert auc["careful"] == auc["examiner"] == 1.0
    assert auc["suite"] is not None
    assert report.funnel.examined == 19 and report.funnel.kept == 6
    assert str(root / ".bugbout" / "report.md") in printed.replace("\n", "")


@pytest.mark.slow
def test_the_demo_again_runs_nothing_and_shows_the_same_bout(
    finished: tuple[Path, str],
) -> None:
    root, _ = finished
    before = statuses(root)
    again = bugbout("demo", home=root.parent, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "Reusing the demo" in again.stderr
    events = [
        json.loads(line) for line in (root / ".bugbout" / "events.jsonl").read_text().splitlines()
    ]
    kinds = Counter(event["type"] for event in events)
    assert kinds["bout-started"] == 1 and kinds["bout-finished"] == 1
    assert kinds["attempt-started"] == 0
    assert kinds["test-run-started"] == 0
    assert statuses(root) == before


def test_a_foreign_directory_is_refused_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    result = bugbout("demo", str(tmp_path / "taken"), home=tmp_path / "home", timeout=600)
    assert result.returncode == 2
    assert "other than a bugbout demo" in result.stderr
    assert "Traceback" not in result.stderr
