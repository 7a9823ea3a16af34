"""`bugbout demo`: the whole pipeline on a built-in sample project, offline.

Nothing about the run is special: the demo writes an ordinary project (a repository, an
issues file, a bugbout.toml whose contestants are scripted `command` agents) and runs it
through the same engine, sandbox and judge as `bugbout run`. So a second `bugbout demo`
resumes like any bout: everything already done is kept, and it finishes at once.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.text import Text

from bugbout_tui.cli.output import stderr, stdout
from bugbout_tui.cli.run_cmd import add_run_options, run_with_board
from bugbout_tui.demo.project import DemoProject, check_pytest, default_demo_dir, prepare_demo
from bugbout_tui.demo.sandbox import demo_sandbox
from bugbout_tui.engine.project import Project
from bugbout_tui.report import Report, render_terminal


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="race scripted agents on a sample project: offline, about a minute",
        description="Build a sample Python project with a real history of fixed bugs and "
        "race five scripted agents on it through the whole pipeline, with nothing to "
        "install and no network. Run it again to see the finished bout at once.",
    )
    parser.add_argument(
        "directory",
        nargs="?",
        type=Path,
        metavar="DIR",
        help=f"where the demo lives (default: {default_demo_dir()})",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="delete the demo and its results, and build it again",
    )
    add_run_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_pytest()
    demo, built = prepare_demo(args.directory, fresh=args.fresh)
    verb = "Built" if built else "Reusing"
    stderr.print(Text(f"{verb} the demo in {demo.root}", style="bold"))
    report = race_demo(demo.root, args)
    _where(demo, finished=report is not None)
    return 0


def race_demo(root: Path, args: argparse.Namespace) -> Report | None:
    """Run the demo bout in `root` with the live board and print its report: the
    scripted agents run confined where the machine allows, unconfined (said so) where
    it does not."""
    project = Project.load(root)
    sandbox, unconfined = demo_sandbox(project.config.run.sandbox)
    if unconfined is not None:
        stderr.print(Text(unconfined, style="yellow"))
    report = run_with_board(project, args, sandbox=sandbox)
    if report is not None:
        stdout.print(render_terminal(report))
    return report


def print_where(rows: list[tuple[str, Path, str]], advice: str) -> None:
    """Where each part of a demo lives (label, path, what it holds), then what to try next."""
    stdout.print()
    for label, path, what in rows:
        stdout.print(Text.assemble((f"{label:>10}  ", "bold"), str(path), (f"  {what}", "dim")))
    stdout.print(Text(f"\n{advice}", style="dim"))


def _where(demo: DemoProject, *, finished: bool) -> None:
    """Where everything is, and what to try next."""
    rows = [
        ("project", demo.root, "bugbout.toml and issues.json"),
        ("repository", demo.repository, "the sample project and its history"),
        ("results", demo.root / ".bugbout", "tasks, attempts, matrices, verdicts"),
    ]
    if finished and demo.report_path.is_file():
        rows.append(("report", demo.report_path, "this report, as Markdown"))
    print_where(
        rows,
        f"Run `bugbout demo` again to reopen this bout at once, `bugbout -C {demo.root} "
        "report` to re-read the report, or `bugbout demo --fresh` to start over.",
    )
