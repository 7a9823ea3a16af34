"""What `bugbout tasks` and `bugbout doctor` print: readable at 80 columns with no value
cut, paths broken only between their parts; and into a file or a pipe, never wrapped."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_config, write_issues
from rich.console import Group
from rich.rule import Rule
from rich.table import Table
from rich.text import Text
from terminals import on_a_terminal, one_line, piped, widest

from bugbout_tui.cli.live import plain_line
from bugbout_tui.cli.output import Output
from bugbout_tui.core.events import AttemptFinished
from bugbout_tui.engine.state import BoutState
from bugbout_tui.report.fitting import Column, FittedTable, PathText

TITLES = {
    12: "Fix mean() crashing with ZeroDivisionError when it is given an empty list",
    345: "Fix median() returning the upper middle value for an even number of values",
    6789: "Fix mode() picking an arbitrary value when several values tie for most common",
}
"""Three fixes, each with a title wider than a third of 80 columns."""

OPS = "def mean(xs):\n    return sum(xs) / len(xs)\n"


@pytest.fixture
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """Under a short directory, so every part of its path fits a column at 80."""
    repo = GitRepo(tmp_path_factory.mktemp("p") / "proj")
    repo.commit(
        "Initial version",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "tests/test_ops.py": "def test_nothing():\n    pass\n",
        },
    )
    ops = OPS
    for number, title in TITLES.items():
        ops += f"\n\ndef f{number}():\n    return {number}\n"
        repo.commit(
            f"{title} (#{number})",
            files={
                "src/calc/ops.py": ops,
                f"tests/test_f{number}.py": f"from calc.ops import f{number}\n\n\n"
                f"def test_f{number}():\n    assert f{number}() == {number}\n",
            },
        )
    write_config(repo.root, "calc")
    write_issues(repo.root, {12: ("mean() crashes on []", "It raises ZeroDivisionError.")})
    return repo


def missing_text(project: GitRepo, home: Path) -> dict[str, str]:
    """Task id → why it has no issue text, from `bugbout tasks --json`."""
    found = json.loads(piped(["tasks", "--json"], cwd=project.root, home=home))
    return {t["id"]: t["statement_missing"] for t in found["tasks"] if t["statement_missing"]}


def squeezed(text: str) -> str:
    """The text without whitespace or box lines: what is left of it however it was
    wrapped, in a table or a panel."""
    return "".join(char for char in "".join(text.split()) if not "\u2500" <= char <= "\u257f")


# --- bugbout tasks ---------------------------------------------------------------------------


def test_tasks_at_80_columns_cut_no_cell(project: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shown = on_a_terminal(["tasks"], cwd=project.root, home=home)
    assert widest(shown) <= 80, shown
    assert "…" not in shown, shown
    for number, title in TITLES.items():
        assert one_line(shown, f"calc-{number}"), shown
        words = shown.split()
        assert all(word in words for word in title.split()), (title, shown)
    assert "kept as tasks" in shown
    # why a task has no issue text is said under the table, whole
    missing = missing_text(project, home)
    assert sorted(missing) == ["calc-345", "calc-6789"]
    for task, why in missing.items():
        assert squeezed(f"issue text missing ({task}), so never raced: {why}") in squeezed(shown)


def test_tasks_into_a_pipe_are_never_wrapped(project: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shown = piped(["tasks"], cwd=project.root, home=home)
    assert "…" not in shown
    for number, title in TITLES.items():
        row = next(line for line in shown.splitlines() if f"calc-{number}" in line)
        assert title in row and f"#{number}" in row, row
    assert widest(shown) > 80  # laid out at its natural width, however wide


def test_one_task_at_80_columns_shows_its_whole_title(project: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shown = on_a_terminal(["tasks", "calc-12"], cwd=project.root, home=home)
    assert widest(shown) <= 80, shown
    assert squeezed(TITLES[12]) in squeezed(shown), shown
    piped_out = piped(["tasks", "calc-12"], cwd=project.root, home=home)
    assert one_line(piped_out, TITLES[12]), piped_out


# --- bugbout doctor --------------------------------------------------------------------------


def doctor_checks(project: GitRepo, home: Path) -> list[dict[str, str]]:
    found = json.loads(piped(["doctor", "--json"], cwd=project.root, home=home))
    checks: list[dict[str, str]] = found["checks"]
    return checks


def cells_as_read(shown: str, column: int) -> list[str]:
    """Each row's `column` of a boxed table, its lines joined as a reader joins them: with
    nothing after a `/`, with a space after anything else."""
    rows: list[str] = []
    for line in shown.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if cells[0] or not rows:  # a symbol: a new check
            rows.append(cells[column])
        elif cells[column]:
            joint = "" if rows[-1].endswith("/") or not rows[-1] else " "
            rows[-1] += joint + cells[column]
    return rows


PATH = re.compile(r"/[\w.+-]+(?:/[\w.+-]+)+")


def test_doctor_at_80_columns_breaks_paths_between_their_parts(
    project: GitRepo, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    checks = doctor_checks(project, home)
    shown = on_a_terminal(["doctor"], cwd=project.root, home=home)
    assert widest(shown) <= 80, shown
    details = cells_as_read(shown, 2)
    assert len(details) == len(checks), shown
    paths = 0
    for check, detail in zip(checks, details, strict=True):
        assert " ".join(check["detail"].splitlines()) == detail, shown
        paths += len(PATH.findall(check["detail"]))
    assert paths >= 3  # the repository, uv and the interpreter at least


def test_doctor_into_a_pipe_is_never_wrapped(project: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    checks = doctor_checks(project, home)
    shown = piped(["doctor"], cwd=project.root, home=home)
    for check in checks:
        for line in [*check["detail"].splitlines(), *(check["fix"] or "").splitlines()]:
            assert one_line(shown, line), (check, shown)


# --- the console every command writes through ----------------------------------------------


def to_a_pipe(*objects: object) -> str:
    buffer = io.StringIO()
    Output(file=buffer, width=80, highlight=False).print(*objects)
    return buffer.getvalue()


def test_nothing_written_to_a_pipe_is_hard_wrapped() -> None:
    long = "word " * 40
    table = Table("name", "detail")
    table.add_row("x", long.strip())
    fitted = FittedTable(Column("name"), Column("detail", wrap=True))
    fitted.add_row("y", PathText("/a/very/long/" * 12))
    shown = to_a_pipe(Text(long), "[bold]markup[/] " + long, Group(Rule("heading"), table), fitted)
    lines = shown.splitlines()
    assert lines[0] == long  # a line of text stays whole
    assert lines[1] == "markup " + long
    assert lines[2].startswith("─") and len(lines[2]) == 80  # a rule takes 80 columns
    assert any(long.strip() in line for line in lines)  # a table at its natural width
    assert any("/a/very/long/" * 12 in line for line in lines)


def test_a_terminal_still_gets_output_fitted_to_it() -> None:
    buffer = io.StringIO()
    Output(file=buffer, width=80, force_terminal=True, color_system=None).print(Text("word " * 40))
    assert widest(buffer.getvalue()) <= 80


def test_progress_lines_into_a_pipe_are_whole() -> None:
    detail = "could not read what it left: " + "a long reason " * 10
    event = AttemptFinished(attempt="calc-1/agent", status="crashed", seconds=3.0, detail=detail)
    line = plain_line(event, BoutState())
    assert line is not None
    shown = to_a_pipe(Text(line))
    assert shown == line + "\n"
