from __future__ import annotations

from typing import NamedTuple
from urllib.parse import urlsplit


class Url(NamedTuple):
    """The parts of a URL, None where it has none."""

    scheme: str | None = None
    host: str | None = None
    port: int | None = None
    path: str | None = None
    query: str | None = None


def parse_url(url: str) -> Url:
    """`url` split into its parts; a URL without a scheme is read as a host."""
    parts = urlsplit(url if "://" in url else f"//{url}")
    return Url(
        parts.scheme or None,
        parts.hostname,
        parts.port,
        parts.path or None,
        parts.query or None,
    )
