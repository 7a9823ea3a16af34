"""The demo directory: the sample repository, its issues and its bugbout.toml.

`demo.repository` writes the sample repository (invoicekit) and its history; this module
adds what a project has around it, the issues its history names and the bout's settings,
and reuses a demo directory that is already there.

Layout of the demo directory:

    bugbout.toml      the bout: five scripted agents in two quota lanes
    issues.json       the project's issues and pull requests, shaped like GitHub's
    invoicekit/       the sample repository
    agent-state/      the rationed agent's usage counter (its `state-dirs`)
    .bugbout/         results, written by the bout
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.core.store import Store
from bugbout_tui.demo.bugs import BUGS, Issue, Style
from bugbout_tui.demo.repository import write_repository

DEMO_VERSION = "2"
"""Written into the marker file; a demo directory of another version is rebuilt."""
MARKER = ".bugbout-demo"
REPOSITORY = "invoicekit"
PACKAGE = "invoicekit"
ISSUES_FILE = "issues.json"
STATE_DIR = "agent-state"
GITHUB = "invoicekit/invoicekit"
"""The repository the issue links point at; it exists only in the issues file."""

CONTESTANTS: tuple[tuple[Style, str], ...] = (
    ("careful", "lane-a"),
    ("hasty", "lane-a"),
    ("slow", "lane-b"),
    ("rationed", "lane-b"),
)
"""Each contestant's style (also its name) and quota lane. The slow and the rationed agent
share a lane, so when the rationed one runs out the lane parks, as a shared plan would."""
EXAMINER_LANE = "lane-a"
RATIONED_ALLOWANCE = 2
"""Attempts the rationed agent gets before its usage limit; the third one stops."""
RATIONED_WINDOW = 20.0
"""Seconds the rationed agent's spent plan takes to refill: its lane parks, waits and
resumes within a minute."""
RATIONED_CAP = 4
"""Attempts the rationed agent gets in ten minutes, refills or not: its fifth stops on a
limit that resets too late to wait for, and its lane parks until a later run."""
WAIT_FOR_QUOTA = "2m"
"""The demo's `[run] wait-for-quota`: long enough for the rationed agent's short window,
too short for its ten-minute cap."""

# ---------------------------------------------------------------- issues and configuration

OTHER_ISSUES: tuple[Issue, ...] = (
    Issue(
        8,
        "Import invoice lines from a CSV file",
        "Our shop exports orders as CSV (description, quantity, unit_price). It would save us "
        "a lot of typing if invoicekit could read those lines directly, and write them back "
        "out for the accountant.",
    ),
    Issue(
        14,
        "EUR invoices show their amounts in dollars",
        "An invoice for a customer in Lyon renders as `Total: $1,250.00`. The CSV export has "
        "no currency either.\n\nExpected: `Total: €1,250.00`, and a currency column.",
    ),
    Issue(
        16,
        "Accept thousands separators in parse_amount",
        "Fixes #15\n\n## Changes\n\n- drop `,` before handing the text to `Decimal`\n"
        "- a test with one and with several separators",
        pull_request=True,
    ),
    Issue(
        17,
        "Payment reminder reads awkwardly",
        'The reminder says "Invoice INV-0042 is overdue since 2024-03-31". Several customers '
        'pointed out it should be "has been overdue since".',
    ),
    Issue(
        19,
        "Fix slugs of customer names with accents",
        "Fixes #18.\n\n## Approach\n\nDecompose (NFKD) and drop what is not ASCII.",
        pull_request=True,
    ),
    Issue(
        20,
        "Support credit notes",
        "We sometimes need to refund part of an invoice. A credit note is an invoice with "
        "negative lines that refers to the original one.",
    ),
)


def issues() -> list[dict[str, object]]:
    """The issues file: every issue and pull request the history names, GitHub-shaped."""
    found = sorted([bug.report for bug in BUGS] + list(OTHER_ISSUES), key=lambda i: i.number)
    items: list[dict[str, object]] = []
    for issue in found:
        kind = "pull" if issue.pull_request else "issues"
        url = f"https://github.com/{GITHUB}/{kind}/{issue.number}"
        item: dict[str, object] = {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": "open" if issue.number == 20 else "closed",
            "html_url": url,
        }
        if issue.pull_request:
            item["pull_request"] = {"html_url": url}
        items.append(item)
    return items


def agent_command(
    python: str, style: Style, state_dir: Path | None = None, window: float = RATIONED_WINDOW
) -> list[str]:
    """The command line of one scripted agent."""
    argv = [python, "-m", "bugbout_tui.demo.agent", "--style", style]
    argv += ["--prompt-file", "{prompt_file}"]
    if state_dir is not None:
        argv += ["--state-dir", str(state_dir), "--allowance", str(RATIONED_ALLOWANCE)]
        argv += ["--window", f"{window:g}", "--cap", str(RATIONED_CAP)]
    return argv


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def config_text(python: str, state_dir: Path, window: float = RATIONED_WINDOW) -> str:
    """The demo's bugbout.toml: the running Python, two quota lanes, five agents."""
    lines = [
        "# The built-in demo: a sample project (invoicekit) whose history holds fixed bugs,",
        "# raced by scripted agents that run offline. Written by `bugbout demo`; edit it and",
        "# run `bugbout -C <this directory> run` to try other settings.",
        "",
        "[project]",
        f'repository = "{REPOSITORY}"',
        f'source = "src/{PACKAGE}"',
        'tests = "tests"',
        f'issues-file = "{ISSUES_FILE}"',
        f"interpreter = {json.dumps(python)}",
        "# The sample needs no pytest plugin; whatever plugins this Python has stay out.",
        'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }',
        "",
        "[run]",
        "timeout = 60",
        "test-timeout = 60",
        'quotas = { "lane-a" = 2, "lane-b" = 1 }',
        "# A lane whose plan runs out waits this long at most for it to refill.",
        f'wait-for-quota = "{WAIT_FOR_QUOTA}"',
        "",
        "[judge]",
        'policy = "majority"',
    ]
    for style, lane in CONTESTANTS:
        rationed = style == "rationed"
        command = agent_command(python, style, state_dir if rationed else None, window)
        lines += [
            "",
            "[[contestants]]",
            'agent = "command"',
            f'name = "{style}"',
            f'vendor = "{style}"',
            f'quota = "{lane}"',
            f"command = {_toml_list(command)}",
        ]
        if rationed:
            lines.append(f"state-dirs = {_toml_list([str(state_dir)])}")
    lines += [
        "",
        "[[examiners]]",
        'agent = "command"',
        'name = "examiner"',
        'vendor = "examiner"',
        f'quota = "{EXAMINER_LANE}"',
        'assignment = "specify"',
        f"command = {_toml_list(agent_command(python, 'examiner'))}",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the demo directory


@dataclass(frozen=True)
class DemoProject:
    """A demo directory: where each part of it lives."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "bugbout.toml"

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def issues_path(self) -> Path:
        return self.root / ISSUES_FILE

    @property
    def state_dir(self) -> Path:
        """The rationed agent's usage counter; delete it to give the agent a new allowance."""
        return self.root / STATE_DIR / "rationed"

    @property
    def report_path(self) -> Path:
        return Store(self.root).report_markdown_path

    def is_current(self) -> bool:
        """Whether this directory is a demo built by this version of the demo."""
        marker = self.root / MARKER
        return marker.is_file() and marker.read_text(encoding="utf-8").strip() == DEMO_VERSION


def default_demo_dir() -> Path:
    return bugbout_home() / "demo"


def check_pytest(python: str = sys.executable) -> None:
    """The demo runs every test with this Python; say so plainly if it lacks pytest."""
    if python == sys.executable and importlib.util.find_spec("pytest") is not None:
        return
    if python != sys.executable:
        probe = subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False)
        if probe.returncode == 0:
            return
    raise BugboutError(
        f"The demo runs its tests with {python}, which cannot import pytest.",
        hint=f"Install it there: `{python} -m pip install pytest` "
        "(bugbout-tui normally brings it along).",
    )


def _check_interpreter(demo: DemoProject) -> None:
    """A reused demo runs with the Python it was built with, which may be gone since."""
    try:
        settings = tomllib.loads(demo.config_path.read_text(encoding="utf-8"))
        python = settings["project"]["interpreter"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return  # edited by hand: loading the config will say what is wrong
    if isinstance(python, str) and not Path(python).is_file():
        raise BugboutError(
            f"The demo in {demo.root} was built for {python}, which no longer exists.",
            hint="`bugbout demo --fresh` builds it again for the Python running now.",
        )


def build_demo(
    root: Path, *, python: str = sys.executable, window: float = RATIONED_WINDOW
) -> DemoProject:
    """Write a fresh demo into `root`, which must not exist or be empty; `window` is
    how long the rationed agent's spent plan takes to refill."""
    demo = DemoProject(root.resolve())
    demo.root.mkdir(parents=True, exist_ok=True)
    write_repository(demo.repository)
    write_atomic(demo.issues_path, json.dumps(issues(), indent=2, ensure_ascii=False) + "\n")
    demo.state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(demo.config_path, config_text(python, demo.state_dir, window))
    write_atomic(demo.root / MARKER, DEMO_VERSION + "\n")
    return demo


def prepare_demo(
    root: Path | None = None, *, fresh: bool = False, python: str = sys.executable
) -> tuple[DemoProject, bool]:
    """The demo in `root` (default: under BUGBOUT_HOME), built unless it is already there.

    Returns the demo and whether it was built now. A directory that holds anything but a
    demo is never touched; a demo of another version, or any demo with `fresh`, is
    deleted and built again (its results go with it).
    """
    demo = DemoProject((root or default_demo_dir()).expanduser().resolve())

    def reusable() -> bool:
        if not demo.is_current():
            return False
        _check_interpreter(demo)
        return True

    built = claim_demo_dir(
        demo.root,
        marker=MARKER,
        name="demo",
        command="bugbout demo",
        reusable=reusable,
        build=lambda: build_demo(demo.root, python=python),
        fresh=fresh,
    )
    return demo, built


def claim_demo_dir(
    root: Path,
    *,
    marker: str,
    name: str,
    command: str,
    reusable: Callable[[], bool],
    build: Callable[[], object],
    fresh: bool,
) -> bool:
    """Make `root` hold a demo (`name`, written by `command`, known by its `marker`
    file): reuse the one there when `reusable()` says so and `fresh` does not, else write
    it with `build()` after deleting the old one; whether it was written now.

    A directory that holds anything but such a demo is never touched. A write
    that fails (read-only, full) leaves no half-built demo to trip over.
    """
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is a file; the {name} needs a directory.")
    has_content = root.is_dir() and any(root.iterdir())
    if has_content and not (root / marker).is_file():
        raise UsageError(
            f"{root} already holds something other than a bugbout {name}; "
            f"`{command}` will not write into it.",
            hint=f"Give `{command}` an empty or new directory.",
        )
    if has_content and not fresh and reusable():
        return False
    try:
        if has_content:
            shutil.rmtree(root)
        root.mkdir(parents=True, exist_ok=True)
        build()
    except OSError as exc:
        if root.is_dir():
            for child in root.iterdir():
                with contextlib.suppress(OSError):
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
        raise BugboutError(
            f"cannot write the {name} in {root}: {exc.strerror or exc}"
            + (f" ({exc.filename})." if exc.filename else "."),
            hint=f"Free some space there, or give `{command}` a directory you can write.",
        ) from None
    return True
