"""The Verdicts screen's table: every task under every policy, fitted to the width.

Five policies side by side, each column as wide as its longest pick, outgrow 80 columns
as soon as agent or task names are long (an environment task's row reads
`lite-pin-yanked env` and `careful gate ✗`). A table that scrolls sideways hides the
very policies it is there to compare, and a cut name says nothing, so the table gives
up detail in steps, and only as far as the width asks:

1. every pick in full;
2. a policy that picks what the shown policy picks says `same`, so the names left are
   the disagreements, which are what the table is for;
3. the two longest policy names shortened (`unanim.`, `x-vendor`); the policy bar above
   names the shown policy in full.

Past that the table scrolls sideways, names still whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from bugbout_tui.core import look
from bugbout_tui.core.config import Policy
from bugbout_tui.core.text import inert_line
from bugbout_tui.core.trials import trial_label_among
from bugbout_tui.rules.env_judge import EnvVerdict
from bugbout_tui.rules.judge import POLICIES, Verdict
from bugbout_tui.tui.env_view import ENV_MARK
from bugbout_tui.tui.records import Records

NO_VERDICT = Text("no matrix yet", style="dim")
SAME_PICK = Text("same", style="dim italic")
"""A pick the column's policy shares: with the shown policy's, or on an environment
task, whose env judge has no policy, with the first column's."""
SHORT_HEADINGS: dict[Policy, str] = {"unanimous": "unanim.", "cross-vendor": "x-vendor"}
"""The policies whose names give way first when the table is too wide."""
CELL_PADDING = 1
"""Spaces each side of a cell: DataTable's default, which the widths here count."""

Fit = Literal["full", "same", "short"]
"""How far the table gave up detail to fit: see the module's steps 1 to 3."""


def patch_label(patch: str, verdict: Verdict) -> str:
    """A patch named by its agent, with the trial when its agent ran several here."""
    return trial_label_among(patch, (a.patch for a in verdict.assessments))


def pick_text(verdict: Verdict | None, records: Records) -> Text:
    """A policy's pick with whether the hidden tests proved it right, or `abstain`."""
    if verdict is None:
        return NO_VERDICT
    if verdict.pick is None:
        return Text("abstain", style="dim italic")
    text = Text(inert_line(patch_label(verdict.pick, verdict)), style="bold")
    resolution = records.resolution(verdict.task, verdict.pick)
    if resolution is not None:
        mark = look.pick(resolution.status == "resolved")
        text.append(f" {mark.glyph}", style=f"bold {mark.style}")
    return text


def env_pick_text(verdict: EnvVerdict) -> Text:
    """The env judge's pick with the merge gate's answer, or `abstain`."""
    if verdict.pick is None:
        return Text("abstain", style="dim italic")
    text = Text(inert_line(verdict.pick), style="bold")
    text.append(" gate ✓" if verdict.approved else " gate ✗",
                style="bold green" if verdict.approved else "bold red")  # fmt: skip
    return text


@dataclass(frozen=True)
class VerdictTable:
    """What the table shows: a heading per column and a row per task, task cell first."""

    headings: list[Text]
    rows: dict[str, list[Text]]
    """Task id → its cells, in the order the tasks are listed."""
    fit: Fit


def verdict_table(records: Records, shown: Policy, room: int) -> VerdictTable:
    """Every task with a verdict or an env verdict, under every policy, in as much detail
    as `room` cells of width allow (see the module's steps)."""
    tasks = sorted({*records.verdicts, *records.env_verdicts}, key=look.task_order)
    full = {task: _row(records, task) for task in tasks}
    same = {task: _same_as_shown(records, task, cells, shown) for task, cells in full.items()}
    steps = [
        VerdictTable(_headings(shown, short=False), full, "full"),
        VerdictTable(_headings(shown, short=False), same, "same"),
        VerdictTable(_headings(shown, short=True), same, "short"),
    ]
    return next((table for table in steps if table_width(table) <= room), steps[-1])


def table_width(table: VerdictTable) -> int:
    """Cells the table takes: each column as wide as its widest cell or heading."""
    columns = [[heading] for heading in table.headings]
    for cells in table.rows.values():
        for column, cell in zip(columns, cells, strict=True):
            column.append(cell)
    return sum(max(cell.cell_len for cell in column) + 2 * CELL_PADDING for column in columns)


def _headings(shown: Policy, *, short: bool) -> list[Text]:
    headings = [Text("task", style="bold")]
    for policy in POLICIES:
        # The shown policy's mark follows its name: a heading starts where its
        # column's values start.
        current = policy == shown
        name = SHORT_HEADINGS.get(policy, policy) if short else policy
        heading = Text(name, style="bold reverse" if current else "bold")
        if current:
            heading.append(" ◂", style="bold")
        headings.append(heading)
    return headings


def _row(records: Records, task: str) -> list[Text]:
    if task in records.verdicts:
        verdicts = records.verdicts[task]
        return [
            Text(inert_line(task), style="bold"),
            *(pick_text(verdicts.get(policy), records) for policy in POLICIES),
        ]
    name = Text.assemble((inert_line(task), "bold"), (f" {ENV_MARK}", "magenta"))
    return [name, env_pick_text(records.env_verdicts[task]), *(SAME_PICK for _ in POLICIES[1:])]


def _same_as_shown(records: Records, task: str, cells: list[Text], shown: Policy) -> list[Text]:
    """The row with every pick the shown policy shares said as `same`."""
    if task not in records.verdicts:
        return cells
    mine = cells[1 + POLICIES.index(shown)].plain
    return [
        cells[0],
        *(
            SAME_PICK if policy != shown and cell.plain == mine else cell
            for policy, cell in zip(POLICIES, cells[1:], strict=True)
        ),
    ]
