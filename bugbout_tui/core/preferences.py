"""The user's preferences for bugbout-tui, kept across restarts: today, the theme.

They live in a small JSON file in the user's config directory (`BUGBOUT_CONFIG_HOME`
overrides it), apart from any project: a theme is a person's choice, not a bout's. A file
that cannot be read is ignored with a notice, never a crash, and the next change
rewrites it whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir
from pydantic import BaseModel, ConfigDict, ValidationError

from bugbout_tui.core.fs import write_model

PREFERENCES_NAME = "preferences.json"


class Preferences(BaseModel):
    """What bugbout-tui remembers; a key it does not know is kept out, not an error."""

    model_config = ConfigDict(extra="ignore")

    theme: str | None = None


def config_home() -> Path:
    """`BUGBOUT_CONFIG_HOME`, else the user's config directory for bugbout."""
    configured = os.environ.get("BUGBOUT_CONFIG_HOME")
    if configured:
        return Path(configured).expanduser()
    return Path(user_config_dir("bugbout", appauthor=False))


def preferences_path() -> Path:
    return config_home() / PREFERENCES_NAME


def load_preferences(path: Path | None = None) -> tuple[Preferences, str | None]:
    """The stored preferences, and why they were ignored when the file is broken.

    A missing file is simply no preferences yet.
    """
    path = path or preferences_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Preferences(), None
    except OSError as exc:
        return Preferences(), f"Could not read {path} ({exc.strerror}); using the defaults."
    try:
        return Preferences.model_validate_json(raw), None
    except ValidationError:
        return Preferences(), f"{path} is not a preferences file bugbout can read; ignored."


def save_preferences(preferences: Preferences, path: Path | None = None) -> str | None:
    """Write the preferences atomically; the reason, when they could not be written."""
    path = path or preferences_path()
    try:
        write_model(path, preferences)
    except OSError as exc:
        return f"Could not save preferences to {path} ({exc.strerror})."
    return None
