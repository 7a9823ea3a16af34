"""The daily digest e-mail."""

from mailqueue.sender import SENDER, send_digest

__all__ = ["SENDER", "send_digest"]
