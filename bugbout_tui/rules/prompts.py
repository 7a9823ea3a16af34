"""The prompts agents are given, from templates shipped in the package.

Templates live as files so a reader can see exactly what agents are told, and
`bugbout tasks --show-prompt` prints the rendered text.
"""

from __future__ import annotations

from importlib.resources import files
from string import Template
from typing import Literal

Role = Literal["contestant", "reproduce", "specify"]

_TEMPLATES: dict[Role, str] = {
    "contestant": "contestant.md",
    "reproduce": "examiner-reproduce.md",
    "specify": "examiner-specify.md",
}


def render_prompt(role: Role, *, statement: str, test_command: str, tests_dir: str) -> str:
    """The prompt for one attempt; the issue text is inserted verbatim."""
    text = files("bugbout_tui.prompts").joinpath(_TEMPLATES[role]).read_text(encoding="utf-8")
    return Template(text).substitute(
        statement=statement.strip(), test_command=test_command, tests_dir=tests_dir.rstrip("/")
    )
