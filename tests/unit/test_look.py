"""One look per fact: the `bugbout run` board, the report and the TUI draw statuses,
clocks, stage progress and counts from `core/look.py`, so a reader meets each one way."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from bugbout_tui.cli.live import _lanes, parked_words, plain_line, render_state
from bugbout_tui.core import look
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutStarted,
    QuotaParked,
    QuotaResumed,
    StageFinished,
    StageProgress,
    StageStarted,
)
from bugbout_tui.engine.state import BoutState
from bugbout_tui.report import markdown, terminal
from bugbout_tui.report.model import PatchRow, PolicyPick
from bugbout_tui.rules.judge_models import CellRef
from bugbout_tui.tui.screens.attempt import summary_view
from bugbout_tui.tui.screens.verdicts import cell_label

TWO_HOURS_FIVE = 2 * 3600 + 5 * 60 + 3


def state_of(*events: BaseEvent) -> BoutState:
    state = BoutState()
    for event in events:
        state.apply(event)
    return state


def board(state: BoutState, elapsed: float = 0.0) -> list[str]:
    return shown(render_state(state, elapsed)).splitlines()


def shown(renderable: RenderableType) -> str:
    console = Console(width=120, color_system=None, file=io.StringIO())
    console.print(renderable)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def cells(table: Table, column: int) -> list[Text]:
    return [cell for cell in table.columns[column]._cells if isinstance(cell, Text)]


def styles(text: Text) -> dict[str, str]:
    """Each styled run of a `Text` with its style, to compare two drawings of one fact."""
    runs = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    return {text.plain: str(text.style), **runs} if text.style else runs


STAGES = state_of(
    BoutStarted(project="calc", stages=["mine", "race", "examine"], pid=1),
    StageStarted(stage="mine"),
    StageFinished(stage="mine", summary="3 tasks"),
    StageStarted(stage="race", total=4),
    StageProgress(stage="race", done=2, total=4),
)


@pytest.mark.parametrize(
    ("seconds", "reading"),
    [(0, "0:00"), (59.9, "0:59"), (65, "1:05"), (3600, "1:00:00"), (TWO_HOURS_FIVE, "2:05:03")],
)
def test_one_clock_m_ss_then_h_mm_ss_past_an_hour(seconds: float, reading: str) -> None:
    assert look.clock(seconds) == reading


def test_the_cli_board_clock_reads_like_the_tui_past_an_hour() -> None:
    header = board(state_of(BoutStarted(project="calc", stages=["race"], pid=1)), TWO_HOURS_FIVE)
    assert header[0] == "bugbout calc  2:05:03"


def test_a_running_attempt_on_the_cli_board_shows_hours_like_the_tui() -> None:
    state = state_of(
        BoutStarted(project="calc", stages=["race"], pid=1),
        AttemptQueued(attempt="t1/a", task="t1", contestant="a", role="contestant", quota="q"),
        AttemptStarted(attempt="t1/a", logdir="/l"),
    )
    view = state.attempts["t1/a"]
    view.started_at = datetime.now(UTC) - timedelta(seconds=TWO_HOURS_FIVE)
    assert any("t1/a" in line and "2:05:03" in line for line in board(state))
    assert "time    2:05:03" in shown(summary_view(None, "running", TWO_HOURS_FIVE))


def test_the_log_line_of_a_finished_attempt_uses_the_same_clock() -> None:
    event = AttemptFinished(attempt="t1/a", status="timeout", seconds=TWO_HOURS_FIVE)
    assert plain_line(event, BoutState()) == "[race] t1/a timeout after 2:05:03"


def test_the_cli_board_draws_the_stage_chips_of_the_tui_header() -> None:
    chips = look.stage_chips(STAGES.planned, STAGES.stages)
    assert chips.plain == "✓ mine ◐ race 2/4 · examine"
    assert board(STAGES)[1] == chips.plain
    rendered = render_state(STAGES, 0.0)
    assert any(
        isinstance(part, Text) and styles(part) == styles(chips)
        for part in getattr(rendered, "renderables", [])
    )


def test_every_renderer_takes_a_status_from_the_one_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    odd = look.Look("§", "odd word", "blue")
    for table, name in (
        (look.PHASES, "quota"),
        (look.RESOLUTIONS, "wrong-fix"),
        (look.OUTCOMES, "failed"),
        (look.STAGE_STATES, "done"),
    ):
        monkeypatch.setitem(table, name, odd)
    monkeypatch.setitem(look.PICKS, False, odd)

    parked = state_of(
        BoutStarted(project="calc", stages=["mine", "race"], pid=1),
        StageStarted(stage="mine"),
        StageFinished(stage="mine", summary="3 tasks"),
        AttemptQueued(attempt="t1/a", task="t1", contestant="a", role="contestant", quota="q"),
        QuotaParked(quota="q", message="limit reached"),
    )
    assert board(parked)[1] == "§ mine · race"
    assert styles(look.stage_chips(parked.planned, parked.stages))["§ mine"] == "blue"
    lane = _lanes(parked)
    assert [str(cell.style) for cell in cells(lane, 1)] == ["blue"]
    assert [str(cell.style) for cell in cells(lane, 3)] == ["blue"]

    patches = terminal._patches([PatchRow(contestant="a", status="wrong-fix")])
    assert styles(patches) == {" odd word": "blue"}
    assert markdown._patch(PatchRow(contestant="a", status="wrong-fix")) == "a: odd word"
    wrong = PolicyPick(policy="majority", pick="a", right=False)
    assert styles(terminal._pick(wrong)) == {"a §": "blue"}
    assert markdown._pick(wrong) == "a §"

    facts = summary_view(None, "quota", 5.0)
    assert isinstance(facts, Table)
    status = cells(facts, 1)[0]
    assert (status.plain, str(status.style)) == ("§ odd word", "blue")
    label = cell_label(CellRef(tree="base", author="x", test="t::f", outcome="failed"))
    assert styles(label)["odd word"] == "blue"


def test_one_plural() -> None:
    assert look.plural(1, "test") == "1 test"
    assert look.plural(0, "test") == "0 tests"
    assert look.plural(2, "patch", "patches") == "2 patches"


def test_the_cli_board_tells_a_lane_that_waits_from_one_parked_for_a_later_run() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    limit = "You've hit your usage limit."
    waiting = state_of(
        QuotaParked(
            quota="plan",
            message=limit,
            resets_at=now + timedelta(seconds=42),
            resumes_at=now + timedelta(seconds=42),
        ),
    ).lanes["plan"]
    assert parked_words(waiting, now) == "waiting: resumes in 0:42"
    later = state_of(
        QuotaParked(quota="plan", message=limit, resets_at=now + timedelta(hours=3))
    ).lanes["plan"]
    assert parked_words(later, now) == "parked: resets in 3:00:00"
    unknown = state_of(QuotaParked(quota="plan", message=limit)).lanes["plan"]
    assert parked_words(unknown, now) == "parked: usage limit"
    live = state_of(
        QuotaParked(quota="plan", message=limit, resumes_at=datetime.now(UTC) + timedelta(hours=1))
    )
    assert "waiting: resumes in" in "\n".join(board(live))


def test_the_cli_log_says_when_a_lane_waits_and_when_it_resumes() -> None:
    resumes = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    parked = QuotaParked(quota="plan", message="limit", resets_at=resumes, resumes_at=resumes)
    line = plain_line(parked, BoutState())
    assert line is not None and line.startswith(
        "[race] lane plan parked: limit (waiting; resumes at "
    )
    assert plain_line(QuotaResumed(quota="plan"), BoutState()) == "[race] lane plan resumed"
