"""The Race screen: every quota lane side by side (or stacked when they would not fit)."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.message import Message
from textual.widgets import Static

from bugbout_tui.core import look
from bugbout_tui.core.events import ClusterChanged
from bugbout_tui.core.models import attempt_name
from bugbout_tui.core.text import inert_line
from bugbout_tui.engine.race import RETRYABLE
from bugbout_tui.engine.state import BoutState
from bugbout_tui.tui.records import Records
from bugbout_tui.tui.screens.attempt import AttemptScreen
from bugbout_tui.tui.screens.base import BoutScreen
from bugbout_tui.tui.widgets.lane import NO_ENV, EnvRows, LaneBox, lane_id, preload_lane_css
from bugbout_tui.tui.widgets.pick_list import PickList


def env_rows(records: Records, version: int) -> EnvRows:
    """Which tasks are environment tasks and how each scored repair ended, by attempt."""
    tasks = frozenset(records.env_tasks)
    repairs = {
        attempt_name(task, contestant): repair.status
        for task in tasks
        for contestant, repair in records.task_repairs(task).items()
    }
    return EnvRows(tasks=tasks, repairs=repairs, version=version)


MIN_COLUMN = 40
"""Narrower than this per lane, lanes are stacked as rows instead of columns."""
MIN_WIDTH = 80
"""The smallest width that shows every lane at once; below it one lane fills the board
and `[` `]` switch between them (a lane in a few columns shows nothing readable)."""
LANES_PER_TICK = 2
"""Lanes mounted in one tick: laying out eight new lanes at once took a frame of its own
of over 100 ms; two at a time, the board fills in a few tenths of a second instead."""

ABOUT_THE_RACE = (
    "The bout mines the bugs your history fixed, establishes the ground truth from the "
    "maintainers' tests, then races every contestant on every task. Each quota gets a "
    "lane here: agents that share a plan take turns in it, and you see the running "
    "attempt's output as it comes.\n\n"
    "Stopping (s again, or q) stops the agents; everything finished is kept, and the "
    "next start carries on."
)


def waiting_text(state: BoutState, running: bool) -> Text:
    """What the Race screen says before any lane exists."""
    if running or state.current is not None:
        stage = state.current or "the bout"
        head = Text.assemble(("The race has not begun: ", "bold"), (stage, "bold yellow"),
                             " comes first.\n\n")  # fmt: skip
    elif state.outcome == "done":
        head = Text("The last run finished with nothing to race.\n\n", style="bold")
    elif state.outcome is not None:
        head = Text("The last run ended before the race. Press s to carry on.\n\n", style="bold")
    else:
        head = Text("Nothing has run yet. Press s to start the bout.\n\n", style="bold")
    return head + Text(ABOUT_THE_RACE, style="dim")


def race_summary(state: BoutState) -> Text:
    """The line above the lanes: how far the race is, and what else is going on."""
    line = Text()
    total = len(state.attempts)
    if total:
        done = state.finished_attempts
        running = sum(len(lane.running) for lane in state.lanes.values())
        queued = state.queued_attempts
        line.append(f"{done} of {total} attempts done", style="bold")
        if state.outcome is None:
            line.append(f" · {running} running · {queued} queued", style="dim")
        else:  # an ended run: only what it left unfinished is worth a word
            if running:
                line.append(f" · {running} stopped with the run", style="dim")
            if queued:
                line.append(f" · {queued} never started", style="dim")
        failed = sum(1 for view in state.attempts.values() if view.phase in RETRYABLE)
        if failed:
            line.append(f" · {failed} to retry (f)", style="magenta")
        if (decided := state.decided) is not None:
            line.append(
                inert_line(
                    f" · decided after task {decided.after} ({decided.tasks_done} of "
                    f"{decided.tasks}): no new bug starts"
                ),
                style="green",
            )
    elif state.current is not None:
        view = state.stages.get(state.current)
        line.append(f"{state.current}", style="bold yellow")
        if view is not None and view.total:
            line.append(f" {view.done}/{view.total}")
        if view is not None and view.detail:
            line.append(f" · {inert_line(view.detail)}", style="dim")
        line.append(" · lanes appear when the race begins", style="dim")
    if state.test_runs_running:
        line.append("   tests running: ", style="dim")
        line.append(inert_line(", ".join(sorted(state.test_runs_running))))
    if state.env_runs_running:
        line.append("   installing: ", style="dim")
        line.append(inert_line(", ".join(sorted(state.env_runs_running))))
    if state.message:
        line.append(f"   {inert_line(state.message)}", style="dim")
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


def cluster_line(cluster: ClusterChanged, width: int = 0) -> Text:
    """The cluster's state under the counts line, in `width` cells: its address gives way
    before the counts of workers, busy and lost would be cut."""
    line = look.cluster_text(cluster)
    if width and cell_len(line.plain) > width:
        line = look.cluster_text(cluster, address=False)
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


class LaneBoard(Container):
    """Where the lanes go. Its width, not the window's, decides how they are laid out:
    the keys panel (?) takes a part of the window."""

    class Resized(Message):
        """The board's size changed: lay the lanes out again."""

    def on_resize(self) -> None:
        self.post_message(self.Resized())


class RaceScreen(BoutScreen):
    """One lane per quota: the running attempt and its output, the queue, the results."""

    MODE = "race"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "focus_next", "Next lane", id="next-lane",
                tooltip="Move the keys to the next lane"),
        Binding("c", "cancel_attempt", "Cancel attempt", id="cancel-attempt",
                tooltip="Stop the highlighted queued or running attempt"),
        Binding("f", "retry_failed", "Retry failed", id="retry-failed",
                tooltip="Start again; attempts that crashed, timed out or hit a quota rerun"),
        Binding("left_square_bracket", "step(-1)", "Prev lane", id="previous-lane",
                tooltip="Show the previous lane (the window is too narrow for all)"),
        Binding("right_square_bracket", "step(1)", "Next lane", id="next-lane",
                tooltip="Show the next lane (the window is too narrow for all)"),
    ]  # fmt: skip
    WRITES = frozenset({"cancel_attempt", "retry_failed"})

    def __init__(self) -> None:
        super().__init__()
        self._lanes: dict[str, LaneBox] = {}
        self._one_lane = False
        """The window is too narrow for every lane: one is shown at a time."""
        self._shown_lane = 0
        """Which lane is shown when only one is (its index in the board's order)."""
        self._env = NO_ENV

    def body(self) -> ComposeResult:
        yield Static(id="race-summary")
        yield Static(id="race-cluster")
        yield Static(id="lane-switcher")
        yield LaneBoard(id="lanes", classes="-columns")
        yield Static(id="race-empty")

    def on_mount(self) -> None:
        preload_lane_css(self.app)

    def show_live(self) -> None:
        """Everything from the same state at the same moment: the counts line and every
        part of every lane, so no part of a frame contradicts another."""
        state = self.session.state
        self.query_one("#race-summary", Static).update(race_summary(state), layout=False)
        self._show_cluster(state)
        empty = self.query_one("#race-empty", Static)
        empty.display = not state.lanes
        self.query_one("#lanes").display = bool(state.lanes)
        if not state.lanes:
            empty.update(waiting_text(state, self.session.engine_running))
        self._sync_lanes(state)
        self._focus_first_lane()
        version = self.session.records_version
        if self._env.version != version:
            self._env = env_rows(self.session.records, version)
        project = self.session.project
        now, wall = self.session.now(), self.session.clock()
        for quota, box in self._lanes.items():
            lane = state.lanes.get(quota)
            if lane is None or not box.is_mounted:
                continue
            capacity = project.config.run.capacity(quota) if project is not None else 1
            box.show(lane, state, self.session.outputs, now, capacity, wall, self._env)

    def _show_cluster(self, state: BoutState) -> None:
        """The line of the cluster the run works on; none for a run on this machine."""
        line = self.query_one("#race-cluster", Static)
        line.display = state.cluster is not None
        if state.cluster is not None:
            line.update(cluster_line(state.cluster, line.content_size.width), layout=False)

    def _sync_lanes(self, state: BoutState) -> None:
        container = self.query_one("#lanes", Container)
        for quota in [q for q in self._lanes if q not in state.lanes]:
            self._lanes.pop(quota).remove()
        waiting = [quota for quota in state.lanes if quota not in self._lanes]
        new = [
            LaneBox(quota, id=lane_id(quota, len(self._lanes) + index))
            for index, quota in enumerate(waiting[:LANES_PER_TICK])
        ]
        if new:
            for box in new:
                self._lanes[box.quota] = box
            container.mount_all(new)
            self._choose_layout()
            self.call_after_refresh(self.live_changed)  # draw them now, not on the next tick

    def _focus_first_lane(self) -> None:
        """Put the keys on the first lane unless they are on something still shown (a
        restart replaces the lanes, and focus goes with the old ones)."""
        if (self.focused is not None and self.focused.is_attached) or self.app.screen is not self:
            return
        boxes = list(self._lanes.values())
        if self._one_lane and boxes:
            boxes = [boxes[self._shown_lane % len(boxes)]]
        for box in boxes:
            if box.is_mounted:
                box.attempts.focus()
                return

    def on_resize(self, event: events.Resize) -> None:
        self._choose_layout()

    @on(LaneBoard.Resized)
    def _board_resized(self) -> None:
        self._choose_layout()

    def _choose_layout(self) -> None:
        container = self.query_one("#lanes", Container)
        width = container.size.width or self.size.width
        one_lane = 0 < width < MIN_WIDTH and len(self._lanes) > 1
        columns = one_lane or width // max(1, len(self._lanes)) >= MIN_COLUMN
        container.set_class(columns, "-columns")
        container.set_class(not columns, "-rows")
        container.set_class(one_lane, "-one")
        if one_lane != self._one_lane:
            self._one_lane = one_lane
            self.refresh_bindings()
        self._show_one_lane()

    def _show_one_lane(self) -> None:
        """Mark the lane shown when only one fits, and say which it is and how to switch."""
        boxes = list(self._lanes.values())
        switcher = self.query_one("#lane-switcher", Static)
        switcher.display = self._one_lane
        if not boxes:
            return
        self._shown_lane %= len(boxes)
        for index, box in enumerate(boxes):
            box.set_class(index == self._shown_lane, "-shown")
        if self._one_lane:
            shown = boxes[self._shown_lane]
            switcher.update(Text.assemble(
                (f"lane {self._shown_lane + 1} of {len(boxes)}", "bold"),
                (f" · {inert_line(shown.quota)}", "bold"),
                ("   ] next · [ previous", "dim"),
            ))  # fmt: skip
            focused = self._focused_lane()
            if focused is not None and focused is not shown:
                shown.attempts.focus()

    def action_step(self, step: int) -> None:
        """`]` and `[` step through what a screen shows one at a time: here, the lanes."""
        self._shown_lane += step
        self._show_one_lane()

    def _focused_lane(self) -> LaneBox | None:
        focused = self.focused
        for box in self._lanes.values():
            if focused is not None and focused in box.walk_children():
                return box
        return None

    def _highlighted(self) -> str | None:
        box = self._focused_lane()
        return None if box is None else box.highlighted_attempt()

    @on(PickList.Picked)
    def _attempt_chosen(self, event: PickList.Picked) -> None:
        event.stop()
        self.app.push_screen(AttemptScreen(event.row_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel only while this app's run goes on; retry only while nothing runs; the
        lane switch only while one lane is shown at a time."""
        if action == "step":
            return self._one_lane
        if action == "cancel_attempt":
            return self.session.running_bout is not None and not self.session.watching
        if action == "retry_failed":
            return not self.session.engine_running and not self.session.watching
        return super().check_action(action, parameters)

    def action_cancel_attempt(self) -> None:
        attempt = self._highlighted()
        view = self.session.state.attempts.get(attempt) if attempt else None
        if view is None or view.phase not in ("queued", "running"):
            self.notify("Highlight a queued (·) or running (▶) attempt to cancel it.")
            return
        if self.session.watching or self.session.running_bout is None:
            self.notify("Only the run this app started can cancel an attempt.")
            return
        self.session.cancel_attempt(view.attempt)

    def action_retry_failed(self) -> None:
        self.bugbout_app.confirm_start(retry_failed=True)
