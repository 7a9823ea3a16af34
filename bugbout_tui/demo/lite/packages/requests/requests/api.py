from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode

from urllib3.util import parse_url

from requests.exceptions import RequestException
from requests.models import Response


def request(
    method: str,
    url: str,
    params: dict[str, Any] | None = None,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
) -> Response:
    """Send one request and read the whole answer."""
    if not parse_url(url).host:
        raise RequestException(f"Invalid URL {url!r}: No host supplied")
    if params:
        url = f"{url}{'&' if '?' in url else '?'}{urlencode(params)}"
    sent = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(sent, timeout=timeout) as answer:
            return Response(url, answer.status, dict(answer.headers), answer.read())
    except urllib.error.HTTPError as error:
        return Response(url, error.code, dict(error.headers), error.read())
    except OSError as error:
        raise RequestException(str(error)) from error


def get(url: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Response:
    return request("GET", url, params=params, **kwargs)


def post(url: str, data: bytes | None = None, **kwargs: Any) -> Response:
    return request("POST", url, data=data, **kwargs)
