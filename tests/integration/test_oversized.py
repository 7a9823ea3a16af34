"""Agents that leave a patch past the caps: recorded `oversized`, small, and no fix.

One whole bout (race, cross-examination, judge, score, report) with three contestants on
one task: `swarm` writes more files than `[run] max-patch-files`, `hoard` more bytes than
`[run] max-patch-bytes`, and `sly` fixes the bug with an edit that keeps the file's size
and puts its modification time back, so the matrix has a patch in it.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from racekit import attempt, contestant, copy_project, records, script, template
from terminals import bugbout

from bugbout_tui.core.models import Matrix, ResolutionSet
from bugbout_tui.report.model import Report

TASK = "calc-1"
MAX_FILES = 40
MAX_BYTES = 2 * 1024 * 1024

pytestmark = pytest.mark.slow


@dataclass
class Bout:
    project: Path
    home: Path

    @property
    def store(self) -> Path:
        return self.project / ".bugbout"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return bugbout("run", *args, cwd=self.project, home=self.home)


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Bout:
    root = tmp_path_factory.mktemp("oversized")
    agents = "".join(
        [
            contestant("swarm", script("hostile", "swarm", "{workdir}", "50", "data"), quota="a"),
            contestant("hoard", script("hostile", "hoard", "{workdir}", "3", "data"), quota="b"),
            contestant(
                "sly",
                script(
                    "hostile", "same-size", "{workdir}", "src/calc/ops.py", "return 0", "return 1"
                ),
                quota="c",
            ),
        ]
    )
    caps = f"max-patch-files = {MAX_FILES}\nmax-patch-bytes = {MAX_BYTES}\n"
    project = copy_project(
        template(tmp_path_factory), root / "proj", tasks=[TASK], run=caps, extra=agents
    )
    found = Bout(project, root / "home")
    result = found.run()
    assert result.returncode == 0, result.stderr
    return found


def test_each_cap_makes_the_attempt_oversized_with_a_small_record(bout: Bout) -> None:
    swarm, hoard = attempt(bout.project, TASK, "swarm"), attempt(bout.project, TASK, "hoard")
    assert (swarm.status, swarm.detail) == (
        "oversized",
        "50 changed files, 10 over the cap of 40",
    )
    assert (hoard.status, hoard.detail) == (
        "oversized",
        "3.0 MB of changed files, 1.0 MB over the cap of 2.0 MB",
    )
    for record in (swarm, hoard):
        assert record.patch.files == [] and record.patch.other == ""
        assert record.patch.notes[0].startswith("not kept: ")
        assert record.patch.notes[1].startswith("largest: data/")
    assert (
        swarm.patch.notes[0]
        == "not kept: 50 changed files (50 new, 0 modified, 0 deleted), 390 B in all"
    )
    assert (
        hoard.patch.notes[0]
        == "not kept: 3 changed files (3 new, 0 modified, 0 deleted), 3.0 MB in all"
    )
    for path, data in records(bout.project).items():
        if path.stem in ("swarm", "hoard"):
            assert len(data) < 4096, path


def test_a_same_size_fix_with_its_time_put_back_is_the_patch(bout: Bout) -> None:
    sly = attempt(bout.project, TASK, "sly")
    assert sly.status == "finished"
    assert [c.path for c in sly.patch.files] == ["src/calc/ops.py"]
    assert "-    return 0\n+    return 1\n" in sly.patch.source


def test_an_oversized_patch_is_scored_as_no_fix_and_left_out_of_the_matrix(bout: Bout) -> None:
    scores = ResolutionSet.model_validate_json((bout.store / "resolutions.json").read_text())
    by_name = scores.patches[TASK]
    assert by_name["sly"].status == "resolved"
    for name in ("swarm", "hoard"):
        assert by_name[name].status == "no-fix"
        detail = attempt(bout.project, TASK, name).detail
        assert by_name[name].detail == f"the patch was too large to keep: {detail}"
    matrix = Matrix.model_validate_json((bout.store / "matrices" / f"{TASK}.json").read_text())
    assert [p.contestant for p in matrix.patches] == ["sly"]
    assert sorted(matrix.trees) == ["base", "sly"]
    assert {a.name for a in matrix.authors}.isdisjoint({"swarm", "hoard"})


def test_the_report_counts_and_lists_oversized_patches(bout: Bout) -> None:
    text = (bout.store / "report.json").read_text()
    report = Report.model_validate_json(text)
    rows = {row.name: (row.no_fix, row.oversized) for row in report.agents.rows}
    assert rows == {"swarm": (1, 1), "hoard": (1, 1), "sly": (0, 0)}
    assert [(o.contestant, o.detail) for o in report.agents.oversized] == [
        ("hoard", attempt(bout.project, TASK, "hoard").detail),
        ("swarm", attempt(bout.project, TASK, "swarm").detail),
    ]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())
    jsonschema.validate(json.loads(text), schema)
    markdown = (bout.store / "report.md").read_text()
    assert "| swarm | 0 | 0 | 0 | 1 (1 oversized) |" in markdown
    assert f"- {TASK}, swarm: 50 changed files, 10 over the cap of 40" in markdown


def test_an_oversized_attempt_is_not_run_again_by_retry_failed(bout: Bout) -> None:
    before = records(bout.project)
    result = bout.run("--retry-failed", "--until", "race")
    assert result.returncode == 0, result.stderr
    assert records(bout.project) == before
