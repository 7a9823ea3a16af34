"""HTTP connection pooling, and the URL parsing the rest of the HTTP stack shares."""

from urllib3.util import Url, parse_url

__all__ = ["Url", "parse_url"]
