"""Untrusted text reaches no terminal, log or report as anything but text.

One bout on a project whose fix's commit title and issue are hostile (terminal control
sequences, rich markup, Markdown links, images, HTML and table rows), raced by two
`command` agents from `tests/agents/escapes.py`: `escaper` prints control sequences on
both streams, leaves a file whose name holds an escape, writes tests whose failure text
carries them and closes with a summary of them; `limited` stops on a usage limit whose
message carries them. The bout runs once on a pseudo-terminal (the live board) and once
into pipes (the plain log), and every command that shows its results is read back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from gitrepo import GitRepo
from markdown_it import MarkdownIt
from projects import write_issues
from racekit import attempt, configure, contestant, copy_project, script
from terminals import bugbout, clean_env, run_on_a_terminal

from bugbout_tui.core.models import Matrix
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

pytestmark = pytest.mark.slow  # a whole bout, twice

TASK = "calc-1"
TITLE = "\x1b]0;pwned-title\x07"
CLIPBOARD = "cHduZWQtY2xpcGJvYXJk"
"""The base64 payload the agent tries to put in the clipboard."""
MARKDOWN_BAIT = "[x](http://evil.example) <img src=x onerror=alert(1)> | a | b |"
COMMIT_TITLE = f"Fix f1 returning zero {TITLE}\x9b2J\u202e [bold]markup[/bold] {MARKDOWN_BAIT} (#1)"
ISSUE_TITLE = f"f1 returns 0 {TITLE}\u202e{MARKDOWN_BAIT}"
ISSUE_BODY = (
    f"f1() should return 1.\x1b]52;c;{CLIPBOARD}\x07 Also\x9d0;pwned-title\x9c here.\n\n"
    "# A heading\n\n| a | b |\n|---|---|\n| c | d |\n\n<img src=x onerror=alert(1)>\n"
    "[link text](http://evil.example) [bold]markup[/bold]\x1bc\x1b[2J"
)

TERMINAL_ATTACKS = re.compile(
    "\x1b\\]|\x1bc|\x1b\\[2J|\x1b\\[6n|[\x80-\x9f\u202a-\u202e\u2066-\u2069]|pwned-title|"
    + CLIPBOARD
)
"""What must never reach a terminal, where rich's own colours and cursor moves may."""
NOT_PLAIN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a plain-text log or a Markdown file must never hold: any control but newline and
tab (ESC included), any C1 control, any bidi override or isolate."""


@dataclass
class HostileBout:
    piped: Path
    """The project run into pipes, through to the report."""
    plain_log: str
    """Standard error of that run: its plain progress lines."""
    board: str
    """Everything the run on a pseudo-terminal wrote (the live board), decoded."""
    home: Path


def on_a_terminal(args: list[str], *, cwd: Path, home: Path, timeout: float) -> tuple[int, str]:
    """Run `bugbout args` with a pseudo-terminal 160 × 40 as all three standard streams;
    its exit code and everything it wrote there."""
    return run_on_a_terminal(
        args,
        cwd=cwd,
        env=clean_env(home, TERM="xterm-256color"),
        columns=160,
        rows=40,
        stderr_too=True,
        timeout=timeout,
    )


def build_project(root: Path, home: Path) -> Path:
    """calc with one bug, fixed under a hostile title, whose issue is hostile too; mined
    and through ground truth."""
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def f1():\n    return 0\n",
            "tests/test_ops.py": "from calc.ops import f1\n\n\ndef test_f1_runs():\n    f1()\n",
        },
    )
    repo.commit(
        COMMIT_TITLE,
        files={
            "src/calc/ops.py": "def f1():\n    return 1\n",
            "tests/test_f1.py": "from calc.ops import f1\n\n\n"
            "def test_f1():\n    assert f1() == 1\n",
        },
    )
    configure(root)
    write_issues(root, {1: (ISSUE_TITLE, ISSUE_BODY)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(home))
        Bout(Project.load(root)).run(until="ground-truth")
    return root


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> HostileBout:
    base = tmp_path_factory.mktemp("inert")
    home = base / "home"
    template = build_project(base / "template", home)
    agents = contestant("escaper", script("escapes", "fix", "{workdir}"), quota="escaper")
    agents += contestant("limited", script("escapes", "limit", "{workdir}"), quota="limited")
    options = {"tasks": [TASK], "run": "timeout = 120\n", "extra": agents}
    on_pty = copy_project(template, base / "on-pty", **options)  # type: ignore[arg-type]
    code, board = on_a_terminal(["run", "--until", "race"], cwd=on_pty, home=home, timeout=240)
    assert code == 0, board
    piped = copy_project(template, base / "piped", **options)  # type: ignore[arg-type]
    result = bugbout("run", cwd=piped, home=home)
    assert result.returncode == 0, result.stderr
    return HostileBout(piped=piped, plain_log=result.stderr, board=board, home=home)


def test_the_records_keep_the_agents_bytes_as_evidence(bout: HostileBout) -> None:
    record = attempt(bout.piped, TASK, "escaper")
    assert record.summary is not None and TITLE in record.summary
    assert CLIPBOARD in (Path(record.logdir) / "stdout.log").read_text()
    limited = attempt(bout.piped, TASK, "limited")
    assert limited.status == "quota"
    assert limited.detail is not None and TITLE in limited.detail
    matrix = Matrix.model_validate_json(
        (bout.piped / ".bugbout" / "matrices" / f"{TASK}.json").read_text()
    )
    messages = [
        cell.message or ""
        for cells in matrix.trees["base"].cells.values()
        for cell in cells.values()
    ]
    assert any("\x9b2J\u202e" in message for message in messages), messages


def test_the_live_board_on_a_terminal_shows_agent_output_as_text(bout: HostileBout) -> None:
    assert "desrever" in bout.board  # the agent's line was shown, without its sequences
    assert "parked" in bout.board
    found = TERMINAL_ATTACKS.findall(bout.board)
    assert not found, found


def test_the_plain_log_holds_nothing_but_text(bout: HostileBout) -> None:
    log = bout.plain_log
    assert "[race] lane limited parked: You've hit your usage limit" in log
    assert "[bold red]not markup[/]" in log  # shown as typed, not read as markup
    found = NOT_PLAIN.findall(log)
    assert not found, found


def test_report_in_the_terminal_shows_file_names_and_titles_as_text(bout: HostileBout) -> None:
    result = bugbout("report", cwd=bout.piped, home=bout.home)
    assert result.returncode == 0, result.stderr
    assert "notes" in result.stdout  # the flagged file, named without its escape
    found = NOT_PLAIN.findall(result.stdout)
    assert not found, found


MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _check_markdown(text: str) -> None:
    found = NOT_PLAIN.findall(text)
    assert not found, found
    html = MARKDOWN.render(text)
    assert "<a " not in html
    assert "<img" not in html
    assert "evil.example" in html  # the bait is there, as text
    assert html.count("<h1>") == 1  # the report's own title, no injected heading
    # the task's row keeps its columns: the title's `|` and Markdown stay in its cell
    (row,) = [line for line in text.splitlines() if line.startswith(f"| {TASK} |")]
    cells = MARKDOWN.render(
        "| " + " | ".join(["h"] * _columns(text)) + " |\n|" + "---|" * _columns(text) + "\n" + row
    )
    assert cells.count("<td>") == _columns(text)
    assert "[bold]markup[/bold]" in html


def _columns(text: str) -> int:
    (header,) = [line for line in text.splitlines() if line.startswith("| Task | Title |")]
    return header.count(" | ") + 1


def test_report_as_markdown_escapes_what_agents_and_issues_wrote(bout: HostileBout) -> None:
    result = bugbout("report", "--format", "markdown", cwd=bout.piped, home=bout.home)
    assert result.returncode == 0, result.stderr
    _check_markdown(result.stdout)
    assert "notes" in result.stdout


def test_report_md_is_safe_to_print_and_to_render(bout: HostileBout) -> None:
    _check_markdown((bout.piped / ".bugbout" / "report.md").read_text())


def test_report_json_spells_controls_as_escapes(bout: HostileBout) -> None:
    result = bugbout("report", "--format", "json", cwd=bout.piped, home=bout.home)
    assert result.returncode == 0, result.stderr
    found = NOT_PLAIN.findall(result.stdout.replace("\n", ""))
    assert not found, found
    rows = json.loads(result.stdout)["tasks"]
    assert TITLE in rows[0]["title"]  # the same value, escaped


def test_tasks_shows_the_issue_as_text(bout: HostileBout) -> None:
    listed = bugbout("tasks", cwd=bout.piped, home=bout.home)
    one = bugbout("tasks", TASK, cwd=bout.piped, home=bout.home)
    for result in (listed, one):
        assert result.returncode == 0, result.stderr
        found = NOT_PLAIN.findall(result.stdout)
        assert not found, found
    assert "f1() should return 1. Also here." in one.stdout
    assert "[bold]markup[/bold]" in one.stdout  # the body's markup shown as typed
    assert "<img src=x onerror=alert(1)>" in one.stdout


def test_an_error_quoting_what_it_was_given_is_text(bout: HostileBout) -> None:
    result = bugbout("tasks", f"calc-9{TITLE}\x9b2J\u202e", cwd=bout.piped, home=bout.home)
    assert result.returncode == 2
    assert "error: no task 'calc-9" in result.stderr
    found = NOT_PLAIN.findall(result.stderr)
    assert not found, found


def test_the_prompt_shown_is_text(bout: HostileBout) -> None:
    result = bugbout("tasks", TASK, "--show-prompt", cwd=bout.piped, home=bout.home)
    assert result.returncode == 0, result.stderr
    assert "f1() should return 1. Also here." in result.stdout
    found = NOT_PLAIN.findall(result.stdout)
    assert not found, found
