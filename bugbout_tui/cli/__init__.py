"""The headless `bugbout` command: the same engine as the TUI, for scripts and CI."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bugbout_tui import __version__
from bugbout_tui.cli import (
    demo_cmd,
    doctor_cmd,
    env_lite_cmd,
    init_cmd,
    report_cmd,
    run_cmd,
    tasks_cmd,
)
from bugbout_tui.cli.output import print_error
from bugbout_tui.cli.stopping import Terminated
from bugbout_tui.core.errors import BugboutError

COMMANDS = (init_cmd, doctor_cmd, tasks_cmd, run_cmd, report_cmd, demo_cmd, env_lite_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bugbout",
        description="Find out which coding agent really fixes bugs in your own codebase.",
    )
    parser.add_argument("--version", action="version", version=f"bugbout {__version__}")
    parser.add_argument(
        "-C",
        "--project",
        default=".",
        metavar="PATH",
        help="the project directory (holding bugbout.toml) or the toml file; default: .",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; user mistakes end with a message and exit code 2, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except BugboutError as exc:
        print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print("terminated", file=sys.stderr)
        return exc.exit_code
    return code
