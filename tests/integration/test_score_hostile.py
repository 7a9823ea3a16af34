"""A patch that fixes nothing but borrows the fix from where bugbout keeps it is not scored
resolved.

The contestant appends to the package's `__init__.py` a generic hook (`tests/agents/
hostile.py`, mode `path-hook`) that knows nothing of the bug: when the package is
imported, it looks through every bugbout home it can guess (`BUGBOUT_HOME`, the default
one under the user's cache directory) for a pristine tree whose `tests/*.py` match the
tree being tested, and imports the package from there. A bout runs it through a real
ground truth, race, cross-examination, judge and scoring, twice: confined, where test
runs see neither home, and, as the control, with `sandbox = "none"`, where the hook
finds the fix's tree and the same patch is scored resolved.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from racekit import contestant, copy_project, script, template
from terminals import bugbout

from bugbout_tui.core.models import ResolutionSet, TaskSet
from bugbout_tui.infra.trees import pristine_tree

TASK = "calc-1"

pytestmark = pytest.mark.slow


def _bout(root: Path, template_project: Path, cache: Path, *, sandbox: str) -> ResolutionSet:
    """Copy the template without calc-1's oracle, so the ground truth runs again in this
    bout's home; seed the default home (in the user's cache directory, `cache`) with the
    fix's tree too; run through scoring."""
    home = root / "bugbout-home"
    user = root / "user"
    project = copy_project(
        template_project,
        root / "proj",
        tasks=[TASK],
        run=f'sandbox = "{sandbox}"\n',
        extra=contestant("hook", script("hostile", "path-hook", "{workdir}")),
    )
    oracles_path = project / ".bugbout" / "oracles.json"
    oracles = json.loads(oracles_path.read_text())
    del oracles[TASK]
    oracles_path.write_text(json.dumps(oracles))
    tasks = TaskSet.model_validate_json((project / ".bugbout" / "tasks.json").read_text())
    fix_commit = next(t.fix_commit for t in tasks.tasks if t.id == TASK)
    fix_tree = pristine_tree(project, fix_commit, home=root / "scratch")
    default_trees = cache / "bugbout" / "trees" / "proj-0" / fix_commit
    shutil.copytree(fix_tree, default_trees)
    result = bugbout(
        "run", "--until", "score",
        cwd=project, home=home, HOME=str(user), XDG_CACHE_HOME=str(cache),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (home / "trees").is_dir()  # the ground truth and scoring kept their trees here
    return ResolutionSet.model_validate_json(
        (project / ".bugbout" / "resolutions.json").read_text()
    )


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ResolutionSet]]:
    project_template = template(tmp_path_factory)
    # The user's cache directory lies outside /tmp, as it would: the sandbox's private
    # /tmp must not be what hides the default home.
    mine = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / f"bugbout-hook-{uuid.uuid4().hex}"
    try:
        yield {
            kind: _bout(tmp_path_factory.mktemp(kind), project_template, mine / kind, sandbox=kind)
            for kind in ("auto", "none")
        }
    finally:
        shutil.rmtree(mine, ignore_errors=True)


def test_a_hook_that_imports_the_fix_from_bugbout_homes_is_not_resolved(
    scores: dict[str, ResolutionSet],
) -> None:
    confined = scores["auto"].patches[TASK]["hook"]
    assert confined.status == "wrong-fix", confined
    assert confined.fail_to_pass == {"tests/test_f1.py::test_f1": "failed"}


def test_the_same_hook_unconfined_imports_the_fix_and_is_resolved(
    scores: dict[str, ResolutionSet],
) -> None:
    """The control: the hook works wherever a pristine tree is in reach."""
    assert scores["none"].patches[TASK]["hook"].status == "resolved"
