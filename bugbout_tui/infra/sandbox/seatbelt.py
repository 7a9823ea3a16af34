"""macOS's sandbox: `sandbox-exec` with a generated SBPL profile."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, ToolMissingError
from bugbout_tui.infra.sandbox.backend import UNCONFINED_HINT, Sandbox, require_command
from bugbout_tui.infra.sandbox.confinement import (
    TEMP_VARIABLES,
    Confinement,
    credential_paths,
    existing,
    hidden_paths,
    inside_any,
    network_paths,
    outermost,
    program_grants,
    resolve,
    unique,
)


class SeatbeltSandbox(Sandbox):
    """macOS: `sandbox-exec` with a profile that denies writes and, if asked, the network.

    Seatbelt cannot give a process private temp dirs, so the system's temp dirs stay
    shared and writable; the rest mirrors bubblewrap.
    """

    name = "seatbelt"
    executable = "/usr/bin/sandbox-exec"

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        require_command(argv)
        return [self.executable, "-p", self.profile(confinement, cwd=cwd, argv=argv), *argv]

    def profile(self, confinement: Confinement, *, cwd: Path, argv: Sequence[str] = ()) -> str:
        """The SBPL text; the last matching rule wins, so every exception follows its rule.

        The minimal view denies every read, then allows reading the system directories,
        the temp dirs, the grants and the program's installation (`argv`), and reading
        the metadata of each directory on the way to them, which resolving a path needs.
        """
        workdir = resolve(cwd, cwd)
        writable = existing(confinement.writable, workdir, "write to")
        readable = existing(confinement.readable, workdir, "read")
        temp = [Path("/private/tmp"), Path("/private/var/tmp"), Path("/private/var/folders")]
        temp += [resolve(Path(v), workdir) for k in TEMP_VARIABLES if (v := confinement.env.get(k))]
        stores = [
            s
            for s in [*credential_paths(confinement.env), *hidden_paths(confinement)]
            if not inside_any(s, writable)
        ]

        lines = ["(version 1)", "(allow default)"]
        if confinement.view == "minimal":
            granted = unique(
                [
                    *map(Path, _SEATBELT_SYSTEM),
                    *temp,
                    *writable,
                    *readable,
                    workdir,
                    *program_grants(argv, confinement, stores),
                    *(network_paths(confinement.env) if confinement.network else []),
                ]
            )
            lines += _seatbelt_reads(outermost(granted))
        lines += ["(deny file-write*)", "(allow file-write*"]
        lines += [f"    (subpath {_sbpl_string(str(p))})" for p in unique([*temp, *writable])]
        lines += [f"    (literal {_sbpl_string(device)})" for device in _SEATBELT_DEVICES]
        lines += [f'    (regex #"{pattern}")' for pattern in _SEATBELT_DEVICE_PATTERNS]
        lines.append(")")
        if stores:
            lines.append("(deny file-read* file-write*")
            lines += [f"    (subpath {_sbpl_string(str(s))})" for s in stores]
            lines.append(")")
            reopened = [w for w in writable if inside_any(w, stores)]
            if reopened:
                lines.append("(allow file-read* file-write*")
                lines += [f"    (subpath {_sbpl_string(str(w))})" for w in reopened]
                lines.append(")")
            shown = [r for r in readable if inside_any(r, stores)]
            if shown:
                lines.append("(allow file-read*")
                lines += [f"    (subpath {_sbpl_string(str(r))})" for r in shown]
                lines.append(")")
        if not confinement.network:
            lines.append("(deny network*)")
        return "\n".join(lines) + "\n"

    def check(self) -> None:
        if sys.platform != "darwin":
            raise BugboutError(
                f"The seatbelt sandbox is part of macOS and cannot run on {sys.platform}.",
                hint='On Linux use sandbox = "bubblewrap" (or "auto") under [run] in '
                "bugbout.toml. " + UNCONFINED_HINT,
            )
        if not Path(self.executable).exists():
            raise ToolMissingError(
                f"{self.executable} is missing, and bugbout needs it to confine tests and "
                "agents on macOS.",
                hint="It ships with macOS, so the system installation is damaged. "
                + UNCONFINED_HINT,
            )
        failure = self.trial_failure(self.executable, "/usr/bin/true")
        if failure is not None:
            raise BugboutError(
                f"sandbox-exec cannot confine processes here: {failure}",
                hint="This happens when bugbout itself already runs inside a macOS sandbox "
                "(some terminals and IDEs start one); run it from a plain Terminal. "
                + UNCONFINED_HINT,
            )


_SEATBELT_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/dtracehelper",
)


_SEATBELT_DEVICE_PATTERNS = ("^/dev/ttys[0-9]+$", "^/dev/fd/[0-9]+$")


_SEATBELT_SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/Applications/Xcode.app",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/db/dyld",
    "/private/var/select",
    "/dev",
)
"""The minimal view's system directories on macOS: programs, frameworks, the developer
tools `/usr/bin/git` hands over to, configuration, time zones and the shared library
cache."""


_SEATBELT_LINKS = ("/etc", "/tmp", "/var")
"""Links at the top of a macOS file system, which resolving a path through them reads."""


def _seatbelt_reads(granted: Sequence[Path]) -> list[str]:
    """The minimal view's read rules: nothing, then the granted trees, and the metadata
    of every directory above them and of the top-level links."""
    above = [parent for path in granted for parent in reversed(path.parents)]
    links = [Path(link) for link in _SEATBELT_LINKS]
    lines = ["(deny file-read*)", "(allow file-read-metadata"]
    lines += [f"    (literal {_sbpl_string(str(p))})" for p in unique([*above, *links])]
    lines += [")", "(allow file-read*"]
    lines += [f"    (subpath {_sbpl_string(str(p))})" for p in granted]
    lines.append(")")
    return lines


def _sbpl_string(text: str) -> str:
    """`text` as an SBPL (Scheme) string literal: only backslash and quote need escaping."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
