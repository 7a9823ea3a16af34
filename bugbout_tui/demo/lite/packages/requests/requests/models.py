from __future__ import annotations

import json
from typing import Any

from requests.exceptions import HTTPError


class Response:
    """A server's answer: its status, its headers and its body."""

    def __init__(self, url: str, status_code: int, headers: dict[str, str], content: bytes):
        self.url = url
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)

    def raise_for_status(self) -> None:
        if not self.ok:
            raise HTTPError(f"{self.status_code} Error for url: {self.url}")
