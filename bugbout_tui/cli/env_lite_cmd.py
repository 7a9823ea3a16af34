"""`bugbout env-lite`: the demo's scripted agents on the built-in Lite set, offline.

Like `bugbout demo`, it writes an ordinary project and runs it through the ordinary
engine, sandbox and report; the bout serves the Lite index on 127.0.0.1 for as long as it
runs, and nothing is fetched from the internet. A second run resumes like any bout.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.text import Text

from bugbout_tui.cli.demo_cmd import print_where, race_demo
from bugbout_tui.cli.output import stderr
from bugbout_tui.cli.run_cmd import add_run_options
from bugbout_tui.demo.lite_demo import LiteDemo, default_lite_demo_dir, prepare_lite_demo
from bugbout_tui.demo.project import check_pytest
from bugbout_tui.engine.lite import lite_repository


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "env-lite",
        help="race scripted agents on the built-in environment-repair tasks, offline",
        description="Race the demo's scripted agents on the Lite set: small projects whose "
        "clean install or command fails as written, each for one known reason. Repairs "
        "are installed from a local index served for the run, traced and audited; "
        "nothing is fetched from the internet. Run it again to see the finished bout.",
    )
    parser.add_argument(
        "directory",
        nargs="?",
        type=Path,
        metavar="DIR",
        help=f"where the Lite demo lives (default: {default_lite_demo_dir()})",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="delete the Lite demo and its results, and build it again",
    )
    parser.add_argument(
        "--trials",
        type=_trials,
        metavar="N",
        help="independent trials of each agent on each task (3 fills the Stochastic board); "
        "kept in the demo's bugbout.toml",
    )
    add_run_options(parser)
    parser.set_defaults(handler=run)


def _trials(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of trials, at least 1: {text}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    check_pytest()
    repository = lite_repository()
    demo, built = prepare_lite_demo(args.directory, repository=repository.path, fresh=args.fresh)
    if args.trials is not None:
        demo.set_trials(args.trials)
    verb = "Built" if built else "Reusing"
    stderr.print(Text(f"{verb} the Lite demo in {demo.root}", style="bold"))
    report = race_demo(demo.root, args)
    _where(demo, repository.path, finished=report is not None)
    return 0


def _where(demo: LiteDemo, repository: Path, *, finished: bool) -> None:
    """Where everything is, and what to try next."""
    rows = [
        ("project", demo.root, "bugbout.toml"),
        ("repository", repository, "the Lite projects, one branch each"),
        ("results", demo.root / ".bugbout", "tasks, controls, attempts, repairs"),
    ]
    if finished and demo.report_path.is_file():
        rows.append(("report", demo.report_path, "this report, as Markdown"))
    print_where(
        rows,
        f"Run `bugbout env-lite` again to reopen this bout at once, `bugbout -C {demo.root} "
        "report` to re-read the report, `bugbout env-lite --trials 3` for the Stochastic "
        "board, or `bugbout env-lite --fresh` to start over.",
    )
