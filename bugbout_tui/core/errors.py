"""Errors that a user can act on.

Anything raised as a `BugboutError` is shown as its message alone, without a traceback,
and ends the command with its `exit_code`: 2 when the user asked for something that
cannot be done as asked (bad config, bad arguments), 1 when the work itself failed.
"""

from __future__ import annotations


class BugboutError(Exception):
    """A failure the user can understand and fix from the message alone."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n{self.hint}"


class UsageError(BugboutError):
    """The user asked for something that cannot be done as asked."""

    exit_code = 2


class StoreError(BugboutError):
    """The results store is locked, corrupt or from an incompatible version."""


class ToolMissingError(BugboutError):
    """A program bugbout needs is not installed; the message names the package."""
