"""The temperature where you are."""

from weathercli.forecast import API, current_temperature, describe

__all__ = ["API", "current_temperature", "describe"]
