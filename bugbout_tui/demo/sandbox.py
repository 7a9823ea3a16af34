"""The demo's sandbox: the one `[run] sandbox` picks, or none when this machine has none.

Everywhere else a missing sandbox stops the run, because agents and the tests they write
are hostile. The demo's agents and tests are bugbout's own scripted code, so a newcomer's
first run should not end in an error: when `sandbox = "auto"` finds nothing that works,
the demo runs unconfined and says so in one line, with the command that installs one.
Only the two demo commands ask this module; `bugbout run` on the demo directory still
refuses, as it does on any project.
"""

from __future__ import annotations

import sys

from bugbout_tui.core.errors import BugboutError, ToolMissingError
from bugbout_tui.infra.sandbox import NoSandbox, Sandbox, select_sandbox


def demo_sandbox(kind: str) -> tuple[Sandbox | None, str | None]:
    """The sandbox for the demo's bout (None: the config's own choice) and the line to
    show when it runs unconfined.

    Only "auto" falls back: a sandbox the user named in the demo's bugbout.toml is used
    or refused as anywhere else.
    """
    if kind != "auto":
        return None, None
    try:
        return select_sandbox(kind), None
    except ToolMissingError:
        fix = _INSTALL if sys.platform.startswith("linux") else "`bugbout doctor` says more"
    except BugboutError:
        fix = "`bugbout doctor` says why and how to fix it"
    return NoSandbox(), (
        f"No working sandbox here, so the demo's scripted agents run unconfined ({fix}; "
        "every other run refuses without one)."
    )


_INSTALL = "`sudo apt-get install bubblewrap` installs one"
