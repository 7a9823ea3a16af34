"""Ground truth for real: real git, real pytest, the real sandbox, stored and resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from racekit import alive

from bugbout_tui.core.models import OracleSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.testing import first_error, transient_failure
from bugbout_tui.infra.pytest_run import TestResult, TestRun

OPS = "def div(a, b):\n    return a / b\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = OPS.replace(
    "    return sum(xs)", "    if not xs:\n        return 0.0\n    return sum(xs)"
)


def _project(tmp_path: Path, *, package_init: str = "") -> GitRepo:
    repo = GitRepo(tmp_path / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": package_init,
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": "from calc.ops import div\n\n\ndef test_div():\n"
            "    assert div(4, 2) == 2\n",
        },
    )
    return repo


MEAN_TEST = "from calc.ops import mean\n\n\ndef test_mean_empty():\n    assert mean([]) == 0.0\n"


def _fix_mean(repo: GitRepo, tests: dict[str, str] | None = None) -> None:
    """Commit the fix of issue #3 (the mean of nothing) with `tests`, by default one new
    test module, and write that issue's text."""
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={"src/calc/ops.py": OPS_FIXED, **(tests or {"tests/test_mean.py": MEAN_TEST})},
    )
    write_issues(repo.root, {3: ("mean() crashes on []", "ZeroDivisionError")})


TOKEN = "bugbout-ground-truth-stray-child"


def _oracles(repo: GitRepo) -> dict[str, dict[str, object]]:
    path = repo.root / ".bugbout" / "oracles.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    data.pop("schema_version")
    return data


def _amend_oracle(repo: GitRepo, task: str, **update: object) -> None:
    """Change a stored oracle as an earlier run might have left it."""
    path = repo.root / ".bugbout" / "oracles.json"
    stored = OracleSet.model_validate_json(path.read_text())
    stored.oracles[task] = stored.oracles[task].model_copy(update=update)
    path.write_text(stored.model_dump_json())


_ANSWER = ("fail_to_pass", "pass_to_pass", "unstable", "scored", "reason")
"""The keys of an oracle that hold its answer, beside where its logs are and what it
was made under."""


def _run(repo: GitRepo) -> None:
    Bout.load(repo.root).run(until="ground-truth")


def test_fail_to_pass_pass_to_pass_on_a_plain_fix(tmp_path: Path, home: Path) -> None:
    repo = _project(tmp_path)
    _fix_mean(
        repo,
        {
            "tests/test_ops.py": "from calc.ops import div, mean\n\n\ndef test_div():\n"
            "    assert div(4, 2) == 2\n\n\ndef test_mean_empty():\n    assert mean([]) == 0.0\n",
        },
    )
    write_config(repo.root, "calc")
    _run(repo)
    oracles = _oracles(repo)
    assert set(oracles) == {"calc-3"}
    assert {key: oracles["calc-3"][key] for key in _ANSWER} == {
        "fail_to_pass": ["tests/test_ops.py::test_mean_empty"],
        "pass_to_pass": ["tests/test_ops.py::test_div"],
        "unstable": [],
        "scored": True,
        "reason": None,
    }


def test_a_test_importing_a_name_the_base_lacks_is_still_fail_to_pass(
    tmp_path: Path, home: Path
) -> None:
    repo = _project(tmp_path)
    repo.commit(
        "Fix: median was missing for even lists (#8)",
        files={
            "src/calc/ops.py": OPS + "\n\ndef median(xs):\n    s = sorted(xs)\n    n = len(s)\n"
            "    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n",
            "tests/test_median.py": "from calc.ops import median\n\n\ndef test_even():\n"
            "    assert median([1, 2, 3, 4]) == 2.5\n\n\ndef test_odd():\n"
            "    assert median([3, 1, 2]) == 2\n",
        },
    )
    write_config(repo.root, "calc")
    write_issues(repo.root, {8: ("median missing", "no median")})
    _run(repo)
    oracle = _oracles(repo)["calc-8"]
    assert oracle["fail_to_pass"] == [
        "tests/test_median.py::test_even",
        "tests/test_median.py::test_odd",
    ]
    assert oracle["scored"] is True


def test_a_flaky_test_is_set_aside_as_unstable(tmp_path: Path, home: Path) -> None:
    repo = _project(tmp_path)
    # The flaky test alternates on a counter file kept in the tree it runs in, so the
    # two runs on the fix disagree deterministically.
    flaky = (
        "from pathlib import Path\n\nfrom calc.ops import mean\n\n"
        "COUNTER = Path(__file__).with_name('counter.txt')\n\n\n"
        "def test_mean_empty():\n    assert mean([]) == 0.0\n\n\n"
        "def test_flaky():\n"
        "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
        "    COUNTER.write_text(str(n + 1))\n"
        "    assert n % 2 == 0\n"
    )
    _fix_mean(repo, {"tests/test_mean.py": flaky})
    write_config(repo.root, "calc")
    _run(repo)
    oracle = _oracles(repo)["calc-3"]
    assert oracle["unstable"] == ["tests/test_mean.py::test_flaky"]
    assert oracle["fail_to_pass"] == ["tests/test_mean.py::test_mean_empty"]


def test_a_hanging_test_times_out_and_the_task_says_why(tmp_path: Path, home: Path) -> None:
    repo = _project(tmp_path)
    hang = (
        "import os, signal, subprocess, sys, time\n\nfrom calc.ops import mean\n\n\n"
        "def test_mean_empty():\n"
        "    subprocess.Popen([sys.executable, '-c', "
        f"'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)',"
        f" '{TOKEN}'])\n"
        "    time.sleep(600)\n"
    )
    _fix_mean(repo, {"tests/test_hang.py": hang})
    write_config(repo.root, "calc", test_timeout=3)
    _run(repo)
    oracle = _oracles(repo)["calc-3"]
    assert oracle["scored"] is False
    assert "could not run on the fix" in str(oracle["reason"])
    assert "within 3 seconds" in str(oracle["reason"])
    assert not alive(TOKEN)


def test_a_conftest_needing_a_missing_plugin_is_a_clear_reason(tmp_path: Path, home: Path) -> None:
    repo = _project(tmp_path)
    _fix_mean(
        repo,
        {
            "tests/conftest.py": 'pytest_plugins = ["bugbout_missing_plugin"]\n',
            "tests/test_mean.py": MEAN_TEST,
        },
    )
    write_config(repo.root, "calc")
    _run(repo)
    oracle = _oracles(repo)["calc-3"]
    assert oracle["scored"] is False
    assert "bugbout_missing_plugin" in str(oracle["reason"])


def test_stored_oracles_are_not_run_again(tmp_path: Path, home: Path) -> None:
    repo = _project(tmp_path)
    _fix_mean(repo)
    write_config(repo.root, "calc")
    _run(repo)
    _amend_oracle(repo, "calc-3", reason="kept")
    _run(repo)
    assert _oracles(repo)["calc-3"]["reason"] == "kept"
    events = (repo.root / ".bugbout" / "events.jsonl").read_text()
    assert "test-run-started" not in events


def _events(repo: GitRepo) -> list[dict[str, object]]:
    lines = (repo.root / ".bugbout" / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_package_importing_a_missing_module_is_named_with_its_error_and_the_logs_kept(
    tmp_path: Path, home: Path
) -> None:
    """As old tenacity importing `six`: every test module fails to collect on both sides."""
    repo = _project(tmp_path, package_init="import bugbout_absent_compat\n")
    _fix_mean(repo)
    write_config(repo.root, "calc")
    _run(repo)
    oracle = _oracles(repo)["calc-3"]
    assert oracle["scored"] is False
    assert oracle["reason"] == (
        "the fix's tests cannot be collected: tests/test_mean.py: "
        "ModuleNotFoundError: No module named 'bugbout_absent_compat'"
    )
    logs = repo.root / ".bugbout" / str(oracle["logs"])
    assert sorted(path.name for path in logs.iterdir()) == ["base.log", "fix-1.log", "fix-2.log"]
    assert "No module named 'bugbout_absent_compat'" in (logs / "fix-1.log").read_text()
    finished = [e for e in _events(repo) if e["type"] == "test-run-finished"]
    assert {(e["failed"], e["uncollected"]) for e in finished} == {(0, 1)}


def test_a_ground_truth_failed_under_a_pytest_argument_is_made_again_once_it_is_removed(
    tmp_path: Path, home: Path
) -> None:
    repo = _project(tmp_path)
    _fix_mean(repo)
    config = write_config(repo.root, "calc")
    plugin = 'pytest-args = ["-p", "no_such_plugin"]\n'
    config.write_text(config.read_text().replace("[run]", plugin + "\n[run]"))
    _run(repo)
    first = _oracles(repo)["calc-3"]
    assert first["scored"] is False
    assert str(first["reason"]).startswith("the tests could not run on the fix: ")
    assert "No module named 'no_such_plugin'" in str(first["reason"])
    config.write_text(config.read_text().replace(plugin, ""))
    _run(repo)
    again = _oracles(repo)["calc-3"]
    assert again["scored"] is True
    assert again["fail_to_pass"] == ["tests/test_mean.py::test_mean_empty"]


def test_a_run_killed_by_a_signal_is_no_answer_and_runs_again(tmp_path: Path, home: Path) -> None:
    """As the kernel's out-of-memory killer would: the first run of the fix's tests dies."""
    repo = _project(tmp_path)
    marker = tmp_path / "killed-once"
    _fix_mean(
        repo,
        {
            "tests/test_mean.py": "import os, signal\nfrom pathlib import Path\n\n"
            "from calc.ops import mean\n\n\ndef test_mean_empty():\n"
            f"    marker = Path({str(marker)!r})\n"
            "    if not marker.exists():\n"
            "        marker.write_text('')\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "    assert mean([]) == 0.0\n",
        },
    )
    config = write_config(repo.root, "calc")
    config.write_text(config.read_text().replace("[run]", '[run]\nsandbox = "none"'))
    _run(repo)
    first = _oracles(repo)["calc-3"]
    assert first["scored"] is False and "SIGKILL" in str(first["may_pass"])
    # The base and the fix run side by side: whichever starts first is killed.
    assert str(first["reason"]).startswith("not answered yet: a run on the ")
    assert str(first["reason"]).endswith("; this may pass, and the next run tries again")
    assert (repo.root / ".bugbout" / str(first["logs"]) / "base.log").exists()
    errors = [str(e["message"]) for e in _events(repo) if e["type"] == "error"]
    assert any("SIGKILL" in m and "next run tries again" in m for m in errors), errors
    _run(repo)
    assert _oracles(repo)["calc-3"]["scored"] is True
    assert _oracles(repo)["calc-3"]["may_pass"] is None


def test_a_run_killed_the_same_way_twice_in_a_row_is_kept_as_the_answer(
    tmp_path: Path, home: Path
) -> None:
    """A failure that repeats itself exactly is the code's, not the machine's: it is not
    run again and again, each run saying it may pass; `--retry-failed` runs it again."""
    repo = _project(tmp_path)
    count = tmp_path / "starts"
    _fix_mean(
        repo,
        {
            "tests/test_mean.py": "import os, signal\nfrom pathlib import Path\n\n"
            "from calc.ops import mean\n\n\ndef test_mean_empty():\n"
            f"    with Path({str(count)!r}).open('a') as log:\n"
            "        log.write('start\\n')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n",
        },
    )
    config = write_config(repo.root, "calc")
    config.write_text(config.read_text().replace("[run]", '[run]\nsandbox = "none"'))
    _run(repo)
    assert _oracles(repo)["calc-3"]["may_pass"] is not None
    _run(repo)
    answer = _oracles(repo)["calc-3"]
    assert (answer["scored"], answer["may_pass"]) == (False, None)
    assert "SIGKILL" in str(answer["reason"]) and "in two runs in a row" in str(answer["reason"])
    runs = len(count.read_text().splitlines())
    _run(repo)
    assert len(count.read_text().splitlines()) == runs  # the answer stands: nothing ran
    Bout(Project.load(repo.root), retry_failed=True).run(until="ground-truth")
    assert len(count.read_text().splitlines()) > runs


def test_retry_failed_makes_an_unscored_ground_truth_again(tmp_path: Path, home: Path) -> None:
    """Under the same settings (a module installed into the configured interpreter, say)."""
    repo = _project(tmp_path)
    _fix_mean(repo)
    write_config(repo.root, "calc")
    _run(repo)
    _amend_oracle(repo, "calc-3", scored=False, reason="failed")
    _run(repo)
    assert _oracles(repo)["calc-3"]["reason"] == "failed"
    Bout(Project.load(repo.root), retry_failed=True).run(until="ground-truth")
    assert _oracles(repo)["calc-3"]["scored"] is True


def test_records_from_before_conditions_were_kept(tmp_path: Path, home: Path) -> None:
    """A scored one is trusted and adopts the current conditions; an unscored one runs
    again once."""
    repo = _project(tmp_path)
    _fix_mean(repo)
    repo.commit(
        "Fix: div by zero raises a clear error (#4)",
        files={
            "src/calc/ops.py": OPS_FIXED.replace(
                "    return a / b",
                "    if b == 0:\n        raise ValueError('b')\n    return a / b",
            ),
            "tests/test_div.py": "import pytest\n\nfrom calc.ops import div\n\n\n"
            "def test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n",
        },
    )
    write_issues(repo.root, {3: ("mean crashes", "ZeroDivisionError"), 4: ("div", "unclear")})
    write_config(repo.root, "calc")
    _run(repo)
    path = repo.root / ".bugbout" / "oracles.json"
    data = json.loads(path.read_text())
    for task in ("calc-3", "calc-4"):
        del data[task]["conditions"]
    data["calc-3"]["reason"] = "kept"
    data["calc-4"].update(scored=False, reason="an old failure")
    path.write_text(json.dumps(data))
    _run(repo)
    oracles = _oracles(repo)
    assert oracles["calc-3"]["reason"] == "kept"
    assert oracles["calc-3"]["conditions"] is not None
    assert oracles["calc-4"]["scored"] is True
    started = {e["task"] for e in _events(repo) if e["type"] == "test-run-started"}
    assert started == {"calc-4"}


def _failed(code: int | None, error: str, *, timed_out: bool = False, tests: int = 0) -> TestRun:
    outcomes = {f"tests/test_x.py::test_{n}": TestResult(outcome="failed") for n in range(tests)}
    return TestRun(
        outcomes=outcomes,
        collected=tests,
        exit_code=code,
        duration=1.0,
        error=error,
        timed_out=timed_out,
    )


@pytest.mark.parametrize(
    ("run", "passing"),
    [
        (_failed(None, "pytest did not finish within 3 seconds", timed_out=True), False),
        (_failed(4, "pytest rejected its command line (exit status 4)"), False),
        (
            _failed(3, "pytest hit an internal error (exit status 3)\nINTERNALERROR> KeyError"),
            False,
        ),
        (
            _failed(
                1,
                "pytest exited with status 1 without writing a JUnit report.\n"
                "ImportError: Error importing plugin \"x\": No module named 'x'",
            ),
            False,
        ),
        (_failed(0, "pytest exited with status 0, but its report has 1 failed", tests=1), False),
        (_failed(-9, "pytest was killed by SIGKILL without writing a JUnit report."), True),
        (_failed(137, "pytest exited with status 137 (killed by SIGKILL)"), True),
        (
            _failed(
                1,
                "pytest exited with status 1 without writing a JUnit report.\n"
                "bwrap: Creating new namespace failed: Resource busy",
            ),
            True,
        ),
        (
            _failed(
                3,
                "pytest hit an internal error (exit status 3)\n"
                "INTERNALERROR> OSError: [Errno 28] No space left on device",
            ),
            True,
        ),
    ],
)
def test_which_failures_may_pass(run: TestRun, passing: bool) -> None:
    assert transient_failure(run) is passing


def test_the_first_error_names_the_exception_with_the_tree_made_relative() -> None:
    tree = Path("/scratch/calc-3/fix")
    text = (
        "pytest rejected its command line (exit status 4)\nOutput tail:\n"
        f"ImportError while loading conftest '{tree}/tests/conftest.py'.\n"
        "E   ModuleNotFoundError: No module named 'pytest_asyncio'\n"
    )
    assert first_error(text, tree=tree) == (
        "pytest rejected its command line (exit status 4) "
        "ModuleNotFoundError: No module named 'pytest_asyncio'"
    )
