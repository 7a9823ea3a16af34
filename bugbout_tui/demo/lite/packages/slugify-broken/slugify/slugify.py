from __future__ import annotations

import re
import unicodedata

from slugify.special import PRE_TRANSLATIONS

_NOT_ALLOWED = re.compile(r"[^a-z0-9]+")


def slugify(text: str, max_length: int = 0, separator: str = "-") -> str:
    """`text` lower-cased, accents dropped, every run of other characters one separator."""
    for before, after in PRE_TRANSLATIONS:
        text = text.replace(before, after)
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_text = "".join(c for c in decomposed if not unicodedata.combining(c))
    slug = _NOT_ALLOWED.sub(separator, ascii_text.lower()).strip(separator)
    if max_length and len(slug) > max_length:
        cut = slug[:max_length]
        slug = cut.rsplit(separator, 1)[0] if separator in cut else cut
    return slug
