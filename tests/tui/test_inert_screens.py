"""Every screen shows hostile text as text: nothing it draws acts on the terminal.

The project's one bug is fixed under a hostile commit title, its issue is hostile, and
its records hold what a hostile agent leaves: output lines, a closing message, file and
test names, failure texts, notes, error messages, all laced with terminal control
sequences (the clipboard through OSC 52, the window title through OSC 0, CSI, 8-bit
controls, bidi overrides) and rich markup. Each screen is drawn whole, as the app would
write it to the terminal, and read back.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_issues
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import TabbedContent, Tree
from tuiapp import calc_app, press_and_settle, settle
from tuiproject import CONFIG

from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutFinished,
    BoutStarted,
    ErrorRaised,
    QuotaParked,
    StageFinished,
    StageStarted,
)
from bugbout_tui.core.models import (
    Attempt,
    Author,
    Cell,
    Matrix,
    Oracle,
    OracleSet,
    PatchFacts,
    Resolution,
    ResolutionSet,
    TreeRun,
)
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.core.store import Store
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import attempt_path
from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.screens.attempt import AttemptScreen
from bugbout_tui.tui.screens.cell import CellScreen

TASK = "calc-1"
CLIPBOARD = "cHduZWQtY2xpcGJvYXJk"
SEQUENCES = (
    f"\x1b]52;c;{CLIPBOARD}\x07\x1b]0;pwned-title\x07\x1b[2J\x1b[6n\x9b2J"
    f"\x9d52;c;{CLIPBOARD}\x9c\x1bc\u202edesrever"
)
"""The clipboard, the window title, a clear, a query, 8-bit CSI and OSC, a reset, and a
bidi override, ending with text that must still show."""
HOSTILE = f"{SEQUENCES} [bold]markup[/bold]"

LINKS = "[click](https://evil.example/x) ![img](file:///etc/passwd) <https://evil.example/a>"
"""Markdown that would offer clicks opening a URL or a file."""

TERMINAL_ATTACKS = re.compile(
    "\x1b\\]|\x1bc|\x1b\\[2J|\x1b\\[6n|[\x80-\x9f\u202a-\u202e\u2066-\u2069]|pwned-title|"
    + CLIPBOARD
)
"""What must never reach the terminal, where Textual's own colours and moves may."""
NOT_PLAIN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"
START = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
HOSTILE_TEST = f"tests/test_careful.py::test_empty[{HOSTILE}]"
HOSTILE_FILE = f"notes{SEQUENCES}.txt"


def build_project(root: Path) -> Path:
    """calc with one hostile bug, mined, with a hostile finished bout's records."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={"src/calc/__init__.py": "", "src/calc/ops.py": OPS, "tests/test_ops.py": ""},
    )
    repo.commit(
        f"Fix mean() on an empty list {HOSTILE} (#1)",
        files={
            "src/calc/ops.py": OPS.replace("    return", f"    # {HOSTILE}\n    return"),
            "tests/test_mean.py": "from calc.ops import mean\n\n\ndef test_empty():\n"
            "    assert mean([]) == 0.0\n",
        },
    )
    (root / "bugbout.toml").write_text(CONFIG, encoding="utf-8")
    write_issues(
        root, {1: (f"mean() crashes {HOSTILE}", f"It crashes. {HOSTILE}\nStill.\n\n{LINKS}")}
    )
    mine_tasks(Project.load(root))
    store = Store(root)
    store.write(
        store.oracles_path,
        OracleSet(oracles={TASK: Oracle(fail_to_pass=[HOSTILE_TEST], scored=True)}),
    )
    for attempt in attempts(store):
        store.write(attempt_path(store.attempts_dir, attempt.task, attempt.contestant), attempt)
    store.write(store.matrices_dir / f"{TASK}.json", matrix())
    resolved = {TASK: {"careful": Resolution(task=TASK, contestant="careful", status="resolved")}}
    store.write(store.root / "resolutions.json", ResolutionSet(patches=resolved))
    store.ensure()
    store.events_path.write_text("".join(e.model_dump_json() + "\n" for e in journal()))
    return root


def attempts(store: Store) -> list[Attempt]:
    logdir = store.root / "logs" / "careful"
    logdir.mkdir(parents=True)
    (logdir / "stdout.log").write_text(f"step 1 {HOSTILE}\nstep 2 {HOSTILE}\n")
    (logdir / "stderr.log").write_text(f"warning {HOSTILE}\n")
    (logdir / "prompt.md").write_text(f"# mean() crashes {HOSTILE}\n\nIt crashes.\n")
    diff = (
        f"diff --git a/src/calc/ops.py b/src/calc/ops.py\n--- a/src/calc/ops.py\n"
        f"+++ b/src/calc/ops.py\n@@ -1,2 +1,3 @@\n def mean(xs):\n+    # {HOSTILE}\n"
        "     return sum(xs) / len(xs)\n"
    )
    ended = START + timedelta(seconds=30)
    careful = Attempt(
        task=TASK,
        contestant="careful",
        role="contestant",
        status="finished",
        detail=f"exited with 0 {HOSTILE}",
        started_at=START,
        ended_at=ended,
        seconds=30.0,
        exit_code=0,
        summary=f"Done. {HOSTILE}",
        patch=Patch(
            source=diff,
            other=f"diff --git a/{HOSTILE_FILE} b/{HOSTILE_FILE}\n",
            files=[
                FileChange(path="src/calc/ops.py", status="modified", part="source", added_lines=1),
                FileChange(path=HOSTILE_FILE, status="added", part="other", added_lines=1),
            ],
            notes=[f"left out {HOSTILE_FILE}: too big"],
        ),
        logdir=str(logdir),
        prompt_file=str(logdir / "prompt.md"),
    )
    hasty = Attempt(
        task=TASK,
        contestant="hasty",
        role="contestant",
        status="quota",
        detail=f"You've hit your usage limit {HOSTILE}",
        started_at=START,
        ended_at=START + timedelta(seconds=2),
        seconds=2.0,
        exit_code=1,
        patch=Patch(),
        logdir="",
    )
    return [careful, hasty]


def matrix() -> Matrix:
    message = f"AssertionError: {HOSTILE}\nassert 0 == 1"
    return Matrix(
        task=TASK,
        authors=[
            Author(name="careful", kind="contestant", vendor="anthropic", tests=[HOSTILE_TEST]),
            Author(name="suite", kind="suite", tests=["tests/test_ops.py::test_mean"]),
        ],
        patches=[PatchFacts(contestant="careful", vendor="anthropic", source_size=1)],
        trees={
            "base": TreeRun(tree="base", cells={
                "careful": {HOSTILE_TEST: Cell(outcome="failed", message=message)},
                "suite": {"tests/test_ops.py::test_mean": Cell(outcome="passed")},
            }),
            "careful": TreeRun(tree="careful", error=f"pytest crashed {HOSTILE}", cells={
                "careful": {HOSTILE_TEST: Cell(outcome="failed", message=message)},
                "suite": {"tests/test_ops.py::test_mean": Cell(outcome="passed")},
            }),
        },
    )  # fmt: skip


def journal() -> list[BaseEvent]:
    at = START
    events: list[BaseEvent] = [
        BoutStarted(at=at, project="calc", stages=["mine", "ground-truth", "race"], pid=1),
        StageStarted(at=at, stage="race", total=2),
        AttemptQueued(at=at, attempt=f"{TASK}/careful", task=TASK, contestant="careful",
                      role="contestant", quota="alpha"),
        AttemptQueued(at=at, attempt=f"{TASK}/hasty", task=TASK, contestant="hasty",
                      role="contestant", quota="beta"),
        AttemptStarted(at=at, attempt=f"{TASK}/careful", logdir=""),
        AttemptStarted(at=at, attempt=f"{TASK}/hasty", logdir=""),
        AttemptOutput(at=at, attempt=f"{TASK}/careful", stream="stdout", line=f"step {HOSTILE}"),
        AttemptOutput(at=at, attempt=f"{TASK}/careful", stream="stderr",
                      line=f"warning {HOSTILE}"),
        AttemptFinished(at=at, attempt=f"{TASK}/hasty", status="quota", seconds=2.0,
                        detail=f"You've hit your usage limit {HOSTILE}"),
        QuotaParked(at=at, quota="beta", message=f"You've hit your usage limit {HOSTILE}"),
        AttemptFinished(at=at, attempt=f"{TASK}/careful", status="finished", seconds=30.0,
                        detail=f"exited with 0 {HOSTILE}"),
        ErrorRaised(at=at, message=f"the agent said {HOSTILE}", task=TASK),
        StageFinished(at=at, stage="race", summary=f"2 attempts {HOSTILE}"),
        BoutFinished(at=at, outcome="failed", message=f"stopped: {HOSTILE}"),
    ]  # fmt: skip
    return events


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = build_project(tmp_path / "calc")
    monkeypatch.chdir(root)
    return root


def drawn(app: App[int]) -> tuple[str, str]:
    """The whole screen as the app would write it to the terminal, and the text of its
    segments alone (what is drawn, without the styles and moves around it)."""
    screen = app.screen
    update = screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor",
                      width=app.size.width, legacy_windows=False)  # fmt: skip
    written = update.render_segments(console)  # type: ignore[union-attr]
    text = "\n".join(
        "".join(segment.text for strip in line for segment in strip if not segment.control)
        for line in update.strips  # type: ignore[union-attr]
    )
    return written, text


def assert_inert(app: App[int], *shown: str) -> None:
    written, text = drawn(app)
    attacks = TERMINAL_ATTACKS.findall(written)
    assert not attacks, attacks
    controls = NOT_PLAIN.findall(text)
    assert not controls, controls
    for part in shown:
        assert part in text, f"{part!r} not in:\n{text}"


@contextlib.asynccontextmanager
async def hostile_app(
    root: Path, *keys: str, notifications: bool = False
) -> AsyncIterator[tuple[BugboutApp, Pilot[int]]]:
    """The app on the hostile project at 200×60, settled, after pressing `keys`."""
    app = calc_app(root)
    async with app.run_test(size=(200, 60), notifications=notifications) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, *keys)
        yield app, pilot


async def test_the_tasks_screen_shows_the_title_issue_tests_and_fix_as_text(hostile: Path) -> None:
    async with hostile_app(hostile) as (app, pilot):
        assert_inert(app, "Fix mean() on an empty list desrever", "It crashes. desrever")
        tabs = app.screen.query_one(TabbedContent)
        for tab, shown in (("tab-tests", "test_empty["), ("tab-fix", "desrever")):
            tabs.active = tab
            await settle(pilot)
            assert_inert(app, shown)


async def test_the_issue_renders_as_markdown_without_a_link_to_click(hostile: Path) -> None:
    async with hostile_app(hostile) as (app, _pilot):
        assert_inert(app, LINKS)
        update = app.screen._compositor.render_update(full=True)
        clicks = [
            segment.style.meta["@click"]
            for line in update.strips  # type: ignore[union-attr]
            for strip in line
            for segment in strip
            if segment.style is not None and "@click" in segment.style.meta
        ]
        assert not [click for click in clicks if "evil" in click or "passwd" in click], clicks


async def test_the_race_board_shows_output_names_and_messages_as_text(hostile: Path) -> None:
    async with hostile_app(hostile, "3") as (app, _pilot):
        assert_inert(app, "warning desrever [bold]markup[/bold]", "parked on a usage limit")


async def test_an_attempt_shows_its_logs_summary_patch_and_prompt_as_text(hostile: Path) -> None:
    async with hostile_app(hostile, "3") as (app, pilot):
        app.push_screen(AttemptScreen(f"{TASK}/careful"))
        await settle(pilot)
        assert_inert(app, "Done. desrever [bold]markup[/bold]")
        tabs = app.screen.query_one(TabbedContent)
        for tab, shown in (
            ("tab-patch", "notesdesrever.txt"),
            ("tab-log", "step 2 desrever"),
            ("tab-prompt", "mean() crashes desrever"),
        ):
            tabs.active = tab
            await settle(pilot)
            assert_inert(app, shown)


async def test_the_matrix_and_a_cell_show_test_names_and_failures_as_text(hostile: Path) -> None:
    async with hostile_app(hostile, "4") as (app, pilot):
        assert_inert(app, "careful")
        app.push_screen(CellScreen(TASK, "careful", "careful"))
        await settle(pilot)
        assert_inert(app, "pytest crashed desrever", "AssertionError: desrever")


async def test_verdicts_and_the_report_show_test_names_and_titles_as_text(hostile: Path) -> None:
    async with hostile_app(hostile, "5") as (app, pilot):
        app.screen.query_one(Tree).root.expand_all()
        await settle(pilot)
        assert_inert(app, "test_empty[desrever [bold]markup[/bold]]")
        await press_and_settle(pilot, "6")
        assert_inert(app, "notesdesrever.txt")


async def test_a_notification_quoting_an_error_is_text(hostile: Path) -> None:
    async with hostile_app(hostile, notifications=True) as (app, pilot):
        app.notify(f"could not read {HOSTILE}", title=f"failed {HOSTILE}", markup=False)
        await settle(pilot)
        assert_inert(app, "could not read desrever")
