"""`bugbout doctor`: a table of checks and a verdict, or one JSON object for scripts.

With a cluster (`--cluster`, `BUGBOUT_CLUSTER` or `[run] cluster`), a table per worker
follows this machine's, and the verdict counts the workers' problems too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from rich.text import Text

from bugbout_tui.cli.output import stderr, stdout
from bugbout_tui.core import look
from bugbout_tui.core.text import inert
from bugbout_tui.engine.cluster import check_address, cluster_address
from bugbout_tui.engine.cluster_doctor import ClusterReport, diagnose_with_cluster
from bugbout_tui.engine.doctor import Check, DoctorReport, Progress, diagnose
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.worker_checks import WorkerReport
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
        "environment; with a cluster, check every worker too (bugbout's version, the "
        "sandbox, uv, git, BUGBOUT_HOME and each agent it declares). Exits with 1 when "
        "something would stop a bout.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="check the workers of this Dask scheduler too, e.g. tcp://10.0.0.5:8786 "
        '(overrides BUGBOUT_CLUSTER and [run] cluster; "" for this machine alone)',
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    project = Project.load(args.project)
    address = cluster_address(args.cluster, project.config.run.cluster)
    if address is not None:
        check_address(address)
    if args.json:
        report, cluster = asyncio.run(_diagnose(project, address, None))
        print(json.dumps(report_json(report, cluster), indent=2))
    else:
        with stderr.status("checking…") as status:
            report, cluster = asyncio.run(
                _diagnose(project, address, lambda say: status.update(f"{say}…"))
            )
        stdout.print(report_table(report))
        for worker in cluster.workers if cluster is not None else ():
            stdout.print(worker_table(worker))
        stdout.print(verdict(report, cluster))
    return 0 if report.ok and (cluster is None or cluster.ok) else 1


async def _diagnose(
    project: Project, address: str | None, progress: Progress | None
) -> tuple[DoctorReport, ClusterReport | None]:
    if address is None:
        return await diagnose(project, progress=progress), None
    if progress is not None:
        progress(f"reaching the scheduler at {address}")
    return await diagnose_with_cluster(project, address, progress=progress)


def report_json(report: DoctorReport, cluster: ClusterReport | None = None) -> dict[str, Any]:
    """The checks; with a cluster, each worker's too, under `cluster`."""
    ok = report.ok and (cluster is None or cluster.ok)
    shown: dict[str, Any] = {"ok": ok, "checks": [check.model_dump() for check in report.checks]}
    if cluster is not None:
        shown["cluster"] = {
            "address": cluster.address,
            "ok": cluster.ok,
            "workers": [{**worker.model_dump(), "ok": worker.ok} for worker in cluster.workers],
        }
    return shown


def report_table(report: DoctorReport) -> FittedTable:
    """The checks; details and fixes quote paths, which wrap between their parts."""
    return _table(report.checks, "bugbout doctor")


def worker_table(worker: WorkerReport) -> FittedTable:
    """One worker's checks, under its name and address."""
    title = worker.address if worker.name == worker.address else f"{worker.name} {worker.address}"
    return _table(worker.checks, f"worker {inert(title)}")


def _table(checks: list[Check], title: str) -> FittedTable:
    table = FittedTable(
        Column(""),
        Column("check", style="bold"),
        Column("detail", wrap=True, floor=24),
        Column("fix", wrap=True, floor=16, style="dim"),
        title=title,
    )
    for check in checks:
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


def verdict(report: DoctorReport, cluster: ClusterReport | None = None) -> Text:
    """How many problems stop a bout; with a cluster, where they are."""
    workers = cluster.workers if cluster is not None else []
    problems = len(report.problems) + sum(len(worker.problems) for worker in workers)
    warnings = len(report.warnings) + sum(len(worker.warnings) for worker in workers)
    if problems:
        noun = "problem stops" if problems == 1 else "problems stop"
        line = Text(f"{problems} {noun} a bout", style="bold red")
        if cluster is not None:
            places = [(len(report.problems), "here")] + [
                (len(worker.problems), f"on {inert(worker.name)}") for worker in workers
            ]
            where = ", ".join(f"{count} {place}" for count, place in places if count)
            line.append(f" ({where})", style="red")
        return line
    line = Text("ready: nothing stops a bout", style="bold green")
    if warnings:
        line.append(f" ({look.plural(warnings, 'warning')} above)", style="yellow")
    return line
