"""The built-in Lite set: small projects whose environment fails as written, and the
package universe they install from, offline.

Each project under `lite/<name>/` fails in a clean environment for one realistic reason
(one `EnvDefect` each, `mined` aside) and has a repair known to work. Its `lite.toml`
says what the task is: the date the install is limited to, the interpreter, the command
that must run, the issue a user filed, and the known repair as the environment files'
full new contents. The rest of the folder is the project as its authors left it.

The projects install from `lite/packages.toml`: every release their files and their
repairs need, under the real projects' names (the index is private to one bout and never
leaves 127.0.0.1), each a small stand-in under `lite/packages/` with the API the projects
use, uploaded at the dates their stories need. `publish_universe` serves it on a
`PackageIndex`, with the yanked release, the advisories and the project taken down.

`write_lite_repository` writes the set as one git repository, each project a root commit
(its base) with one child holding the known repair (its fix), and `lite_tasks` makes
them environment tasks. Everything is package data read through `importlib.resources`,
so a zipped install builds the same repository.
"""

from __future__ import annotations

import importlib.metadata
import re
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from datetime import datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bugbout_tui.core.env_models import EnvDefect, EnvSpec
from bugbout_tui.core.models import IssueRef, StatementSource, Task
from bugbout_tui.infra.git import hermetic_env, run_hermetic_git
from bugbout_tui.infra.package_index import (
    LONG_AGO,
    PURE,
    RUNNER,
    PackageIndex,
    build_sdist,
    build_wheel,
    repack_installed,
)

LITE_DATA = "lite"
"""The Lite set's folder in the demo's package data."""
SETTINGS = "lite.toml"
_LITE_ID = r"^lite-[a-z0-9]+(-[a-z0-9]+)*$"


def _data() -> Traversable:
    return resources.files("bugbout_tui.demo").joinpath(LITE_DATA)


class LiteRepair(BaseModel):
    """The repair known to work: the commit message and each changed file's new text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: str
    files: dict[str, str] = Field(min_length=1)
    """Environment file → its full new contents."""


class LiteProject(BaseModel):
    """One project of the Lite set, as its `lite.toml` and its folder give it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Annotated[str, Field(pattern=_LITE_ID)]
    title: str
    issue: int
    """The number of the issue `statement` was filed as, in the project's own tracker."""
    defect: EnvDefect
    written: datetime
    """When the project was committed as it is (the base commit's date)."""
    date: datetime
    """When the issue was filed and the repair made: the install's date limit."""
    python: str
    command: list[str] = Field(min_length=1)
    statement: str
    security: bool = False
    """A security matter (a yanked release, a squatted name): the Secure board's label."""
    repair: LiteRepair
    files: dict[str, str] = Field(default_factory=dict)
    """The project as written: relative path → text (`lite.toml` is not part of it)."""

    @model_validator(mode="after")
    def _consistent(self) -> LiteProject:
        if self.defect == "mined":
            raise ValueError("a Lite project is built in, not mined")
        if self.date <= self.written:
            raise ValueError("the issue must come after the project was written")
        unchanged = [p for p, text in self.repair.files.items() if self.files.get(p) == text]
        if unchanged:
            raise ValueError(f"the repair leaves {', '.join(unchanged)} as written")
        return self

    @property
    def env_files(self) -> list[str]:
        """The environment files the known repair changes."""
        return sorted(self.repair.files)

    @property
    def repaired(self) -> dict[str, str]:
        """The project's files with the known repair applied."""
        return {**self.files, **self.repair.files}

    def spec(self) -> EnvSpec:
        return EnvSpec(
            command=self.command,
            python=self.python,
            date=self.date,
            env_files=self.env_files,
            defect=self.defect,
            security=self.security,
            lite=True,
        )


def _walk(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """Every file below `folder`, as (relative path, file); caches and the hidden folders
    that running a project's tests in place leaves behind are not part of it."""
    for child in sorted(folder.iterdir(), key=lambda c: c.name):
        if child.is_dir() and (child.name == "__pycache__" or child.name.startswith(".")):
            continue
        path = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, f"{path}/")
        else:
            yield path, child


def _read_project(folder: Traversable) -> LiteProject:
    settings = tomllib.loads(folder.joinpath(SETTINGS).read_text(encoding="utf-8"))
    files = {
        path: file.read_text(encoding="utf-8") for path, file in _walk(folder) if path != SETTINGS
    }
    return LiteProject.model_validate({**settings, "files": files})


def lite_projects() -> list[LiteProject]:
    """The Lite set, one project per defect, in the order `EnvDefect` lists them."""
    found = [
        _read_project(folder)
        for folder in _data().iterdir()
        if folder.is_dir() and folder.joinpath(SETTINGS).is_file()
    ]
    order = get_args(EnvDefect)
    return sorted(found, key=lambda project: (order.index(project.defect), project.id))


# ---------------------------------------------------------------- the package universe


class _Runner(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pytest: str
    uploaded: datetime


class _Release(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str
    uploaded: datetime
    source: str
    """Its files' folder under `lite/packages/`."""
    requires: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=lambda: [PURE])
    """One wheel per tag (ignored for an sdist)."""
    sdist: bool = False
    """A source distribution only: installing it builds it, which runs its code."""
    entry_points: str | None = None
    yanked: str | None = None
    """Why it was yanked, if it was."""
    removed: bool = False
    """Published, then taken down: both of the index's APIs answer 404 for it."""


class _Advisory(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    versions: list[str]
    id: str
    aliases: list[str] = Field(default_factory=list)
    fixed_in: list[str] = Field(default_factory=list)
    summary: str | None = None


class _Universe(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    runner: _Runner
    release: list[_Release]
    advisory: list[_Advisory] = Field(default_factory=list)


def _universe() -> _Universe:
    text = _data().joinpath("packages.toml").read_text(encoding="utf-8")
    return _Universe.model_validate(tomllib.loads(text))


def _dist_info(name: str, version: str) -> str:
    """The `.dist-info` folder a wheel of `name` `version` is built with."""
    return f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info"


def _release_files(release: _Release) -> dict[str, str]:
    source = _data().joinpath("packages", release.source)
    files = {path: file.read_text(encoding="utf-8") for path, file in _walk(source)}
    if release.entry_points is not None:
        files[f"{_dist_info(release.name, release.version)}/entry_points.txt"] = (
            release.entry_points
        )
    return files


def _build(release: _Release, dest: Path) -> list[Path]:
    files = _release_files(release)
    if release.sdist:
        return [build_sdist(dest, release.name, release.version, files, requires=release.requires)]
    return [
        build_wheel(dest, release.name, release.version, files, requires=release.requires, tag=tag)
        for tag in release.tags
    ]


def _relabelled_runner(dest: Path, version: str) -> Path:
    """pytest as installed in this interpreter, as a wheel that says it is `version`.

    The projects pin the runner like any other dependency; relabelling it keeps their
    pins valid whichever pytest runs bugbout (its code and its requirements are kept)."""
    dist = importlib.metadata.distribution("pytest")
    files: dict[str, str] = {}
    for entry in dist.files or ():
        path = str(entry)
        if ".dist-info/" in path or "__pycache__" in path or path.startswith(".."):
            continue
        located = Path(str(dist.locate_file(entry)))
        if located.is_file():
            files[path] = located.read_text(encoding="utf-8")
    entry_points = dist.read_text("entry_points.txt")
    if entry_points:
        files[f"{_dist_info('pytest', version)}/entry_points.txt"] = entry_points
    return build_wheel(
        dest,
        "pytest",
        version,
        files,
        requires=dist.requires or (),
        requires_python=dist.metadata["Requires-Python"],
    )


def publish_universe(index: PackageIndex, workdir: Path) -> None:
    """Build every distribution of the Lite universe in `workdir` and serve it on `index`:
    the runner, each release at its upload time (one yanked, one an sdist, one with wheels
    for other interpreters only), the advisories, and the project taken down."""
    universe = _universe()
    index.publish(
        _relabelled_runner(workdir, universe.runner.pytest), uploaded=universe.runner.uploaded
    )
    for name in RUNNER:
        if name != "pytest":
            index.publish(repack_installed(workdir, name), uploaded=LONG_AGO)
    for release in universe.release:
        for path in _build(release, workdir):
            index.publish(path, uploaded=release.uploaded, yanked=release.yanked or False)
    for advisory in universe.advisory:
        for version in advisory.versions:
            index.advise(
                advisory.name,
                version,
                id=advisory.id,
                aliases=advisory.aliases,
                fixed_in=advisory.fixed_in,
                summary=advisory.summary,
            )
    for release in universe.release:
        if release.removed:
            index.remove(release.name)


# ---------------------------------------------------------------- the repository


def _identity(project: LiteProject, when: datetime) -> dict[str, str]:
    name = project.id.removeprefix("lite-")
    return {
        "GIT_AUTHOR_NAME": f"{name} maintainers",
        "GIT_AUTHOR_EMAIL": f"maintainers@{name}.invalid",
        "GIT_COMMITTER_NAME": f"{name} maintainers",
        "GIT_COMMITTER_EMAIL": f"maintainers@{name}.invalid",
        "GIT_AUTHOR_DATE": when.isoformat(),
        "GIT_COMMITTER_DATE": when.isoformat(),
    }


def _commit(
    git_dir: Path,
    scratch: Path,
    files: Mapping[str, str],
    message: str,
    identity: dict[str, str],
    parent: str | None = None,
) -> str:
    """Write `files` into the tree kept in `scratch` and commit it, as `identity` says
    and on top of `parent`; the commit's sha."""
    tree, index = scratch / "tree", scratch / "index"
    for path, text in files.items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git = {**hermetic_env(git_dir, tree, index), **identity}
    run_hermetic_git("add", "--all", env=git, cwd=tree)
    written = run_hermetic_git("write-tree", env=git, cwd=tree).decode().strip()
    parents = ["-p", parent] if parent is not None else []
    argv = ["commit-tree", written, *parents, "-m", message]
    return run_hermetic_git(*argv, env=git, cwd=tree).decode().strip()


def write_lite_repository(dest: Path) -> dict[str, tuple[str, str]]:
    """Write the Lite set as a git repository at `dest` (which must not exist): each
    project on its own branch, named by its id, as a root commit (the base, at the date it
    was written) and one child holding the known repair (the fix, at the issue's date).

    Returns each project's id → (base commit, fix commit). The identities and dates are
    fixed, so every machine gets the same shas.
    """
    dest.mkdir(parents=True)
    run_hermetic_git("init", "--quiet", "--initial-branch=main", ".", env=hermetic_env(), cwd=dest)
    git_dir = dest / ".git"
    commits: dict[str, tuple[str, str]] = {}
    for project in lite_projects():
        with tempfile.TemporaryDirectory(prefix="bugbout-lite-") as scratch:
            base = _commit(
                git_dir,
                Path(scratch),
                project.files,
                f"Start {project.id.removeprefix('lite-')}",
                _identity(project, project.written),
            )
            fix = _commit(
                git_dir,
                Path(scratch),
                project.repair.files,
                f"{project.repair.message} (#{project.issue})",
                _identity(project, project.date),
                parent=base,
            )
        ref = f"refs/heads/{project.id}"
        run_hermetic_git("update-ref", ref, fix, env=hermetic_env(git_dir), cwd=dest)
        commits[project.id] = (base, fix)
    first = f"refs/heads/{next(iter(commits))}"
    run_hermetic_git("symbolic-ref", "HEAD", first, env=hermetic_env(git_dir), cwd=dest)
    run_hermetic_git("reset", "--quiet", "--hard", env=hermetic_env(git_dir, dest), cwd=dest)
    return commits


def lite_tasks(commits: Mapping[str, tuple[str, str]]) -> list[Task]:
    """The Lite projects in `commits` (as `write_lite_repository` returns them) as
    environment tasks: no source or test file is theirs to change, and their statement
    is the issue the project's user filed, given whole."""
    tasks = []
    for project in lite_projects():
        if project.id not in commits:
            continue
        base, fix = commits[project.id]
        tasks.append(
            Task(
                id=project.id,
                issue=project.issue,
                reference=IssueRef(number=project.issue, kind="issue"),
                title=project.title,
                fix_commit=fix,
                base_commit=base,
                date=project.date,
                source_files=[],
                test_files=[],
                added_tests=[],
                statement=project.statement,
                statement_source=StatementSource(kind="issue", number=project.issue),
                kind="env",
                env=project.spec(),
            )
        )
    return tasks
