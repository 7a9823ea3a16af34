from __future__ import annotations

from urllib.parse import quote, unquote


def iri_to_uri(iri: str) -> str:
    """An IRI as an ASCII URI."""
    return quote(iri, safe="/:?#[]@!$&'()*+,;=%")


def uri_to_iri(uri: str) -> str:
    """A URI with its percent-encoded Unicode decoded."""
    return unquote(uri)
