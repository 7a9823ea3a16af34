"""The built-in demo: a sample project with a real history of fixed bugs, and scripted agents.

- `project` writes the sample repository, its issues file and its bugbout.toml into a
  demo directory, and reuses one that is already there;
- `repository` writes the sample repository (invoicekit) by replaying its history;
- `bugs` holds the six bugs: the maintainers' side (report, fix commit) for the history,
  and the agents' side (how to recognise each one, what each style does about it);
- `agent` is the scripted agent, started by the race like any `command` agent.

The sample itself is package data, files a reader can open: `invoicekit/` is the project
as its last commit leaves it (lint it, run its tests), `history/` holds one patch per
commit, oldest first, and `playbooks/<bug>/` the test modules the scripted agents write.

`bugbout demo` (`cli/demo_cmd.py`) ties them to the ordinary engine. The project writer
is exported lazily: the agent starts once per attempt and needs none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bugbout_tui.demo.project import DemoProject, build_demo, default_demo_dir, prepare_demo

__all__ = ["DemoProject", "build_demo", "default_demo_dir", "prepare_demo"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from bugbout_tui.demo import project

        return getattr(project, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
