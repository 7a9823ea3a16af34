"""Virtual-hosted-style object URLs: `https://<bucket>.<endpoint host>/<key>`."""

from __future__ import annotations

from botocore.utils import is_valid_endpoint_url, percent_encode
from urllib3.util import parse_url


def object_url(endpoint: str, bucket: str, key: str) -> str:
    if not is_valid_endpoint_url(endpoint):
        raise ValueError(f"not an endpoint URL: {endpoint!r}")
    url = parse_url(endpoint)
    host = url.host if url.port is None else f"{url.host}:{url.port}"
    return f"{url.scheme}://{bucket}.{host}/{percent_encode(key, safe='/~')}"
