"""Environment tasks drawn for the screens: what kind of task one is, its controls, and
one repair in full (its install, its traced run, the audit, D¹, D² and D³).

Package names, requirements, versions, advisory ids, uv's error lines and file names
come from agents, projects and package indexes: every one is made inert and goes in as
`Text`, never as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from bugbout_tui.core import look
from bugbout_tui.core.env_models import (
    AuditFinding,
    EnvStep,
    Newest,
    Repair,
)
from bugbout_tui.core.models import BASE, GOLD, Task
from bugbout_tui.core.text import inert_line
from bugbout_tui.report.env_build import control_problem
from bugbout_tui.rules.env_judge import f1_text, gate_blockers, share

ENV_MARK = "env"
"""What marks an environment task where a row names tasks of both kinds."""

NOT_SCORED = (
    "Not scored yet: after the race each repair's environment files are installed clean "
    "at the task's date, and the task's command is run traced."
)


def _facts() -> Table:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    return facts


def _plain(text: str, style: str = "") -> Text:
    return Text(inert_line(text), style=style)


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold")


def env_kind(task: Task) -> Text:
    """`environment repair · Lite · security`: what kind of task it is, in a line."""
    env = task.env
    text = Text("environment repair", style="bold magenta")
    if env is None:
        return text
    text.append(" · Lite (built in)" if env.lite else " · mined from the history")
    if env.security:
        text.append(" · security", style="bold yellow")
    return text


def failure_words(repair: Repair) -> str | None:
    """Why a repair did not resolve, in a line: its own detail, else the failed step's."""
    if repair.detail:
        return repair.detail
    for step in (repair.install, repair.trace):
        if step is not None and not step.ok and step.detail:
            return step.detail
    return None


def _control_line(control: Repair | None, must: str) -> Text:
    if control is None:
        return Text(f"not made yet ({must})", style="dim")
    text = look.repair(control.status).badge()
    why = failure_words(control)
    if why:
        text.append(": ")
        text.append(inert_line(why))
    if control.resolved and control.safe_install is not None:
        text.append(f" · safe install {share(control.safe_install)}", style="dim")
    text.append(f"  ({must})", style="dim")
    return text


def env_controls_view(controls: Mapping[str, Repair]) -> RenderableType:
    """An environment task's ground truth: its two controls, and whether they let it be
    scored. The files as written must fail, the known repair must install and run."""
    facts = _facts()
    facts.add_row("base", _control_line(controls.get(BASE), "the files as written: must fail"))
    facts.add_row(
        "gold", _control_line(controls.get(GOLD), "the known repair: must install and run")
    )
    problem = control_problem(controls)
    if problem is None:
        facts.add_row("scored", Text("yes: the controls are as they must be", style="green"))
    else:
        facts.add_row("scored", Text(f"no: {problem}", style="yellow"))
    return Group(_heading("controls (its ground truth)"), facts)


def _step_line(step: EnvStep | None, what: str) -> Text:
    if step is None:
        return Text(f"not {what}", style="dim")
    mark = ("✓ ", "green") if step.ok else ("✗ ", "red")
    code = "–" if step.exit_code is None else str(step.exit_code)
    text = Text.assemble(mark, f"exit {code} · {look.duration(step.seconds)}")
    if not step.ok and step.detail:
        text.append(": ")
        text.append(inert_line(step.detail), style="red")
    return text


def _names(names: Sequence[str]) -> Text:
    """A set of names in a line."""
    if not names:
        return Text("none", style="dim")
    return _plain(", ".join(names))


def repair_view(repair: Repair | None) -> RenderableType:
    """One repair in full: how it ended, its install and traced run, the audit of every
    declared package, and what it declares, installs and uses."""
    if repair is None:
        return Text(NOT_SCORED, style="dim")
    facts = _facts()
    facts.add_row("status", look.repair(repair.status).badge())
    if repair.detail:
        facts.add_row("why", _plain(repair.detail, "" if repair.resolved else "red"))
    if repair.rejected_files:
        facts.add_row(
            "rejected for",
            _plain(", ".join(repair.rejected_files) + " (not environment files)", "red"),
        )
    facts.add_row(
        "changed",
        _plain(", ".join(repair.changed) or "no environment file")
        + Text(f" · {look.plural(repair.size, 'line')}", style="dim"),
    )
    if repair.status not in ("rejected", "no-repair"):
        facts.add_row("install", _step_line(repair.install, "installed"))
        if repair.install is not None and repair.install.unenforced:
            shown = ", ".join(repair.install.unenforced)
            facts.add_row("date not enforced", _plain(shown, "yellow"))
        if repair.install is not None and repair.install.brought:
            brought = _plain(", ".join(repair.install.brought))
            brought.append(" · bugbout's test runner, not the repair's: not in D³", style="dim")
            facts.add_row("brought", brought)
        facts.add_row("traced run", _step_line(repair.trace, "run"))
    facts.add_row(
        "safe install",
        Text(f"{share(repair.safe_install)} of the declared packages are safe"),
    )
    facts.add_row(
        "D¹ vs D³",
        Text(
            f"precision {f1_text(repair.precision)} · recall {f1_text(repair.recall)} · "
            f"F1 {f1_text(repair.f1)}"
        ),
    )
    blockers = gate_blockers(repair)
    if not repair.resolved:
        gate = Text("not a candidate: only a repair that installed and ran is", style="dim")
    elif blockers:
        gate = Text("would refuse it: " + inert_line("; ".join(blockers)), style="red")
    else:
        gate = Text(
            "would approve it: nothing vulnerable, removed, unchecked or a typo of a popular name",
            "green",
        )
    facts.add_row("merge gate", gate)
    if repair.network:
        facts.add_row("network", _plain(repair.network, "dim"))
    parts: list[RenderableType] = [facts]
    parts += [_heading(f"audit: {len(repair.audit)}"), audit_table(repair.audit)]
    if repair.newest:
        parts += [_heading("newest is not the same as safe"), newest_table(repair.newest)]
    used = set(repair.trace.used) if repair.trace is not None else set()
    declared = {item.name for item in repair.declared}
    parts += [_heading(f"D¹ declared: {len(repair.declared)}"), declared_table(repair, used)]
    installed = repair.install.installed if repair.install is not None else []
    parts += [_heading(f"D² installed: {len(installed)}"), _names(installed)]
    parts.append(_heading(f"D³ used by the traced run: {len(used)}"))
    if repair.trace is None:
        parts.append(Text("not traced", style="dim"))
    else:
        used_facts = _facts()
        used_facts.add_row("declared", _names(sorted(used & declared)))
        used_facts.add_row("not declared", _names(sorted(used - declared)))
        parts.append(used_facts)
    return Group(*parts)


def declared_table(repair: Repair, used: set[str]) -> RenderableType:
    """D¹: each declared package, its requirement as written, its pin and its file."""
    if not repair.declared:
        return Text("nothing", style="dim")
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("package", "requirement", "pinned", "from", "used"):
        table.add_column(column, overflow="fold")
    traced = repair.trace is not None
    for item in repair.declared:
        table.add_row(
            _plain(item.name),
            _plain(item.requirement),
            _plain(item.pinned) if item.pinned else Text("not pinned", style="yellow"),
            _plain(item.source, "dim"),
            (Text("✓", "green") if item.name in used else Text("–", "dim"))
            if traced
            else Text("?", "dim"),
        )
    return table


def _known(value: bool | None, yes: str = "✓", no: str = "✗") -> Text:
    if value is None:
        return Text("?", style="dim")
    return Text(yes, style="green") if value else Text(no, style="red")


def _removed(finding: AuditFinding) -> Text:
    if finding.removed is None:
        return Text("?", style="dim")
    if finding.yanked:
        return Text("yanked", style="red")
    return Text("removed", style="red") if finding.removed else Text("no", style="dim")


def audit_table(findings: Sequence[AuditFinding]) -> RenderableType:
    """The audit, one row per declared package; `safe` is what safe install counts."""
    if not findings:
        return Text("nothing was audited", style="dim")
    # Nine columns in 80: one space between them, and advisory ids and reasons wrap
    # rather than lose their ends.
    table = Table(box=None, header_style="bold", pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("package", overflow="fold")
    table.add_column("pinned", overflow="fold")
    table.add_column("exists")
    table.add_column("removed")
    table.add_column("advisories", overflow="fold", min_width=10)
    table.add_column("typo of", overflow="fold", min_width=7)
    table.add_column("install code", max_width=7)
    table.add_column("unchecked", overflow="fold", min_width=9)
    table.add_column("safe")
    for finding in findings:
        advisories = ", ".join(advisory.id for advisory in finding.advisories)
        if finding.install_code is None:
            builds = Text("?", style="dim")
        else:
            builds = (
                Text("sdist", style="yellow")
                if finding.install_code
                else Text("wheel", style="dim")
            )
        table.add_row(
            _plain(finding.name),
            _plain(finding.pinned) if finding.pinned else Text("no pin", style="yellow"),
            _known(finding.exists),
            _removed(finding),
            _plain(advisories, "red") if advisories else Text("none", style="dim"),
            _plain(finding.typo_of, "yellow") if finding.typo_of else Text(""),
            builds,
            _plain(finding.unchecked, "yellow") if finding.unchecked else Text(""),
            Text("✓", style="bold green") if finding.safe else Text("✗", style="bold red"),
        )
    return table


def newest_table(rows: Sequence[Newest]) -> RenderableType:
    """Each pinned package against the newest version at the task's date and today,
    with the advisories of each version that has any."""
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("package", "declared", "newest at date", "newest today", "advisories"):
        table.add_column(column, overflow="fold")
    for row in rows:
        advisories = "; ".join(
            f"{version}: {', '.join(ids)}" for version, ids in row.advisories.items()
        )
        table.add_row(
            _plain(row.name),
            _plain(row.declared),
            _plain(row.newest_at_date or "n/a"),
            _plain(row.newest_today or "n/a"),
            _plain(advisories, "red") if advisories else Text("none", style="dim"),
        )
    return table
