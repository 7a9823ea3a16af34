"""Small Python projects with real histories, for tests that run the pipeline.

Each builder commits a package under `src/`, its tests, and a `bugbout.toml` that
runs tests with the interpreter running the test suite (so no environment is built
unless a test asks for one) and reads issue text from an `issues.json`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gitrepo import GitRepo

CONFIG = """\
[project]
source = "src/{package}"
tests = "tests"
issues-file = "issues.json"
interpreter = "{python}"

[run]
test-timeout = {test_timeout}
"""


def write_config(root: Path, package: str, *, test_timeout: int = 60, extra: str = "") -> Path:
    path = root / "bugbout.toml"
    path.write_text(
        CONFIG.format(package=package, python=sys.executable, test_timeout=test_timeout) + extra
    )
    return path


def write_issues(root: Path, issues: dict[int, tuple[str, str]]) -> None:
    (root / "issues.json").write_text(
        json.dumps(
            [
                {"number": n, "title": title, "body": body, "state": "closed"}
                for n, (title, body) in issues.items()
            ]
        )
    )


def fix(repo: GitRepo, title: str, files: dict[str, str | None]) -> str:
    """Commit a change on top of the current files (unlisted files stay as they are)."""
    return repo.commit(title, files=files)
