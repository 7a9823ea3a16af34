"""Which files of a repair are environment files: the only ones an environment task takes.

An environment task's code is right by definition, so a repair may change what the
project declares it needs and how to install it, nothing else. Everything else is
rejected, not ignored: a repair that had to touch the code to pass is no repair of the
environment, and it is recorded with the files that made it so.

Environment files are those that decide what a clean install puts in the environment,
or tell a person how to make one:

- packaging: `pyproject.toml` (the project's or one of its packages'), `setup.py`,
  `setup.cfg`;
- requirement and constraint lists: `requirements*.txt`, `*requirements.txt` and any
  `.txt` in a `requirements/` folder, their pip-tools inputs (`.in`),
  `constraints*.txt`;
- lock files: `uv.lock`, `poetry.lock`, `Pipfile`, `Pipfile.lock`, `pdm.lock`;
- the interpreter: `.python-version`, `runtime.txt`, and conda's `environment.yml`;
- install notes: `README*` and `INSTALL*` (`docs/installation.rst` too), when they are
  text (Markdown, reStructuredText, plain): a module named `install.py` is code.

`tox.ini` is not one. The clean install never reads it; what it holds that matters to a
run is how the tests run (`[pytest]` options, `[testenv] commands`), so a change to it
could make the traced run pass without changing what is installed. Nothing inside a
tests folder is one either: a `setup.py` there is a test's fixture, not the project's.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from bugbout_tui.core.patch import TEST_DIRECTORY_NAMES, Patch

_EXACT_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "uv.lock",
        "poetry.lock",
        "Pipfile",
        "Pipfile.lock",
        "pdm.lock",
        ".python-version",
        "runtime.txt",
        "environment.yml",
        "environment.yaml",
    }
)
_NAME_PATTERNS = (
    "requirements*.txt",
    "requirements*.in",
    "*requirements.txt",
    "*requirements.in",
    "constraints*.txt",
    "*constraints.txt",
)
_NOTE_PREFIXES = ("readme", "install")
"""Install notes, matched without regard to case (`README.md`, `Install.rst`)."""
_NOTE_SUFFIXES = frozenset({"", "md", "markdown", "rst", "txt", "adoc"})


def is_env_file(path: str) -> bool:
    """Whether `path` (relative to the tree, `/`-separated) is an environment file."""
    *directories, name = path.strip("/").split("/")
    if not TEST_DIRECTORY_NAMES.isdisjoint(directories):
        return False
    if name in _EXACT_NAMES or any(fnmatchcase(name, p) for p in _NAME_PATTERNS):
        return True
    if directories and directories[-1] == "requirements" and name.endswith((".txt", ".in")):
        return True
    stem, _, suffix = name.lower().partition(".")
    return stem.startswith(_NOTE_PREFIXES) and suffix in _NOTE_SUFFIXES


def split_repair(patch: Patch) -> tuple[list[str], list[str]]:
    """The files a repair changed: (environment files, every other file), each in the
    patch's order.

    A renamed file counts as an environment file only when it is one at both ends: a
    module renamed to `requirements.txt` still removed a module, and that module is what
    the other list names. A symbolic link never counts: an environment file is text the
    install reads, and a link would have it read something else, maybe outside the tree.
    """
    env: list[str] = []
    other: list[str] = []
    for change in patch.files:
        ends = [change.path] if change.old_path is None else [change.old_path, change.path]
        outside = [end for end in ends if change.symlink or not is_env_file(end)]
        if outside:
            other += outside
        else:
            env.append(change.path)
    return env, other
