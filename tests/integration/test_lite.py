"""The Lite set for real: its git repository, its package universe on a 127.0.0.1 index,
each project installed by the clean install at its date and run by the traced run, and
the scripted agents repairing a checkout. Nothing leaves this machine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import bugbout_tui
from bugbout_tui.core.env_models import EnvInstall, EnvTrace, normalize_name
from bugbout_tui.demo.lite import (
    LiteProject,
    lite_projects,
    lite_tasks,
    publish_universe,
    write_lite_repository,
)
from bugbout_tui.demo.lite_playbooks import ENV_PLAYBOOKS
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.env_trace import traced_run
from bugbout_tui.infra.package_index import PackageIndex
from bugbout_tui.infra.sandbox import NoSandbox

PROJECTS = lite_projects()
FAILS_AT_INSTALL = {"lite-confsnap", "lite-dusize", "lite-s3links", "lite-modelcard"}
"""The bases uv cannot install; the others install and fail when their tests run."""


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[str, str]]]:
    root = tmp_path_factory.mktemp("lite") / "repo"
    return root, write_lite_repository(root)


@pytest.fixture(scope="module")
def index(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[PackageIndex]:
    """The Lite universe served, and uv given a cache of its own and no downloads."""
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        publish_universe(served, tmp_path_factory.mktemp("dists"))
        patch.setenv("UV_CACHE_DIR", str(tmp_path_factory.mktemp("uv-cache")))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        yield served


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def checkout(files: dict[str, str], where: Path) -> Path:
    for path, text in files.items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_text(text, encoding="utf-8")
    return where


@dataclass
class Scored:
    install: EnvInstall
    trace: EnvTrace | None
    """None when the install failed: there is nothing to run."""


def install_and_run(
    project: LiteProject, files: dict[str, str], index: PackageIndex, where: Path
) -> Scored:
    """A clean install of `files` at the project's date from the Lite index, then the
    project's command, traced, as the scoring does them."""
    tree = checkout(files, where / "tree")

    async def score() -> Scored:
        install = await clean_install(
            tree,
            python=project.python,
            date=project.date,
            index=index.url,
            venv=where / "venv",
            log=where / "install.log",
            timeout=180,
            sandbox=NoSandbox(),
        )
        if not install.ok:
            return Scored(install, None)
        trace = await traced_run(
            tree,
            project.command,
            venv=where / "venv",
            sandbox=NoSandbox(),
            log=where / "trace.log",
            timeout=120,
        )
        return Scored(install, trace)

    return asyncio.run(score())


# ---------------------------------------------------------------- the repository


def test_each_project_is_a_root_commit_with_its_repair_on_top(
    repository: tuple[Path, dict[str, tuple[str, str]]],
) -> None:
    repo, commits = repository
    assert list(commits) == [project.id for project in PROJECTS]
    for project in PROJECTS:
        base, fix = commits[project.id]
        assert git(repo, "rev-list", "--parents", "-n1", base) == base
        assert git(repo, "rev-list", "--parents", "-n1", fix) == f"{fix} {base}"
        assert git(repo, "rev-parse", f"refs/heads/{project.id}") == fix
        assert git(repo, "ls-tree", "-r", "--name-only", base).split() == sorted(project.files)
        changed = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", fix).split()
        assert changed == project.env_files
        for path, text in project.repaired.items():
            assert git(repo, "show", f"{fix}:{path}") == text.rstrip("\n")
        stamp = git(repo, "log", "-1", "--format=%aI", fix)
        assert stamp.startswith(project.date.strftime("%Y-%m-%dT%H:%M"))
    assert git(repo, "status", "--porcelain") == ""


def test_the_repository_is_the_same_on_every_machine(
    repository: tuple[Path, dict[str, tuple[str, str]]], tmp_path: Path
) -> None:
    assert write_lite_repository(tmp_path / "again") == repository[1]


def test_the_tasks_are_environment_tasks_on_those_commits(
    repository: tuple[Path, dict[str, tuple[str, str]]],
) -> None:
    _, commits = repository
    tasks = lite_tasks(commits)
    assert [task.id for task in tasks] == list(commits)
    for task, project in zip(tasks, PROJECTS, strict=True):
        assert task.kind == "env" and task.env == project.spec()
        assert (task.base_commit, task.fix_commit) == commits[task.id]
        assert task.statement == project.statement and task.date == project.date
        assert task.source_files == task.test_files == task.added_tests == []
    assert lite_tasks({}) == []


# ---------------------------------------------------------------- the universe


def fetch(url: str) -> dict[str, object] | int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            loaded: dict[str, object] = json.load(answer)
            return loaded
    except urllib.error.HTTPError as error:
        return error.code


def test_the_universe_has_what_the_stories_need(index: PackageIndex) -> None:
    yanked = fetch(f"{index.api_url}/python-slugify/8.0.2/json")
    assert isinstance(yanked, dict)
    assert yanked["info"] == {**yanked["info"], "yanked": True}  # type: ignore[dict-item]
    advised = fetch(f"{index.api_url}/urllib3/2.0.7/json")
    assert isinstance(advised, dict)
    ids = [item["id"] for item in advised["vulnerabilities"]]  # type: ignore[attr-defined]
    assert ids == ["GHSA-34jh-p97f-mpxf"]
    assert fetch(f"{index.api_url}/yaml/json") == 404, "a project taken down"
    assert fetch(f"{index.url}/yaml/") == 404
    squat = fetch(f"{index.api_url}/reqeusts/2.32.3/json")
    assert isinstance(squat, dict)
    assert [f["packagetype"] for f in squat["urls"]] == ["sdist"]  # type: ignore[attr-defined]
    wheels = fetch(f"{index.api_url}/onnxruntime/1.12.1/json")
    assert isinstance(wheels, dict)
    versions = {f["python_version"] for f in wheels["urls"]}  # type: ignore[attr-defined]
    assert versions == {"cp39", "cp310"}
    assert fetch(f"{index.api_url}/humanize/4.9.1/json") == 404, "a release deleted"


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.id)
def test_the_known_repair_installs_at_the_projects_date_and_runs(
    project: LiteProject, index: PackageIndex, tmp_path: Path
) -> None:
    scored = install_and_run(project, project.repaired, index, tmp_path)
    assert scored.install.ok, scored.install.detail
    assert scored.trace is not None and scored.trace.ok, (tmp_path / "trace.log").read_text()
    pinned = {
        word.strip('",[]').lower()
        for text in project.repair.files.values()
        for word in text.split()
        if "==" in word
    }
    assert pinned <= {line.lower() for line in scored.install.installed}
    assert {normalize_name(pin.split("==")[0]) for pin in pinned} <= set(scored.trace.used)
    assert "yanked" not in (tmp_path / "install.log").read_text()


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.id)
def test_the_project_as_written_fails_where_its_defect_says(
    project: LiteProject, index: PackageIndex, tmp_path: Path
) -> None:
    """The bases uv cannot install fail there; the others install and fail when their
    command runs."""
    scored = install_and_run(project, project.files, index, tmp_path)
    assert scored.install.ok is (project.id not in FAILS_AT_INSTALL), scored.install.detail
    if scored.trace is not None:
        assert not scored.trace.ok, (tmp_path / "trace.log").read_text()


# ---------------------------------------------------------------- the scripted agents


@pytest.mark.parametrize("style", ["careful", "hasty"])
@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.id)
def test_the_scripted_agent_repairs_a_checkout_as_its_style_does(
    project: LiteProject, style: str, tmp_path: Path
) -> None:
    tree = checkout(project.files, tmp_path / "tree")
    prompt = tmp_path / "prompt.md"
    prompt.write_text(f"<issue>\n{project.title}\n\n{project.statement}</issue>\n")
    argv = [sys.executable, "-m", "bugbout_tui.demo.agent", "--style", style]
    done = subprocess.run(
        [*argv, "--prompt-file", str(prompt), "--pace", "0"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    after = {path: (tree / path).read_text(encoding="utf-8") for path in project.files}
    (book,) = [book for book in ENV_PLAYBOOKS if book.project == project.id]
    assert done.stdout.splitlines()[-1] == book.recipe(style).says.splitlines()[-1]
    if style == "careful":
        assert after == project.repaired
    else:
        assert after != project.files and after != project.repaired


def test_the_set_is_read_from_a_zipped_package(
    repository: tuple[Path, dict[str, tuple[str, str]]], tmp_path: Path
) -> None:
    """The projects are package data read through importlib.resources, so a zipped install
    writes the same repository."""
    package = Path(bugbout_tui.__file__).parent
    zipped = tmp_path / "bugbout_tui.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in package.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(package.parent).as_posix())
    script = (
        "import json, sys; from pathlib import Path\n"
        "from bugbout_tui.demo import lite\n"
        "assert lite.__file__.startswith(sys.argv[1]), lite.__file__\n"
        "print(json.dumps(lite.write_lite_repository(Path(sys.argv[2]))))\n"
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
    assert {k: tuple(v) for k, v in json.loads(ran.stdout).items()} == repository[1]
