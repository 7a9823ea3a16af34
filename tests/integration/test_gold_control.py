"""The gold control: the maintainers' own fix, scored through the path a patch takes.

The project has two fixes. `calc-3` is plain. `calc-5`'s fix reads a table the same
commit adds at the repository's root, outside the package: the ground truth runs the
fix's whole tree and finds the test fail-to-pass, but a patch carries only its source
part, so no patch, the fix's own included, can pass that test here. Its grader is
unreliable, and the report must count the task nowhere, say why in its funnel, and
report the share of controls that resolved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from racekit import contestant, script
from terminals import bugbout

from bugbout_tui.core import events as ev
from bugbout_tui.core.models import GOLD, ResolutionSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.rules.score import UNRELIABLE_GRADER

pytestmark = [pytest.mark.slow]

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
UNITS = (
    "from pathlib import Path\n\n"
    "TABLE = Path(__file__).resolve().parents[2] / 'units.txt'\n\n\n"
    "def factor(unit):\n    return 1.0\n"
)
UNITS_FIXED = (
    "from pathlib import Path\n\n"
    "TABLE = Path(__file__).resolve().parents[2] / 'units.txt'\n\n\n"
    "def factor(unit):\n"
    "    rows = dict(line.split('=') for line in TABLE.read_text().split())\n"
    "    return float(rows[unit])\n"
)


def build(root: Path, state: Path) -> Path:
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "src/calc/units.py": UNITS,
            "tests/test_ops.py": "from calc.ops import mean\n\n\n"
            "def test_mean():\n    assert mean([1, 3]) == 2\n",
        },
    )
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={
            "src/calc/ops.py": OPS_FIXED,
            "tests/test_mean.py": "from calc.ops import mean\n\n\n"
            "def test_mean_empty():\n    assert mean([]) == 0.0\n",
        },
    )
    repo.commit(
        "Fix factor ignoring the unit table (#5)",
        files={
            "src/calc/units.py": UNITS_FIXED,
            "units.txt": "km=1000\nm=1\n",
            "tests/test_units.py": "from calc.units import factor\n\n\n"
            "def test_km():\n    assert factor('km') == 1000.0\n",
        },
    )
    write_issues(
        root, {3: ("mean() crashes on []", "ZeroDivisionError"), 5: ("factor ignores units", "")}
    )
    agent = contestant(
        "tinker",
        script("edit", "--count", str(state / "count"), "{workdir}"),
        state_dirs=[str(state)],
    )
    path = write_config(root, "calc", extra=agent)
    quiet = 'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n\n[run]\n'
    path.write_text(path.read_text().replace("\n[run]\n", "\n" + quiet, 1))
    return root


def test_a_fix_that_fails_its_own_tests_here_leaves_its_task_out_of_every_figure(
    tmp_path: Path, home: Path, state: Path
) -> None:
    root = build(tmp_path / "proj", state)
    report = Bout(Project.load(root)).run()
    assert report is not None

    scores = ResolutionSet.model_validate_json((root / ".bugbout/resolutions.json").read_text())
    # Both tasks' ground truth scores them: the fix's whole tree holds the table.
    oracles = json.loads((root / ".bugbout/oracles.json").read_text())
    assert oracles["calc-5"]["fail_to_pass"] == ["tests/test_units.py::test_km"]
    controls = scores.controls
    assert set(controls) == {"calc-3", "calc-5"}
    assert controls["calc-3"].contestant == GOLD
    assert controls["calc-3"].status == "resolved"
    assert controls["calc-3"].fail_to_pass == {"tests/test_mean.py::test_mean_empty": "passed"}
    assert controls["calc-5"].status == "wrong-fix"
    assert controls["calc-5"].fail_to_pass == {"tests/test_units.py::test_km": "failed"}
    assert all(c.conditions is not None for c in controls.values())
    # The agent's two patches are both scored, but only calc-3 counts.
    assert set(scores.patches) == {"calc-3", "calc-5"}

    funnel = report.funnel
    assert (funnel.scored, funnel.raced) == (2, 1)
    assert [(g.reason, g.tasks) for g in funnel.unreliable] == [(UNRELIABLE_GRADER, ["calc-5"])]
    assert funnel.gold_controls is not None
    assert (funnel.gold_controls.count, funnel.gold_controls.n) == (1, 2)
    assert report.agents.raced_tasks == report.picking.raced_tasks == 1
    (row,) = report.agents.rows
    assert row.wrong_fix + row.no_fix + row.resolved + row.fixed_but_broke == 1
    assert all(side.rate.n == 1 for side in report.picking.policies)
    rows = {row.task: row for row in report.tasks}
    assert (rows["calc-5"].raced, rows["calc-5"].not_raced) == (False, UNRELIABLE_GRADER)
    assert (rows["calc-5"].control, rows["calc-3"].control) == ("wrong-fix", "resolved")

    markdown = (root / ".bugbout/report.md").read_text()
    assert f"| {UNRELIABLE_GRADER} (calc-5) | 1 |" in markdown
    assert "Gold controls resolved" in markdown and "1 of 2" in markdown
    exported = json.loads((root / ".bugbout/report.json").read_text())
    assert exported["funnel"]["gold_controls"]["count"] == 1
    assert exported["funnel"]["unreliable"][0]["tasks"] == ["calc-5"]
    printed = bugbout("report", cwd=root, home=home, COLUMNS="200")
    assert "Gold controls resolved" in printed.stdout, printed.stderr
    assert UNRELIABLE_GRADER in printed.stdout

    shown = bugbout("tasks", "calc-5", cwd=root, home=home, COLUMNS="200")
    assert "gold control" in shown.stdout, shown.stderr
    assert "wrong-fix; grader unreliable" in shown.stdout
    as_json = json.loads(bugbout("tasks", "calc-5", "--json", cwd=root, home=home).stdout)
    assert as_json["control"]["status"] == "wrong-fix"
    assert as_json["control"]["unreliable"] == UNRELIABLE_GRADER

    # Stored controls are not made again while the conditions hold.
    again = Bout(Project.load(root))
    started: list[str] = []
    again.subscribe(
        lambda event: started.append(event.label) if isinstance(event, ev.TestRunStarted) else None
    )
    again.run()
    assert GOLD not in started
