"""Where heavy, disposable state lives (environments, trees, clones, working copies)."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir


def bugbout_home() -> Path:
    """`BUGBOUT_HOME`, else the user's cache directory for bugbout."""
    configured = os.environ.get("BUGBOUT_HOME")
    if configured:
        return Path(configured).expanduser().resolve()
    return default_home()


def default_home() -> Path:
    """The user's cache directory for bugbout: the home of every run without `BUGBOUT_HOME`."""
    return Path(user_cache_dir("bugbout", appauthor=False))


def known_homes() -> tuple[Path, ...]:
    """Every bugbout home this process can know of, as real paths: the configured one and
    the default one, which keeps the trees and stores of earlier runs made without
    `BUGBOUT_HOME`. The demo's default directory (`demo/project.py`) lies inside the
    home of the run that built it, so it is among them.

    What no confined process may see: each holds pristine trees of fix commits, clones
    and, in the demo's directory, a store with its oracles.
    """
    homes = (bugbout_home(), default_home())
    return tuple(dict.fromkeys(Path(os.path.realpath(home)) for home in homes))
