"""Telling a repository to clone from a directory on disk, and reading GitHub's URLs.

`project.repository` holds either; the config decides which before it checks the path,
and the git layer decides which before it clones, so both ask this one function.
"""

from __future__ import annotations

import re

__all__ = ["github_repo_from_url", "is_git_url"]

# git's own URL forms (`git help clone`, GIT URLS), and the scp-like `user@host:path`.
# A bare `host:path` is left out: `project:v2` is more likely a directory than a host.
_GIT_URL = re.compile(
    r"^(?:(?:https?|ftps?|git|file|ssh|git\+ssh|ssh\+git)://\S+|[\w.-]+@[\w.-]+:\S+)$"
)
_GITHUB_URL = re.compile(
    r"^(?:https?://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com(?::\d+)?/"
    r"|git://github\.com/)(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$"
)


def is_git_url(spec: str) -> bool:
    """Whether `spec` names a repository to clone rather than a local path."""
    return _GIT_URL.match(spec.strip()) is not None


def github_repo_from_url(url: str) -> str | None:
    """`owner/name` from a GitHub clone URL (https, scp-like or ssh), else None."""
    match = _GITHUB_URL.match(url.strip())
    return match.group("repo") if match else None
