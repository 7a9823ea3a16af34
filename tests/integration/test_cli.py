"""The `bugbout` command as a user meets it: real processes, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from terminals import bugbout

from bugbout_tui.tui.watch import JournalReader

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"


MEAN_ISSUE = {3: ("mean() crashes on []", "It raises ZeroDivisionError.")}


def configure(repo: GitRepo) -> None:
    """The project's bugbout.toml, and the text of the issue its fix closes."""
    write_config(repo.root, "calc")
    write_issues(repo.root, MEAN_ISSUE)


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": "def test_nothing():\n    pass\n",
        },
    )
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={
            "src/calc/ops.py": OPS_FIXED,
            "tests/test_mean.py": "from calc.ops import mean\n\n\ndef test_empty():\n"
            "    assert mean([]) == 0.0\n",
        },
    )
    repo.commit("Add docs", files={"README.md": "calc\n"})
    return repo


def test_init_writes_a_config_that_the_other_commands_accept(
    project: GitRepo, tmp_path: Path
) -> None:
    result = bugbout("init", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert 'source = "src/calc"' in (project.root / "bugbout.toml").read_text()
    listed = bugbout("tasks", "--json", cwd=project.root, home=tmp_path / "home")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert [task["id"] for task in data["tasks"]] == ["calc-3"]
    # no GitHub remote and no issues file: the statement is missing, and says why
    assert data["tasks"][0]["statement"] is None


def test_init_never_overwrites_without_force(project: GitRepo, tmp_path: Path) -> None:
    (project.root / "bugbout.toml").write_text("# mine\n")
    result = bugbout("init", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 2
    assert "--force" in result.stderr
    assert "Traceback" not in result.stderr
    assert (project.root / "bugbout.toml").read_text() == "# mine\n"
    forced = bugbout("init", "--force", cwd=project.root, home=tmp_path / "home")
    assert forced.returncode == 0


def test_tasks_json_is_exactly_the_documented_object(project: GitRepo, tmp_path: Path) -> None:
    configure(project)
    result = bugbout("tasks", "--json", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"examined", "tasks", "excluded"}
    assert data["examined"] == 3
    (task,) = data["tasks"]
    assert set(task) == {
        "id", "kind", "issue", "title", "fix_commit", "base_commit", "date",
        "source_files", "test_files", "added_tests", "statement",
        "statement_source", "statement_note", "statement_missing",
    }  # fmt: skip
    assert task["statement_source"] == {"kind": "issue", "number": 3, "repo": None, "cut": []}
    assert (task["kind"], task["issue"]) == ("bug", 3)
    assert task["added_tests"] == ["test_empty"]
    assert task["base_commit"] == project.head("HEAD~2")
    assert task["statement"].startswith("# mean() crashes on []")
    assert [item["reason"] for item in data["excluded"]] == ["not-a-fix", "not-a-fix"]
    assert set(data["excluded"][0]) == {"commit", "title", "reason", "detail"}


def test_tasks_shows_the_table_the_funnel_and_one_task(project: GitRepo, tmp_path: Path) -> None:
    configure(project)
    table = bugbout("tasks", cwd=project.root, home=tmp_path / "home")
    assert table.returncode == 0, table.stderr
    assert "calc-3" in table.stdout and "not-a-fix" in table.stdout
    one = bugbout("tasks", "calc-3", cwd=project.root, home=tmp_path / "home")
    assert "It raises ZeroDivisionError." in one.stdout
    unknown = bugbout("tasks", "calc-99", cwd=project.root, home=tmp_path / "home")
    assert unknown.returncode == 2
    assert "no task 'calc-99'" in unknown.stderr


def test_a_broken_config_names_file_line_and_key_with_exit_2(
    project: GitRepo, tmp_path: Path
) -> None:
    write_config(project.root, "calc", extra='\n[judge]\npolcy = "strict"\n')
    result = bugbout("tasks", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 2
    assert "unknown key 'polcy' in [judge] at bugbout.toml:" in result.stderr
    assert "did you mean 'policy'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_config_says_to_run_init(tmp_path: Path) -> None:
    result = bugbout("tasks", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 2
    assert "bugbout init" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_stage_is_a_usage_error(project: GitRepo, tmp_path: Path) -> None:
    write_config(project.root, "calc")
    result = bugbout("run", "--until", "lunch", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_a_corrupt_store_file_is_named_and_kept(project: GitRepo, tmp_path: Path) -> None:
    write_config(project.root, "calc")
    write_issues(project.root, {})
    store = project.root / ".bugbout"
    store.mkdir()
    (store / "tasks.json").write_text("{ torn")
    result = bugbout("tasks", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 1
    assert "tasks.json is not valid JSON" in result.stderr
    assert (store / "tasks.json").read_text() == "{ torn"


def test_run_until_ground_truth_prints_progress_and_stores_oracles(
    project: GitRepo, tmp_path: Path
) -> None:
    configure(project)
    result = bugbout("run", "--until", "ground-truth", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert "[ground-truth] 1 of 1 tasks scored" in result.stderr
    oracles = json.loads((project.root / ".bugbout" / "oracles.json").read_text())
    assert oracles["calc-3"]["fail_to_pass"] == ["tests/test_mean.py::test_empty"]


def test_tasks_shows_ground_truth_and_the_prompt_once_run(project: GitRepo, tmp_path: Path) -> None:
    write_config(project.root, "calc", extra='[project.env]\nCALC_MODE = "strict"\n')
    write_issues(project.root, MEAN_ISSUE)
    home = tmp_path / "home"
    before = bugbout("tasks", "--json", cwd=project.root, home=home)
    assert "oracle" not in json.loads(before.stdout)["tasks"][0]
    assert bugbout("run", "--until", "ground-truth", cwd=project.root, home=home).returncode == 0
    after = json.loads(bugbout("tasks", "--json", cwd=project.root, home=home).stdout)
    assert after["tasks"][0]["oracle"]["fail_to_pass"] == ["tests/test_mean.py::test_empty"]
    shown = bugbout("tasks", "calc-3", cwd=project.root, home=home)
    assert "1 fail→pass" in shown.stdout
    prompt = bugbout("tasks", "calc-3", "--show-prompt", cwd=project.root, home=home)
    assert prompt.returncode == 0, prompt.stderr
    assert "It raises ZeroDivisionError." in prompt.stdout
    assert "CALC_MODE=strict PYTHONPATH=src:. " in prompt.stdout
    examiner = bugbout(
        "tasks", "calc-3", "--show-prompt", "--role", "specify", cwd=project.root, home=home
    )
    assert "Do NOT fix it" in examiner.stdout


def test_a_bout_with_no_contestant_stops_before_mining_with_exit_2(
    project: GitRepo, tmp_path: Path
) -> None:
    configure(project)
    result = bugbout("run", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 2, result.stderr
    assert "no contestant is configured" in result.stderr
    assert "[[contestants]]" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project.root / ".bugbout" / "tasks.json").exists()


def test_a_tests_directory_missing_at_the_tip_is_named_with_its_line(
    project: GitRepo, tmp_path: Path
) -> None:
    config = write_config(project.root, "calc")
    config.write_text(config.read_text().replace('tests = "tests"', 'tests = "nope"'))
    write_issues(project.root, {})
    result = bugbout("tasks", cwd=project.root, home=tmp_path / "home")
    assert result.returncode == 2
    assert "invalid value for 'tests' in [project] at bugbout.toml:3: " in result.stderr
    assert f"no directory 'nope' at the tip of main ({project.head()[:12]})" in result.stderr
    assert "Traceback" not in result.stderr


def test_tasks_says_why_a_ground_truth_failed_and_where_its_logs_are(
    project: GitRepo, tmp_path: Path
) -> None:
    """The package imports a module the test environment lacks, as old tenacity did six."""
    project.commit("Use the compat layer", files={"src/calc/__init__.py": "import calc_compat\n"})
    project.commit(
        "Fix crash in mean on a list of one None (#4)",
        files={
            "src/calc/ops.py": OPS_FIXED.replace("if not xs:", "if not xs or xs == [None]:"),
            "tests/test_none.py": "from calc.ops import mean\n\n\ndef test_none():\n"
            "    assert mean([None]) == 0.0\n",
        },
    )
    write_config(project.root, "calc")
    write_issues(project.root, {3: ("mean() crashes", "[]"), 4: ("mean([None])", "TypeError")})
    home = tmp_path / "home"
    assert bugbout("run", "--until", "ground-truth", cwd=project.root, home=home).returncode == 0
    why = (
        "the fix's tests cannot be collected: tests/test_none.py: "
        "ModuleNotFoundError: No module named 'calc_compat'"
    )
    shown = bugbout("tasks", "calc-4", cwd=project.root, home=home, COLUMNS="400")
    flat = " ".join(shown.stdout.split())
    assert f"not scored: {why}" in flat
    logs = project.root / ".bugbout" / "logs" / "ground-truth" / "calc-4"
    assert f"test logs {logs}/ (base.log, fix-1.log, fix-2.log)" in flat
    data = json.loads(bugbout("tasks", "calc-4", "--json", cwd=project.root, home=home).stdout)
    assert data["oracle"]["reason"] == why
    assert data["oracle"]["logs"] == str(logs)
    assert "No module named 'calc_compat'" in (logs / "fix-1.log").read_text()


def test_a_bare_repository_is_read_for_its_history_and_trees(
    project: GitRepo, tmp_path: Path
) -> None:
    bare = tmp_path / "calc.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(project.root), str(bare)], check=True)
    runner = tmp_path / "runner"
    runner.mkdir()
    config = write_config(runner, "calc")
    config.write_text(config.read_text().replace("[project]", f'[project]\nrepository = "{bare}"'))
    write_issues(runner, {3: ("mean() crashes on []", "It raises ZeroDivisionError.")})
    home = tmp_path / "home"
    result = bugbout("run", "--until", "ground-truth", cwd=runner, home=home)
    assert result.returncode == 0, result.stderr
    assert "[ground-truth] 1 of 1 tasks scored" in result.stderr


def test_each_runs_journal_is_kept_and_a_follower_sees_the_new_one(
    project: GitRepo, tmp_path: Path
) -> None:
    configure(project)
    home = tmp_path / "home"
    store = project.root / ".bugbout"
    assert bugbout("run", "--until", "ground-truth", cwd=project.root, home=home).returncode == 0
    real = (store / "events.jsonl").read_text()
    assert "test-run-finished" in real
    follower = JournalReader(store / "events.jsonl")
    assert not follower.read().restarted

    # Nothing left to do: this run's journal is short, and the real one is kept.
    assert bugbout("run", "--until", "ground-truth", cwd=project.root, home=home).returncode == 0
    (kept,) = store.glob("events-*.jsonl")
    assert kept.read_text() == real
    first = json.loads(real.splitlines()[0])
    assert kept.name.startswith("events-" + first["at"][:10].replace("-", ""))
    assert "test-run-finished" not in (store / "events.jsonl").read_text()
    again = follower.read()
    assert again.restarted
    assert [e.type for e in again.events][:1] == ["bout-started"]
