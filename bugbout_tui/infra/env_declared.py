"""D¹: the packages a tree's environment files declare, one per name, as written.

An environment repair is judged partly on what it declares: every declared package is
audited, and the declared names are compared with those the traced run used. They are
read from the files an install reads: `pyproject.toml` (`[project] dependencies`, and
the extras and dependency groups that hold what the tests need), `setup.cfg`
(`install_requires`, `tests_require`, test extras), `setup.py` (the same keywords, where
they are literal lists: the file is parsed, never run) and `requirements*.txt` with the
files they include. The same files, and the same test extras, as `infra/manifests.py`
resolves a dated environment from.

Names are normalized as PEP 503; extras and markers stay in `requirement`. A direct URL,
a VCS checkout or a local path is a declared package too, named by `name @`, its
`#egg=` fragment, its file name, or (a local path) its own packaging files. A name
declared twice is kept once: where it is pinned exactly, if anywhere, so the version the
install is held to is the one audited; a constraints file (`-c`) pins a package declared
elsewhere without declaring one. The project itself (`-e .`, `name[test]` in its own
extras) is not a dependency.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterable
from configparser import ConfigParser
from configparser import Error as ConfigParserError
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from bugbout_tui.core.env_models import Declared, normalize_name
from bugbout_tui.infra.manifests import (
    TEST_EXTRA,
    dependency_group,
    requirement_files,
    requirement_lines,
)

_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_WHEEL = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._]*)-[^-]+(-[^-]+)?-[^-]+-[^-]+-[^-]+\.whl$")
_SDIST = re.compile(r"^(.+)-[^-]+\.(tar\.gz|tar\.bz2|tgz|zip)$")
_SETUP_KEYWORDS = ("install_requires", "tests_require")
_LOCATION = re.compile(r"^([a-z][a-z0-9+.-]*:|[./~]|[^\s;]*/)", re.IGNORECASE)
"""A URL, a VCS checkout or a path: a requirement that may be written without a name."""


def declared_packages(tree: Path) -> list[Declared]:
    """Every package the environment files in `tree` declare (see the module's doc)."""
    own = _project_name(tree)
    found: list[Declared] = []
    pins: dict[str, str] = {}

    def add(requirements: Iterable[str], source: str) -> None:
        for text in requirements:
            declared = _declared(text, source, tree)
            if declared is not None and declared.name != own:
                found.append(declared)

    for source, requirements in _pyproject(tree / "pyproject.toml"):
        add(requirements, source)
    for source, requirements in _setup_cfg(tree / "setup.cfg"):
        add(requirements, source)
    add(_setup_py(tree / "setup.py"), "setup.py")
    for path in requirement_files(tree):
        for line in requirement_lines(path, tree):
            source = _relative(line.source, tree)
            if not line.constraint:
                add([line.text], source)
            elif (limit := _declared(line.text, source, tree)) and limit.pinned:
                pins.setdefault(limit.name, limit.pinned)
    return _once_each(found, pins)


def _once_each(found: list[Declared], pins: dict[str, str]) -> list[Declared]:
    """One entry per name, in the order first declared: the first exact pin, else the
    first mention with the constraints' pin."""
    chosen: dict[str, Declared] = {}
    for declared in found:
        kept = chosen.get(declared.name)
        if kept is None or (kept.pinned is None and declared.pinned is not None):
            chosen[declared.name] = declared
    return [
        d.model_copy(update={"pinned": pins[d.name]}) if d.pinned is None and d.name in pins else d
        for d in chosen.values()
    ]


def _declared(text: str, source: str, tree: Path) -> Declared | None:
    """One requirement read, or None when it names no package (the project itself, a
    line that is not a requirement)."""
    written = " ".join(text.split())
    target = written.removeprefix("-e ").strip()
    try:
        parsed = Requirement(target)
    except InvalidRequirement:
        name = _unnamed(target, tree)
        pinned = None
    else:
        name = parsed.name
        pinned = None if parsed.url else exact_pin(parsed.specifier)
    if not name:
        return None
    return Declared(name=normalize_name(name), requirement=written, pinned=pinned, source=source)


def direct_reference(requirement: str) -> str | None:
    """Where a declared requirement installs from when it names no index release: its
    URL, VCS checkout or path, as written; None for a requirement the index serves."""
    target = requirement.removeprefix("-e ").strip()
    try:
        return Requirement(target).url
    except InvalidRequirement:
        return target if _EGG.search(target) or _LOCATION.match(target) else None


def exact_pin(specifier: SpecifierSet) -> str | None:
    """The version an `==X` or `===X` pins (a wildcard `==1.*` pins none)."""
    for spec in specifier:
        if spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith("*")):
            return spec.version
    return None


def _unnamed(target: str, tree: Path) -> str | None:
    """The name of a URL, VCS or path requirement written without `name @`: its `#egg=`,
    the distribution file it points at, a local project's own name, or the last part of
    its path; None for the project itself."""
    if egg := _EGG.search(target):
        return egg.group(1)
    if not _LOCATION.match(target):
        return None
    location = re.sub(r"^file:(//)?", "", target.split("#")[0]).rstrip("/")
    if "://" not in location:
        path = (tree / location).resolve()
        if path == tree.resolve():
            return None
        if path.is_dir():
            return _project_name(path) or path.name
    last = location.rsplit("/", 1)[-1].split("@")[0]
    for pattern in (_WHEEL, _SDIST):
        if match := pattern.match(last):
            return match.group(1)
    return last.removesuffix(".git") or None


def _project_name(tree: Path) -> str | None:
    """The normalized name a tree's own packaging files give its project."""
    pyproject = _toml(tree / "pyproject.toml")
    project = pyproject.get("project")
    if isinstance(project, dict) and isinstance(name := project.get("name"), str):
        return normalize_name(name)
    parser = _cfg(tree / "setup.cfg")
    name = parser.get("metadata", "name", fallback=None) if parser else None
    return normalize_name(name.strip()) if name else None


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


def _pyproject(path: Path) -> list[tuple[str, list[str]]]:
    """`[project] dependencies` (unless dynamic) and the test extras and groups."""
    data = _toml(path)
    out: list[tuple[str, list[str]]] = []
    project = data.get("project")
    if isinstance(project, dict):
        out.append(("pyproject.toml", _strings(project.get("dependencies"))))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            out += [
                ("pyproject.toml", _strings(listed))
                for name, listed in extras.items()
                if TEST_EXTRA.match(str(name))
            ]
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        out += [
            ("pyproject.toml", dependency_group(groups, str(name), set()))
            for name in groups
            if TEST_EXTRA.match(str(name))
        ]
    return out


def _setup_cfg(path: Path) -> list[tuple[str, list[str]]]:
    """`install_requires` (unless read from a file), `tests_require`, the test extras."""
    parser = _cfg(path)
    if parser is None:
        return []
    listed: list[str] = []
    for key in _SETUP_KEYWORDS:
        value = parser.get("options", key, fallback="")
        if not value.strip().startswith("file:"):
            listed += value.splitlines()
    if parser.has_section("options.extras_require"):
        for name, value in parser.items("options.extras_require"):
            if TEST_EXTRA.match(name):
                listed += value.splitlines()
    requirements = [re.sub(r"(^|\s)#.*$", "", line).strip() for line in listed]
    return [("setup.cfg", [line for line in requirements if line])]


def _setup_py(path: Path) -> list[str]:
    """The literal requirements `setup()` is given: `install_requires`, `tests_require`
    and the test extras, as lists, or names bound to lists at the module's top level.
    Anything computed is left unread, since the file is parsed, never run."""
    if not path.is_file():
        return []
    try:
        module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return []
    bound = {
        target.id: node.value
        for node in module.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[str] = []
    for call in ast.walk(module):
        if not (isinstance(call, ast.Call) and _calls_setup(call.func)):
            continue
        for keyword in call.keywords:
            value = bound.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
            value = value or keyword.value
            if keyword.arg in _SETUP_KEYWORDS:
                found += _literal_requirements(value)
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for key, listed in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant) and TEST_EXTRA.match(str(key.value)):
                        found += _literal_requirements(listed)
    return found


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
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def _relative(path: Path, tree: Path) -> str:
    """`path` relative to `tree` (the files read all lie inside it)."""
    return path.resolve().relative_to(tree.resolve()).as_posix()
