"""Whether a change to environment files changes what an install puts in place.

A change to the environment files alone is an environment task only when it changes what
they install: a `pyproject.toml` whose tool settings moved did not, nor a requirements
file whose comments did, nor a README whose install notes did (people read those; the
install does not). Each kind of file is compared by what it declares, parsed on both
sides, never by its text, so that reformatting, comments and reordering count for
nothing:

- `pyproject.toml`: `[project]` `dependencies`, `optional-dependencies`,
  `requires-python` and `dynamic`, the whole `[build-system]` (its `requires`, and the
  backend that builds the project), `[dependency-groups]`, and the dependency tables the
  tools that keep them under `[tool]` define: Poetry's (`dependencies`,
  `dev-dependencies`, each group's, `extras`; Poetry's `python` is among its
  dependencies), uv's (`dev-dependencies`, `constraint-dependencies`,
  `override-dependencies`, `sources`), PDM's `dev-dependencies` and setuptools'
  `dynamic` dependencies;
- `setup.py`, read with `ast` and never run: its install settings (`install_requires`,
  `extras_require`, `python_requires`, `setup_requires`, `tests_require`, `use_2to3`),
  wherever they are given (to `setup()`, or to the dict a `setup(**settings)` is
  given), each a literal, or the name it is given with every statement that builds that
  name; and the module its `setup` is imported from;
- `setup.cfg`: `[options]` `install_requires`, `python_requires`, `setup_requires` and
  `tests_require`, and `[options.extras_require]`;
- requirement and constraint lists: their lines, comments, blank lines and order aside
  (options such as `--index-url` are kept: they change what is installed); a list for
  tooling other than the tests (docs, linters, typing, releases, benchmarks) installs
  nothing a task runs with, as dated environments also hold;
- anything else (lock files, `.python-version`, conda's `environment.yml`): any change
  to its content;
- install notes (`README`, `INSTALL`): never, whatever changed.

A packaging file that does not parse on one side and differs from the other counts as a
change to what is installed: a broken `pyproject.toml` fails the install.

When nothing installed changed but the project's own version did (`[project] version`,
Poetry's `version`, `setup()`'s `version` or the module's `__version__`, `setup.cfg`'s
`[metadata] version`) and nothing else, the change is a version bump.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator
from configparser import ConfigParser
from configparser import Error as ConfigParserError
from functools import partial
from typing import Any, Literal

from bugbout_tui.infra.manifests import is_tooling_list

FileChange = Literal["dependencies", "version", "other"]
"""What one file's change did: changed what is installed; moved only the project's own
version; neither."""

_SETUP_KEYWORDS = frozenset(
    {
        "install_requires",
        "extras_require",
        "python_requires",
        "setup_requires",
        "tests_require",
        "use_2to3",
    }
)
"""What setup() is given that decides what an install needs, or whether it builds at all
(setuptools 58 refuses `use_2to3`)."""
_VERSION_NAMES = frozenset({"version", "VERSION", "__version__"})
_SETUP_CFG_OPTIONS = ("install_requires", "python_requires", "setup_requires", "tests_require")
_POETRY_TABLES = ("dependencies", "dev-dependencies", "extras")
_UV_TABLES = ("dev-dependencies", "constraint-dependencies", "override-dependencies", "sources")
_NOTES = ("readme", "install")


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _is_requirement_list(path: str) -> bool:
    """`requirements*.txt`, `dev-requirements.in`, `constraints.txt`, any list in a
    `requirements/` folder: pip's requirement files and pip-tools' inputs."""
    folders, _, name = path.rpartition("/")
    if not name.endswith((".txt", ".in")):
        return False
    stem = name.rsplit(".", 1)[0].lower()
    return "requirements" in stem or "constraints" in stem or folders.endswith("requirements")


def installs_nothing(path: str) -> bool:
    """Install notes (`README.md`, `INSTALL.rst`, `docs/installation.rst`): an agent may
    correct them, but no install reads them. Nor the requirement lists of tooling other
    than the tests (`docs/requirements.txt`, `requirements-lint.txt`), which dated
    environments leave out too: what a task runs with never comes from one."""
    if _is_requirement_list(path):
        return is_tooling_list(path)
    return _name(path).lower().startswith(_NOTES)


def reads_content(path: str) -> bool:
    """Whether the file is compared by what it declares, so its content is needed on
    both sides; every other environment file changed when its content did (unless it
    `installs_nothing`)."""
    if installs_nothing(path):
        return False
    return _name(path) in ("pyproject.toml", "setup.py", "setup.cfg") or _is_requirement_list(path)


def file_change(path: str, before: bytes | None, after: bytes | None) -> FileChange:
    """What the change of `path` from `before` to `after` did (None: the file is absent
    on that side). Only for files that `reads_content`; the others changed what is
    installed whenever their content changed."""
    if before == after:
        return "other"
    name = _name(path)
    if name == "pyproject.toml":
        return _compare(before, after, _pyproject)
    if name == "setup.py":
        return _compare(before, after, _setup_py)
    if name == "setup.cfg":
        return _compare(before, after, _setup_cfg)
    return _compare(before, after, _requirement_list)


def change_kind(files: Iterable[FileChange]) -> FileChange:
    """What a change of several environment files did: any file that changed what is
    installed makes it a change of dependencies; a version bump is one in which every
    file moved the version and nothing else."""
    kinds = list(files)
    if "dependencies" in kinds:
        return "dependencies"
    if kinds and all(kind == "version" for kind in kinds):
        return "version"
    return "other"


_Facts = tuple[Any, Any, Any]
"""What a file declares that is installed, its own version, and everything else it
says (to tell a version bump from another change)."""


class _Unreadable(Exception):
    """The file does not parse."""


def _compare(
    before: bytes | None, after: bytes | None, facts: Callable[[str], _Facts]
) -> FileChange:
    try:
        old = facts(_text(before))
        new = facts(_text(after))
    except _Unreadable:
        return "dependencies"
    if old[0] != new[0]:
        return "dependencies"
    if old[1] != new[1] and old[2] == new[2]:
        return "version"
    return "other"


def _text(content: bytes | None) -> str:
    """A file's text; an absent file declares nothing, as an empty one."""
    if content is None:
        return ""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unreadable from None


def _requirement(text: str) -> str:
    """A requirement as compared: whitespace is not part of what it means."""
    return "".join(text.split())


def _requirements(items: object) -> object:
    """A list of requirements as a set of their compared forms; anything else as it is."""
    if isinstance(items, list) and all(isinstance(item, str) for item in items):
        return tuple(sorted({_requirement(item) for item in items}))
    return items


# ---------------------------------------------------------------- pyproject.toml


def _pyproject(text: str) -> _Facts:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise _Unreadable from None
    project = _table(data, "project")
    tool = _table(data, "tool")
    poetry = _table(tool, "poetry")
    declared: dict[str, object] = {
        "project": "project" in data,
        "build-system": data.get("build-system"),
        "dependency-groups": _table_of_lists(data.get("dependency-groups")),
        "dependencies": _requirements(project.get("dependencies")),
        "optional-dependencies": _table_of_lists(project.get("optional-dependencies")),
        "requires-python": project.get("requires-python"),
        "dynamic": project.get("dynamic"),
        "setuptools-dynamic": {
            key: value
            for key, value in _table(_table(tool, "setuptools"), "dynamic").items()
            if key in ("dependencies", "optional-dependencies")
        },
        "poetry": {name: poetry.get(name) for name in _POETRY_TABLES},
        "poetry-groups": {
            name: _table(group, "dependencies") if isinstance(group, dict) else group
            for name, group in _table(poetry, "group").items()
        },
        "uv": {name: _requirements(_table(tool, "uv").get(name)) for name in _UV_TABLES},
        "pdm": _table_of_lists(_table(_table(tool, "pdm"), "dev-dependencies")),
    }
    version = (project.get("version"), poetry.get("version"))
    rest = _without(data, [("project", "version"), ("tool", "poetry", "version")])
    return declared, version, rest


def _table(data: object, key: str) -> dict[str, Any]:
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, dict) else {}


def _table_of_lists(data: object) -> object:
    if not isinstance(data, dict):
        return data
    return {name: _requirements(items) for name, items in data.items()}


def _without(data: dict[str, Any], paths: list[tuple[str, ...]]) -> dict[str, Any]:
    """`data` with the keys at `paths` removed (a copy, only as deep as needed)."""
    copy = dict(data)
    for path in paths:
        table = copy
        for key in path[:-1]:
            inner = table.get(key)
            if not isinstance(inner, dict):
                break
            table[key] = dict(inner)
            table = table[key]
        else:
            table.pop(path[-1], None)
    return copy


# ---------------------------------------------------------------- setup.py


def _setup_py(text: str) -> _Facts:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        raise _Unreadable from None
    builders = _builders(module)
    # A setup.py that appears or goes changes how the project is built, whatever it says;
    # so does where its setup() comes from (distutils is gone from Python 3.12).
    declared: dict[str, list[object]] = {
        "setup()": [len(_setup_calls(module))],
        "from": [_setup_import(module)],
    }
    version: list[str] = []
    for name, value, replace in _settings(module):
        if name in _SETUP_KEYWORDS:
            declared.setdefault(name, []).append(_value(value, builders))
        elif name == "version":
            version.append(ast.dump(value))
            replace(ast.Constant(None))
    for name in _VERSION_NAMES:
        for node in builders.get(name, []):
            version.append(ast.dump(node))
            if isinstance(node, ast.Assign | ast.AnnAssign):
                node.value = ast.Constant(None)
    return declared, version, ast.dump(module)


def _setup_import(module: ast.Module) -> list[str]:
    """The modules `setup` is imported from (`setuptools`, `distutils.core`)."""
    return sorted(
        {
            node.module or ""
            for node in ast.walk(module)
            if isinstance(node, ast.ImportFrom) and any(a.name == "setup" for a in node.names)
        }
    )


def _setup_calls(module: ast.Module) -> list[ast.Call]:
    """Every call of `setup(...)` or `setuptools.setup(...)`, wherever it is made."""
    calls = []
    for node in ast.walk(module):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "setup":
                calls.append(node)
    return calls


def _settings(module: ast.Module) -> Iterator[tuple[str, ast.expr, Callable[[ast.expr], None]]]:
    """Every value given under a name, with a way to replace it: a keyword of any call
    (`setup(...)`, and the `settings.update(...)` or `dict(...)` a `setup(**settings)`
    is given), a string key of a dict literal, an item assigned (`kw["version"] = ...`).
    """
    for node in ast.walk(module):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg is not None:
                    yield keyword.arg, keyword.value, partial(setattr, keyword, "value")
        elif isinstance(node, ast.Dict):
            for index, key in enumerate(node.keys):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield key.value, node.values[index], partial(node.values.__setitem__, index)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                    item = target.slice.value
                    if isinstance(item, str):
                        yield item, node.value, partial(setattr, node, "value")


def _builders(module: ast.Module) -> dict[str, list[ast.stmt]]:
    """For each name, the statements that give or change its value: assignments, `+=`,
    and calls of its methods (`REQUIRES.append("six")`), wherever they are."""
    found: dict[str, list[ast.stmt]] = {}
    for node in ast.walk(module):
        if not isinstance(node, ast.stmt):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
        ):
            targets = [node.value.func.value]
        for target in targets:
            while isinstance(target, ast.Subscript | ast.Attribute):
                target = target.value
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(node)
    return found


def _value(node: ast.expr, builders: dict[str, list[ast.stmt]]) -> object:
    """A keyword's value as compared: the literal; for a name, what builds it; else
    the expression's structure, which formatting and comments do not change."""
    try:
        return _normalized(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name):
        return tuple(ast.dump(statement) for statement in builders.get(node.id, []))
    return ast.dump(node)


def _normalized(value: object) -> object:
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return _requirements([_normalized(item) for item in value])
    if isinstance(value, str):
        lines = [line for line in value.splitlines() if line.strip()]
        return _requirements(lines) if len(lines) > 1 else _requirement(value)
    return value


# ---------------------------------------------------------------- setup.cfg


def _setup_cfg(text: str) -> _Facts:
    parser = ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except ConfigParserError:
        raise _Unreadable from None
    declared: dict[str, object] = {
        key: _lines(parser.get("options", key, fallback=None)) for key in _SETUP_CFG_OPTIONS
    }
    if parser.has_section("options.extras_require"):
        declared["extras"] = {
            name: _lines(value) for name, value in parser.items("options.extras_require")
        }
    version = parser.get("metadata", "version", fallback=None)
    if parser.has_option("metadata", "version"):
        parser.remove_option("metadata", "version")
    rest = {section: dict(parser.items(section)) for section in parser.sections()}
    return declared, version, rest


def _lines(value: str | None) -> object:
    if value is None:
        return None
    return _requirements([line for line in value.splitlines() if line.strip()])


# ---------------------------------------------------------------- requirement lists


def _requirement_list(text: str) -> _Facts:
    """A pip requirements (or constraints) file's lines, joined where a backslash
    continues them, without comments."""
    lines = [
        re.sub(r"(^|\s)#.*$", "", line).strip() for line in text.replace("\\\n", " ").splitlines()
    ]
    return _requirements([line for line in lines if line]), None, None
