"""The flake ledger on a real bout: `[tasks] reruns` runs of the fix, every outcome kept
by tree, and a test that flips quarantined everywhere after.

The flaky test counts its runs in a file outside the tree it runs in (one counter per
tree, so the runs on the fix take turns passing and failing whatever runs beside them),
which needs a sandbox that lets a test write there: `none`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from racekit import contestant, script
from terminals import bugbout

from bugbout_tui.core.models import GOLD, SUITE, Ledger, OracleSet, ResolutionSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

pytestmark = [pytest.mark.slow]

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
OPS_FIXED = "def mean(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
FLAKY_MODULE = (
    "import hashlib\nimport os\nfrom pathlib import Path\n\nfrom calc.ops import mean\n\n"
    "TREE = str(Path(__file__).resolve().parents[1])\n"
    "COUNTER = Path(os.environ['FLAKE_COUNTERS']) / hashlib.sha256(TREE.encode()).hexdigest()\n\n\n"
    "def test_mean_empty():\n    assert mean([]) == 0.0\n\n\n"
    "def test_flaky():\n"
    "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
    "    COUNTER.write_text(str(n + 1))\n"
    "    assert n % 2 == 0\n"
)
FLAKY = "tests/test_mean.py::test_flaky"
F2P = "tests/test_mean.py::test_mean_empty"


def build(root: Path, counters: Path, state: Path) -> Path:
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": "from calc.ops import mean\n\n\n"
            "def test_mean():\n    assert mean([1, 3]) == 2\n",
        },
    )
    repo.commit(
        "Fix crash in mean on an empty list (#3)",
        files={"src/calc/ops.py": OPS_FIXED, "tests/test_mean.py": FLAKY_MODULE},
    )
    write_issues(root, {3: ("mean() crashes on []", "ZeroDivisionError")})
    agent = contestant(
        "tinker",
        script("edit", "--count", str(state / "count"), "{workdir}"),
        state_dirs=[str(state)],
    )
    path = write_config(root, "calc", extra="\n[tasks]\nreruns = 3\n" + agent)
    settings = (
        f'env = {{ PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1", FLAKE_COUNTERS = "{counters}" }}\n\n'
        '[run]\nsandbox = "none"\n'
    )
    path.write_text(path.read_text().replace("\n[run]\n", "\n" + settings, 1))
    return root


def test_a_test_that_flips_on_one_tree_is_quarantined_everywhere(
    tmp_path: Path, home: Path, state: Path
) -> None:
    counters = tmp_path / "counters"
    counters.mkdir()
    root = build(tmp_path / "proj", counters, state)
    report = Bout(Project.load(root)).run()
    assert report is not None
    store = root / ".bugbout"

    # `reruns = 3`: the base once, the fix three times, each run's output kept.
    oracle = OracleSet.model_validate_json((store / "oracles.json").read_text()).oracles["calc-3"]
    logs = sorted(p.name for p in (store / oracle.logs).iterdir()) if oracle.logs else []
    assert logs == ["base.log", "fix-1.log", "fix-2.log", "fix-3.log"]
    assert oracle.fail_to_pass == [F2P]
    assert oracle.unstable == [FLAKY]

    ledger = Ledger.model_validate_json((store / "ledger.json").read_text())
    tests = ledger.tasks["calc-3"][SUITE]
    on_fix = next(t for t in tests[F2P].trees.values() if t.label.startswith("fix "))
    assert (on_fix.runs, on_fix.passes, on_fix.fails) == (3, 3, 0)
    flaky = next(t for t in tests[FLAKY].trees.values() if t.label.startswith("fix "))
    assert (flaky.runs, flaky.passes, flaky.fails) == (3, 2, 1)
    assert set(ledger.quarantined("calc-3")) == {SUITE}
    assert set(ledger.quarantined("calc-3")[SUITE]) == {FLAKY}
    # The scoring runs (the agent's patch, the gold control) are in the ledger too.
    labels = {t.label for t in tests[F2P].trees.values()}
    assert {"the gold control", "tinker's patch"} <= labels

    # Not used to score: neither the agent's patch nor the gold control counts it.
    scores = ResolutionSet.model_validate_json((store / "resolutions.json").read_text())
    control = scores.controls["calc-3"]
    assert control.contestant == GOLD
    assert (control.status, control.fail_to_pass) == ("resolved", {F2P: "passed"})
    assert FLAKY not in scores.patches["calc-3"]["tinker"].fail_to_pass
    assert FLAKY not in scores.patches["calc-3"]["tinker"].broken

    # Listed in the report with its evidence, and in `bugbout tasks ID`.
    (item,) = report.quarantined
    assert (item.task, item.author, item.test) == ("calc-3", SUITE, FLAKY)
    assert (item.trees[0].passes, item.trees[0].fails) == (2, 1)
    markdown = (store / "report.md").read_text()
    assert "## Quarantined tests" in markdown
    listed = markdown.split("## Quarantined tests")[1]
    assert "tests/test\\_mean.py::test\\_flaky" in listed  # Markdown's escapes
    assert "2 passed, 1 failed of 3" in listed
    exported = json.loads((store / "report.json").read_text())
    assert exported["quarantined"][0]["test"] == FLAKY
    shown = bugbout("tasks", "calc-3", cwd=root, home=home, COLUMNS="200")
    assert "quarantined" in shown.stdout, shown.stderr
    assert "passed 2 and failed 1 of 3 runs on fix" in shown.stdout
    as_json = json.loads(bugbout("tasks", "calc-3", "--json", cwd=root, home=home).stdout)
    assert [q["test"] for q in as_json["quarantined"]] == [FLAKY]
    assert "fix-3.log" in bugbout("tasks", "calc-3", cwd=root, home=home, COLUMNS="200").stdout
