"""bugbout: find out which coding agent really fixes bugs in your own codebase.

The Python API drives the same engine as the `bugbout` command and the TUI:

    from bugbout_tui import Bout, render_markdown

    report = Bout.load(".").run()
    print(render_markdown(report))

`Bout(Project.load("."), contestants=[MyAgent("my-model")]).run()` races adapter
objects instead of the config's `[[contestants]]`.
"""

__version__ = "0.1.0"

from bugbout_tui.agents.base import CodingAgent, Invocation, RunReport, Session, Usage
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import Entrant
from bugbout_tui.infra.sandbox import Confinement
from bugbout_tui.report import Report, render_markdown, render_terminal

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
