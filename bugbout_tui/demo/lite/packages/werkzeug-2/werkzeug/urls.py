from __future__ import annotations

import warnings
from urllib.parse import quote, unquote


def url_quote(
    string: str | bytes,
    charset: str = "utf-8",
    errors: str = "strict",
    safe: str = "/:",
    unsafe: str = "",
) -> str:
    """URL-encode `string`, leaving `safe` alone and always encoding `unsafe`.

    Deprecated: it will be removed in Werkzeug 3.0; use `urllib.parse.quote`.
    """
    warnings.warn(
        "'werkzeug.urls.url_quote' is deprecated and will be removed in Werkzeug 3.0."
        " Use 'urllib.parse.quote' instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    text = string.decode(charset, errors) if isinstance(string, bytes) else string
    kept = "".join(c for c in safe if c not in unsafe)
    return quote(text, safe=kept, encoding=charset, errors=errors)


def url_unquote(string: str, charset: str = "utf-8", errors: str = "replace") -> str:
    """The inverse of `url_quote`."""
    return unquote(string, encoding=charset, errors=errors)


def iri_to_uri(iri: str) -> str:
    """An IRI as an ASCII URI."""
    return quote(iri, safe="/:?#[]@!$&'()*+,;=%")
