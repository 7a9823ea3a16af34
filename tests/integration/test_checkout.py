"""What an agent's checkout holds of the project's tests, for real: a fix that edits a
test module another module imports from, raced by an agent that runs the test command
it is given and writes a test leaning on the project's helpers, then cross-examined.

By default the checkout holds the base's test files as they were, so the prompt's test
command collects and the agent's tests keep their helpers; `hide-touched-tests` keeps
every test file the fix touched out, and the cross-examination lays each author's tests
over exactly the files its checkout held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_issues
from racekit import attempt, configure, contestant, report, script

from bugbout_tui.core.models import Matrix
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

OPS = "def div(a, b):\n    return a / b\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = OPS.replace(
    "    return sum(xs)", "    if not xs:\n        return 0.0\n    return sum(xs)"
)
HELPERS = (
    "from calc.ops import div\n\nVALUES = [1, 2, 3]\n\n\n"
    "def test_div():\n    assert div(4, 2) == 2\n"
)
REGRESSION = "tests/test_regress.py::test_mean_of_nothing"


pytestmark = pytest.mark.usefixtures("home")


def _project(root: Path, run: str = "", *, tests_at: str = "tests") -> Path:
    """A package whose fix adds a test to `test_ops.py`, which `test_more.py` imports
    from (as tenacity's `test_after.py` imports `test_tenacity.py`). Tests kept under
    `tests_at` move to `tests/` after the fix, as a project that reorganises does."""
    repo = GitRepo(root)
    more = (
        "from calc.ops import mean\n\nfrom . import test_ops\n\n\n"
        "def test_mean():\n    assert mean(test_ops.VALUES) == 2\n"
    )
    fixed = HELPERS + "\n\ndef test_mean_empty():\n    from calc.ops import mean\n\n"
    fixed += "    assert mean([]) == 0.0\n"
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            f"{tests_at}/__init__.py": "",
            f"{tests_at}/test_ops.py": HELPERS,
            f"{tests_at}/test_more.py": more,
        },
    )
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={"src/calc/ops.py": OPS_FIXED, f"{tests_at}/test_ops.py": fixed},
    )
    if tests_at != "tests":
        moved = {"__init__.py": "", "test_ops.py": fixed, "test_more.py": more}
        files: dict[str, str | None] = {f"{tests_at}/{name}": None for name in moved}
        files.update({f"tests/{name}": text for name, text in moved.items()})
        repo.commit("Move the tests to the top level", files=files)
    write_issues(root, {3: ("mean() crashes on []", "ZeroDivisionError on an empty list")})
    configure(root, run + contestant("reuse", script("reuse", "{prompt_file}", "{workdir}")))
    Bout(Project.load(root)).run(until="examine")
    return root


def _matrix(project: Path) -> Matrix:
    return Matrix.model_validate_json((project / ".bugbout/matrices/calc-3.json").read_text())


def test_the_prompts_test_command_collects_on_the_checkout_with_the_base_test_files(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path / "proj")
    record = attempt(project, "calc-3", "reuse")
    assert record.hidden == []
    ran = report(record)
    assert ran["command"].endswith(" tests")
    assert ran["returncode"] == 0, ran["tail"]
    assert "2 passed" in ran["tail"]
    assert ran["helpers"] == HELPERS  # the base's version: nothing of the fix
    cells = _matrix(project).trees
    assert cells["base"].cells["reuse"][REGRESSION].outcome == "failed"
    assert cells["reuse"].cells["reuse"][REGRESSION].outcome == "passed"


def test_hide_touched_tests_keeps_the_edited_module_out_and_its_importers_lose_it(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path / "proj", run="hide-touched-tests = true\n")
    record = attempt(project, "calc-3", "reuse")
    assert record.hidden == ["tests/test_ops.py"]
    ran = report(record)
    assert ran["helpers"] is None
    assert ran["returncode"] == 1, ran["tail"]
    assert "ERROR tests/test_more.py" in ran["tail"]  # its import of the hidden module
    # Its test was examined over the files it had: without the module it imports.
    base = _matrix(project).trees["base"].cells["reuse"]
    assert {cell.outcome for cell in base.values()} == {"uncollected"}


def test_a_task_from_before_the_tests_moved_gets_the_directory_they_were_in(
    tmp_path: Path,
) -> None:
    """`tests = "tests"` at the tip; at the task's commit they lived in the package."""
    project = _project(tmp_path / "proj", tests_at="src/calc/tests")
    ran = report(attempt(project, "calc-3", "reuse"))
    assert ran["command"].endswith(" src/calc/tests")
    assert ran["returncode"] == 0, ran["tail"]
    assert "2 passed" in ran["tail"]
    matrix = _matrix(project)
    suite = matrix.trees["base"].cells["suite"]
    assert suite["src/calc/tests/test_more.py::test_mean"].outcome == "passed"
    regression = REGRESSION.replace("tests/", "src/calc/tests/", 1)
    assert matrix.trees["reuse"].cells["reuse"][regression].outcome == "passed"
