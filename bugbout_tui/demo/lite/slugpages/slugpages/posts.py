"""A post's path: `/<year>/<month>/<slug of its title>/`, slugs cut at a word."""

from __future__ import annotations

from datetime import date

from slugify import slugify

MAX_SLUG = 60


def post_path(title: str, published: date) -> str:
    slug = slugify(title, max_length=MAX_SLUG)
    if not slug:
        raise ValueError(f"the title {title!r} has nothing to make a URL of")
    return f"/{published:%Y/%m}/{slug}/"
