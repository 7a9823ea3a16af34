"""`bugbout run`: the pipeline, headless, with a live display."""

from __future__ import annotations

import argparse
from typing import Any, cast

from bugbout_tui.cli.estimate_view import estimate_table
from bugbout_tui.cli.live import LiveDisplay
from bugbout_tui.cli.output import stderr, stdout
from bugbout_tui.cli.stopping import run_stoppable
from bugbout_tui.core.events import STAGES, Stage
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.sandbox import Sandbox
from bugbout_tui.report import Report


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "run",
        help="run the bout (resumes where the last run stopped)",
        description="Mine tasks, establish ground truth, and go on through the pipeline. "
        "Everything finished is kept; running again carries on.",
    )
    add_run_options(parser)
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="print what the race would run and spend (attempts, tokens, cost, time per "
        "lane), from what the store holds, and exit without running anything",
    )
    parser.set_defaults(handler=run)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """`--until` and `--retry-failed`, which every command running a bout takes."""
    parser.add_argument(
        "--until",
        choices=STAGES,
        metavar="STAGE",
        help=f"stop after this stage ({', '.join(STAGES)})",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="run again attempts that stopped on a usage limit, crashed or timed out, "
        "and ground truths that are not scored",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="make the test runs on the workers of this Dask scheduler, e.g. "
        'tcp://10.0.0.5:8786 (overrides BUGBOUT_CLUSTER and [run] cluster; "" for '
        "this machine alone)",
    )


def run_with_board(
    project: Project, args: argparse.Namespace, *, sandbox: Sandbox | None = None
) -> Report | None:
    """The bout of `project` as `args` ask, drawn live on standard error; `sandbox`
    replaces the config's choice (the demo's fallback)."""
    bout = Bout(project, retry_failed=args.retry_failed, sandbox=sandbox, cluster=args.cluster)
    display = LiveDisplay(stderr)
    bout.subscribe(display.on_event)
    with display:
        return run_stoppable(bout.arun(until=cast(Stage | None, args.until)))


def run(args: argparse.Namespace) -> int:
    project = Project.load(args.project)
    if args.estimate:
        estimate = Bout(project, retry_failed=args.retry_failed).estimate()
        stdout.print(estimate_table(estimate))
        return 0
    run_with_board(project, args)
    return 0
