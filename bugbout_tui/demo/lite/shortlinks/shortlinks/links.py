"""A page's share link: the docs site's address, the page's path, the campaign."""

from __future__ import annotations

from werkzeug.urls import url_quote

BASE = "https://docs.example.org"


def share_link(path: str, campaign: str | None = None) -> str:
    link = f"{BASE}/{url_quote(path.strip('/'))}"
    if campaign:
        link += f"?utm_campaign={url_quote(campaign, safe='')}"
    return link
