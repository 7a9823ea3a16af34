"""Scheduled snapshots of configuration directories."""

from confsnap.settings import DEFAULTS, SettingsError, load_settings

__all__ = ["DEFAULTS", "SettingsError", "load_settings"]
