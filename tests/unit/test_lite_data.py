"""The Lite set as data: one well-formed project per defect, each repair an environment
change only, and the scripted agents' playbooks true to the projects they recognise."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from bugbout_tui.core.env_models import EnvDefect
from bugbout_tui.demo.bugs import Recipe
from bugbout_tui.demo.lite import LiteProject, lite_projects
from bugbout_tui.demo.lite_playbooks import ENV_PLAYBOOKS, EnvPlaybook, recognise_checkout
from bugbout_tui.rules.env_files import is_env_file

PROJECTS = lite_projects()
BY_ID = {project.id: project for project in PROJECTS}


def unpinned(path: str, text: str) -> list[str]:
    """The requirements `text` declares without an exact pin."""
    if path.endswith(".toml"):
        project = tomllib.loads(text).get("project", {})
        extras = project.get("optional-dependencies", {}).values()
        declared = [*project.get("dependencies", []), *(r for extra in extras for r in extra)]
    else:
        lines = (line.strip() for line in text.splitlines())
        declared = [line for line in lines if line and not line.startswith(("-", "#"))]
    return [requirement for requirement in declared if "==" not in requirement]


def apply(recipe: Recipe, files: dict[str, str]) -> dict[str, str]:
    changed = dict(files)
    for edit in recipe.edits:
        changed[edit.path] = edit.apply(changed[edit.path])
    return changed


def test_there_is_one_project_per_defect_but_mined() -> None:
    defects = [project.defect for project in PROJECTS]
    assert defects == [d for d in get_args(EnvDefect) if d != "mined"]
    assert len(BY_ID) == len(PROJECTS)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.id)
def test_a_project_is_a_small_package_with_tests(project: LiteProject) -> None:
    package = project.id.removeprefix("lite-")
    assert f"{package}/__init__.py" in project.files
    assert any(re.match(r"tests/test_\w+\.py$", path) for path in project.files)
    assert project.python == "3.11"
    assert project.command == ["python", "-m", "pytest", "-q"]
    assert project.statement.strip() and project.title


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.id)
def test_a_repair_changes_environment_files_only(project: LiteProject) -> None:
    assert all(is_env_file(path) for path in project.env_files), project.env_files
    assert all(path in project.files for path in project.env_files)
    assert not any(unpinned(path, text) for path, text in project.repair.files.items())
    spec = project.spec()
    assert spec.lite and spec.env_files == project.env_files and spec.date == project.date


def test_the_security_matters_are_labelled() -> None:
    labelled = {project.defect for project in PROJECTS if project.security}
    assert labelled == {"pin-yanked", "typo-name"}


def test_a_repair_that_changes_nothing_is_refused() -> None:
    project = PROJECTS[0]
    same = {path: project.files[path] for path in project.env_files}
    data = {**project.model_dump(), "repair": {"message": "nothing", "files": same}}
    with pytest.raises(ValidationError, match="as written"):
        LiteProject.model_validate(data)


def test_an_issue_before_the_project_was_written_is_refused() -> None:
    data = {**PROJECTS[0].model_dump(), "date": PROJECTS[0].written}
    with pytest.raises(ValidationError, match="after the project was written"):
        LiteProject.model_validate(data)


# ---------------------------------------------------------------- the agents' playbooks


def test_every_project_has_one_playbook() -> None:
    assert [book.project for book in ENV_PLAYBOOKS] == [project.id for project in PROJECTS]


@pytest.mark.parametrize("book", ENV_PLAYBOOKS, ids=lambda b: b.project)
def test_a_playbook_recognises_its_own_checkout_and_no_other(
    book: EnvPlaybook, tmp_path: Path
) -> None:
    holding = [project.id for project in PROJECTS if book.marker in project.files]
    assert holding == [book.project]
    assert recognise_checkout(tmp_path) is None
    (tmp_path / book.marker).parent.mkdir(parents=True)
    (tmp_path / book.marker).write_text("")
    assert recognise_checkout(tmp_path) is book


@pytest.mark.parametrize("book", ENV_PLAYBOOKS, ids=lambda b: b.project)
def test_careful_writes_the_known_repair(book: EnvPlaybook) -> None:
    project = BY_ID[book.project]
    for style in ("careful", "slow", "rationed"):
        assert apply(book.recipe(style), project.files) == project.repaired


@pytest.mark.parametrize("book", ENV_PLAYBOOKS, ids=lambda b: b.project)
def test_hasty_passes_the_quick_way(book: EnvPlaybook) -> None:
    project = BY_ID[book.project]
    changed = apply(book.hasty, project.files)
    touched = sorted(path for path in changed if changed[path] != project.files[path])
    if book.project == "lite-shortlinks":
        assert touched == ["shortlinks/links.py"], "it edits the code: the attempt is rejected"
        return
    assert touched == project.env_files
    assert any(unpinned(path, changed[path]) for path in touched), "it leaves a pin out"


def test_the_examiner_leaves_an_environment_alone() -> None:
    for book in ENV_PLAYBOOKS:
        assert book.recipe("examiner").edits == ()
