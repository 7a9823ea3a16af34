"""The `bugbout-tui` command: its arguments, the demos it can build, and the app it opens.

`make_app` is the one way to build the app for a project; the command line, the tests
and the screenshot tool all use it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.config import CONFIG_NAME
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.text import inert
from bugbout_tui.demo.lite_demo import prepare_lite_demo
from bugbout_tui.demo.project import check_pytest, prepare_demo
from bugbout_tui.engine.lite import lite_repository
from bugbout_tui.tui.app import BugboutApp, Launch
from bugbout_tui.tui.session import Clock, utc_now


def config_path_for(path: Path) -> Path:
    """bugbout.toml in a directory, or the file itself."""
    return path if path.suffix == ".toml" else path / CONFIG_NAME


def make_app(
    path: Path,
    *,
    watch: bool = False,
    start: bool = False,
    demo: bool = False,
    clock: Clock = utc_now,
) -> BugboutApp:
    """The app for the project at `path`; the command line and the tests both use it."""
    return BugboutApp(
        config_path_for(path.expanduser().absolute()),
        launch=Launch(watch=watch, start=start, demo=demo),
        clock=clock,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bugbout-tui",
        description="Race coding agents on bugs your repository already fixed, and watch "
        "it happen: config, tasks, the live race, the cross-examination matrix, verdicts "
        "and the report in one terminal app.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        help="the project (default: here); with --demo or --env-lite, where to build it",
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument(
        "--demo",
        action="store_true",
        help="open the demo bout (built on first use, reused after) and start it",
    )
    how.add_argument(
        "--env-lite",
        action="store_true",
        help="open the Lite bout of environment repairs (built on first use, reused after) "
        "and start it, offline",
    )
    how.add_argument(
        "--watch",
        action="store_true",
        help="follow a bout that `bugbout run` is running on this project (read-only)",
    )
    how.add_argument("--run", action="store_true", help="start the bout at once")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="with --demo or --env-lite: delete it and its results, and build it again",
    )
    args = parser.parse_args(argv)
    demo = args.demo or args.env_lite
    if args.fresh and not demo:
        parser.error("--fresh starts a demo over; use it with --demo or --env-lite")
    path: Path = args.path or Path()
    if demo:
        opener = open_lite if args.env_lite else open_demo
        try:
            path = opener(args.path, fresh=args.fresh)
        except BugboutError as exc:
            print(f"bugbout-tui: {inert(str(exc))}", file=sys.stderr)
            return exc.exit_code
    app = make_app(path, watch=args.watch, start=args.run or demo, demo=demo)
    app.run()
    return app.return_code or 0


def open_demo(root: Path | None, *, fresh: bool = False) -> Path:
    """The demo project, reused as `bugbout demo` reuses it: the decisions, settings and
    results it holds are the user's; only `fresh` starts it over."""
    check_pytest()
    demo, built = prepare_demo(root, fresh=fresh)
    verb = "Built" if built else "Reusing"
    print(f"{verb} the demo in {demo.root}", file=sys.stderr)
    return demo.root


def open_lite(root: Path | None, *, fresh: bool = False) -> Path:
    """The Lite demo, reused as `bugbout env-lite` reuses it; its tasks install from the
    Lite index, which the bout serves on 127.0.0.1 while it runs."""
    check_pytest()
    demo, built = prepare_lite_demo(root, repository=lite_repository().path, fresh=fresh)
    verb = "Built" if built else "Reusing"
    print(f"{verb} the Lite demo in {demo.root}", file=sys.stderr)
    return demo.root
