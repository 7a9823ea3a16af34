"""The app's parts that need no screen: the journal reader, the output book, the matrix
summary, the config fields, task statuses, an attempt's patch view."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Tree
from tuiproject import EVENTS, _matrix_calc_1, _matrix_calc_2

from bugbout_tui.core import look
from bugbout_tui.core.config import (
    EnvConfig,
    JudgeConfig,
    ProjectConfig,
    RunConfig,
    TasksConfig,
)
from bugbout_tui.core.events import AttemptOutput, BoutStarted, StageStarted
from bugbout_tui.core.models import Attempt, Author, Cell, IssueRef, Matrix, Oracle, OracleSet, Task
from bugbout_tui.core.patch import Patch
from bugbout_tui.engine.state import AttemptView, BoutState
from bugbout_tui.rules.judge import POLICIES, CellRef, Verdict, judge_all
from bugbout_tui.tui.config_form import SECTIONS, parse_field, show_value
from bugbout_tui.tui.feed import OutputBook
from bugbout_tui.tui.matrix_view import Filters, cell_tests, matrix_grid
from bugbout_tui.tui.records import Records
from bugbout_tui.tui.screens.attempt import patch_view
from bugbout_tui.tui.screens.matrix import LEGEND
from bugbout_tui.tui.screens.tasks import task_status
from bugbout_tui.tui.screens.verdicts import fill_trail, picked_words
from bugbout_tui.tui.verdict_table import table_width, verdict_table
from bugbout_tui.tui.watch import JournalReader
from bugbout_tui.tui.widgets.dialogs import Choice
from bugbout_tui.tui.widgets.lane import attempt_row
from bugbout_tui.tui.widgets.tail import OutputTail


def _line(event: BoutStarted | StageStarted | AttemptOutput) -> str:
    return event.model_dump_json() + "\n"


def test_the_reader_takes_complete_lines_and_holds_back_a_torn_one(tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    started = _line(BoutStarted(project="p", stages=["mine"], pid=1))
    stage = _line(StageStarted(stage="mine"))
    journal.write_text(started + stage[:10])
    reader = JournalReader(journal)
    first = reader.read()
    assert [e.type for e in first.events] == ["bout-started"]
    with journal.open("a") as handle:
        handle.write(stage[10:])
    second = reader.read()
    assert [e.type for e in second.events] == ["stage-started"]
    assert not second.restarted


def test_the_reader_notices_a_new_run_truncating_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_text(_line(BoutStarted(project="p", stages=["mine"], pid=1)) * 3)
    reader = JournalReader(journal)
    assert len(reader.read().events) == 3
    journal.write_text(_line(BoutStarted(project="p", stages=["mine", "race"], pid=2)) * 5)
    again = reader.read()
    assert again.restarted
    assert len(again.events) == 5
    assert again.events[0].pid == 2  # type: ignore[union-attr]


def test_the_reader_waits_for_a_journal_that_does_not_exist_yet(tmp_path: Path) -> None:
    reader = JournalReader(tmp_path / "events.jsonl")
    assert reader.read().events == []
    (tmp_path / "events.jsonl").write_text(_line(StageStarted(stage="race")))
    assert [e.type for e in reader.read().events] == ["stage-started"]


def test_a_recorded_race_replays_into_every_lane_without_losing_an_event() -> None:
    reader = JournalReader(EVENTS / "race.jsonl")
    chunk = reader.read()
    state = BoutState()
    for event in chunk.events:
        state.apply(event)
    assert chunk.unreadable == 0
    assert state.events == len((EVENTS / "race.jsonl").read_text().splitlines())
    assert set(state.lanes) == {"alpha", "beta"}
    assert state.lanes["beta"].parked is not None
    assert state.outcome == "done"


def test_the_output_book_hands_each_log_only_its_new_lines() -> None:
    book = OutputBook(keep=3)
    for n in range(5):
        book.add("a/x", f"line {n}")
    assert book.count("a/x") == 5
    assert book.since("a/x", 0) == ["line 2", "line 3", "line 4"]
    assert book.since("a/x", 4) == ["line 4"]
    assert book.since("a/x", 5) == []
    assert book.since("b/y", 0) == []


def test_a_lane_log_keeps_the_text_of_its_lines_and_nothing_a_terminal_obeys() -> None:
    tail = OutputTail()
    tail.write_lines(
        ["\x1b[32mok\x1b[0m done\x1b]0;title\x07", "[bold]not markup[/]", "\x9b2J\u202eabc\tx\r"]
    )
    assert tail.lines == ["ok done", "[bold]not markup[/]", "abc x "]


def test_a_cell_counts_passes_and_marks_reproductions() -> None:
    grid = matrix_grid(_matrix_calc_1())
    assert grid.trees == ["base", "careful", "hasty", "slow"]
    base = grid.cells[("base", "examiner")]
    assert (base.passed, base.total, base.reproductions) == (0, 2, 2)
    hasty = grid.cells[("hasty", "examiner")]
    assert (hasty.passed, hasty.reproductions_passing) == (1, 1)
    suite = grid.cells[("hasty", "suite")]
    assert (suite.passed, suite.total, suite.reproductions) == (1, 2, 0)


def test_filters_narrow_the_tests_and_drop_authors_left_with_none() -> None:
    matrix = _matrix_calc_1()
    only_repro = matrix_grid(matrix, Filters(only_reproductions=True))
    assert [a.name for a in only_repro.authors] == ["careful", "hasty", "examiner"]
    disagree = matrix_grid(matrix, Filters(only_disagreements=True))
    assert [a.name for a in disagree.authors] == ["careful", "examiner", "suite"]
    assert disagree.cells[("base", "examiner")].total == 2
    lines = cell_tests(matrix, "slow", "examiner", Filters())
    assert [(line.test, line.cell.outcome if line.cell else None) for line in lines] == [
        ("tests/test_x.py::test_empty_tuple", "failed"),
        ("tests/test_x.py::test_empty_is_zero", "passed"),
    ]
    assert all(line.reproduction for line in lines)


@pytest.mark.parametrize(
    ("kind", "text", "value", "error"),
    [
        ("text", "  ", None, None),
        ("text", "src/pkg", "src/pkg", None),
        ("int", "900", 900, None),
        ("int", "soon", "soon", None),
        ("toml", '["-p", "no:randomly"]', ["-p", "no:randomly"], None),
        ("toml", "{ codex = 2 }", {"codex": 2}, None),
    ],
)
def test_typed_text_becomes_a_value(kind: str, text: str, value: object, error: str | None) -> None:
    assert parse_field(kind, text) == (value, error)  # type: ignore[arg-type]


def test_text_that_is_not_toml_is_refused_in_the_field() -> None:
    value, error = parse_field("toml", "[unclosed")
    assert value is None
    assert error is not None and error.startswith("not a TOML value")


def test_values_show_as_they_would_be_written() -> None:
    assert show_value("toml", {"alpha": 1, "beta": 2}) == "{ alpha = 1, beta = 2 }"
    assert show_value("toml", ["pytest", "hypothesis"]) == '["pytest", "hypothesis"]'
    assert show_value("int", 600) == "600"
    assert show_value("text", None) == ""


def _task(statement: str | None = "text") -> Task:
    return Task(
        id="calc-1", issue=1, reference=IssueRef(number=1), title="Fix", fix_commit="a" * 40,
        base_commit="b" * 40, date="2024-01-01T00:00:00Z", source_files=["src/calc/ops.py"],
        test_files=["tests/test_x.py"], added_tests=["test_x"], statement=statement,
        statement_missing=None if statement else "offline",
    )  # type: ignore[arg-type]  # fmt: skip


def test_a_task_status_says_why_it_will_not_race() -> None:
    unscored = OracleSet(oracles={"calc-1": Oracle(scored=False, reason="no fail-to-pass test")})
    scored = OracleSet(oracles={"calc-1": Oracle(scored=True, fail_to_pass=["t"])})
    plain = TasksConfig.model_validate({})
    review = TasksConfig.model_validate({"require-review": True})
    excluded = TasksConfig.model_validate({"exclude": ["calc-1"]})
    accepted = TasksConfig.model_validate({"include": ["calc-1"], "require-review": True})
    assert task_status(_task(), plain, scored).label == "will race"
    assert task_status(_task(), plain, None).label == "will race (ground truth pending)"
    assert task_status(_task(), excluded, scored).label == "excluded by you"
    assert task_status(_task(), plain, unscored).label == "not scored: no fail-to-pass test"
    assert task_status(_task(None), plain, scored).label == "not raced: no issue text (offline)"
    assert task_status(_task(), review, scored).label.startswith("awaiting review")
    assert task_status(_task(), accepted, scored).label == "accepted by you"


def test_an_oversized_attempt_shows_its_cap_and_what_it_held() -> None:
    cap = "50 changed files, 10 over the cap of 40"
    summary = "not kept: 50 changed files (50 new, 0 modified, 0 deleted), 390 B in all"
    now = datetime.now(UTC)
    record = Attempt(
        task="calc-1",
        contestant="swarm",
        status="oversized",
        detail=cap,
        started_at=now,
        ended_at=now,
        seconds=1.0,
        patch=Patch(notes=[summary], oversized=cap),
        logdir="/nowhere",
    )
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(patch_view(record))
    shown = console.export_text()
    assert f"Too large to keep: {cap}." in shown
    assert f"note: {summary}" in shown
    assert "changed no file" not in shown
    assert look.phase("oversized").badge().plain == "▣ oversized"


def test_the_config_form_has_a_field_for_every_key_of_its_sections() -> None:
    sections = {"project": ProjectConfig, "tasks": TasksConfig, "run": RunConfig,
                "judge": JudgeConfig, "env": EnvConfig}  # fmt: skip
    decided_on_the_tasks_screen = {"include", "exclude"}
    for section, model in sections.items():
        keys = {
            (field.alias or name)
            for name, field in model.model_fields.items()
            if name not in decided_on_the_tasks_screen
        }
        assert keys == {spec.key for spec in SECTIONS[section]}, section


def test_tasks_sort_by_their_numbers() -> None:
    tasks = ["invoicekit-11", "invoicekit-4", "invoicekit-100", "invoicekit-5", "invoicekit-7"]
    assert sorted(tasks, key=look.task_order) == [
        "invoicekit-4", "invoicekit-5", "invoicekit-7", "invoicekit-11", "invoicekit-100",
    ]  # fmt: skip


def test_the_matrix_legend_is_whole_sentences_within_80_columns() -> None:
    lines = LEGEND.plain.splitlines()
    assert all(line.endswith(".") and len(line) <= 78 for line in lines), lines


async def test_one_reproduction_by_one_author_fails_in_the_trail() -> None:
    verdict = Verdict(task="pkg-1", policy="majority", abstained="none approved",
                      reproductions={"alpha": ["t1"]})  # fmt: skip

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield Tree[CellRef | None]("")

    async with One().run_test() as pilot:
        trail: Tree[CellRef | None] = pilot.app.query_one(Tree)
        fill_trail(trail, verdict, Records())
        assert str(trail.root.children[0].label) == (
            "step 1 · reproductions: 1 test by 1 author fails on the unfixed code"
        )


async def _trail_lines(verdict: Verdict) -> list[str]:
    """The rule trail of `verdict` as a person reads it, one line per node."""

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield Tree[CellRef | None]("")

    lines: list[str] = []

    def walk(node: object) -> None:
        lines.append(node.label.plain)  # type: ignore[attr-defined]
        for child in node.children:  # type: ignore[attr-defined]
            walk(child)

    async with One().run_test() as pilot:
        trail: Tree[CellRef | None] = pilot.app.query_one(Tree)
        fill_trail(trail, verdict, Records())
        walk(trail.root)
    return lines


async def test_the_credible_trail_says_whose_reproductions_count_and_why() -> None:
    verdict = judge_all(_matrix_calc_2())["credible"]
    lines = await _trail_lines(verdict)
    assert "careful: 1 test · given no weight" in lines
    assert "examiner: 2 tests" in lines
    assert (
        "step 2 · whose evidence counts: 2 authors given no weight; breakage quorum: "
        "careful, hasty (support of at least 0.5)"
    ) in lines
    assert verdict.notes and all(note in lines for note in verdict.notes)
    assert any(line.startswith("careful's 1 reproduction given no weight: only careful's own")
               for line in lines)  # fmt: skip
    assert (
        "support: 0.50 (mean over independent authors given weight of the share of their "
        "reproductions that pass)"
    ) in lines
    assert [line.split(" · ")[0] for line in lines if line.startswith("step ")] == [
        "step 1", "step 2", "step 3", "step 4",
    ]  # fmt: skip
    # The other policies have no such step.
    majority = await _trail_lines(judge_all(_matrix_calc_2())["majority"])
    assert not any("whose evidence counts" in line or "no weight" in line for line in majority)


async def test_the_credible_trail_counts_a_breakage_among_the_supported_patches() -> None:
    verdict = judge_all(_matrix_calc_1())["credible"]
    lines = await _trail_lines(verdict)
    assert (
        "step 2 · whose evidence counts: every author's reproductions count; breakage "
        "quorum: careful, slow (support of at least 0.5)"
    ) in lines
    assert "each author has a reproduction that a patch by another author passes" in lines
    assert any(line.startswith("the breakage quorum counts careful, slow: hasty has support")
               for line in lines)  # fmt: skip
    assert (
        "breakages: 1 found, 1 counted (counted when most other supported patches keep the "
        "test passing)"
    ) in lines
    assert (
        "tests/test_ops.py::test_mean_of_one  suite: kept passing by 2 of 2 other supported "
        "patches — counted"
    ) in lines
    majority = await _trail_lines(judge_all(_matrix_calc_1())["majority"])
    assert (
        "tests/test_ops.py::test_mean_of_one  suite: kept passing by 2 of 2 other patches — counted"
    ) in majority


def _long_picks() -> Records:
    """One task where every policy but `unanimous` picks a patch with a long name."""
    verdicts = {
        policy: Verdict(task="pkg-1", policy=policy, abstained="none approved")
        if policy == "unanimous"
        else Verdict(task="pkg-1", policy=policy, pick="mini-swe-agent")
        for policy in POLICIES
    }
    return Records(verdicts={"pkg-1": verdicts})


def test_the_verdict_table_gives_up_detail_only_as_far_as_the_width_asks() -> None:
    records = _long_picks()
    full = verdict_table(records, "majority", 200)
    assert full.fit == "full"
    assert [cell.plain for cell in full.rows["pkg-1"]] == [
        "pkg-1", "mini-swe-agent", "abstain", "mini-swe-agent", "mini-swe-agent",
        "mini-swe-agent",
    ]  # fmt: skip
    same = verdict_table(records, "majority", table_width(full) - 1)
    assert same.fit == "same"
    assert [cell.plain for cell in same.rows["pkg-1"]] == [
        "pkg-1", "mini-swe-agent", "abstain", "same", "same", "same",
    ]  # fmt: skip
    assert [heading.plain for heading in same.headings] == [
        "task", "majority ◂", "unanimous", "strict", "cross-vendor", "credible",
    ]  # fmt: skip
    short = verdict_table(records, "majority", table_width(same) - 1)
    assert short.fit == "short"
    assert [heading.plain for heading in short.headings] == [
        "task", "majority ◂", "unanim.", "strict", "x-vendor", "credible",
    ]  # fmt: skip
    assert table_width(short) < table_width(same) < table_width(full)
    # Past the last step the table scrolls sideways: names stay whole.
    assert verdict_table(records, "majority", 10).fit == "short"
    # `same` is said against the shown policy, whichever it is.
    shown = verdict_table(records, "strict", table_width(same) - 1)
    assert [cell.plain for cell in shown.rows["pkg-1"]] == [
        "pkg-1", "same", "abstain", "mini-swe-agent", "same", "same",
    ]  # fmt: skip


def _matrix_with_trials() -> Matrix:
    """calc-1 with `slow` turned into careful's second trial, whose test has the very
    name of careful's first trial's test."""
    matrix = _matrix_calc_1()
    test = "tests/test_mean_careful.py::test_empty_list"
    second = Author(name="careful#2", kind="contestant", vendor="anthropic", tests=[test])
    outcomes = {"base": "failed", "careful": "passed", "hasty": "failed", "slow": "passed"}
    trees = {}
    for name, run in matrix.trees.items():
        cells = {**run.cells, "careful#2": {test: Cell(outcome=outcomes[name])}}  # type: ignore[arg-type]
        renamed = "careful#2" if name == "slow" else name
        trees[renamed] = run.model_copy(update={"tree": renamed, "cells": cells})
    patches = [
        p.model_copy(update={"contestant": "careful#2"}) if p.contestant == "slow" else p
        for p in matrix.patches
    ]
    return matrix.model_copy(
        update={"authors": [*matrix.authors[:1], second, *matrix.authors[1:]], "trees": trees,
                "patches": patches}
    )  # fmt: skip


def test_a_column_per_author_with_its_trials_pooled_and_a_row_per_patch() -> None:
    matrix = _matrix_with_trials()
    grid = matrix_grid(matrix)
    assert [a.name for a in grid.authors] == ["careful", "hasty", "examiner", "suite"]
    assert grid.trees == ["base", "careful", "hasty", "careful#2"]
    careful_on_hasty = grid.cells[("hasty", "careful")]
    assert (careful_on_hasty.passed, careful_on_hasty.total) == (0, 2)
    assert careful_on_hasty.reproductions == 2
    assert grid.cells[("careful#2", "careful")].reproductions_passing == 2
    # Entered from the verdicts by a trial's name, the cell lists the whole column, each
    # test with its trial, so two trials' tests of one name stay apart.
    lines = cell_tests(matrix, "hasty", "careful#2", Filters())
    assert [line.label for line in lines] == [
        "careful · tests/test_mean_careful.py::test_empty_list",
        "careful #2 · tests/test_mean_careful.py::test_empty_list",
    ]
    assert len({line.key for line in lines}) == 2


def test_the_verdict_says_which_trials_patch_was_picked() -> None:
    verdict = judge_all(_matrix_with_trials())["majority"]
    assert verdict.pick == "careful"
    assert picked_words(verdict) == "picks careful #1's patch"
    second = verdict.model_copy(update={"pick": "careful#2"})
    assert picked_words(second) == "picks careful #2's patch"
    alone = judge_all(_matrix_calc_1())["majority"]
    assert picked_words(alone) == f"picks {alone.pick}"


def test_the_race_board_names_a_trial_as_agent_and_number() -> None:
    view = AttemptView(
        attempt="invoicekit-5/careful#2",
        task="invoicekit-5",
        contestant="careful#2",
        role="contestant",
        quota="claude-code",
    )
    now = datetime.now(UTC)
    assert attempt_row(view, now).plain.startswith("· invoicekit-5 · careful #2")


async def test_a_long_question_scrolls_and_keeps_its_title_and_buttons_on_an_80x24_screen() -> None:
    """The question before a start holds the estimate: one line or two per agent."""
    message = "\n".join(f"agent-{n}: 3 attempts; each 1.0M tokens, $0.31" for n in range(40))
    question = Choice("Start the bout?", message, [("start", "Start", "primary")])

    class Asking(App[None]):
        def on_mount(self) -> None:
            self.push_screen(question)

    app = Asking()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        title, button = question.query_one(".title"), question.query_one("#start")
        assert title.region.y >= 0 and title.region.height > 0
        assert button.region.bottom <= 24 and button.region.height > 0
        assert question.focused is button
