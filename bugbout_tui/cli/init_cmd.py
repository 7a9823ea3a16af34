"""`bugbout init`: write a commented bugbout.toml from what the repository shows."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bugbout_tui.cli.output import stdout
from bugbout_tui.infra.detect import write_initial_config


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "init",
        help="write a bugbout.toml for this repository",
        description="Write a commented bugbout.toml from the package layout, the GitHub "
        "remote and the agent CLIs found on PATH.",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing bugbout.toml")
    parser.add_argument(
        "--source", metavar="DIR", help="the package directory, when it cannot be detected"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    project = Path(args.project)
    directory = project.parent if project.suffix == ".toml" else project
    written = write_initial_config(directory, force=args.force, source=args.source)
    stdout.print(f"wrote {written}")
    stdout.print("next: [bold]bugbout tasks[/] to see the bugs your history can replay")
    return 0
