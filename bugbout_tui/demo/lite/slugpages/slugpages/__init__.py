"""Stable URLs for blog posts."""

from slugpages.posts import post_path

__all__ = ["post_path"]
