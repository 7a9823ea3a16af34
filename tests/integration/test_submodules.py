"""Submodules in bugbout's trees, for real: repositories built with git, submodules
fetched by git from other local repositories, ground truth through the pipeline."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues

from bugbout_tui.engine.bout import Bout
from bugbout_tui.infra import submodules
from bugbout_tui.infra.trees import missing_submodules, pristine_tree
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
CONFTEST = (
    "from pathlib import Path\n\n"
    "CASES = [line.split(' ') for line in "
    "(Path(__file__).parent / 'cases' / 'mean.txt').read_text().splitlines()]\n"
)
MEAN_TEST = (
    "import json\n\nimport pytest\n\nfrom calc.ops import mean\n\nfrom conftest import CASES\n\n\n"
    "@pytest.mark.parametrize('given, expected', CASES)\n"
    "def test_mean(given, expected):\n    assert mean(json.loads(given)) == float(expected)\n"
)
"""The fix's test: its cases live in the submodule, and the conftest reads them when
pytest collects, as tomlkit's tests read `tests/toml-test/`."""


def _cases(root: Path) -> GitRepo:
    """The repository the submodule comes from, one commit."""
    cases = GitRepo(root)
    cases.commit("Cases", files={"mean.txt": "[1,2] 1.5\n[] 0.0\n"})
    return cases


def _link(repo: GitRepo, path: str, source: GitRepo, commit: str, url: str) -> None:
    """Check `source` out at `commit` in `repo`'s `path` and declare it a submodule with
    `url`: the next commit records the gitlink, as `git submodule add` would."""
    target = repo.root / path
    if not target.exists():
        repo.git("clone", "--quiet", "--no-checkout", str(source.root), str(target))
    nested = GitRepo(target, init=False)
    nested.git("fetch", "--quiet", "origin")
    nested.git("checkout", "--quiet", "--detach", commit)
    repo.write(".gitmodules", f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url}\n')


def _project(tmp_path: Path, url: str, cases: GitRepo) -> GitRepo:
    """A project whose conftest reads `tests/cases`, a submodule at `url`, and a fix of
    issue #3 whose test takes its cases from there."""
    repo = GitRepo(tmp_path / "proj")
    _link(repo, "tests/cases", cases, cases.head(), url)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/conftest.py": CONFTEST,
            "tests/test_ops.py": "from calc.ops import mean\n\n\ndef test_mean():\n"
            "    assert mean([2]) == 2\n",
        },
    )
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={"src/calc/ops.py": OPS_FIXED, "tests/test_mean.py": MEAN_TEST},
    )
    write_issues(repo.root, {3: ("mean() crashes on []", "ZeroDivisionError")})
    write_config(repo.root, "calc")
    return repo


def _oracle(repo: GitRepo, task: str) -> dict[str, object]:
    Bout.load(repo.root).run(until="ground-truth")
    data = json.loads((repo.root / ".bugbout" / "oracles.json").read_text())
    oracle: dict[str, object] = data[task]
    return oracle


@pytest.fixture(autouse=True)
def _fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no fetch remembered."""
    monkeypatch.setattr(submodules, "_MEMORY", submodules._Memory())


def test_tests_that_read_a_submodule_get_their_ground_truth(tmp_path: Path, home: Path) -> None:
    cases = _cases(tmp_path / "cases")
    repo = _project(tmp_path, "../cases", cases)  # relative: to the project's own path
    oracle = _oracle(repo, "calc-3")
    assert oracle["scored"] is True, oracle["reason"]
    assert oracle["fail_to_pass"] == ["tests/test_mean.py::test_mean[[]-0.0]"]
    assert oracle["pass_to_pass"] == ["tests/test_mean.py::test_mean[[1,2]-1.5]"]


def test_an_unreachable_submodule_is_named_in_the_reason(tmp_path: Path, home: Path) -> None:
    cases = _cases(tmp_path / "cases")
    repo = _project(tmp_path, "../gone.git", cases)
    oracle = _oracle(repo, "calc-3")
    assert oracle["scored"] is False
    reason = str(oracle["reason"])
    gone = str(tmp_path / "gone.git")
    assert reason.startswith(f"the submodule tests/cases ({gone}) is missing from the trees: ")
    assert "could not be fetched" in reason
    assert reason.endswith("No such file or directory: 'tests/cases/mean.txt'")


def test_a_submodule_is_fetched_through_the_users_insteadof(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = _cases(tmp_path / "mirror" / "cases")
    url = "https://git.example.invalid/team/cases.git"
    repo = _project(tmp_path, url, cases)
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{cases.root}"]\n\tinsteadOf = {url}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    tree = pristine_tree(repo.root, repo.head())
    assert missing_submodules(tree) == []
    assert (tree / "tests" / "cases" / "mean.txt").read_text() == "[1,2] 1.5\n[] 0.0\n"
    assert _oracle(repo, "calc-3")["scored"] is True


def test_a_local_path_the_repository_names_is_not_read(tmp_path: Path, home: Path) -> None:
    cases = _cases(tmp_path / "elsewhere" / "cases")
    repo = _project(tmp_path, str(cases.root), cases)
    tree = pristine_tree(repo.root, repo.head())
    [gap] = missing_submodules(tree)
    assert (gap.path, gap.url, gap.retry) == ("tests/cases", str(cases.root), False)
    assert "path on this machine" in gap.problem
    assert not (tree / "tests" / "cases" / "mean.txt").exists()
    assert not (home / "submodules").exists()


def test_a_refused_path_is_fetched_once_the_user_rewrites_it(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `bugbout doctor` advises for a refused URL takes effect on the next use: the
    tree kept without the submodule is made again, whole."""
    cases = _cases(tmp_path / "elsewhere" / "cases")
    repo = _project(tmp_path, str(cases.root), cases)
    [gap] = missing_submodules(pristine_tree(repo.root, repo.head()))
    assert not gap.retry
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "file://{cases.root}"]\n\tinsteadOf = {cases.root}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    tree = pristine_tree(repo.root, repo.head())
    assert missing_submodules(tree) == []
    assert (tree / "tests" / "cases" / "mean.txt").read_text() == "[1,2] 1.5\n[] 0.0\n"


def _counting_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `git` first on PATH that logs each command line, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _fetches(log: Path) -> int:
    """The fetches into bugbout's cache (the test's own git calls fetch too)."""
    calls = log.read_text().splitlines() if log.exists() else []
    return sum(" fetch " in line and "protocol.allow=never" in line for line in calls)


def test_the_cache_fetches_a_repository_once_for_two_commits(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = _cases(tmp_path / "cases")
    first = cases.head()
    second = cases.commit("More cases", files={"more.txt": "[3] 3.0\n"})
    repo = GitRepo(tmp_path / "proj")
    _link(repo, "tests/cases", cases, first, "../cases")
    old = repo.commit("Cases at first", files={"README.md": "calc\n"})
    _link(repo, "tests/cases", cases, second, "../cases")
    new = repo.commit("Cases moved on")
    log = _counting_git(tmp_path, monkeypatch)

    old_tree = pristine_tree(repo.root, old)
    assert _fetches(log) == 1
    monkeypatch.setattr(submodules, "_MEMORY", submodules._Memory())  # as a new process
    new_tree = pristine_tree(repo.root, new)
    assert _fetches(log) == 1
    assert not (old_tree / "tests" / "cases" / "more.txt").exists()
    assert (new_tree / "tests" / "cases" / "more.txt").read_text() == "[3] 3.0\n"

    third = cases.commit("Even more cases", files={"most.txt": "[4] 4.0\n"})
    _link(repo, "tests/cases", cases, third, "../cases")
    newest = repo.commit("Cases moved on again")
    assert (pristine_tree(repo.root, newest) / "tests" / "cases" / "most.txt").is_file()
    assert _fetches(log) == 2  # only what was missing


def test_an_agents_checkout_holds_the_submodules_files_and_no_history(
    tmp_path: Path, home: Path
) -> None:
    cases = _cases(tmp_path / "cases")
    repo = _project(tmp_path, "../cases", cases)
    later = cases.commit("Cases for the fix", files={"later.txt": "from the future\n"})
    _link(repo, "tests/cases", cases, later, "../cases")
    repo.commit("Move the cases on")
    base = repo.head("HEAD~2")  # the fix's base: the submodule at its first commit
    copy = prepare_working_copy(
        repo.root, base, tmp_path / "work" / "attempt", hidden=["tests/test_mean.py"], home=home
    )
    cases_dir = copy.path / "tests" / "cases"
    assert (cases_dir / "mean.txt").read_text() == "[1,2] 1.5\n[] 0.0\n"
    assert not (cases_dir / "later.txt").exists()
    assert not [p for p in copy.path.rglob(".git*") if p.name != ".gitmodules"]
    assert harvest(copy, source_dir="src/calc").is_empty  # handed over, so no change

    (cases_dir / "mean.txt").write_text("[] 1.0\n")
    patch = harvest(copy, source_dir="src/calc")
    assert [change.path for change in patch.files] == ["tests/cases/mean.txt"]


def test_a_fix_that_moves_its_submodule_gets_the_fixs_cases(tmp_path: Path, home: Path) -> None:
    cases = _cases(tmp_path / "cases")
    repo = GitRepo(tmp_path / "proj")
    _link(repo, "tests/cases", cases, cases.head(), "../cases")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/conftest.py": CONFTEST,
            "tests/test_mean.py": MEAN_TEST,
        },
    )
    cases.commit("A case for single items", files={"mean.txt": "[1,2] 1.5\n[] 0.0\n[5] 5.0\n"})
    _link(repo, "tests/cases", cases, cases.head(), "../cases")
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={
            "src/calc/ops.py": OPS_FIXED,
            "tests/test_mean.py": MEAN_TEST + "\n\ndef test_single():\n    assert mean([5]) == 5\n",
        },
    )
    write_issues(repo.root, {3: ("mean() crashes on []", "ZeroDivisionError")})
    write_config(repo.root, "calc")
    oracle = _oracle(repo, "calc-3")
    assert oracle["scored"] is True, oracle["reason"]
    assert oracle["fail_to_pass"] == ["tests/test_mean.py::test_mean[[]-0.0]"]
    passing = oracle["pass_to_pass"]
    assert isinstance(passing, list)
    assert "tests/test_mean.py::test_mean[[5]-5.0]" in passing  # the fix's case, on the base
