"""How outcomes, clocks, stage progress and counts look: one home for the TUI, the CLI and
the report.

A reader moves between the TUI, the `bugbout run` board and the report and should meet
each fact drawn one way: a status keeps its symbol, word and colour, a clock its format,
a count its noun. So every renderer takes them from here rather than writing its own.

It sits in `core` because every layer that shows something may import it: the report is
imported by the engine, the judge's rules word their reasons with `plural`, and the CLI
and the TUI draw the same state. It uses rich (styles are rich's strings, chips are
`Text`), never textual.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.text import Text

from bugbout_tui.core.events import ClusterChanged, Stage
from bugbout_tui.core.text import inert_line


@dataclass(frozen=True)
class Look:
    """One outcome as every renderer shows it."""

    glyph: str
    word: str
    style: str

    def badge(self) -> Text:
        """`✓ finished`: the symbol and the word, in the outcome's colour."""
        return Text(f"{self.glyph} {self.word}", style=self.style)

    def mark(self) -> Text:
        """The symbol alone, where a row is too narrow for the word."""
        return Text(self.glyph, style=self.style)

    def label(self) -> Text:
        """The word alone, where the symbol would repeat what the column says."""
        return Text(self.word, style=self.style)


PHASES: dict[str, Look] = {
    "queued": Look("·", "queued", "dim"),
    "running": Look("▶", "running", "bold yellow"),
    "interrupted": Look("■", "stopped with the run", "yellow"),
    "finished": Look("✓", "finished", "green"),
    "no-change": Look("∅", "no change", "yellow"),
    "oversized": Look("▣", "oversized", "red"),
    "timeout": Look("◷", "timeout", "red"),
    "crashed": Look("✗", "crashed", "red"),
    "quota": Look("‖", "quota", "magenta"),
    "skipped": Look("-", "skipped", "dim"),
    "budget": Look("$", "budget", "cyan"),
}
"""An attempt's phase: waiting, running, or how it ended (its status)."""

OUTCOMES: dict[str, Look] = {
    "passed": Look("", "passed", "green"),
    "failed": Look("", "failed", "red"),
    "error": Look("", "error", "red"),
    "skipped": Look("", "skipped", "dim"),
    "xfailed": Look("", "xfailed", "yellow"),
    "uncollected": Look("", "uncollected", "magenta"),
}
"""A test's outcome on a tree: pytest's own words, so they carry no symbol."""

RESOLUTIONS: dict[str, Look] = {
    "resolved": Look("", "resolved", "green"),
    "fixed-but-broke": Look("", "fixed but broke", "yellow"),
    "wrong-fix": Look("", "wrong fix", "red"),
    "no-fix": Look("", "no fix", "dim"),
    "quota": Look("", "quota", "magenta"),
    "missing": Look("", "no score yet", "dim"),
}
"""A patch's status under the maintainers' hidden tests, as a reader says it."""

REPAIRS: dict[str, Look] = {
    "resolved": Look("✓", "resolved", "green"),
    "install-failed": Look("✗", "install failed", "red"),
    "run-failed": Look("✗", "run failed", "red"),
    "rejected": Look("⊘", "rejected", "red"),
    "no-repair": Look("∅", "no repair", "yellow"),
    "not-run": Look("-", "not counted", "dim"),
}
"""How an environment repair ended: installed and ran, or where it stopped."""

PICKS: dict[bool, Look] = {
    True: Look("✓", "right", "green"),
    False: Look("✗", "wrong", "red"),
}
"""Whether a picked patch proved right under the hidden tests."""

STAGE_STATES: dict[str, Look] = {
    "planned": Look("·", "still to come", "dim"),
    "running": Look("◐", "running", "bold yellow"),
    "done": Look("✓", "done", "green"),
    "failed": Look("✗", "failed", "bold red"),
}
"""A stage of the bout: still to come, running with its progress, done, or failed (the
bout stopped on an error during it)."""


def _looked_up(table: Mapping[str, Look], name: str) -> Look:
    """A name the table does not know (one a newer version recorded) shows as it is, plain."""
    return table.get(name) or Look("?", name, "")


def phase(name: str) -> Look:
    return _looked_up(PHASES, name)


def outcome(name: str) -> Look:
    return _looked_up(OUTCOMES, name)


def resolution(name: str) -> Look:
    return _looked_up(RESOLUTIONS, name)


def repair(name: str) -> Look:
    return _looked_up(REPAIRS, name)


def pick(right: bool) -> Look:
    return PICKS[right]


def outcome_text(name: str | None) -> Text:
    """A test's outcome, or `not run` where the tree never ran it."""
    return Text("not run", style="dim") if name is None else outcome(name).label()


class ShownStage(Protocol):
    """What a chip needs of a stage's live view (the engine's `StageView`)."""

    @property
    def state(self) -> str: ...

    @property
    def done(self) -> int: ...

    @property
    def total(self) -> int | None: ...


def stage_chips(
    planned: Sequence[Stage], stages: Mapping[Stage, ShownStage], *, compact: bool = False
) -> Text:
    """Each planned stage as done, running (with its progress), failed or still to come.

    `compact` is for a narrow header: every stage keeps its symbol, in order, but only a
    running stage keeps its name, which is the one a reader looks for; when none runs,
    a count of the done stages stands in for the names.
    """
    chips = Text()
    running = False
    for index, stage in enumerate(planned):
        view = stages.get(stage)
        shown = STAGE_STATES["planned" if view is None else view.state]
        progress = ""
        if view is not None and view.state == "running" and view.total:
            progress = f" {view.done}/{view.total}"
        if not compact:
            if index:
                chips.append(" ")
            chips.append(f"{shown.glyph} {stage}{progress}", style=shown.style)
        elif view is not None and view.state == "running":
            running = True
            chips.append(f"{shown.glyph} {stage}{progress} ", style=shown.style)
        else:
            chips.append(shown.glyph, style=shown.style)
    if compact and not running and planned:
        done = sum(1 for stage in planned if (v := stages.get(stage)) and v.state == "done")
        chips.append(f" {done} of {plural(len(planned), 'stage')} done", style="dim")
    chips.rstrip()
    return chips


def clock(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` past an hour: a running or finished attempt's time."""
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def duration(seconds: float | None) -> str:
    """`45 s`, `3 m 05 s`, `2 h 10 m`; `n/a` when nothing was timed.

    The report's medians and totals are read in prose and tables, where units say what a
    number is; a clock is for columns that tick.
    """
    if seconds is None:
        return "n/a"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} m {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} m"


_DIGITS = re.compile(r"(\d+)")


def task_order(task: str) -> tuple[tuple[int, str], ...]:
    """Sort key that puts `pkg-4` before `pkg-11`, as history numbers tasks.

    Numbers compare as numbers and the text between them as text, so a list of tasks
    reads in the order they were mined wherever it is shown.
    """
    return tuple(
        (int(part), "") if part.isdigit() else (-1, part) for part in _DIGITS.split(task) if part
    )


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 test`, `3 tests`; `nouns` where adding an `s` is wrong (`2 patches`)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def verb(count: int, one: str, many: str) -> str:
    """The verb that agrees with a count: `1 test fails`, `3 tests fail`."""
    return one if count == 1 else many


def tokens_text(input_tokens: int | None, output_tokens: int | None) -> str:
    """`12.3k in / 4.1k out`, or empty when the agent reported nothing."""
    if input_tokens is None and output_tokens is None:
        return ""
    return f"{_count(input_tokens)} in / {_count(output_tokens)} out"


THIS_MACHINE = "this machine"
"""Where an attempt ran when no cluster's worker ran it: the coordinator's machine."""


def place(worker: str | None) -> str:
    """Where an attempt's agent runs or ran: its worker's name (inert: a cluster names its
    workers as it is told), or this machine when no worker ran it."""
    return THIS_MACHINE if worker is None else inert_line(worker)


def cluster_counts(cluster: ClusterChanged) -> str:
    """`2 workers · 1 busy · 0 lost`: what a person watches of a bout's cluster."""
    return f"{plural(cluster.workers, 'worker')} · {cluster.busy} busy · {cluster.lost} lost"


def cluster_text(cluster: ClusterChanged, *, address: bool = True) -> Text:
    """`cluster tcp://10.0.0.5:8786 · 2 workers · 1 busy · 0 lost`, or without the
    address where a line has no room for it. Lost workers turn red, since an attempt
    on one is recorded crashed."""
    line = Text("cluster", style="bold")
    if address:
        line.append(f" {inert_line(cluster.address)}", style="cyan")
    line.append(f" · {cluster_counts(cluster)}", style="dim")
    if cluster.lost:
        line.stylize("bold red", len(line) - len(f"{cluster.lost} lost"))
    return line


def _count(value: int | None) -> str:
    if value is None:
        return "?"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)
