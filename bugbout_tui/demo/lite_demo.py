"""The Lite demo directory: a bout of the demo's scripted agents on the built-in Lite set.

Like the bug demo (`demo.project`), it is an ordinary project: a bugbout.toml whose
contestants are the demo's scripted `command` agents, run through the ordinary engine.
Its repository is the Lite repository, which bugbout writes once per machine under
`BUGBOUT_HOME/lite/`; `[env] lite` brings its tasks into the bout, and they install from
the Lite index that the bout serves on 127.0.0.1 while it runs. Nothing leaves the machine.

Layout of the directory:

    bugbout.toml      the bout: three scripted agents in two quota lanes, Lite tasks only
    .bugbout/         results, written by the bout
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import tomlkit

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.core.store import Store
from bugbout_tui.demo.bugs import Style
from bugbout_tui.demo.project import agent_command, claim_demo_dir

LITE_DEMO_VERSION = "2"
"""Written into the marker file; a Lite demo directory of another version is rebuilt."""
MARKER = ".bugbout-lite-demo"
CONTESTANTS: tuple[tuple[Style, str], ...] = (
    ("careful", "lane-a"),
    ("hasty", "lane-a"),
    ("slow", "lane-b"),
)
"""Each contestant's style (also its name) and quota lane: careful repairs as the
maintainers did, hasty makes the build pass the quick way, slow repairs carefully at its
own pace so the board has something to show."""


def config_text(python: str, repository: Path, trials: int = 1) -> str:
    """The Lite demo's bugbout.toml. Its `source` is the package of the project checked
    out in the Lite repository: the key must name one, though no bug is mined here."""
    lines = [
        "# The built-in Lite set: small projects whose environments fail as written, raced",
        "# by scripted agents that run offline. Written by `bugbout env-lite`; edit it and run",
        "# `bugbout -C <this directory> run` to try other settings.",
        "",
        "[project]",
        "# The Lite repository, written once per machine: one branch per project.",
        f"repository = {json.dumps(str(repository))}",
        f"source = {json.dumps(_package_of(repository))}",
        'tests = "."',
        "# Environment tasks install their own environments; no test of the project runs.",
        f"interpreter = {json.dumps(python)}",
        "",
        "[tasks]",
        "# Nothing is mined from the Lite repository's history: its tasks come from the set.",
        "kinds = []",
        "",
        "[env]",
        "# The Lite tasks install from their own index, served on 127.0.0.1 during the run.",
        "lite = true",
        "",
        "[run]",
        "timeout = 120",
        "test-timeout = 180",
        'quotas = { "lane-a" = 2, "lane-b" = 1 }',
        f"trials = {trials}",
    ]
    for style, lane in CONTESTANTS:
        lines += [
            "",
            "[[contestants]]",
            'agent = "command"',
            f'name = "{style}"',
            f'vendor = "{style}"',
            f'quota = "{lane}"',
            f"command = {json.dumps(agent_command(python, style))}",
        ]
    return "\n".join(lines) + "\n"


def _package_of(repository: Path) -> str:
    """The first package at the top of `repository`'s checkout."""
    found = sorted(init.parent.name for init in repository.glob("*/__init__.py"))
    if not found:
        raise BugboutError(f"the Lite repository at {repository} has no package checked out")
    return found[0]


@dataclass(frozen=True)
class LiteDemo:
    """A Lite demo directory: where each part of it lives."""

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "bugbout.toml"

    @property
    def report_path(self) -> Path:
        return Store(self.root).report_markdown_path

    def is_current(self) -> bool:
        marker = self.root / MARKER
        return marker.is_file() and marker.read_text(encoding="utf-8").strip() == LITE_DEMO_VERSION

    def set_trials(self, trials: int) -> bool:
        """Make `[run] trials` say `trials`, keeping the rest of the file; whether it
        changed. Stored attempts stay: a bout with more trials races only the new ones."""
        document = tomlkit.parse(self.config_path.read_text(encoding="utf-8"))
        run = document.setdefault("run", tomlkit.table())
        if run.get("trials") == trials:
            return False
        run["trials"] = trials
        write_atomic(self.config_path, tomlkit.dumps(document))
        return True


def default_lite_demo_dir() -> Path:
    return bugbout_home() / "lite-demo"


def prepare_lite_demo(
    root: Path | None,
    *,
    repository: Path,
    fresh: bool = False,
    python: str = sys.executable,
) -> tuple[LiteDemo, bool]:
    """The Lite demo in `root` (default: under BUGBOUT_HOME), built unless it is already
    there, for the Lite repository at `repository`; and whether it was built now.

    A directory that holds anything but a Lite demo is never touched; one of another
    version, one whose repository has moved, or any with `fresh`, is built again (its
    results go with it).
    """
    demo = LiteDemo((root or default_lite_demo_dir()).expanduser().resolve())

    def build() -> None:
        write_atomic(demo.config_path, config_text(python, repository))
        write_atomic(demo.root / MARKER, LITE_DEMO_VERSION + "\n")

    built = claim_demo_dir(
        demo.root,
        marker=MARKER,
        name="Lite demo",
        command="bugbout env-lite",
        reusable=lambda: demo.is_current() and _same(demo, repository, python),
        build=build,
        fresh=fresh,
    )
    return demo, built


def _same(demo: LiteDemo, repository: Path, python: str) -> bool:
    """Whether the demo was written for this Lite repository and this Python."""
    try:
        project = tomlkit.parse(demo.config_path.read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, tomlkit.exceptions.TOMLKitError):
        return False  # edited past reading: written again
    return bool(
        project.get("repository") == str(repository) and project.get("interpreter") == python
    )
