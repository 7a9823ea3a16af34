"""What a tree declares for its tests' run: the one reading behind both the clean install
of an environment task (what uv is asked for) and D¹ (what is audited and compared with
the traced run), so that neither can name a package the other never had.

A task's command is the project's tests, so the run needs the project and what its
tests need, read from where projects declare it:

- the project itself, when the tree is one, installed as a user would (not editable),
  with its test extras (`manifests.TEST_EXTRA`: `test`, `tests`, `testing`, `dev`...)
  from `[project.optional-dependencies]`, `setup.cfg`'s `[options.extras_require]` or
  the literal `extras_require` of `setup.py`; its own requirements (`[project]
  dependencies`, `install_requires`) come with it;
- setuptools' `tests_require`, which no install of the project takes, given to the
  install as requirements of their own;
- `pyproject.toml`'s dependency groups of the same names (PEP 735), which need no
  project;
- the requirement files of the tests and the runtime (`manifests.requirement_files`:
  `requirements*.txt`, `*requirements.txt`, `requirements/*.txt`), with the files they
  include; those of docs, linters, typing, releases or benchmarks are left out, as
  dated environments leave them out.

`setup.py` is parsed, never run: what it computes is left unread, here and so in the
install too, except what the project's own build puts in its metadata. A
`tests_require` entry that is no PEP 508 requirement is left out of both: setuptools
refuses one, and passed to uv it could read as an option.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterable
from configparser import ConfigParser
from configparser import Error as ConfigParserError
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from bugbout_tui.core.env_models import normalize_name
from bugbout_tui.infra.manifests import (
    TEST_EXTRA,
    RequirementLine,
    dependency_group,
    requirement_files,
    requirement_lines,
)

_TESTS_REQUIRE = "tests_require"
_INSTALL_REQUIRES = "install_requires"


@dataclass(frozen=True)
class RunDeclaration:
    """What a tree declares for its tests' run, as an install takes it and as D¹ lists it."""

    project: bool
    """The tree is a project: installed, not editable, with `extras`."""
    extras: tuple[str, ...]
    """The project's extras that hold what its tests need."""
    groups: tuple[str, ...]
    """`pyproject.toml`'s dependency groups that hold what the tests need."""
    files: tuple[Path, ...]
    """The requirement files of the tests and the runtime, each installed with `-r`."""
    tests_require: tuple[str, ...]
    """setuptools' `tests_require`, PEP 508 requirements no install of the project takes."""
    requirements: tuple[RequirementLine, ...]
    """Every requirement all the above declare, in the order read, each with the file it
    was read from; constraint lines of requirement files are marked so."""


@dataclass
class _Reading:
    """A `RunDeclaration` as it is read."""

    tree: Path
    extras: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    tests_require: list[str] = field(default_factory=list)
    requirements: list[RequirementLine] = field(default_factory=list)

    def declare(self, requirements: Iterable[str], file: str) -> None:
        source = self.tree / file
        self.requirements += [RequirementLine(text, source) for text in requirements]

    def extra(self, name: str, requirements: Iterable[str], file: str) -> None:
        """An extra of the project: kept when it holds what the tests need."""
        if TEST_EXTRA.fullmatch(name):
            self.extras.append(name)
            self.declare(requirements, file)

    def tests(self, requirements: Iterable[str], file: str) -> None:
        valid = [text for text in requirements if _is_requirement(text)]
        self.tests_require += valid
        self.declare(valid, file)


def run_declaration(tree: Path) -> RunDeclaration:
    """What `tree` declares for its tests' run (see the module's doc)."""
    reading = _Reading(tree)
    project = _is_project(tree)
    _pyproject(_toml(tree / "pyproject.toml"), reading, project=project)
    if project:
        _setup_cfg(_cfg(tree / "setup.cfg"), reading)
        _setup_py(tree / "setup.py", reading)
    files = requirement_files(tree)
    for path in files:
        reading.requirements += requirement_lines(path, tree)
    return RunDeclaration(
        project=project,
        extras=tuple(dict.fromkeys(reading.extras)),
        groups=tuple(dict.fromkeys(reading.groups)),
        files=tuple(files),
        tests_require=tuple(dict.fromkeys(reading.tests_require)),
        requirements=tuple(reading.requirements),
    )


def project_name(tree: Path) -> str | None:
    """The normalized name a tree's own packaging files give its project."""
    project = _toml(tree / "pyproject.toml").get("project")
    if isinstance(project, dict) and isinstance(name := project.get("name"), str):
        return normalize_name(name)
    parser = _cfg(tree / "setup.cfg")
    name = parser.get("metadata", "name", fallback=None) if parser else None
    return normalize_name(name.strip()) if name else None


def _is_project(tree: Path) -> bool:
    """A `setup.py`; a `pyproject.toml` that says how to build or what the project is;
    or one that only configures tools beside a `setup.cfg` that names the project
    (setuptools builds that). One that cannot be read is tried, so uv says what is
    wrong with it."""
    if (tree / "setup.py").is_file():
        return True
    pyproject = tree / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True
    if "project" in data or "build-system" in data:
        return True
    parser = _cfg(tree / "setup.cfg")
    return parser is not None and parser.has_option("metadata", "name")


def _toml(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _cfg(path: Path) -> ConfigParser | None:
    if not path.is_file():
        return None
    parser = ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (ConfigParserError, UnicodeDecodeError):
        return None
    return parser


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _is_requirement(text: str) -> bool:
    try:
        Requirement(text)
    except InvalidRequirement:
        return False
    return True


def _pyproject(data: dict[str, object], reading: _Reading, *, project: bool) -> None:
    """`[project] dependencies` and its test extras (for a project), and the test
    dependency groups (for any tree)."""
    table = data.get("project")
    if project and isinstance(table, dict):
        reading.declare(_strings(table.get("dependencies")), "pyproject.toml")
        extras = table.get("optional-dependencies")
        for name, listed in extras.items() if isinstance(extras, dict) else ():
            reading.extra(str(name), _strings(listed), "pyproject.toml")
    groups = data.get("dependency-groups")
    if not isinstance(groups, dict):
        return
    for name in map(str, groups):
        if TEST_EXTRA.fullmatch(name):
            reading.groups.append(name)
            reading.declare(dependency_group(groups, name, set()), "pyproject.toml")


def _setup_cfg(parser: ConfigParser | None, reading: _Reading) -> None:
    """`install_requires` (unless read from a file), `tests_require`, the test extras."""
    if parser is None:
        return
    install = parser.get("options", _INSTALL_REQUIRES, fallback="")
    if not install.strip().startswith("file:"):
        reading.declare(_cfg_lines(install), "setup.cfg")
    reading.tests(_cfg_lines(parser.get("options", _TESTS_REQUIRE, fallback="")), "setup.cfg")
    if parser.has_section("options.extras_require"):
        for name, listed in parser.items("options.extras_require"):
            reading.extra(name, _cfg_lines(listed), "setup.cfg")


def _cfg_lines(value: str) -> list[str]:
    lines = [re.sub(r"(^|\s)#.*$", "", line).strip() for line in value.splitlines()]
    return [line for line in lines if line]


def _setup_py(path: Path, reading: _Reading) -> None:
    """The literal requirements `setup()` is given: `install_requires`, `tests_require`
    and the test extras, as literals, or names bound to them at the module's top level.
    Anything computed is left unread, since the file is parsed, never run."""
    if not path.is_file():
        return
    try:
        module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return
    bound = {
        target.id: node.value
        for node in module.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for call in ast.walk(module):
        if not (isinstance(call, ast.Call) and _calls_setup(call.func)):
            continue
        for keyword in call.keywords:
            value = bound.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
            value = value or keyword.value
            if keyword.arg == _INSTALL_REQUIRES:
                reading.declare(_literal_requirements(value), "setup.py")
            elif keyword.arg == _TESTS_REQUIRE:
                reading.tests(_literal_requirements(value), "setup.py")
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for key, listed in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        reading.extra(key.value, _literal_requirements(listed), "setup.py")


def _calls_setup(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setup") or (
        isinstance(func, ast.Attribute) and func.attr == "setup"
    )


def _literal_requirements(node: ast.expr) -> list[str]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return []
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []
