"""Environment tasks on every screen, read as a person reads them, at the smallest size
the app is made for (80 × 24) and a wide one: the calc project with two Lite tasks
raced and their repairs scored (`envproject`)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from envproject import RUN_FAILED, TYPO, UV_NOT_FOUND, YANKED
from envrecords import controls, env_task
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Log, OptionList, Static, Tree
from tuiapp import calc_app, press_and_settle, settle

from bugbout_tui.core.config import TasksConfig
from bugbout_tui.core.env_models import EnvInstall
from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.records import load_records
from bugbout_tui.tui.screens.attempt import LOG_LIMIT, AttemptScreen, read_step_log
from bugbout_tui.tui.screens.matrix import MatrixScreen
from bugbout_tui.tui.screens.race import RaceScreen
from bugbout_tui.tui.screens.report import ReportScreen
from bugbout_tui.tui.screens.tasks import TasksScreen, task_status
from bugbout_tui.tui.screens.verdicts import VerdictsScreen
from bugbout_tui.tui.widgets.lane import LaneBox

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
sizes = pytest.mark.parametrize("size", list(SIZES))


def shown(content: object) -> str:
    """A renderable as plain text, wide enough that nothing wraps."""
    console = Console(width=300, color_system=None, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


def static(app: App[object], selector: str) -> str:
    return shown(app.screen.query_one(selector, Static).content)


def screen_lines(app: App[object]) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def row(text: str, heading: str, first: str) -> list[str]:
    """The words of the line under `heading` that starts with `first`."""
    lines = text.splitlines()
    below = lines[lines.index(heading) + 1 :]
    return next(line.split() for line in below if line.startswith(first + " "))


def tree_text(tree: Tree[object]) -> str:
    lines: list[str] = []

    def walk(node: object) -> None:
        lines.append(node.label.plain)  # type: ignore[attr-defined]
        for child in node.children:  # type: ignore[attr-defined]
            walk(child)

    walk(tree.root)
    return "\n".join(lines)


@asynccontextmanager
async def running(root: Path, size: str) -> AsyncIterator[tuple[BugboutApp, Pilot[int]]]:
    app = calc_app(root)
    async with app.run_test(size=SIZES[size]) as pilot:
        await settle(pilot)
        yield app, pilot


async def open_attempt(app: BugboutApp, pilot: Pilot[int], attempt: str) -> AttemptScreen:
    await press_and_settle(pilot, "3")
    assert isinstance(app.screen, RaceScreen)
    for box in app.screen.query(LaneBox):
        if attempt in box.attempts.row_ids:
            box.attempts.focus()
            box.attempts.highlight(attempt)
    await press_and_settle(pilot, "enter")
    screen = app.screen
    assert isinstance(screen, AttemptScreen) and screen.attempt == attempt
    return screen


# --- Tasks --------------------------------------------------------------------------------


@sizes
async def test_an_env_task_shows_its_kind_and_controls(calc_env: Path, size: str) -> None:
    async with running(calc_env, size) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, TasksScreen)
        table = screen.table
        assert table.get_cell(YANKED, "status").plain == "will race"
        table.move_cursor(row=table.get_row_index(YANKED))
        await settle(pilot)
        assert "environment repair · Lite (built in) · security" in static(app, "#task-issue")
        assert table.get_cell(YANKED, "kind").plain == "env"
        facts = static(app, "#task-tests")
        for words in (
            "command      python -m pytest -q",
            "env files    requirements.txt",
            "defect       pin-yanked",
            "controls (its ground truth)",
            "base    ✗ install failed: urllib3==2.0.0 is yanked  (the files as written: must fail)",
            "gold    ✓ resolved · safe install 100%",
            "scored  yes: the controls are as they must be",
        ):
            assert words in facts, (words, facts)
        if size != "80x24":  # the small window shows the start of the tab; it scrolls
            await press_and_settle(pilot, "t", "t")
            assert any("base    ✗ install failed" in line for line in screen_lines(app))


def test_an_env_task_status_reads_its_controls_as_its_ground_truth() -> None:
    task = env_task("lite-x", lite=True)
    plain = TasksConfig()
    assert task_status(task, plain, None).label == "will race (ground truth pending)"
    assert task_status(task, plain, None, controls("lite-x")).label == "will race"
    passing = controls("lite-x", base="resolved")
    assert task_status(task, plain, None, passing).label == (
        "not scored: controls failed: the files as written already install and run"
    )
    excluded = TasksConfig(exclude=["lite-x"])
    assert task_status(task, excluded, None, passing).label == "excluded by you"


# --- Race ---------------------------------------------------------------------------------


@sizes
async def test_the_race_marks_env_attempts_and_ends_them_as_their_repairs(
    calc_env: Path, size: str
) -> None:
    async with running(calc_env, size) as (app, pilot):
        await press_and_settle(pilot, "3")
        rows = {
            row_id: text.plain
            for box in app.screen.query(LaneBox)
            for row_id, text in zip(box.attempts.row_ids, box.attempts.row_texts, strict=True)
        }
        assert rows[f"{TYPO}/careful"].startswith(f"✓ env {TYPO} · careful")
        assert rows[f"{TYPO}/careful"].endswith("resolved")
        assert rows[f"{TYPO}/hasty"].startswith("✗ env ")
        assert rows[f"{TYPO}/hasty"].endswith("install failed")
        assert rows[f"{TYPO}/rationed"].startswith("⊘ env ")
        assert rows[f"{YANKED}/hasty"].endswith("run failed")
        assert rows[f"{YANKED}/slow"].endswith("no repair")
        assert rows["calc-1/careful"] == "✓ calc-1 · careful  0:01  finished"
        assert any(f"env {TYPO} · " in line for line in screen_lines(app))


# --- Attempt ------------------------------------------------------------------------------


@sizes
async def test_an_env_attempt_shows_its_repair_logs_and_audit(calc_env: Path, size: str) -> None:
    async with running(calc_env, size) as (app, pilot):
        screen = await open_attempt(app, pilot, f"{TYPO}/careful")
        title = static(app, "#attempt-title")
        assert title.startswith(f"env {TYPO} · careful  ✓ resolved")
        assert "esc returns" in screen_lines(app)[2], "the title fits its line"
        repair = static(app, "#attempt-repair")
        for words in (
            "status        ✓ resolved",
            "install       ✓ exit 0",
            "brought       iniconfig, packaging, pluggy, pytest · bugbout's test runner, not the "
            "repair's: not in D³",
            "traced run    ✓ exit 0",
            "safe install  100% of the declared packages are safe",
            "precision 1.00 · recall 0.20 · F1 0.33",
            "merge gate    would approve it",
            "requests  requests[security]==2.31.0  2.31.0  requirements.txt  ✓",
            "D² installed: 5",
            "certifi==2023.11.17, charset-normalizer==3.3.2, idna==3.6",
            "declared      requests",
            "not declared  certifi, charset-normalizer, idna, urllib3",
        ):
            assert words in repair, (words, repair)
        for header in ("pinned", "exists", "removed", "advisories", "typo of", "unchecked"):
            assert header in repair
        audit = row(repair, "audit: 1", "requests")
        assert audit == ["requests", "2.31.0", "✓", "no", "none", "wheel", "✓"]
        assert "the agent's closing message" in static(app, "#attempt-summary").lower()
        assert "[bold]requirements[/bold]" in static(app, "#attempt-summary")
        patch = static(app, "#attempt-patch")
        assert "requirements.txt  environment" in patch
        assert "+requests[security]==2.31.0" in patch

        install = list(screen.query_one("#attempt-install-log", Log).lines)
        assert install[0] == f"── logs/env/{TYPO}/repairs/careful/install.log ──"
        assert "Prepared 5 packages in 30ms" in install
        assert all("\x1b" not in line and "\x07" not in line for line in install)
        trace = list(screen.query_one("#attempt-trace-log", Log).lines)
        assert any("[bold]not markup[/bold]" in line for line in trace)
        await press_and_settle(pilot, *["right"] * 5)
        assert any("Prepared 5 packages" in line for line in screen_lines(app))


async def test_a_failed_repair_says_where_it_stopped_and_a_rejected_one_names_its_files(
    calc_env: Path,
) -> None:
    async with running(calc_env, "160x45") as (app, pilot):
        await open_attempt(app, pilot, f"{TYPO}/hasty")
        repair = static(app, "#attempt-repair")
        assert f"install       ✗ exit 1 · 0 s: {UV_NOT_FOUND}" in repair
        assert "traced run    not run" in repair
        assert "merge gate    not a candidate" in repair
        assert row(repair, "audit: 1", "reqeusts") == [
            "reqeusts", "2.32.0", "✗", "removed", "none", "requests", "?", "✗",
        ]  # fmt: skip
        await press_and_settle(pilot, "escape")

        await open_attempt(app, pilot, f"{TYPO}/rationed")
        repair = static(app, "#attempt-repair")
        assert "status        ⊘ rejected" in repair
        assert "rejected for  src/fetch.py (not environment files)" in repair
        assert "src/fetch.py      not an environment file" in static(app, "#attempt-patch")
        await press_and_settle(pilot, "escape")

        await open_attempt(app, pilot, f"{YANKED}/careful")
        repair = static(app, "#attempt-repair")
        assert "would refuse it: urllib3==1.26.4 has published advisories: PYSEC-2023-212" in repair
        assert row(repair, "audit: 1", "urllib3") == [
            "urllib3", "1.26.4", "✓", "no", "PYSEC-2023-212", "wheel", "✗",
        ]  # fmt: skip
        assert row(repair, "newest is not the same as safe", "urllib3") == [
            "urllib3", "1.26.4", "2.1.0", "2.2.1", "1.26.4:", "PYSEC-2023-212",
        ]  # fmt: skip
        await press_and_settle(pilot, "escape")

        await open_attempt(app, pilot, f"{YANKED}/hasty")
        assert f"traced run    ✗ exit 1 · 1 s: {RUN_FAILED}" in static(app, "#attempt-repair")


async def test_an_env_attempt_not_scored_yet_says_when_it_will_be(calc_env: Path) -> None:
    store = calc_env / ".bugbout"
    (store / "repairs.json").unlink()
    async with running(calc_env, "160x45") as (app, pilot):
        screen = await open_attempt(app, pilot, f"{TYPO}/careful")
        assert static(app, "#attempt-repair").startswith("Not scored yet")
        assert list(screen.query_one("#attempt-install-log", Log).lines) == [
            "(written when the repair is scored)"
        ]
        assert static(app, "#attempt-title").startswith(f"env {TYPO} · careful  ✓ finished")


async def test_a_bug_attempt_has_no_repair_tabs(calc_env: Path) -> None:
    async with running(calc_env, "160x45") as (app, pilot):
        screen = await open_attempt(app, pilot, "calc-1/careful")
        assert not screen.query("#attempt-repair")
        assert "source — applied when scoring" in static(app, "#attempt-patch")


def test_a_step_log_shows_its_end_and_says_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "install.log").write_text("".join(f"line {n}\n" for n in range(LOG_LIMIT + 5)))
    lines = read_step_log(tmp_path, EnvInstall(ok=False, log="install.log"))
    assert lines[0] == "── install.log ──  … 5 earlier lines are in the file"
    assert lines[1] == "line 5" and lines[-1] == f"line {LOG_LIMIT + 4}"
    assert read_step_log(tmp_path, EnvInstall(ok=False)) == ["(no output was kept)"]
    assert read_step_log(tmp_path, None) == ["(this step did not run)"]
    gone = read_step_log(tmp_path, EnvInstall(ok=False, log="gone.log"))
    assert gone[0].startswith("(the log gone.log could not be read")


# --- Verdicts and Matrix ------------------------------------------------------------------


def test_the_store_reading_judges_every_env_task(calc_env: Path) -> None:
    records = load_records(calc_env)
    assert records.env_tasks == [TYPO, YANKED]
    assert records.is_env(TYPO) and not records.is_env("calc-1")
    verdicts = records.env_verdicts
    assert (verdicts[TYPO].pick, verdicts[TYPO].approved) == ("careful", True)
    assert (verdicts[YANKED].pick, verdicts[YANKED].approved) == ("careful", False)
    assert records.repair(TYPO, "hasty") is not None
    assert set(records.env_controls(YANKED)) == {"base", "gold"}


@sizes
async def test_verdicts_list_env_tasks_with_the_env_judges_pick_and_why(
    calc_env: Path, size: str
) -> None:
    async with running(calc_env, size) as (app, pilot):
        await press_and_settle(pilot, "5")
        screen = app.screen
        assert isinstance(screen, VerdictsScreen)
        table: DataTable[object] = screen.table
        cells = [cell.plain for cell in table.get_row(YANKED)]  # type: ignore[attr-defined]
        assert cells == [f"{YANKED} env", "careful gate ✗", "same", "same", "same", "same"]
        assert table.get_row(TYPO)[1].plain == "careful gate ✓"  # type: ignore[attr-defined]
        assert max(len(line.rstrip()) for line in screen_lines(app)) <= SIZES[size][0]
        table.move_cursor(row=table.get_row_index(YANKED))
        await settle(pilot)
        trail = tree_text(screen.query_one("#verdict-trail", Tree))
        for words in (
            f"{YANKED}: picks careful — the merge gate refuses",
            "step 1 · candidates: 1 repair installed and ran: careful",
            f"hasty: ✗ run failed: {RUN_FAILED}",
            "slow: ∅ no repair",
            "step 2 · the pick: careful is the only repair that installed and ran",
            "1. careful: safe install 0% · F1 0.33 · 2 lines · gate ✗ urllib3==1.26.4",
            "step 3 · the merge gate: the merge gate refuses careful",
            "urllib3==1.26.4 has published advisories: PYSEC-2023-212",
            "base: ✗ install failed: urllib3==2.0.0 is yanked",
            "gold: ✓ resolved",
        ):
            assert words in trail, (words, trail)
        assert any(f"{YANKED}: picks careful" in line for line in screen_lines(app))

        table.move_cursor(row=table.get_row_index(TYPO))
        await settle(pilot)
        trail = tree_text(screen.query_one("#verdict-trail", Tree))
        assert "careful and careful#2 are equally safe (100%)" in trail
        assert "4. slow: safe install 0% · F1 0.33 · 2 lines · gate ✓" in trail
        assert "rationed: ⊘ rejected (src/fetch.py)" in trail
        await press_and_settle(pilot, "p")
        assert table.get_row(TYPO)[1].plain == "careful gate ✓"  # type: ignore[attr-defined]


async def test_an_env_task_whose_controls_failed_says_the_report_leaves_it_out(
    calc_env: Path,
) -> None:
    repairs = calc_env / ".bugbout" / "repairs.json"
    text = repairs.read_text()
    repairs.write_text(text.replace('"detail": "urllib3==2.0.0 is yanked"', '"detail": null'))
    records = load_records(calc_env)
    assert records.repairs is not None
    records.repairs.controls[YANKED].pop("gold")
    from bugbout_tui.core.store import Store

    Store(calc_env).write(Store(calc_env).repairs_path, records.repairs)
    async with running(calc_env, "160x45") as (app, pilot):
        await press_and_settle(pilot, "5")
        screen = app.screen
        assert isinstance(screen, VerdictsScreen)
        screen.table.move_cursor(row=screen.table.get_row_index(YANKED))
        await settle(pilot)
        trail = tree_text(screen.query_one("#verdict-trail", Tree))
        assert "gold: not made yet" in trail
        assert "the report leaves it out: its controls are not recorded yet" in trail


@sizes
async def test_the_matrix_says_an_env_task_has_none(calc_env: Path, size: str) -> None:
    async with running(calc_env, size) as (app, pilot):
        await press_and_settle(pilot, "4")
        screen = app.screen
        assert isinstance(screen, MatrixScreen)
        listing = screen.query_one("#matrix-tasks", OptionList)
        labels = [listing.get_option_at_index(i).prompt for i in range(listing.option_count)]
        assert [str(label) for label in labels] == [
            "calc-1  3 patches", "calc-2  2 patches", f"{TYPO}  env", f"{YANKED}  env",
        ]  # fmt: skip
        await press_and_settle(pilot, "right_square_bracket", "right_square_bracket")
        assert screen.task_id == TYPO
        title = static(app, "#matrix-title")
        assert f"env {TYPO} is an environment repair: there are no tests to cross-examine" in title
        assert not screen.query_one("#matrix-legend").display
        assert any("no matrix" in line for line in screen_lines(app))


# --- Report -------------------------------------------------------------------------------


@sizes
async def test_the_report_shows_the_env_boards_and_b_brings_them_into_view(
    calc_env: Path, size: str
) -> None:
    async with running(calc_env, size) as (app, pilot):
        await press_and_settle(pilot, "6")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        env = static(app, "#report-env")
        for words in (
            "All: every admitted environment task · 2 tasks",
            "Lite: the built-in set · 2 tasks",
            "Secure: tasks whose original manifest the audit flagged",
            "Stochastic: Lite tasks each agent ran three times or more · 1 task",
            "Newest is not the same as safe",
            f"{TYPO} slow resolved with safe install 0% against 100% for the known repair, "
            "dropping the pins of requests",
        ):
            assert words in env, (words, env)
        assert "Environment repairs" not in static(app, "#report-body")
        assert not any("Environment repairs" in line for line in screen_lines(app)[:5])
        footer = screen_lines(app)[-1]
        assert "b Env boards" in footer, footer
        await press_and_settle(pilot, "b")
        assert "Environment repairs · 2 admitted tasks" in screen_lines(app)[3]


async def test_without_env_tasks_the_report_offers_no_env_boards(calc: Path) -> None:
    async with running(calc, "160x45") as (app, pilot):
        await press_and_settle(pilot, "6")
        assert not app.screen.query_one("#report-env").display
        assert "Env boards" not in screen_lines(app)[-1]
