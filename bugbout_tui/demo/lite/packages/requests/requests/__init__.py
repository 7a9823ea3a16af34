"""HTTP for Humans: `requests.get(url)` and a response to read."""

from requests.api import get, post
from requests.exceptions import HTTPError, RequestException
from requests.models import Response

__all__ = ["HTTPError", "RequestException", "Response", "get", "post"]
