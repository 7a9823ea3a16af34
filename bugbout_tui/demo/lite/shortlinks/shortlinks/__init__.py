"""Share links for the docs site."""

from shortlinks.links import BASE, share_link

__all__ = ["BASE", "share_link"]
