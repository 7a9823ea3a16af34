"""What a repository's tests need besides the project, read from where projects say so.

`bugbout init` writes this into `test-dependencies`, so the first `bugbout doctor` does
not stop on a module the tests import. The places looked at, in order, are the ones
projects use for their tests: a group named test, tests or testing in
`[project.optional-dependencies]`, `[dependency-groups]` or Poetry's groups; a
requirements file named for tests; the `deps` of tox's `[testenv]`; the packages a nox
session named for tests installs. The first place that names any wins. Failing all of
them, a development group (`dev`) is read, leaving out the tools the tests do not
import (linters, type checkers, documentation and build tools). pytest is always in.

Only what is written plainly is read: a dependency computed by code, or an include
this module cannot follow, is left for the user, and the comment init writes says where
the list came from so it can be checked.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bugbout_tui.core.config_doc import FoundDependencies

__all__ = ["FoundDependencies", "find_test_dependencies"]

TEST_GROUPS = ("test", "tests", "testing")
DEV_GROUPS = ("dev", "develop", "development")
REQUIREMENTS_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "requirements-testing.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
)
DEV_REQUIREMENTS_FILES = ("requirements-dev.txt", "requirements_dev.txt", "requirements/dev.txt")

_TOOLS = frozenset(
    {
        "black", "blacken-docs", "build", "bump2version", "bumpversion", "check-manifest",
        "codespell", "commitizen", "coverage", "coveralls", "flit", "furo", "hatch",
        "hatchling", "invoke", "ipython", "isort", "mypy", "nox", "pip-tools", "poethepoet",
        "pre-commit", "pydocstyle", "pylint", "pyright", "pytest-cov", "reno", "ruff",
        "setuptools", "setuptools-scm", "sphinx", "tox", "towncrier", "twine", "wheel",
    }
)  # fmt: skip
"""Tools a development group holds that the tests themselves never import."""
_TOOL_PREFIXES = ("flake8", "sphinx", "mkdocs", "types-", "pylint-", "mypy-", "ruff-")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_Found = tuple[list[str], str] | None
"""Requirements and where they were read, or None when a place names none."""
_TOX_FACTORS = re.compile(r"^[\w,.!-]+:\s+")
_POETRY_VERSION = re.compile(r"^(?P<op>[\^~])?\s*(?P<version>\d+(?:\.\d+)*)$")


def find_test_dependencies(root: Path) -> FoundDependencies:
    """The test dependencies the repository at `root` declares (see the module's doc)."""
    pyproject = _toml(root / "pyproject.toml")
    name = _normalise(str(_get(pyproject, "project", "name") or ""))
    readers: tuple[Callable[[], _Found], ...] = (
        lambda: _optional(pyproject, TEST_GROUPS),
        lambda: _dependency_groups(pyproject, TEST_GROUPS),
        lambda: _poetry(pyproject, TEST_GROUPS),
        lambda: _requirements_files(root, REQUIREMENTS_FILES),
        lambda: _tox(root),
        lambda: _nox(root),
    )
    for read in readers:
        found = read()
        if found is not None:
            return _finish(found[0], found[1], name)
    dev_readers: tuple[Callable[[], _Found], ...] = (
        lambda: _dependency_groups(pyproject, DEV_GROUPS),
        lambda: _optional(pyproject, DEV_GROUPS),
        lambda: _poetry(pyproject, DEV_GROUPS),
        lambda: _requirements_files(root, DEV_REQUIREMENTS_FILES),
    )
    for read in dev_readers:
        found = read()
        if found is not None:
            requirements, source = found
            kept = [r for r in requirements if not _is_tool(r)]
            left_out = tuple(_written_name(r) for r in requirements if _is_tool(r))
            finished = _finish(kept, source, name)
            return FoundDependencies(finished.requirements, finished.source, left_out)
    return FoundDependencies(("pytest",), None)


def _finish(requirements: Iterable[str], source: str, project: str) -> FoundDependencies:
    """pytest first (added when missing), the project itself and repeats left out."""
    unique: dict[str, str] = {}
    for requirement in requirements:
        key = _requirement_name(requirement)
        if key and key != project and key not in unique:
            unique[key] = " ".join(requirement.split())
    pytest = unique.pop("pytest", "pytest")
    return FoundDependencies((pytest, *unique.values()), source)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return _normalise(match.group(1)) if match else ""


def _written_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return match.group(1) if match else requirement


def _is_tool(requirement: str) -> bool:
    name = _requirement_name(requirement)
    return name in _TOOLS or name.startswith(_TOOL_PREFIXES)


def _toml(path: Path) -> Mapping[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _optional(pyproject: Mapping[str, Any], groups: Sequence[str]) -> tuple[list[str], str] | None:
    table = _get(pyproject, "project", "optional-dependencies")
    for group in groups:
        found = _strings(_get(table, group)) if isinstance(table, Mapping) else None
        if found:
            return found, f"`[project.optional-dependencies] {group}` in pyproject.toml"
    return None


def _dependency_groups(
    pyproject: Mapping[str, Any], groups: Sequence[str]
) -> tuple[list[str], str] | None:
    table = _get(pyproject, "dependency-groups")
    if not isinstance(table, Mapping):
        return None
    for group in groups:
        found = _expand_group(table, group, set())
        if found:
            return found, f"`[dependency-groups] {group}` in pyproject.toml"
    return None


def _expand_group(table: Mapping[str, Any], group: str, seen: set[str]) -> list[str]:
    """A dependency group's requirements, its `{include-group = ...}` entries followed."""
    if group in seen or not isinstance(table.get(group), list):
        return []
    seen.add(group)
    found: list[str] = []
    for item in table[group]:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, Mapping) and isinstance(item.get("include-group"), str):
            found += _expand_group(table, item["include-group"], seen)
    return found


def _poetry(pyproject: Mapping[str, Any], groups: Sequence[str]) -> tuple[list[str], str] | None:
    poetry = _get(pyproject, "tool", "poetry")
    if not isinstance(poetry, Mapping):
        return None
    places = [(f"`[tool.poetry.group.{g}.dependencies]`", _get(poetry, "group", g, "dependencies"))
              for g in groups]  # fmt: skip
    if "dev" in groups:
        places.append(("`[tool.poetry.dev-dependencies]`", poetry.get("dev-dependencies")))
    for where, table in places:
        if isinstance(table, Mapping):
            found = [r for name, spec in table.items() if (r := _poetry_requirement(name, spec))]
            if found:
                return found, f"{where} in pyproject.toml"
    return None


def _poetry_requirement(name: str, spec: Any) -> str | None:
    """A Poetry dependency as PEP 508: `^1.2` and `~1.2` become ranges, `*` nothing."""
    if name.lower() == "python":
        return None
    if isinstance(spec, Mapping):
        spec = spec.get("version", "*")
    if not isinstance(spec, str) or spec.strip() in ("", "*"):
        return name
    spec = spec.strip()
    match = _POETRY_VERSION.match(spec)
    if match is None:
        return f"{name}{spec}" if spec[0] in "<>=!" else name
    parts = [int(part) for part in match["version"].split(".")]
    if match["op"] is None:
        return f"{name}=={match['version']}"
    if match["op"] == "~":
        upper = [parts[0], parts[1] + 1] if len(parts) > 1 else [parts[0] + 1]
    else:  # ^: the leftmost non-zero part may not change
        position = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
        upper = [*parts[:position], parts[position] + 1]
    return f"{name}>={match['version']},<{'.'.join(map(str, upper))}"


def _requirements_files(root: Path, names: Sequence[str]) -> tuple[list[str], str] | None:
    for name in names:
        found = _read_requirements(root / name, root, set())
        if found:
            return found, name
    return None


def _read_requirements(path: Path, root: Path, seen: set[Path]) -> list[str]:
    """The requirements a file lists, following `-r` includes; options are skipped."""
    try:
        resolved = path.resolve()
        if resolved in seen or not resolved.is_relative_to(root.resolve()):
            return []
        seen.add(resolved)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            found += _read_requirements(path.parent / line.split(None, 1)[1], root, seen)
        elif not line.startswith("-") and _NAME.match(line) and "://" not in line:
            found.append(line)
    return found


def _tox(root: Path) -> tuple[list[str], str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(root / "tox.ini", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    if not parser.has_option("testenv", "deps"):
        return None
    found: list[str] = []
    for raw in parser.get("testenv", "deps").splitlines():
        line = raw.strip()
        if line.startswith("-r"):
            target = line[2:].strip().replace("{toxinidir}/", "").replace("{toxinidir}", ".")
            if "{" not in target:
                found += _read_requirements(root / target, root, set())
        elif line and not line.startswith(("-", "#", "{")):
            line = _TOX_FACTORS.sub("", line)  # `py38: mock` holds for some envs: taken
            if _NAME.match(line):
                found.append(line)
    return (found, "`[testenv] deps` in tox.ini") if found else None


def _nox(root: Path) -> tuple[list[str], str] | None:
    """String literals given to `session.install` in sessions whose name says test."""
    try:
        tree = ast.parse((root / "noxfile.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    found: list[str] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or "test" not in function.name.lower():
            continue
        for call in ast.walk(function):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "install"
            ):
                for arg in call.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        value = arg.value.strip()
                        if value and not value.startswith(("-", ".")) and _NAME.match(value):
                            found.append(value)
    return (found, "the test sessions of noxfile.py") if found else None
