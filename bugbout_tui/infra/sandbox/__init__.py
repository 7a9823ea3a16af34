"""Confining the processes bugbout starts: the tests it runs and the agents it races.

Tests and patches come from agents, so bugbout treats them as untrusted: a confined
process writes only where the caller allows, reaches the network only when the caller
allows, and sees no credentials. What it may read is its view: the whole machine with
the caller's hidden paths masked (`host`), or nothing but the system directories and
what the caller grants (`minimal`), which every test run gets. A caller states all that
in a `Confinement`; a backend turns it into the command line that enforces it, so the
subprocess layer stays the same for every backend.

The environment is not passed through the command line on purpose: an agent's own key
would then show in the process table. The caller hands `confinement.env` to the
subprocess, and the backends keep it intact (bubblewrap only re-points temp-dir variables
at a directory that exists inside, and sets `PWD` to the working directory).
"""

from __future__ import annotations

from bugbout_tui.infra.sandbox.backend import NoSandbox, Sandbox
from bugbout_tui.infra.sandbox.bubblewrap import BubblewrapSandbox, bubblewrap_fix
from bugbout_tui.infra.sandbox.confinement import CREDENTIAL_STORES, SYSTEM_DIRS, Confinement, View
from bugbout_tui.infra.sandbox.seatbelt import SeatbeltSandbox
from bugbout_tui.infra.sandbox.selection import (
    SANDBOX_KINDS,
    SandboxReport,
    describe_sandbox,
    select_sandbox,
)
from bugbout_tui.infra.secrets import scrub_environment

__all__ = [
    "CREDENTIAL_STORES",
    "SANDBOX_KINDS",
    "SYSTEM_DIRS",
    "BubblewrapSandbox",
    "Confinement",
    "NoSandbox",
    "Sandbox",
    "SandboxReport",
    "SeatbeltSandbox",
    "View",
    "bubblewrap_fix",
    "describe_sandbox",
    "scrub_environment",
    "select_sandbox",
]
