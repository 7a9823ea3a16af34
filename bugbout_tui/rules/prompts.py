"""The prompts agents are given, from templates shipped in the package.

Templates live as files so a reader can see exactly what agents are told, and
`bugbout tasks --show-prompt` prints the rendered text.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime
from importlib.resources import files
from string import Template
from typing import Literal

from bugbout_tui.infra.brought_tools import runner_requirements

Role = Literal["contestant", "reproduce", "specify"]

_TEMPLATES: dict[Role, str] = {
    "contestant": "contestant.md",
    "reproduce": "examiner-reproduce.md",
    "specify": "examiner-specify.md",
}
ENV_TEMPLATE = "contestant-env.md"
"""The contestant's prompt on an environment task; examiners never take those."""
_RUNNER_NOTE = """
pytest runs the command, and it is bugbout's: when the files declare no pytest, bugbout
installs its own beside them, and it is not yours to declare. Files that declare pytest
keep theirs, held to the date like every other package. Build tools (setuptools, wheel,
poetry-core, hatchling...) and bugbout's pytest are taken as of Python {python}'s release
when that is later than the date.
"""
"""Told on a task whose command is a pytest run (`infra/brought_tools.py`): an agent
that declares pytest for an old project would hold it to the task's date."""


def _template(name: str) -> Template:
    return Template(files("bugbout_tui.prompts").joinpath(name).read_text(encoding="utf-8"))


def render_prompt(role: Role, *, statement: str, test_command: str, tests_dir: str) -> str:
    """The prompt for one attempt; the issue text is inserted verbatim."""
    return _template(_TEMPLATES[role]).substitute(
        statement=statement.strip(), test_command=test_command, tests_dir=tests_dir.rstrip("/")
    )


def render_env_prompt(
    *,
    statement: str | None,
    failure: str,
    command: Sequence[str],
    python: str,
    interpreter: str,
    index: str,
    date: datetime,
) -> str:
    """The prompt for one attempt on an environment task: the issue when there is one,
    the base's failing output (already cut to its tail), and the command that must
    succeed, written as a shell would take it."""
    block = f"\nA user reported:\n\n<issue>\n{statement.strip()}\n</issue>\n" if statement else ""
    runner = _RUNNER_NOTE.format(python=python) if runner_requirements(command, ()) else ""
    return _template(ENV_TEMPLATE).substitute(
        statement_block=block,
        runner_block=runner,
        failure=failure.strip() or "(it printed nothing)",
        command=shlex.join(command),
        python=python,
        interpreter=interpreter,
        index=index,
        date=date.isoformat(sep=" ", timespec="seconds"),
    )
