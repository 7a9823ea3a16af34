"""The report from whatever the store holds: nothing is run, so it takes a moment.

`load_report` is the one computation behind every report: the one `bugbout run` writes,
`bugbout report` in each format, and the TUI's Report screen. Its inputs are the store
and the configuration alone (the person's task decisions, the policy), never what a
run happens to hold in memory, so all of them agree. Verdicts are recomputed from the
stored matrices every time, under all four policies: the judge is pure and fast, and a
policy switched in `bugbout.toml` must show at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import Attempt, Ledger, OracleSet, ResolutionSet, TaskSet
from bugbout_tui.engine.judge import judge_matrices, judged
from bugbout_tui.engine.project import Project
from bugbout_tui.report import Report, build_report, render_json, render_markdown
from bugbout_tui.rules.cost import costing_for
from bugbout_tui.rules.judge import author_identity


def load_report(
    project: Project,
    *,
    keep_verdicts: bool = False,
    contestants: Sequence[str] | None = None,
    examiners: Sequence[str] | None = None,
) -> Report:
    """Build the report from the store, judging every stored matrix afresh.

    `keep_verdicts` also stores those verdicts as `verdicts.json`; the report is the same
    either way, so a read-only viewer leaves it off. `contestants` and `examiners` name
    the entrants when a bout was given adapter objects rather than the config's tables;
    agents with stored records that neither names are reported after them.
    """
    store = project.store
    taskset = store.read(store.tasks_path, TaskSet)
    if taskset is None:
        raise UsageError(
            "nothing to report yet: no tasks have been mined.",
            hint="Run `bugbout run` first.",
        )
    matrices = store.matrices()
    verdicts = judge_matrices(project, matrices) if keep_verdicts else judged(project, matrices)
    cfg = project.config
    attempts = [a for group in store.attempts().values() for a in group]
    return build_report(
        project=project.dir.name,
        policy=cfg.judge.policy,
        taskset=taskset,
        oracles=store.read(store.oracles_path, OracleSet) or OracleSet(),
        attempts=attempts,
        matrices=matrices,
        verdicts=verdicts.verdicts,
        resolutions=store.read(store.resolutions_path, ResolutionSet) or ResolutionSet(),
        contestants=_entrants(
            contestants, [c.name for c in cfg.contestants], attempts, "contestant"
        ),
        examiners=_entrants(examiners, [e.name for e in cfg.examiners], attempts, "examiner"),
        decisions=cfg.tasks,
        ledger=store.read(store.ledger_path, Ledger),
        costing=costing_for(cfg),
        stop_level=cfg.run.decided_at if cfg.run.stop_when_decided else None,
        repairs=store.read(store.repairs_path, RepairSet),
    )


def write_report(project: Project, report: Report) -> tuple[Path, Path]:
    """`report.md` and `report.json` beside the other records."""
    store = project.store
    markdown, data = store.report_markdown_path, store.report_json_path
    store.write_text(markdown, render_markdown(report))
    store.write_text(data, render_json(report))
    return markdown, data


def _entrants(
    given: Sequence[str] | None, configured: Sequence[str], attempts: Sequence[Attempt], role: str
) -> list[str]:
    """The report's agents in this role: the ones named (the config's, or the bout's
    adapter objects), then every other one the store holds records of, by name.

    The records decide who is reported, not the config: an agent taken out of
    bugbout.toml after it raced still has attempts, cells and picks, and a report that
    dropped it would disagree with the verdicts it shows.
    """
    names = list(given) if given is not None else list(configured)
    stored = {author_identity(a.contestant) for a in attempts if a.role == role}
    return names + sorted(stored - set(names))
