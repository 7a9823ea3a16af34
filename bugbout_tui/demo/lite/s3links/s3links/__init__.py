"""Links to objects in S3 buckets."""

from s3links.urls import object_url

__all__ = ["object_url"]
