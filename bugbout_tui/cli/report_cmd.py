"""`bugbout report`: the answer, from what the store holds, without running anything."""

from __future__ import annotations

import argparse
from typing import Any

from bugbout_tui.cli.output import stdout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report, write_report
from bugbout_tui.report import render_json, render_markdown, render_terminal


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "report",
        help="show the report of the last bout",
        description="Judge the stored matrices under the configured policy and report, "
        "in the terminal, as Markdown or as JSON. Nothing is run: switching "
        "[judge] policy and reporting again takes a moment.",
    )
    parser.add_argument(
        "--format",
        choices=("terminal", "markdown", "json"),
        default="terminal",
        help="how to print it (default: terminal)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    project = Project.load(args.project)
    report = load_report(project, keep_verdicts=True)
    write_report(project, report)
    if args.format == "markdown":
        print(render_markdown(report), end="")
    elif args.format == "json":
        print(render_json(report), end="")
    else:
        stdout.print(render_terminal(report))
    return 0
