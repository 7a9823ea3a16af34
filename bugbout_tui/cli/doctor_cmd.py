"""`bugbout doctor`: a table of checks and a verdict, or one JSON object for scripts."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from rich.text import Text

from bugbout_tui.cli.output import stderr, stdout
from bugbout_tui.core import look
from bugbout_tui.core.text import inert
from bugbout_tui.engine.doctor import Check, DoctorReport, diagnose
from bugbout_tui.engine.project import Project
from bugbout_tui.report.fitting import Column, FittedTable, PathText

SYMBOLS = {
    "ok": Text("✓", style="bold green"),
    "warning": Text("!", style="bold yellow"),
    "problem": Text("✗", style="bold red"),
}


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "doctor",
        help="check everything a bout needs, before any agent runs",
        description="Check git, the repository, uv and Python, the sandbox, every agent's "
        "program, where issue text comes from, and that the tests collect in the built "
        "environment. Exits with 1 when something would stop a bout.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    project = Project.load(args.project)
    if args.json:
        report = asyncio.run(diagnose(project))
        print(json.dumps(report_json(report), indent=2))
    else:
        with stderr.status("checking…") as status:
            report = asyncio.run(diagnose(project, progress=lambda say: status.update(f"{say}…")))
        stdout.print(report_table(report))
        stdout.print(verdict(report))
    return 0 if report.ok else 1


def report_json(report: DoctorReport) -> dict[str, Any]:
    return {"ok": report.ok, "checks": [check.model_dump() for check in report.checks]}


def report_table(report: DoctorReport) -> FittedTable:
    """The checks; details and fixes quote paths, which wrap between their parts."""
    table = FittedTable(
        Column(""),
        Column("check", style="bold"),
        Column("detail", wrap=True, floor=24),
        Column("fix", wrap=True, floor=16, style="dim"),
        title="bugbout doctor",
    )
    for check in report.checks:
        table.add_row(*_row(check))
    return table


def _row(check: Check) -> tuple[Text, Text, PathText, PathText]:
    # Details quote other programs' output: never read as markup, never sent as controls.
    return (
        SYMBOLS[check.status],
        Text(inert(check.name)),
        PathText(inert(check.detail)),
        PathText(inert(check.fix or "")),
    )


def verdict(report: DoctorReport) -> Text:
    problems = len(report.problems)
    warnings = len(report.warnings)
    if problems:
        noun = "problem stops" if problems == 1 else "problems stop"
        return Text(f"{problems} {noun} a bout", style="bold red")
    line = Text("ready: nothing stops a bout", style="bold green")
    if warnings:
        line.append(f" ({look.plural(warnings, 'warning')} above)", style="yellow")
    return line
