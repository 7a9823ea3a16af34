"""Slugs for URLs and file names, from any Unicode text."""

from slugify.slugify import slugify

__all__ = ["slugify"]
