"""The low-level core of the AWS SDK: endpoints, signing and the HTTP it sends."""

import urllib3

__all__ = ["urllib3"]
