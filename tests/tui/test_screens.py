"""Every screen driven with the keys a person presses, on the calc project's records."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from gitrepo import GitRepo
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Input, Log, Markdown, OptionList, Static, TabbedContent, Tree
from textual.widgets.markdown import MarkdownBlock
from tuiapp import calc_app, on_screen, press_and_settle, settle
from tuiproject import CONFIG, EVENTS

from bugbout_tui.core.env_models import EnvSpec
from bugbout_tui.core.models import (
    GOLD,
    Ledger,
    Matrix,
    OracleSet,
    OutcomeTally,
    Resolution,
    ResolutionSet,
    TaskEnvironment,
    TaskSet,
    TreeTally,
)
from bugbout_tui.core.store import Store
from bugbout_tui.tui.commands import ActionsProvider
from bugbout_tui.tui.screens.attempt import AttemptScreen
from bugbout_tui.tui.screens.cell import CellScreen
from bugbout_tui.tui.screens.config import ConfigScreen
from bugbout_tui.tui.screens.matrix import MatrixScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.screens.report import ReportScreen
from bugbout_tui.tui.screens.tasks import TasksScreen
from bugbout_tui.tui.screens.verdicts import VerdictsScreen
from bugbout_tui.tui.widgets.dialogs import Choice
from bugbout_tui.tui.widgets.lane import LaneBox
from bugbout_tui.tui.widgets.tail import OutputTail


def comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def static_text(screen: object, selector: str) -> str:
    """What a Static shows, as plain text (rich renderables rendered wide, unwrapped)."""
    widget = screen.query_one(selector, Static)  # type: ignore[attr-defined]
    return plain(widget.content)


def plain(content: object) -> str:
    if isinstance(content, str | Text):
        return str(content)
    console = Console(width=300, color_system=None, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


def row_texts(table: DataTable[Text], key: str) -> list[str]:
    return [cell.plain if isinstance(cell, Text) else str(cell) for cell in table.get_row(key)]


# --- Tasks ------------------------------------------------------------------------------


async def test_excluding_and_accepting_tasks_writes_the_toml_and_keeps_its_comments(
    calc: Path,
) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, None, TasksScreen) as (_app, pilot, screen):
        table = screen.table
        assert [str(key.value) for key in table.rows] == ["calc-3", "calc-2", "calc-1"]
        table.move_cursor(row=table.get_row_index("calc-1"))
        await press_and_settle(pilot, "x")
        assert 'exclude = ["calc-1"]' in config.read_text()
        assert table.get_cell("calc-1", "status").plain == "excluded by you"

        table.move_cursor(row=table.get_row_index("calc-3"))
        await press_and_settle(pilot, "space", "space")
        assert screen.selected == {"calc-3", "calc-2"}
        await press_and_settle(pilot, "a")
        text = config.read_text()
        assert 'include = ["calc-2", "calc-3"]' in text
        assert table.get_cell("calc-2", "status").plain == "accepted by you"
        assert screen.selected == set()

        table.move_cursor(row=table.get_row_index("calc-1"))
        await press_and_settle(pilot, "u")
        text = config.read_text()
        assert "exclude" not in text
        assert table.get_cell("calc-1", "status").plain == "will race"
        assert comments(text) == comments(CONFIG)


async def test_the_highlighted_task_shows_its_issue_fix_and_ground_truth(calc: Path) -> None:
    async with on_screen(calc, None, TasksScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("calc-2"))
        await settle(pilot)
        assert "Issue #2" in static_text(screen, "#task-issue")
        issue = screen.query_one("#task-issue-text", Markdown)
        blocks = [(type(block).__name__, block.content) for block in issue.query(MarkdownBlock)]
        assert [(kind, content.plain) for kind, content in blocks] == [
            ("MarkdownH1", "clamp() ignores the upper bound"),
            ("MarkdownParagraph", "clamp(15, 0, 10) returns 15."),
            ("MarkdownParagraph", "Expected 10: the value must stay within bounds."),
        ]
        assert blocks[1][1].spans, "the code span is styled, not shown with its backticks"
        assert "fail → pass" in static_text(screen, "#task-tests")
        assert "tests/test_clamp.py::test_upper" in static_text(screen, "#task-tests")
        assert "return min(max(low, x), high)" in static_text(screen, "#task-fix")
        funnel = static_text(screen, "#tasks-funnel")
        assert "6 changes examined → 3 tasks" in funnel
        assert "not-a-fix 2" in funnel and "2 of 3 tasks can race" in funnel


async def test_the_tests_tab_shows_the_environment_gold_control_and_quarantined_tests(
    calc: Path,
) -> None:
    fix = next(t for t in mined(calc).tasks if t.id == "calc-2").fix_commit[:9]
    async with on_screen(calc, None, TasksScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("calc-2"))
        await settle(pilot)
        shown = lines(static_text(screen, "#task-tests"))
        assert "gold control resolved: the fix passes its own tests here" in shown
        assert "quarantined as flaky (they decide nothing): 1" in shown
        flaky = f"tests/test_mean.py::test_empty: passed 1 and failed 1 of 2 runs on fix {fix}"
        assert flaky in shown
        assert "key dated-py3.12.1-5e0c41b7a9d2" in shown
        assert "rung dated: resolved as of the fix's date" in shown
        assert "python 3.12.1" in shown
        assert "holds nothing but the test runner" in shown
        assert "test runner pytest==7.4.4 and 3 more" in shown
        assert "not dated nothing" in shown


async def test_a_gold_control_that_fails_says_the_grader_is_unreliable(calc: Path) -> None:
    store = Store(calc)
    scores = store.read(store.resolutions_path, ResolutionSet)
    assert scores is not None
    scores.controls["calc-1"] = Resolution(
        task="calc-1",
        contestant=GOLD,
        status="wrong-fix",
        fail_to_pass={"tests/test_mean.py::test_empty": "failed"},
    )
    store.write(store.resolutions_path, scores)
    async with on_screen(calc, None, TasksScreen) as (_app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("calc-1"))
        await settle(pilot)
        assert (
            "gold control wrong-fix; grader unreliable: the fix does not pass its own tests "
            "here (does not pass tests/test_mean.py::test_empty)"
        ) in lines(static_text(screen, "#task-tests"))


async def test_the_tests_tab_follows_the_store_read_again(calc: Path) -> None:
    """Ground truth, scoring and the ledger land while the tab is open: it shows them
    without the cursor moving."""
    store = Store(calc)
    async with on_screen(calc, None, TasksScreen) as (app, pilot, screen):
        screen.table.move_cursor(row=screen.table.get_row_index("calc-1"))
        await settle(pilot)
        assert "quarantined" not in static_text(screen, "#task-tests")
        oracles = store.read(store.oracles_path, OracleSet)
        assert oracles is not None
        oracles.oracles["calc-1"] = oracles.oracles["calc-1"].model_copy(
            update={"environment": TaskEnvironment(rung="tip", key="tip-py3.12.1-0a1b2c3d4e5f",
                                                   note="the dated resolution failed: no six")}
        )  # fmt: skip
        store.write(store.oracles_path, oracles)
        flaky = OutcomeTally(trees={"t": TreeTally(label="the gold control", runs=2, passes=1,
                                                   fails=1)})  # fmt: skip
        ledger = Ledger(tasks={"calc-1": {"careful": {"tests/t.py::test_x": flaky}}})
        store.write(store.ledger_path, ledger)
        app.reload_records()
        await settle(pilot)
        shown = lines(static_text(screen, "#task-tests"))
        assert (
            "tests/t.py::test_x (careful): passed 1 and failed 1 of 2 runs on the gold control"
            in shown
        )
        assert "rung tip: the environment built from the tip's packaging files" in shown
        assert "why the dated resolution failed: no six" in shown


async def test_an_environment_task_shows_its_kind_and_what_its_repair_is_judged_by(
    calc: Path,
) -> None:
    store = Store(calc)
    taskset = mined(calc)
    bug = taskset.tasks[0]
    env = bug.model_copy(
        update={
            "id": "calc-env-1a2b3c4",
            "issue": 0,
            "title": "Declare six, which ops imports",
            "source_files": [],
            "test_files": [],
            "added_tests": [],
            "statement": None,
            "statement_source": None,
            "statement_missing": "the change names no issue: the agents get the failing log alone",
            "kind": "env",
            "env": EnvSpec(
                command=["python", "-m", "pytest", "-q", "tests"],
                python="3.11",
                date=bug.date,
                env_files=["requirements.txt"],
                defect="mined",
            ),
        }
    )
    taskset.tasks.append(env)
    store.write(store.tasks_path, taskset)
    async with on_screen(calc, None, TasksScreen) as (_app, pilot, screen):
        table = screen.table
        assert table.get_cell("calc-2", "kind").plain == "bug"
        assert table.get_cell("calc-env-1a2b3c4", "kind").plain == "env"
        assert table.get_cell("calc-env-1a2b3c4", "issue").plain == "–"
        assert table.get_cell("calc-env-1a2b3c4", "status").plain.startswith("will race")
        table.move_cursor(row=table.get_row_index("calc-env-1a2b3c4"))
        await settle(pilot)
        issue = static_text(screen, "#task-issue")
        assert "The agents get the failing log" in issue
        shown = lines(static_text(screen, "#task-tests"))
        assert "command python -m pytest -q tests" in shown
        assert "env files requirements.txt" in shown
        assert "defect mined" in shown


def mined(root: Path) -> TaskSet:
    store = Store(root)
    taskset = store.read(store.tasks_path, TaskSet)
    assert taskset is not None
    return taskset


def lines(text: str) -> list[str]:
    """`text`'s lines, each with its runs of blanks (a grid's columns) made one space."""
    return [" ".join(line.split()) for line in text.splitlines()]


# --- Config -----------------------------------------------------------------------------


async def edit_key(pilot: object, screen: ConfigScreen, key: str, text: str | None) -> None:
    """Highlight `key`, press enter, and type `text` (None: leave the editor open)."""
    table = screen.table
    table.move_cursor(row=table.get_row_index(key))
    await press_and_settle(pilot, "enter")  # type: ignore[arg-type]
    if text is not None:
        field = screen.editor.query_one(Input)
        assert field.has_focus
        field.value = text
        await settle(pilot)  # type: ignore[arg-type]


def config_row(screen: ConfigScreen, key: str) -> list[str]:
    return row_texts(screen.table, key)


async def test_the_config_form_shows_a_problem_beside_its_key_and_saves_keeping_comments(
    calc: Path,
) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "1", ConfigScreen) as (app, pilot, screen):
        assert config_row(screen, "run.timeout")[1] == "600"
        assert config_row(screen, "run.test-timeout")[1] == "default: 600"
        await edit_key(pilot, screen, "run.timeout", "soon")
        assert config_row(screen, "run.timeout")[1:] == [
            "soon",
            "✗ must be a positive whole number of seconds",
        ]
        assert "must be a positive whole number" in static_text(screen, "#config-detail")
        assert "unsaved changes" not in static_text(screen, "#config-status")  # until enter
        await press_and_settle(pilot, "enter")
        assert "unsaved changes" in static_text(screen, "#config-status")
        await press_and_settle(pilot, "ctrl+s")
        assert "timeout = 600" in config.read_text()

        await edit_key(pilot, screen, "run.timeout", "900")
        note = config_row(screen, "run.timeout")[2]
        assert note == "seconds one agent may spend on one task"
        await press_and_settle(pilot, "enter")
        await edit_key(pilot, screen, "project.python", "3.12")
        await press_and_settle(pilot, "enter", "ctrl+s")
        text = config.read_text()
        assert "timeout = 900" in text
        assert 'python = "3.12"' in text
        assert comments(text) == comments(CONFIG)
        assert "✓ saved" in static_text(screen, "#config-status")
        assert app.project is not None and app.project.config.run.timeout == 900


async def test_escape_puts_an_edited_key_back(calc: Path) -> None:
    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        await edit_key(pilot, screen, "tasks.limit", "0")
        assert "at least 1" in config_row(screen, "tasks.limit")[2]
        await press_and_settle(pilot, "escape")
        assert config_row(screen, "tasks.limit")[1] == "10"
        assert not screen.has_unsaved_changes
        await edit_key(pilot, screen, "judge.policy", None)
        await press_and_settle(pilot, "right")
        assert config_row(screen, "judge.policy")[1] == "unanimous"
        await press_and_settle(pilot, "enter")
        assert screen.has_unsaved_changes
        assert screen.table.has_focus


async def test_the_policy_choice_offers_credible_and_saves_it(calc: Path) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "1", ConfigScreen) as (app, pilot, screen):
        await edit_key(pilot, screen, "judge.policy", None)
        seen = [config_row(screen, "judge.policy")[1]]
        for _ in range(4):
            await press_and_settle(pilot, "right")
            seen.append(config_row(screen, "judge.policy")[1])
        assert seen == ["majority", "unanimous", "strict", "cross-vendor", "credible"]
        await press_and_settle(pilot, "enter", "ctrl+s")
        text = config.read_text()
        assert 'policy = "credible"' in text
        assert comments(text) == comments(CONFIG)
        assert app.project is not None and app.project.config.judge.policy == "credible"


async def test_agents_show_whether_their_program_is_found_and_can_be_added(calc: Path) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "1", ConfigScreen) as (_app, pilot, screen):
        head = config_row(screen, "contestants[0]")
        assert head[1] == "careful"
        assert head[2].startswith("✗ `careful-agent`, which runs the agent")
        options = config_row(screen, "contestants[0].options")
        assert options[1] == '{ command = ["careful-agent", "{prompt_file}"] }'
        await edit_key(pilot, screen, "contestants[0].options",
                       '{ command = ["python3", "{prompt_file}"] }')  # fmt: skip
        await press_and_settle(pilot, "enter")
        assert config_row(screen, "contestants[0]")[2].startswith("✓ found")

        await press_and_settle(pilot, "n", "enter")  # the question's first answer: a contestant
        assert config_row(screen, "contestants[4]")[1] == "claude-code"
        await edit_key(pilot, screen, "contestants[4].model", "sonnet")
        await press_and_settle(pilot, "enter", "ctrl+s")
        text = config.read_text()
        assert text.count("[[contestants]]") == 5
        assert 'agent = "claude-code"\nmodel = "sonnet"' in text
        assert 'command = ["python3", "{prompt_file}"]' in text

        screen.table.move_cursor(row=screen.table.get_row_index("examiners[0].quota"))
        await press_and_settle(pilot, "delete", "ctrl+s")
        assert "[[examiners]]" not in config.read_text()
        assert comments(config.read_text())[:3] == comments(CONFIG)[:3]


async def test_leaving_the_config_with_unsaved_edits_asks_first(calc: Path) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "1", ConfigScreen) as (app, pilot, screen):
        await edit_key(pilot, screen, "tasks.limit", "5")
        await press_and_settle(pilot, "enter", "2")
        assert isinstance(app.screen, Choice)
        await press_and_settle(pilot, "escape")
        assert app.current_mode == "config"

        await press_and_settle(pilot, "2")
        assert isinstance(app.screen, Choice)
        app.screen.query_one("#discard").press()
        await settle(pilot)
        assert app.current_mode == "tasks"
        assert "limit = 10" in config.read_text()

        await press_and_settle(pilot, "1")
        await edit_key(pilot, screen, "tasks.limit", "7")
        await press_and_settle(pilot, "enter", "3")
        assert isinstance(app.screen, Choice)
        app.screen.query_one("#save").press()
        await settle(pilot)
        assert app.current_mode == "race"
        assert "limit = 7" in config.read_text()


# --- Race ---------------------------------------------------------------------------------


async def test_the_race_board_replays_a_recorded_run_lane_by_lane(calc: Path) -> None:
    async with on_screen(calc, "3", RaceScreen) as (app, _pilot, screen):
        lanes = {box.quota: box for box in screen.query(LaneBox)}
        assert set(lanes) == {"alpha", "beta"}
        alpha = plain(lanes["alpha"].query_one(".lane-head", Static).content)
        assert "9 done" in alpha and "lane finished" in alpha
        beta = plain(lanes["beta"].query_one(".lane-head", Static).content)
        assert "parked on a usage limit: You've hit your usage limit" in beta
        assert len(lanes["alpha"].attempts.row_ids) == 9
        prompts = [text.plain for text in lanes["beta"].attempts.row_texts]
        assert sum("quota" in prompt for prompt in prompts) == 5
        assert "15 of 15 attempts done" in static_text(screen, "#race-summary")
        assert app.state.outcome == "done"
        assert "last run done" in static_text(screen, "StatusHeader")


async def test_a_race_in_progress_shows_running_attempts_and_their_output(calc: Path) -> None:
    shutil.copyfile(EVENTS / "race-midway.jsonl", calc / ".bugbout" / "events.jsonl")

    async with on_screen(calc, "3", RaceScreen) as (_app, _pilot, screen):
        heads = [plain(box.query_one(".lane-head", Static).content)
                 for box in screen.query(LaneBox)]  # fmt: skip
        assert all("▶" in head for head in heads), heads
        logs = [box.query_one(OutputTail) for box in screen.query(LaneBox)]
        assert all(log.line_count > 1 for log in logs)
        assert all("\x1b" not in line for log in logs for line in log.lines)


async def test_enter_on_an_attempt_opens_its_prompt_log_patch_and_cost(calc: Path) -> None:
    async with on_screen(calc, "3", RaceScreen) as (app, pilot, screen):
        alpha = next(box for box in screen.query(LaneBox) if box.quota == "alpha")
        alpha.attempts.focus()
        alpha.attempts.highlight("calc-1/careful")
        await press_and_settle(pilot, "enter")
        detail = app.screen
        assert isinstance(detail, AttemptScreen)
        assert detail.attempt == "calc-1/careful"
        summary = static_text(detail, "#attempt-summary")
        assert "18.4k in / 2.1k out" in summary and "$0.0412" in summary
        patch = static_text(detail, "#attempt-patch")
        assert "+    if not xs:" in patch
        assert "source — applied when scoring" in patch
        assert "tests/test_mean_careful.py" in patch
        await press_and_settle(pilot, "escape")
        assert app.screen is screen


async def test_the_log_of_a_running_attempt_follows_its_files_as_they_grow(
    calc: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "rationed-logs"
    logs.mkdir()
    journal = (EVENTS / "race-midway.jsonl").read_text()
    recorded = "/tmp/bugbout-recording/home/attempts/calc-5ae267f6fd/calc-3/rationed/logs"
    (calc / ".bugbout" / "events.jsonl").write_text(journal.replace(recorded, str(logs)))
    stdout, stderr = logs / "stdout.log", logs / "stderr.log"
    stdout.write_text("Working on it...\nreading the issue\n")

    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await press_and_settle(pilot, "3")
        app.push_screen(AttemptScreen("calc-3/rationed"))
        await settle(pilot)
        log = app.screen.query_one("#attempt-log", Log)

        async def shown(count: int) -> list[str]:
            for _ in range(40):
                if log.line_count >= count:
                    break
                await pilot.pause(0.1)
            return list(log.lines)

        assert await shown(2) == ["Working on it...", "reading the issue"]
        with stdout.open("a") as out:
            out.write("running the tests\nhalf a li")
        stderr.write_text("warning: slow disk\n")
        assert await shown(4) == [
            "Working on it...", "reading the issue", "running the tests",
            "stderr│ warning: slow disk",
        ]  # fmt: skip
        with stdout.open("a") as out:
            out.write("ne\n")
        assert (await shown(5))[-1] == "half a line"


# --- Matrix -------------------------------------------------------------------------------


async def test_enter_on_a_matrix_cell_opens_that_tree_and_author(calc: Path) -> None:
    async with on_screen(calc, "4", MatrixScreen) as (app, pilot, screen):
        grid = screen.grid
        assert grid.row_keys == ["base", "careful", "hasty", "slow"]
        assert [grid.cell("base", a).plain for a in grid.column_keys] == [
            "0/1 ⚑1",
            "0/1 ⚑1",
            "0/2 ⚑2",
            "2/2",
        ]
        assert grid.cell("hasty", "examiner").plain == "1/2 ⚑1/2"
        await press_and_settle(pilot, "down", "down", "right", "right")
        assert grid.cursor_keys == ("hasty", "examiner")
        await press_and_settle(pilot, "enter")
        cell = app.screen
        assert isinstance(cell, CellScreen)
        assert (cell.task_id, cell.tree_name, cell.author) == ("calc-1", "hasty", "examiner")
        rows = cell.query_one(DataTable)
        assert rows.row_count == 2
        assert [c.plain for c in rows.get_row("tests/test_x.py::test_empty_is_zero")] == [
            "tests/test_x.py::test_empty_is_zero", "failed", "failed",
            "⚑ reproduction",
        ]  # fmt: skip
        detail = static_text(cell, "#cell-detail")
        assert "assert None == 0.0" in detail
        await press_and_settle(pilot, "escape")
        assert app.screen is screen


async def test_a_cell_lists_failing_tests_first_labels_breakages_and_shows_the_patch(
    calc: Path,
) -> None:
    async with on_screen(calc, "4", MatrixScreen) as (app, pilot, _screen):
        await press_and_settle(pilot, "down", "down", "right", "right", "right", "enter")
        cell = app.screen
        assert isinstance(cell, CellScreen)
        assert (cell.tree_name, cell.author) == ("hasty", "suite")
        rows = cell.query_one(DataTable)
        assert [[c.plain for c in rows.get_row_at(i)] for i in range(rows.row_count)] == [
            ["tests/test_ops.py::test_mean_of_one", "failed", "passed", "✗ breakage"],
            ["tests/test_ops.py::test_mean", "passed", "passed", "–"],
        ]
        assert "a breakage: it passes on the unfixed code" in static_text(cell, "#cell-detail")
        patch = static_text(cell, "#cell-patch")
        assert "patch of hasty" in patch
        assert "-    return sum(xs) / len(xs)" in patch
        assert "+    return None" in patch


async def test_matrix_filters_and_task_switching(calc: Path) -> None:
    async with on_screen(calc, "4", MatrixScreen) as (_app, pilot, screen):
        columns = lambda: screen.grid.column_keys  # noqa: E731
        assert columns() == ["careful", "hasty", "examiner", "suite"]
        await press_and_settle(pilot, "r")
        assert columns() == ["careful", "hasty", "examiner"]
        await press_and_settle(pilot, "r", "d")
        assert columns() == ["careful", "examiner", "suite"]
        await press_and_settle(pilot, "d", "right_square_bracket")
        assert screen.task_id == "calc-2"
        assert screen.grid.row_keys == ["base", "careful", "hasty"]


# --- Verdicts -------------------------------------------------------------------------------


async def test_switching_the_policy_re_judges_and_can_be_saved(calc: Path) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "5", VerdictsScreen) as (app, pilot, screen):
        table = screen.table
        assert row_texts(table, "calc-2") == ["calc-2", "hasty ✗", "abstain", "abstain",
                                              "hasty ✗", "hasty ✗"]  # fmt: skip
        table.move_cursor(row=table.get_row_index("calc-2"))
        await settle(pilot)
        trail = screen.query_one(Tree)
        assert "picks hasty" in str(trail.root.label)
        assert "wrong" in str(trail.root.label)
        await press_and_settle(pilot, "p")
        assert screen.policy == "unanimous"
        assert "abstains" in str(trail.root.label)
        assert "every independent reproduction" in str(trail.root.label)
        await press_and_settle(pilot, "w")
        text = config.read_text()
        assert 'policy = "unanimous"' in text
        assert comments(text) == comments(CONFIG)
        assert app.project is not None and app.project.config.judge.policy == "unanimous"


async def test_credible_is_reached_with_p_shown_in_the_bar_and_saved_with_w(calc: Path) -> None:
    config = calc / "bugbout.toml"

    async with on_screen(calc, "5", VerdictsScreen) as (app, pilot, screen):
        await press_and_settle(pilot, "p", "p", "p", "p")
        assert screen.policy == "credible"
        bar = static_text(screen, "#policy-bar")
        assert bar.startswith("showing  credible  · [judge] policy: majority"), bar
        trail = screen.query_one(Tree)
        assert "under credible" in str(trail.root.label)
        steps = [str(node.label) for node in trail.root.children]
        assert steps[1].startswith("step 2 · whose evidence counts: "), steps
        await press_and_settle(pilot, "w")
        assert 'policy = "credible"' in config.read_text()
        assert app.project is not None and app.project.config.judge.policy == "credible"
        assert "[judge] policy: credible" in static_text(screen, "#policy-bar")
        await press_and_settle(pilot, "p")
        assert screen.policy == "majority"


async def test_a_cell_behind_a_verdict_opens_with_its_test_highlighted(calc: Path) -> None:
    async with on_screen(calc, "5", VerdictsScreen) as (app, pilot, screen):
        trail = screen.query_one(Tree)
        leaf = next(
            node
            for node in _walk(trail.root)
            if node.data is not None and node.data.tree == "slow"
            and node.data.test == "tests/test_x.py::test_empty_tuple"
        )  # fmt: skip
        trail.focus()
        trail.select_node(leaf)
        await settle(pilot)
        cell = app.screen
        assert isinstance(cell, CellScreen)
        assert (cell.tree_name, cell.author) == ("slow", "examiner")
        table = cell.query_one(DataTable)
        assert table.cursor_row == table.get_row_index("tests/test_x.py::test_empty_tuple")
        assert "TypeError: tuple" in static_text(cell, "#cell-detail")


async def test_the_store_read_again_keeps_what_the_user_opened_in_a_trail(calc: Path) -> None:
    async with on_screen(calc, "5", VerdictsScreen) as (app, pilot, screen):
        trail = screen.query_one(Tree)
        trail.root.expand_all()
        await settle(pilot)
        opened = sum(1 for node in _walk(trail.root) if node.is_expanded)
        app.reload_records()  # nothing new in the store
        await settle(pilot)
        assert sum(1 for node in _walk(trail.root) if node.is_expanded) == opened


def _walk(node: object) -> list:  # type: ignore[type-arg]
    found = [node]
    for child in node.children:  # type: ignore[attr-defined]
        found.extend(_walk(child))
    return found


# --- Report -------------------------------------------------------------------------------


async def test_the_report_shows_and_exports_markdown_and_json(calc: Path) -> None:
    async with on_screen(calc, "6", ReportScreen) as (_app, pilot, screen):
        assert screen.report is not None
        assert screen.report.picking.raced_tasks == 2
        await press_and_settle(pilot, "e")
        markdown = (calc / ".bugbout" / "report.md").read_text()
        data = json.loads((calc / ".bugbout" / "report.json").read_text())
        assert "careful" in markdown
        assert data["project"] == "calc"


# --- The app ------------------------------------------------------------------------------


async def test_the_palette_lists_the_screens_and_the_actions_of_this_one(calc: Path) -> None:
    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        provider = ActionsProvider(app.screen)
        names = {command.text for command in provider._commands()}
        assert {"Accept", "Exclude", "Mine now", "Go to Race", "Go to Report", "Start",
                "Keys", "Quit"} <= names  # fmt: skip
        await press_and_settle(pilot, "4")
        names = {command.text for command in ActionsProvider(app.screen)._commands()}
        assert {"Only reproductions", "Only disagreements", "Open cell"} <= names
        assert "Accept" not in names
        await press_and_settle(pilot, "question_mark")
        assert app.screen.query("HelpPanel")


async def test_without_a_config_the_app_offers_to_write_one(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "fresh")
    repo.commit("Initial", files={"src/fresh/__init__.py": "", "tests/test_a.py": ""})

    app = calc_app(repo.root)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, Choice)
        app.screen.query_one("#write").press()
        await settle(pilot)
        assert app.current_mode == "config"
        assert (repo.root / "bugbout.toml").is_file()
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        assert config_row(screen, "project.source")[1] == "src/fresh"


async def test_an_invalid_config_opens_on_the_config_screen(calc: Path) -> None:
    config = calc / "bugbout.toml"
    config.write_text(config.read_text().replace("timeout = 600", "timeout = -5"))

    app = calc_app(calc)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.project is None
        assert app.current_mode == "config"
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        assert config_row(screen, "run.timeout")[2].startswith("✗ must be a positive")
        await press_and_settle(pilot, "s")
        assert app.engine is None


async def test_the_trail_ends_with_the_step_that_chose_the_pick(calc: Path) -> None:
    async with on_screen(calc, "5", VerdictsScreen) as (_app, pilot, screen):
        table = screen.table
        chosen = {}
        for task in ("calc-1", "calc-2"):
            table.move_cursor(row=table.get_row_index(task))
            await settle(pilot)
            steps = [str(node.label) for node in screen.query_one(Tree).root.children]
            chosen[task] = steps[2]
        assert chosen == {
            "calc-1": "step 3 · the pick: careful has the higher support: 1.00 against 0.83 "
            "for slow",
            "calc-2": "step 3 · the pick: hasty is the only approved patch",
        }


async def test_t_steps_through_the_task_tabs_and_the_footer_says_so(calc: Path) -> None:
    async with on_screen(calc, None, TasksScreen) as (app, pilot, screen):
        shown = {
            key: active.binding.description for key, active in app.active_bindings.items()
            if active.binding.show
        }  # fmt: skip
        assert shown.get("t") == "Tabs"
        assert shown.get("space") == "Select, next"
        tabs = screen.query_one(TabbedContent)
        seen = [tabs.active]
        for _ in range(3):
            await press_and_settle(pilot, "t")
            seen.append(tabs.active)
        assert seen == ["tab-issue", "tab-fix", "tab-tests", "tab-issue"]


async def test_matrix_and_verdicts_list_tasks_by_number(calc: Path) -> None:
    order = ["calc-1", "calc-2", "calc-4", "calc-10", "calc-11"]
    # In the store, not in the app's records: a reload of the store mid-test would
    # otherwise drop them.
    store = Store(calc)
    matrix = store.read(store.matrix_path("calc-2"), Matrix)
    assert matrix is not None
    for number in (11, 4, 10):
        task = f"calc-{number}"
        store.write(store.matrix_path(task), matrix.model_copy(update={"task": task}))

    async with on_screen(calc, "4", MatrixScreen) as (app, pilot, screen):
        listing = screen.query_one("#matrix-tasks", OptionList)
        assert [listing.get_option_at_index(i).id for i in range(listing.option_count)] == order
        await press_and_settle(pilot, "5")
        verdicts = app.screen
        assert isinstance(verdicts, VerdictsScreen)
        table = verdicts.table
        assert [str(table.coordinate_to_cell_key((i, 0)).row_key.value)
                for i in range(table.row_count)] == order  # fmt: skip
