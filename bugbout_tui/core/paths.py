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
    return Path(user_cache_dir("bugbout", appauthor=False))
