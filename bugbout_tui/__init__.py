"""bugbout: find out which coding agent really fixes bugs in your own codebase.

The Python API drives the same engine as the `bugbout` command and the TUI:

    from bugbout_tui import Bout, render_markdown

    report = Bout.load(".").run()
    print(render_markdown(report))

`Bout(Project.load("."), contestants=[MyAgent("my-model")]).run()` races adapter
objects instead of the config's `[[contestants]]`.

The names are imported on first use: the demo agents and other small entry points
start as `python -m bugbout_tui...`, and should not pay for the whole engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from bugbout_tui.agents.base import CodingAgent, Invocation, RunReport, Session, Usage
    from bugbout_tui.engine.agent_run import Entrant
    from bugbout_tui.engine.bout import Bout
    from bugbout_tui.engine.project import Project
    from bugbout_tui.infra.sandbox import Confinement
    from bugbout_tui.report import Report, render_markdown, render_terminal

_EXPORTS = {
    "Bout": "bugbout_tui.engine.bout",
    "CodingAgent": "bugbout_tui.agents.base",
    "Confinement": "bugbout_tui.infra.sandbox",
    "Entrant": "bugbout_tui.engine.race",
    "Invocation": "bugbout_tui.agents.base",
    "Project": "bugbout_tui.engine.project",
    "Report": "bugbout_tui.report",
    "RunReport": "bugbout_tui.agents.base",
    "Session": "bugbout_tui.agents.base",
    "Usage": "bugbout_tui.agents.base",
    "render_markdown": "bugbout_tui.report",
    "render_terminal": "bugbout_tui.report",
}

__all__ = [
    "Bout",
    "CodingAgent",
    "Confinement",
    "Entrant",
    "Invocation",
    "Project",
    "Report",
    "RunReport",
    "Session",
    "Usage",
    "__version__",
    "render_markdown",
    "render_terminal",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bugbout_tui' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
