"""The report a project's store gives: environment repairs are read from `repairs.json`.

No agent runs: the records are written as the stages would write them, and the report
is loaded as `bugbout report` and the TUI load it.
"""

from __future__ import annotations

from pathlib import Path

from envrecords import controls, env_attempt, env_task, repair, taskset
from projects import write_config

from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report, write_report


def test_the_report_reads_the_repairs_from_the_store(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "issues.json").write_text("[]")
    write_config(tmp_path, "pkg")
    project = Project.load(tmp_path)
    store = project.store
    store.write(store.tasks_path, taskset(env_task("lite-1", lite=True)))
    store.write(
        store.repairs_path,
        RepairSet(
            repairs={"lite-1": {"alpha": repair("lite-1", "alpha", safe=1.0, f1=1.0)}},
            controls={"lite-1": controls("lite-1")},
        ),
    )
    attempt = env_attempt("lite-1", "alpha", cost=0.5)
    store.write(store.attempts_dir / "lite-1" / "alpha.json", attempt)

    report = load_report(project)

    assert store.repairs_path == tmp_path / ".bugbout" / "repairs.json"
    assert report.env is not None
    assert report.env.funnel.admitted == 1
    (row,) = report.env.boards[0].rows
    assert (row.agent, row.resolved.count, row.resolved.n, row.cost_usd) == ("alpha", 1, 1, 0.5)
    markdown, _ = write_report(project, report)
    assert "| lite-1 | alpha | approved |" in markdown.read_text()
