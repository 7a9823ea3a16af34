"""One quota lane of the race: what runs now, its output, what waits and what ended.

Agents sharing a quota (one plan, one rate limit) take turns, so a lane is the natural
unit to watch: at most `capacity` attempts run in it at once. Its head, output and list
are drawn together from one state, so they never disagree; the head and list only when
the lane changed or its clocks moved on, and the log takes new lines in one batch. Names
and the parking message come from the config and from agents: they are shown inert.

An attempt on an environment task is marked as one, and once its repair is scored (a
clean install and a traced run, after the race) its row ends as the repair did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.widgets import Static

from bugbout_tui.agents.quota import limit_resets
from bugbout_tui.core import look
from bugbout_tui.core.text import inert_line
from bugbout_tui.core.trials import trial_label
from bugbout_tui.engine.state import AttemptView, BoutState, LaneView
from bugbout_tui.tui.env_view import ENV_MARK
from bugbout_tui.tui.feed import OutputBook
from bugbout_tui.tui.widgets.pick_list import PickList
from bugbout_tui.tui.widgets.tail import OutputTail

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class EnvRows:
    """What the lanes know of environment tasks, from the store."""

    tasks: frozenset[str] = frozenset()
    """The environment tasks' ids."""
    repairs: Mapping[str, str] = field(default_factory=dict)
    """Attempt → how its repair ended, for the repairs scored so far."""
    version: int = -1
    """The reading of the store it comes from: lanes draw again when it changes."""


NO_ENV = EnvRows()


def lane_id(quota: str, index: int) -> str:
    """A widget id for a quota name, which may hold any character."""
    return f"lane-{index}-{_UNSAFE_ID.sub('_', quota)}"


def elapsed(view: AttemptView, now: datetime) -> float | None:
    """Seconds an attempt took, or has taken so far."""
    if view.seconds is not None:
        return view.seconds
    if view.started_at is not None:
        return (now - view.started_at).total_seconds()
    return None


def shown_phase(view: AttemptView, ended: bool) -> str:
    """An attempt still running when its run ended was stopped with it."""
    return "interrupted" if ended and view.phase == "running" else view.phase


def attempt_name_text(view: AttemptView, env: EnvRows) -> Text:
    """`task · contestant`, with `env` before the task when it is an environment task."""
    line = Text()
    if view.task in env.tasks:
        line.append(f"{ENV_MARK} ", style="magenta")
    line.append(inert_line(view.task), style="bold")
    line.append(" · ")
    line.append(inert_line(trial_label(view.contestant)))
    return line


def attempt_row(
    view: AttemptView, now: datetime, ended: bool = False, env: EnvRows = NO_ENV
) -> Text:
    """One attempt as a line of the lane's list. An attempt on an environment task whose
    repair is scored ends as its repair did (installed and ran, install failed, …): that
    is its result, where the agent's own ending says little. The cluster's worker its
    agent runs or ran on comes last, the part a narrow lane cuts first."""
    phase = shown_phase(view, ended)
    ended_as = look.phase(phase)
    repaired = env.repairs.get(view.attempt)
    if phase not in ("queued", "running") and repaired not in (None, "not-run"):
        ended_as = look.repair(repaired)
    line = Text.assemble(ended_as.mark(), " ", attempt_name_text(view, env))
    if view.role == "examiner" and "examiner" not in view.contestant:
        line.append(" (examiner)", style="dim")
    took = elapsed(view, now)
    if took is not None and phase != "queued":
        line.append(f"  {look.clock(took)}", style="dim")
    if phase not in ("queued", "running"):
        line.append(f"  {ended_as.word}", style=ended_as.style)
    if view.worker is not None:
        line.append(f"  on {look.place(view.worker)}", style="cyan")
    return line


def lane_counts(quota: str, lane: LaneView, capacity: int, width: int) -> Text:
    """The lane's name and counts in `width` cells if a shorter wording fits: the counts
    are what a narrow lane must not lose, the capacity (from the config) goes first."""
    running, queued, done = len(lane.running), len(lane.queued), len(lane.finished)
    wordings = (
        f"  {capacity} at a time · {running} running · {queued} queued · {done} done",
        f"  {running} running · {queued} queued · {done} done",
        f"  {running} run · {queued} wait · {done} done",
    )
    name = inert_line(quota)
    for counts in wordings:
        if not width or cell_len(name) + cell_len(counts) <= width:
            break
    return Text.assemble((name, "bold"), (counts, "dim"))


def last_started(lane: LaneView, views: dict[str, AttemptView]) -> str | None:
    """The newest finished attempt whose agent ran: when a lane parks, the attempts it
    never let out end after the one that hit the limit, and have nothing to show."""
    for attempt in reversed(lane.finished):
        view = views.get(attempt)
        if view is not None and view.logdir is not None:
            return attempt
    return lane.finished[-1] if lane.finished else None


def parked_until(lane: LaneView, now: datetime, width: int = 0) -> Text:
    """A parked lane's third line: when its limit resets and how long until then, as far
    as the agent's message says; for a lane waiting to resume in this run, when it
    resumes. In a narrow lane (`width`) the words around the time give way before the
    time itself or the countdown would be cut."""
    if lane.resumes_at is not None:
        return _waiting_until(lane, lane.resumes_at, now, width)
    resets = lane.resets_at or limit_resets(lane.parked or "", lane.parked_at or now)
    if resets is None:
        return Text("  the agent did not say when the limit resets", style="dim magenta")
    when = _when(resets, now)
    left = (resets - now).total_seconds()
    if left >= 86_400:
        days, rest = divmod(int(left), 86_400)
        wordings = [(f"resets at {when}", f"in {days} d {rest // 3600} h"),
                    (f"resets {when}", f"in {days} d")]  # fmt: skip
    elif left > 0:
        wordings = [(f"resets at {when}", f"in {look.clock(left)}")]
    else:
        wordings = [(f"resets at {when}", "it has reset: f retries"),
                    (f"reset at {when}", "f retries")]  # fmt: skip
    return _fitted(wordings, width)


def _waiting_until(lane: LaneView, resumes: datetime, now: datetime, width: int) -> Text:
    """The countdown of a lane that resumes by itself: at the reset its agent named,
    or, when it named none, at its next probe."""
    verb = "resumes" if lane.resets_at is not None and resumes <= lane.resets_at else "tries again"
    when = _when(resumes, now, seconds=True)
    left = (resumes - now).total_seconds()
    if left > 0:
        wordings = [(f"{verb} at {when}", f"in {look.clock(left)}"),
                    (f"{verb} {when}", look.clock(left))]  # fmt: skip
    else:
        wordings = [(f"{verb} at {when}", "resuming now"), (when, "resuming")]
    return _fitted(wordings, width)


def _when(moment: datetime, now: datetime, *, seconds: bool = False) -> str:
    """A moment in local time, its date too when it is not today's; to the second for
    a lane that resumes within the run, whose wait may be shorter than a minute."""
    local = moment.astimezone()
    if local.date() != now.astimezone().date():
        return local.strftime("%b %d %H:%M")
    return local.strftime("%H:%M:%S" if seconds and local.second else "%H:%M")


def _fitted(wordings: list[tuple[str, str]], width: int) -> Text:
    fits = [w for w in wordings if not width or cell_len(f"  {w[0]} · {w[1]}") <= width]
    said, countdown = fits[0] if fits else wordings[-1]
    return Text.assemble((f"  {said}", "bold magenta"), (f" · {countdown}", "magenta"))


class LaneList(PickList):
    """A lane's attempts; enter opens the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "pick", "Open attempt", id="open-attempt",
                tooltip="Prompt, log, patch, tokens and cost of the attempt"),
    ]  # fmt: skip


def preload_lane_css(app: App[object]) -> None:
    """Give the stylesheet the defaults of a lane's widgets before the first lane exists.

    Mounting a widget class it has not seen makes Textual parse the whole stylesheet
    again (some 30 ms); lanes appear mid-race, in a frame busy enough already, so the
    Race screen makes their classes known when it opens instead.
    """
    box = LaneBox("", id="preload")
    for widget in (box, *box.compose()):
        for read_from, css, tie_breaker, scope in widget._get_default_css():
            app.stylesheet.add_source(
                css, read_from=read_from, is_default_css=True, tie_breaker=tie_breaker,
                scope=scope,
            )  # fmt: skip


class LaneBox(Container):
    """A quota lane: a two-line head, the followed attempt's output, and its attempts
    (running first, then the finished ones newest first, then the queue)."""

    def __init__(self, quota: str, *, id: str) -> None:
        super().__init__(id=id, classes="lane")
        self.quota = quota
        self._log_attempt: str | None = None
        self._log_seen = 0
        self._drawn: tuple[object, ...] | None = None
        """What the head and list were last drawn from: the lane's version, whether the
        run had ended, its capacity, and the seconds its clocks showed."""
        self._head_drawn_from: (
            tuple[LaneView, list[AttemptView], int, datetime, datetime, bool] | None
        ) = None
        """What the head was last drawn from, to draw it again when the lane is resized."""
        self._env = NO_ENV

    def compose(self) -> ComposeResult:
        yield Static(classes="lane-head")
        yield OutputTail(classes="lane-log")
        yield LaneList(classes="lane-list")

    @property
    def attempts(self) -> LaneList:
        return self.query_one(LaneList)

    def highlighted_attempt(self) -> str | None:
        return self.attempts.highlighted

    def show(
        self,
        lane: LaneView,
        state: BoutState,
        outputs: OutputBook,
        now: datetime,
        capacity: int,
        wall: datetime,
        env: EnvRows = NO_ENV,
    ) -> None:
        """Redraw from the state: the log takes its new lines, the head and the list are
        drawn again when the lane, the second on its clocks or the store's environment
        repairs changed. `now` is what the attempts' clocks count to (it stands still
        once a run ended); `wall` is the wall clock, which a parked lane counts down to
        its reset by."""
        views = state.attempts
        running = [views[a] for a in lane.running if a in views]
        self._show_log(lane, running, views, outputs)
        ended = state.outcome is not None
        second = int(now.timestamp()) if running else 0
        countdown = int(wall.timestamp()) if lane.parked is not None else 0
        drawn = (lane.version, ended, capacity, second, countdown, env.version)
        if drawn != self._drawn:
            self._drawn = drawn
            self._env = env
            self._show_head(lane, running, capacity, now, wall, ended)
            order = [*lane.running, *reversed(lane.finished), *lane.queued]
            self._show_list([views[a] for a in order if a in views], now, ended)

    def _show_head(
        self,
        lane: LaneView,
        running: list[AttemptView],
        capacity: int,
        now: datetime,
        wall: datetime,
        ended: bool,
    ) -> None:
        self._head_drawn_from = (lane, running, capacity, now, wall, ended)
        head = lane_counts(self.quota, lane, capacity, self.content_size.width)
        second: Text
        lines = [head]
        if lane.parked is not None:
            waits = lane.resumes_at is not None
            words = "‖ waiting out a usage limit: " if waits else "‖ parked on a usage limit: "
            second = Text(words, style="bold magenta")
            second.append(inert_line(lane.parked), style="magenta")
            lines.append(second)
            second = parked_until(lane, wall, self.content_size.width)
        elif running and ended:
            second = Text(f"■ {len(running)} stopped with the run; s carries on", style="yellow")
        elif running:
            view = running[0]
            second = Text.assemble(("▶ ", "bold yellow"), attempt_name_text(view, self._env))
            took = elapsed(view, now)
            if took is not None:
                second.append(f" · {look.clock(took)}", style="yellow")
            if view.worker is not None:
                second.append(f" · on {look.place(view.worker)}", style="cyan")
            tokens = look.tokens_text(view.input_tokens, view.output_tokens)
            if tokens:
                second.append(f" · {tokens}", style="dim")
            if len(running) > 1:
                second.append(f" (+{len(running) - 1} more)", style="dim")
        elif lane.queued:
            second = Text("waiting for its turn", style="dim")
        else:
            second = Text("✓ lane finished", style="green")
        lines.append(second)
        for part in lines:
            part.no_wrap = True
            part.overflow = "ellipsis"
        # Lines in a row of fixed height: no layout pass for the whole screen (a parked
        # lane's head has a third line, for when the limit resets).
        self.set_class(lane.parked is not None, "-parked")
        self.query_one(".lane-head", Static).update(Text("\n").join(lines), layout=False)

    def on_resize(self) -> None:
        """The counts' wording depends on the width: a lane just laid out draws its head
        again, as it fits."""
        if self._head_drawn_from is not None:
            self._show_head(*self._head_drawn_from)

    def _show_log(
        self,
        lane: LaneView,
        running: list[AttemptView],
        views: dict[str, AttemptView],
        outputs: OutputBook,
    ) -> None:
        followed = running[0].attempt if running else last_started(lane, views)
        log = self.query_one(OutputTail)
        if followed != self._log_attempt:
            log.clear()
            self._log_attempt, self._log_seen = followed, 0
            if followed is not None:
                log.write_line(f"── {followed} ──")
        if followed is None:
            return
        lines = outputs.since(followed, self._log_seen)
        self._log_seen = outputs.count(followed)
        if lines:
            log.write_lines(lines)

    def _show_list(self, views: list[AttemptView], now: datetime, ended: bool) -> None:
        self.attempts.set_rows(
            [(view.attempt, attempt_row(view, now, ended, self._env)) for view in views]
        )
