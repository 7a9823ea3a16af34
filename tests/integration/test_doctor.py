"""`bugbout doctor` for real: real git, real pytest in the real sandbox, fake agent programs
on a controlled PATH, and the loopback GitHub fake."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from gitrepo import GitRepo

from bugbout_tui.cli import main
from bugbout_tui.engine.doctor import diagnose
from bugbout_tui.engine.project import Project

if TYPE_CHECKING:
    from github_server import FakeGitHub, GitHubEnv

pytest_plugins = ["github_server"]

OPS = "def div(a, b):\n    return a / b\n"
TESTS = (
    "from calc.ops import div\n\n\n"
    "def test_div():\n    assert div(4, 2) == 2\n\n\n"
    "def test_div_float():\n    assert div(1, 2) == 0.5\n"
)
ISSUES = [
    {"number": 1, "title": "div by zero crashes", "body": "div(1, 0) raises"},
    {"number": 2, "title": "floats", "body": "..."},
]


@dataclass(frozen=True)
class Tools:
    """A PATH holding only git, bwrap and the fake programs a test writes."""

    bin_dir: Path
    system_dir: Path

    def program(self, name: str, output: str) -> Path:
        """A program that prints `output` whatever it is asked, like a `--version`."""
        script = self.bin_dir / name
        script.write_text(f"#!/bin/sh\necho '{output}'\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return script


pytestmark = pytest.mark.usefixtures("home")


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github_env: GitHubEnv) -> Tools:
    """PATH: the fake programs, the not-logged-in `gh`, and real git and bwrap only.

    No agent installed on the machine running the tests can then change an outcome.
    """
    fakes = tmp_path / "fake-bin"
    system = tmp_path / "system-bin"
    fakes.mkdir()
    system.mkdir()
    for program in ("git", "bwrap"):
        found = shutil.which(program)
        if found is not None:
            (system / program).symlink_to(found)
    monkeypatch.setenv("PATH", os.pathsep.join([str(fakes), str(github_env.bin_dir), str(system)]))
    return Tools(fakes, system)


def project(
    tmp_path: Path,
    *,
    config: str = "",
    files: dict[str, str | None] | None = None,
    interpreter: bool = True,
    issues: str | None = json.dumps(ISSUES),
) -> GitRepo:
    """A small package with tests and a bugbout.toml; issue text from issues.json."""
    repo = GitRepo(tmp_path / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": TESTS,
            **(files or {}),
        },
    )
    text = '[project]\nsource = "src/calc"\n'
    if interpreter:
        text += f'interpreter = "{sys.executable}"\n'
    if issues is not None:
        (repo.root / "issues.json").write_text(issues)
        text += 'issues-file = "issues.json"\n'
    (repo.root / "bugbout.toml").write_text(text + config)
    return repo


def doctor(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """Run `bugbout doctor --json`; the exit code and the checks by name."""
    code = main(["-C", str(repo.root), "doctor", "--json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["ok"] is (code == 0)
    return code, {check["name"]: check for check in report["checks"]}


def statuses(checks: dict[str, Any]) -> dict[str, str]:
    return {name: check["status"] for name, check in checks.items()}


CODEX = '[[contestants]]\nagent = "codex"\n'


def test_all_good(tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]) -> None:
    tools.program("codex", "codex-cli 0.171.0")
    tools.program("my-agent", "my-agent 1.0")
    examiner = '[[examiners]]\nagent = "command"\nname = "mine"\ncommand = ["my-agent", "go"]\n'
    repo = project(tmp_path, config=CODEX + examiner)
    code, checks = doctor(repo, capsys)
    assert code == 0
    assert statuses(checks) == {
        "git": "ok",
        "repository": "ok",
        "uv": "ok",
        "python": "ok",
        "sandbox": "ok",
        "contestant codex": "ok",
        "examiner mine": "ok",
        "issue text": "ok",
        "test environment": "ok",
        "tests collect": "ok",
        "task environments": "ok",
    }
    head = repo.head()
    assert f"main at {head[:12]}" in checks["repository"]["detail"]
    assert checks["uv"]["detail"].startswith("not needed")
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in checks["python"]["detail"]
    assert "bubblewrap" in checks["sandbox"]["detail"]
    assert checks["contestant codex"]["detail"] == f"{tools.bin_dir / 'codex'} 0.171.0"
    assert "2 issues" in checks["issue text"]["detail"]
    assert checks["tests collect"]["detail"] == f"2 tests collected in 'tests' at {head[:12]}"
    assert all(check["fix"] is None for check in checks.values())


def test_table_and_verdict(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    tools.program("codex", "codex-cli 0.171.0")
    repo = project(tmp_path, config=CODEX + '[run]\nsandbox = "none"\n')
    assert main(["-C", str(repo.root), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "✓" in out and "!" in out and "✗" not in out
    assert "tests collect" in out
    assert out.rstrip().splitlines()[-1] == "ready: nothing stops a bout (1 warning above)"


def test_missing_agent_is_a_problem_with_its_install_command(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(
        tmp_path,
        config='[[contestants]]\nagent = "claude-code"\n'
        '[[contestants]]\nagent = "command"\nname = "aider"\ncommand = ["aider", "--yes"]\n',
    )
    code, checks = doctor(repo, capsys)
    assert code == 1
    claude = checks["contestant claude-code"]
    assert claude["status"] == "problem"
    assert "`claude`" in claude["detail"] and "not installed" in claude["detail"]
    assert "npm install -g @anthropic-ai/claude-code" in claude["fix"]
    aider = checks["contestant aider"]
    assert aider["status"] == "problem"
    assert "Install `aider`" in aider["fix"]
    assert "problem" not in {
        status
        for name, status in statuses(checks).items()
        if name not in (claude["name"], "contestant aider")
    }
    assert main(["-C", str(repo.root), "doctor"]) == 1
    assert capsys.readouterr().out.rstrip().endswith("2 problems stop a bout")


def test_adapter_refusing_its_options_is_a_problem(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    tools.program("my-agent", "1.0")
    repo = project(
        tmp_path,
        config='[[contestants]]\nagent = "command"\nname = "mine"\n'
        'command = ["my-agent", "{prompt_fil}"]\n',
    )
    code, checks = doctor(repo, capsys)
    assert code == 1
    mine = checks["contestant mine"]
    assert mine["status"] == "problem"
    assert "{prompt_fil}" in mine["detail"] and "prompt_file" in mine["detail"]
    assert "Install" not in (mine["fix"] or "")


def test_old_agent_version_is_a_warning(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    tools.program("gemini", "0.1.0")
    tools.program("codex", "codex-cli 9.0.0")
    repo = project(tmp_path, config='[[contestants]]\nagent = "gemini-cli"\n' + CODEX)
    code, checks = doctor(repo, capsys)
    assert code == 0
    gemini = checks["contestant gemini-cli"]
    assert gemini["status"] == "warning"
    assert "0.1.0" in gemini["detail"] and "older than 0.61.0" in gemini["detail"]
    assert "npm install -g @google/gemini-cli" in gemini["fix"]
    assert checks["contestant codex"]["status"] == "ok"


def test_no_contestant_is_a_warning(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checks = doctor(project(tmp_path), capsys)
    assert code == 0
    assert checks["contestants"]["status"] == "warning"
    assert "[[contestants]]" in checks["contestants"]["fix"]


def test_sandbox_none_is_a_warning(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, config=CODEX + '[run]\nsandbox = "none"\n')
    tools.program("codex", "0.171.0")
    code, checks = doctor(repo, capsys)
    assert code == 0
    sandbox = checks["sandbox"]
    assert sandbox["status"] == "warning"
    assert "unconfined" in sandbox["detail"]
    assert 'sandbox = "auto"' in sandbox["fix"]
    assert checks["tests collect"]["status"] == "ok"


def test_sandbox_that_cannot_start_is_a_problem_and_skips_collection(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    (tools.system_dir / "bwrap").unlink(missing_ok=True)
    repo = project(tmp_path, config='[run]\nsandbox = "bubblewrap"\n')
    code, checks = doctor(repo, capsys)
    assert code == 1
    assert checks["sandbox"]["status"] == "problem"
    assert "bwrap" in checks["sandbox"]["detail"]
    assert "apt-get install bubblewrap" in checks["sandbox"]["fix"]
    collect = checks["tests collect"]
    assert collect["status"] == "warning"
    assert "sandbox" in collect["detail"]


def test_missing_git_skips_what_needs_the_repository(
    tmp_path: Path,
    tools: Tools,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = project(tmp_path)
    monkeypatch.setenv("PATH", str(tools.bin_dir))
    code, checks = doctor(repo, capsys)
    assert code == 1
    assert checks["git"]["status"] == "problem"
    assert "apt-get install git" in checks["git"]["fix"]
    assert checks["repository"]["status"] == "warning"
    assert "the git check did not pass" in checks["repository"]["detail"]
    assert checks["tests collect"]["status"] == "warning"
    assert checks["issue text"]["status"] == "ok"  # the issues file needs no git


def test_shallow_clone_is_a_problem(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = project(tmp_path)
    origin.commit("Second", files={"src/calc/ops.py": OPS + "# more\n"})
    clone = origin.clone_to(tmp_path / "shallow", "--depth", "1")
    shutil.copy(origin.root / "bugbout.toml", clone.root)
    shutil.copy(origin.root / "issues.json", clone.root)
    code, checks = doctor(clone, capsys)
    assert code == 1
    assert checks["repository"]["status"] == "problem"
    assert "shallow" in checks["repository"]["detail"]
    assert "--unshallow" in checks["repository"]["fix"]


def test_suite_that_fails_to_collect_is_a_problem_naming_the_module(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, files={"tests/test_broken.py": "def test_x(:\n    pass\n"})
    code, checks = doctor(repo, capsys)
    assert code == 1
    collect = checks["tests collect"]
    assert collect["status"] == "problem"
    assert collect["detail"].startswith(
        f"tests/test_broken.py fails to collect at {repo.head()[:12]}"
    )
    assert "SyntaxError" in collect["detail"]
    assert "tests/test_broken.py" in collect["fix"]


CASES_CONFTEST = (
    "from pathlib import Path\n\n"
    "CASES = (Path(__file__).parent / 'cases' / 'div.txt').read_text().splitlines()\n"
)
"""A conftest that reads the submodule when pytest collects, as tomlkit's reads
`tests/toml-test/`."""


def submodule_project(tmp_path: Path, url: str) -> tuple[GitRepo, str]:
    """The project, then a commit at the tip that records `tests/cases`, a submodule
    declared at `url` (relative URLs are to the project's own path), read by the conftest;
    with the submodule's commit."""
    cases = GitRepo(tmp_path / "cases")
    recorded = cases.commit("Cases", files={"div.txt": "4 2 2\n"})
    repo = project(tmp_path)
    repo.git("clone", "--quiet", str(cases.root), str(repo.root / "tests" / "cases"))
    repo.write(".gitmodules", f'[submodule "cases"]\n\tpath = tests/cases\n\turl = {url}\n')
    repo.commit("Read the cases", files={"tests/conftest.py": CASES_CONFTEST})
    return repo, recorded


def test_an_unreachable_submodule_is_named_with_its_url_and_fix(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, recorded = submodule_project(tmp_path, "../gone.git")
    gone = str(tmp_path / "gone.git")
    code, checks = doctor(repo, capsys)
    assert code == 1
    at = repo.head()[:12]
    submodules = checks["submodules"]
    assert submodules["status"] == "problem"
    assert submodules["detail"].startswith(f"the tree of {at} lacks the submodule tests/cases ")
    assert f"tests/cases ({gone}) at {recorded[:12]}" in submodules["detail"]
    assert (
        f"{gone} could not be fetched: fatal: '{gone}' does not appear to be a git repository. "
        "Tests that read it fail"
    ) in submodules["detail"]
    assert f"`git config --global url.<mirror>.insteadOf {gone}`" in submodules["fix"]
    collect = checks["tests collect"]
    assert collect["status"] == "problem"
    assert "tests/cases/div.txt" in collect["detail"]
    assert f"The tree lacks the submodule tests/cases ({gone})" in collect["detail"]
    assert collect["fix"] == submodules["fix"]
    names = list(checks)
    assert names.index("issue text") < names.index("submodules") < names.index("tests collect")


def test_a_reachable_submodule_passes_and_its_files_are_collected_with(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = submodule_project(tmp_path, "../cases")
    code, checks = doctor(repo, capsys)
    assert code == 0, checks
    at = repo.head()[:12]
    assert checks["submodules"] == {
        "name": "submodules",
        "status": "ok",
        "detail": f"tests/cases at {at}: each in the tree",
        "fix": None,
    }
    assert checks["tests collect"]["detail"] == f"2 tests collected in 'tests' at {at}"


def test_no_submodule_no_submodules_check(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    _, checks = doctor(project(tmp_path), capsys)
    assert "submodules" not in checks


def test_collection_counts_whatever_pytest_args_say(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, config='pytest-args = ["-q"]\n')
    _, checks = doctor(repo, capsys)
    assert checks["tests collect"]["detail"].startswith("2 tests collected")


def test_missing_tests_directory_is_a_problem(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path)
    (repo.root / "bugbout.toml").write_text(
        (repo.root / "bugbout.toml")
        .read_text()
        .replace('source = "src/calc"\n', 'source = "src/calc"\ntests = "test"\n')
    )
    code, checks = doctor(repo, capsys)
    assert code == 1
    assert checks["tests collect"]["status"] == "problem"
    assert "no directory 'test'" in checks["tests collect"]["detail"]


def test_malformed_issues_file_is_a_problem(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, issues='[{"number": 1, "title": "x"},\n  {"title": "no number"}]')
    code, checks = doctor(repo, capsys)
    assert code == 1
    issue_text = checks["issue text"]
    assert issue_text["status"] == "problem"
    assert "item 2" in issue_text["detail"] and "'number' is missing" in issue_text["detail"]
    assert issue_text["fix"]
    assert "GitHub API" not in checks


# --- GitHub --------------------------------------------------------------------------------


@pytest.fixture
def github_repo(
    tmp_path: Path, tools: Tools, github_server: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> GitRepo:
    """The project with no issues file, on the controlled PATH, GitHub's API at the fake."""
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    return project(tmp_path, issues=None, config="")


def test_github_from_config_anonymous_is_a_warning(
    github_repo: GitRepo, github_server: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = github_repo.root / "bugbout.toml"
    toml.write_text(toml.read_text().replace('"src/calc"\n', '"src/calc"\ngithub = "acme/tools"\n'))
    code, checks = doctor(github_repo, capsys)
    assert code == 0
    assert checks["issue text"] == {
        "name": "issue text",
        "status": "ok",
        "detail": "issues of acme/tools on GitHub (from [project] github)",
        "fix": None,
    }
    api = checks["GitHub API"]
    assert api["status"] == "warning"
    assert "anonymous" in api["detail"] and "57 of 60 requests left" in api["detail"]
    assert "GITHUB_TOKEN" in api["fix"] and "gh auth login" in api["fix"]
    [request] = github_server.requests
    assert request.path == "/rate_limit" and request.header("authorization") is None


def test_github_from_origin_with_token(
    github_repo: GitRepo,
    github_server: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    github_repo.git("remote", "add", "origin", "https://github.com/acme/tools.git")
    monkeypatch.setenv("GITHUB_TOKEN", "s3cret")
    github_server.require_token("s3cret")
    code, checks = doctor(github_repo, capsys)
    assert code == 0
    assert (
        checks["issue text"]["detail"] == "issues of acme/tools on GitHub (from the origin remote)"
    )
    api = checks["GitHub API"]
    assert api["status"] == "ok"
    assert "token from GITHUB_TOKEN" in api["detail"] and "57 of 60" in api["detail"]


def test_github_token_from_gh(
    github_repo: GitRepo,
    github_env: GitHubEnv,
    github_server: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    github_repo.git("remote", "add", "origin", "git@github.com:acme/tools.git")
    github_env.install_gh(token="from-gh")
    github_server.require_token("from-gh")
    _, checks = doctor(github_repo, capsys)
    assert checks["GitHub API"]["status"] == "ok"
    assert "`gh auth token`" in checks["GitHub API"]["detail"]


def test_rejected_token_is_a_problem(
    github_repo: GitRepo,
    github_server: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    github_repo.git("remote", "add", "origin", "https://github.com/acme/tools")
    monkeypatch.setenv("GITHUB_TOKEN", "stale")
    github_server.require_token("fresh")
    code, checks = doctor(github_repo, capsys)
    assert code == 1
    api = checks["GitHub API"]
    assert api["status"] == "problem"
    assert "Bad credentials" in api["detail"]
    assert "GITHUB_TOKEN" in api["fix"]


def test_used_up_rate_limit_is_a_warning(
    github_repo: GitRepo, github_server: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github_repo.git("remote", "add", "origin", "https://github.com/acme/tools.git")
    github_server.rate_limit_after(0)
    code, checks = doctor(github_repo, capsys)
    assert code == 0
    api = checks["GitHub API"]
    assert api["status"] == "warning"
    assert "rate limit used up" in api["detail"]
    assert "GITHUB_TOKEN" in api["fix"]


def test_github_down_is_a_warning_not_a_crash(
    github_repo: GitRepo, github_server: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github_repo.git("remote", "add", "origin", "https://github.com/acme/tools.git")
    github_server.stop()
    code, checks = doctor(github_repo, capsys)
    assert code == 0
    api = checks["GitHub API"]
    assert api["status"] == "warning"
    assert api["detail"].startswith(f"could not reach {github_server.url}")
    assert api["detail"].endswith("tasks will have no issue text")


def test_no_github_repository_is_a_warning(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, issues=None)
    repo.git("remote", "add", "origin", "https://gitlab.com/acme/tools.git")
    code, checks = doctor(repo, capsys)
    assert code == 0
    assert checks["issue text"]["status"] == "warning"
    assert 'github = "owner/name"' in checks["issue text"]["fix"]
    assert "GitHub API" not in checks


# --- output and mistakes -------------------------------------------------------------------


def test_json_is_one_object_of_the_documented_shape(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = project(tmp_path, config='[[contestants]]\nagent = "codex"\n')
    code = main(["-C", str(repo.root), "doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(report) == {"ok", "checks"}
    assert report["ok"] is False
    for check in report["checks"]:
        assert set(check) == {"name", "status", "detail", "fix"}
        assert check["status"] in ("ok", "warning", "problem")
        assert isinstance(check["name"], str) and isinstance(check["detail"], str)
        assert check["fix"] is None or isinstance(check["fix"], str)
    assert [c["name"] for c in report["checks"]][:5] == [
        "git",
        "repository",
        "uv",
        "python",
        "sandbox",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no bugbout.toml"),
        ('[project]\nsource = "src/calc"\nsandbox = "none"\n', "sandbox"),
        ("[project\n", "bugbout.toml"),
    ],
)
def test_config_mistakes_exit_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, message: str
) -> None:
    repo = project(tmp_path)
    if text is None:
        (repo.root / "bugbout.toml").unlink()
    else:
        (repo.root / "bugbout.toml").write_text(text)
    assert main(["-C", str(repo.root), "doctor"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and "Traceback" not in captured.err


def test_unavailable_python_is_a_problem_when_downloads_are_off(
    tmp_path: Path,
    tools: Tools,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    repo = project(tmp_path, interpreter=False, config='python = "3.4"\n')
    code, checks = doctor(repo, capsys)
    assert code == 1
    assert checks["uv"]["status"] == "ok"
    assert checks["python"]["status"] == "problem"
    assert "3.4" in checks["python"]["detail"]
    assert "uv python install 3.4" in checks["python"]["fix"]
    assert checks["test environment"]["status"] == "warning"
    assert "python check did not pass" in checks["test environment"]["detail"]


def test_broken_interpreter_is_a_problem(
    tmp_path: Path, tools: Tools, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tools.program("python-without-pytest", "nothing")
    fake.write_text(
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pytest'\" >&2\nexit 1\n"
    )
    repo = project(tmp_path, interpreter=False, config=f'interpreter = "{fake}"\n')
    code, checks = doctor(repo, capsys)
    assert code == 1
    assert checks["python"]["status"] == "problem"
    assert "cannot import pytest" in checks["python"]["detail"]
    assert "pip install pytest" in checks["python"]["fix"]
    assert checks["tests collect"]["status"] == "warning"


@pytest.mark.slow
def test_builds_a_real_environment_then_reuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    repo = project(
        tmp_path,
        interpreter=False,
        config=f'python = "{running}"\ninstall-project = false\ntest-dependencies = ["pytest"]\n',
    )
    code, checks = doctor(repo, capsys)
    assert code == 0, checks
    assert checks["uv"]["status"] == "ok" and checks["uv"]["detail"].startswith("uv ")
    assert checks["python"]["status"] == "ok"
    environment = checks["test environment"]
    assert environment["status"] == "ok"
    assert environment["detail"].startswith(f"built {home / 'envs'}")
    assert checks["tests collect"]["detail"].startswith("2 tests collected")

    said: list[str] = []
    report = asyncio.run(diagnose(Project.load(repo.root), progress=said.append))
    assert report.ok
    [environment_check] = [c for c in report.checks if c.name == "test environment"]
    assert environment_check.detail.startswith(f"reusing {home / 'envs'}")
    assert any("first build" in message for message in said)
    assert f"collecting the tests at {repo.head()[:12]}" in said


def test_failed_environment_build_names_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.setenv("UV_OFFLINE", "1")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    repo = project(
        tmp_path,
        interpreter=False,
        config=f'python = "{running}"\ninstall-project = false\n'
        'test-dependencies = ["no-such-package-bugbout-doctor==0.0.1"]\n',
    )
    code, checks = doctor(repo, capsys)
    assert code == 1
    environment = checks["test environment"]
    assert environment["status"] == "problem"
    assert "no-such-package-bugbout-doctor" in environment["detail"]
    assert str(home / "envs" / "logs") in environment["detail"]
    assert "test-dependencies" in environment["fix"]
    assert checks["tests collect"]["status"] == "warning"
