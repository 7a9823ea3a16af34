"""Several pytest runs on one tree, each unable to change another's outcome: real pytest
in the real sandbox, with runs written to do harm."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

import bugbout_tui.infra.pytest_each as pytest_each
from bugbout_tui.infra.proc import ProcessResult, run_process
from bugbout_tui.infra.pytest_each import SeparateRun, run_each
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun, run_pytest
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox

OPS = "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n"
SUITE = "from calc.ops import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n"


def _tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {
        "src/calc/__init__.py": "",
        "src/calc/ops.py": OPS,
        "tests/test_suite.py": SUITE,
        **(extra or {}),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    return root


def _author(root: Path, name: str, module: str) -> SeparateRun:
    """An author's tests as the cross-examination installs them: a package of its own."""
    overlay = root / "overlays" / name
    (overlay / "tests").mkdir(parents=True)
    (overlay / "__init__.py").write_text("")
    (overlay / "tests" / "__init__.py").write_text("")
    (overlay / "tests" / "test_it.py").write_text(textwrap.dedent(module))
    at = f".bugbout_authors/{name}"
    return SeparateRun(name, (f"{at}/tests/test_it.py",), overlay=overlay, overlay_at=at)


def _command(tree: Path, timeout: float = 60) -> PytestCommand:
    return PytestCommand(
        python=Path(sys.executable),
        tree=tree,
        paths=(),
        pythonpath=[tree / "src", tree],
        timeout=timeout,
    )


class Counting:
    """Counts the sandboxes started, to tell one shared sandbox from one per run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sandboxes = 0

        async def counted(argv: list[str], **kwargs: object) -> ProcessResult:
            self.sandboxes += 1
            return await run_process(argv, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(pytest_each, "run_process", counted)


@pytest.fixture
def bwrap() -> Sandbox:
    return select_sandbox("bubblewrap")


def _outcomes(run: TestRun) -> dict[str, str]:
    return {test: result.outcome for test, result in run.outcomes.items()}


def test_runs_share_one_sandbox_and_match_separate_processes(
    tmp_path: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "tree")
    runs = [
        SeparateRun("suite", ("tests",)),
        _author(tmp_path, "a", "from calc.ops import mean\n\ndef test_empty():\n"
                "    assert mean([]) == 0.0\n\ndef test_wrong():\n    assert mean([2]) == 3\n"),
        _author(tmp_path, "b", "import pytest\n\n@pytest.mark.skip('later')\n"
                "def test_later():\n    pass\n"),
    ]  # fmt: skip
    counting = Counting(monkeypatch)
    found = asyncio.run(run_each(_command(tree), runs, bwrap, workdir=tmp_path / "work"))
    assert counting.sandboxes == 1
    assert _outcomes(found["suite"]) == {"tests/test_suite.py::test_mean": "passed"}
    assert _outcomes(found["a"]) == {
        ".bugbout_authors/a/tests/test_it.py::test_empty": "passed",
        ".bugbout_authors/a/tests/test_it.py::test_wrong": "failed",
    }
    assert _outcomes(found["b"]) == {".bugbout_authors/b/tests/test_it.py::test_later": "skipped"}
    assert all(run.error is None for run in found.values())
    # The same as each run in a process of its own; the tree itself was never written.
    alone = asyncio.run(
        run_pytest(replace(_command(tree), paths=["tests"]), bwrap, workdir=tmp_path / "alone")
    )
    assert alone.outcomes == found["suite"].outcomes
    assert not (tree / ".bugbout_authors").exists()


MESS = """
import os
import pathlib
import subprocess
import sys

import calc.ops

TREE = pathlib.Path(calc.ops.__file__).parents[2]
KEEP_WRITING = (
    "import pathlib, sys, time\\n"
    "while True:\\n"
    "    pathlib.Path(sys.argv[1]).write_text('def mean(xs):\\\\n    return 42\\\\n')\\n"
    "    time.sleep(0.01)\\n"
)


def test_mess():
    (TREE / "src/calc/ops.py").write_text("def mean(xs):\\n    return -1\\n")
    (TREE / "conftest.py").write_text("raise SystemExit('planted')\\n")
    (TREE / "src/calc/extra.py").write_text("PLANTED = True\\n")
    os.mkfifo(TREE / "tests" / "pipe")
    os.chmod(TREE / "src" / "calc", 0o500)
    pathlib.Path("/tmp/planted").write_text("x")
    pathlib.Path(os.environ["HOME"], "planted").write_text("x")
    pathlib.Path(os.environ["TMPDIR"], "planted").write_text("x")
    subprocess.Popen(
        [sys.executable, "-c", KEEP_WRITING, str(TREE / "src/calc/ops.py")],
        start_new_session=True,
    )
"""
CHECK = """
import os
import pathlib

import calc.ops

TREE = pathlib.Path(calc.ops.__file__).parents[2]


def test_the_tree_is_as_handed_over():
    assert calc.ops.mean([1, 3]) == 2
    assert not (TREE / "conftest.py").exists()
    assert not (TREE / "src/calc/extra.py").exists()
    assert not (TREE / "tests/pipe").exists()
    assert os.stat(TREE / "src/calc").st_mode & 0o777 != 0o500
    assert sorted(p.name for p in (TREE / ".bugbout_authors").iterdir()) == ["check"]


def test_nothing_is_left_in_temporary_places():
    assert not pathlib.Path("/tmp/planted").exists()
    assert not pathlib.Path(os.environ["HOME"], "planted").exists()
    assert not pathlib.Path(os.environ["TMPDIR"], "planted").exists()


def test_no_process_of_an_earlier_run_is_alive():
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
    assert len(others) == 1  # the runner that forked this run
"""


def test_nothing_a_run_leaves_reaches_the_next(
    tmp_path: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "tree")
    runs = [
        _author(tmp_path, "mess", MESS),
        _author(tmp_path, "check", CHECK),
        SeparateRun("suite", ("tests",)),
    ]
    counting = Counting(monkeypatch)
    found = asyncio.run(run_each(_command(tree), runs, bwrap, workdir=tmp_path / "work"))
    assert counting.sandboxes == 1
    assert set(_outcomes(found["mess"]).values()) == {"passed"}
    check = _outcomes(found["check"])
    assert set(check.values()) == {"passed"}, found["check"].outcomes
    assert len(check) == 3
    assert _outcomes(found["suite"]) == {"tests/test_suite.py::test_mean": "passed"}
    assert (tree / "src/calc/ops.py").read_text() == OPS


def test_a_run_that_kills_the_runner_costs_only_time(
    tmp_path: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "tree")
    killer = (
        "import os, signal\n\n"
        "def test_kill():\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
        "    os.kill(1, signal.SIGKILL)\n"
    )
    runs = [_author(tmp_path, "killer", killer), SeparateRun("suite", ("tests",))]
    counting = Counting(monkeypatch)
    found = asyncio.run(run_each(_command(tree), runs, bwrap, workdir=tmp_path / "work"))
    # The shared sandbox failed as a whole; every run was then made in a sandbox of its own.
    assert counting.sandboxes == 1
    assert _outcomes(found["suite"]) == {"tests/test_suite.py::test_mean": "passed"}
    assert found["killer"].error is None or "killed" in found["killer"].error


def test_a_run_that_hangs_times_out_alone(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = _tree(tmp_path / "tree")
    hang = "import time\n\ndef test_hang():\n    time.sleep(600)\n"
    runs = [_author(tmp_path, "hang", hang), SeparateRun("suite", ("tests",))]
    found = asyncio.run(run_each(_command(tree, timeout=5), runs, bwrap, workdir=tmp_path / "work"))
    assert found["hang"].timed_out
    assert "did not finish within 5 seconds" in (found["hang"].error or "")
    assert _outcomes(found["suite"]) == {"tests/test_suite.py::test_mean": "passed"}


def test_a_broken_root_conftest_fails_every_run_on_its_own(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = _tree(tmp_path / "tree", {"conftest.py": "import calc.missing\n"})
    runs = [_author(tmp_path, "a", "def test_a():\n    pass\n"), SeparateRun("suite", ("tests",))]
    found = asyncio.run(run_each(_command(tree), runs, bwrap, workdir=tmp_path / "work"))
    for run in found.values():
        assert run.error is not None
        assert "calc.missing" in run.error


def test_without_a_pid_namespace_each_run_has_a_sandbox_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "tree")
    tree_mess = MESS.split('    pathlib.Path("/tmp/planted")')[0]
    runs = [_author(tmp_path, "mess", tree_mess), _author(tmp_path, "check", CHECK)]
    found = asyncio.run(
        run_each(_command(tree), runs, select_sandbox("none"), workdir=tmp_path / "work")
    )
    assert set(_outcomes(found["mess"]).values()) == {"passed"}
    check = _outcomes(found["check"])
    # Unconfined, the tree and the scratch are still each run's own.
    tree_test = ".bugbout_authors/check/tests/test_it.py::test_the_tree_is_as_handed_over"
    assert check[tree_test] == "passed", found["check"].outcomes
