from __future__ import annotations

from urllib.parse import quote

from urllib3.util import parse_url

SAFE_CHARS = "-._~"


def percent_encode(input_str: str, safe: str = SAFE_CHARS) -> str:
    """`input_str` percent-encoded as AWS signs it: only `safe` is left as written."""
    return quote(input_str, safe=safe)


def is_valid_endpoint_url(endpoint_url: str) -> bool:
    """An http(s) URL with a host."""
    parts = parse_url(endpoint_url)
    return parts.scheme in ("http", "https") and bool(parts.host)
