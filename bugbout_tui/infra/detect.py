"""What `bugbout init` can tell about a repository by looking at it.

The first bugbout.toml should run as written, so init finds the package, the tests, what
the tests need (`test_needs`), the GitHub repository behind `origin`, and which agents
are installed, rather than asking.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from bugbout_tui.core.agent_facts import BUILTIN_FACTS
from bugbout_tui.core.config import CONFIG_NAME, parse_config_text
from bugbout_tui.core.config_doc import Layout, render_initial_config
from bugbout_tui.core.config_errors import display_path
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.git_urls import github_repo_from_url
from bugbout_tui.infra.test_needs import find_test_dependencies

__all__ = [
    "NOT_PACKAGES",
    "Layout",
    "detect_layout",
    "find_agents",
    "github_from_remote",
    "write_initial_config",
]

NOT_PACKAGES = frozenset(
    {
        "tests",
        "test",
        "testing",
        "docs",
        "doc",
        "examples",
        "example",
        "benchmarks",
        "benchmark",
        "build",
        "dist",
        "venv",
        "env",
        "site-packages",
        "node_modules",
        "__pycache__",
    }
)
"""Top-level directories that may hold `__init__.py` but are never the code under test."""


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _project_name(repo_root: Path) -> str | None:
    try:
        data = tomllib.loads((repo_root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    for table in (data.get("project"), data.get("tool", {}).get("poetry")):
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            return _normalise(table["name"])
    return None


def _is_environment(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").exists() or directory.name.startswith("venv")


def _packages_in(directory: Path, prefix: str) -> list[str]:
    if not directory.is_dir():
        return []
    return [
        f"{prefix}{child.name}"
        for child in sorted(directory.iterdir(), key=lambda path: path.name)
        if child.is_dir()
        and not child.name.startswith(".")
        and child.name.lower() not in NOT_PACKAGES
        and not _is_environment(child)
        and (child / "__init__.py").is_file()
    ]


def detect_layout(repo_root: Path) -> Layout:
    """The package and test directories of a repository.

    A `src/` layout is preferred to packages at the top level, since a repository using
    one keeps helpers elsewhere. Among several packages the one named like the project in
    pyproject.toml wins; otherwise the first by name, with the rest kept for a comment.
    """
    candidates = _packages_in(repo_root / "src", "src/") + _packages_in(repo_root, "")
    wanted = _project_name(repo_root)
    chosen = next(
        (path for path in candidates if wanted and _normalise(Path(path).name) == wanted),
        candidates[0] if candidates else None,
    )
    tests = next((name for name in ("tests", "test") if (repo_root / name).is_dir()), None)
    others = tuple(path for path in candidates if path != chosen)
    return Layout(source=chosen, tests=tests, other_packages=others)


def github_from_remote(repo_root: Path) -> str | None:
    """`owner/name` of the `origin` remote when it is on github.com, else None."""
    try:
        result = subprocess.run(
            ["git", "-C", str(repo_root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return github_repo_from_url(result.stdout.strip())


def find_agents() -> list[str]:
    """The built-in agent types whose program is on PATH, in a fixed order."""
    return [
        facts.harness
        for facts in BUILTIN_FACTS.values()
        if facts.executable and shutil.which(facts.executable)
    ]


def write_initial_config(
    project_dir: Path, *, force: bool = False, source: str | None = None
) -> Path:
    """Write a commented bugbout.toml for the repository at `project_dir`.

    `source` names the package when it cannot be found by looking (or to choose another).
    The text is validated before anything is written, so the file always loads.
    """
    target = project_dir / CONFIG_NAME
    if target.exists() and not force:
        raise UsageError(
            f"{display_path(target)} already exists",
            hint="Pass --force to replace it, or edit it by hand.",
        )
    layout = detect_layout(project_dir)
    if source is not None:
        if not (project_dir / source).is_dir():
            raise UsageError(f"no directory '{source}' in {display_path(project_dir)}")
        layout = Layout(source=source, tests=layout.tests, other_packages=())
    if layout.source is None:
        raise UsageError(
            f"no Python package found in {display_path(project_dir)}: looked for a directory "
            "with an __init__.py in src/ and at the top level (leaving out tests, docs, "
            "examples, build output and virtual environments)",
            hint='Name the package directory yourself, e.g. `source = "src/mypkg"` '
            "in the [project] table of bugbout.toml.",
        )
    text = render_initial_config(
        layout,
        github_from_remote(project_dir),
        find_agents(),
        find_test_dependencies(project_dir),
    )
    parse_config_text(text, target)
    write_atomic(target, text)
    return target
