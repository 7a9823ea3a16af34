"""Slugs: lower-case, dash-separated names that are safe in file names and URLs."""

from __future__ import annotations

import re
import unicodedata


def slugify(text: str) -> str:
    """"ACME Corp." -> "acme-corp"."""
    text = unicodedata.normalize("NFKD", text)
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    return text.strip("-")
