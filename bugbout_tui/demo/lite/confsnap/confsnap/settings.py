"""The snapshot settings: a YAML file, with a default for everything it leaves out."""

from __future__ import annotations

from typing import Any

import yaml

DEFAULTS: dict[str, Any] = {"interval": 60, "keep": 7, "compress": True, "paths": []}


class SettingsError(ValueError):
    """The settings file says something confsnap cannot act on."""


def load_settings(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text) or {}
    if not isinstance(loaded, dict):
        raise SettingsError("the settings file must be a mapping of names to values")
    unknown = sorted(set(loaded) - set(DEFAULTS))
    if unknown:
        raise SettingsError(f"unknown settings: {', '.join(unknown)}")
    settings = {**DEFAULTS, **loaded}
    if not isinstance(settings["interval"], int) or settings["interval"] <= 0:
        raise SettingsError("interval must be a positive number of minutes")
    return settings
