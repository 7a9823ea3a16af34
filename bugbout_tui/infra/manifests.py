"""What a commit's own packaging files say its code and its tests need.

A dated environment is resolved from the requirements a commit declared, not from the
tip's: `pyproject.toml` (`[project] dependencies`, its test extras and dependency
groups), `setup.cfg` (`install_requires`, `tests_require`, test extras), `setup.py` when
nothing else declares the dependencies (uv builds it to learn them), `requirements*.txt`
and the test and development requirement files beside them, and tox's `[testenv] deps`.
The interpreter is chosen from its `requires-python` (or `python_requires`) and its
`Programming Language :: Python :: X.Y` classifiers (2.7 among them: a Python 2 commit
runs on Python 2 where one is installed, `infra.legacy_env`).

Some requirements escape a date limit: a direct URL, a VCS checkout, a local path. They
are named in `unenforced` so the person reading a task's environment knows; local paths
other than the project itself are left out of the resolution, since they are not there.
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from collections.abc import Iterable
from configparser import ConfigParser
from configparser import Error as ConfigParserError
from dataclasses import dataclass, field
from pathlib import Path

TEST_EXTRA = re.compile(r"^(tests?|testing|dev|develop|development|ci|check)$", re.IGNORECASE)
"""Names of extras and dependency groups that hold what the tests need."""
_TOOLING_FILE = re.compile(r"doc|lint|typ|release|publish|bench", re.IGNORECASE)
_CLASSIFIER = re.compile(r"Programming Language :: Python :: ([23]\.\d+)\b")
_SETUP_PY_PYTHON = re.compile(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_VCS = re.compile(r"^(git|hg|svn|bzr)\+", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass
class Manifests:
    """A commit's declared requirements, and what is needed to act on them."""

    requirements: list[str] = field(default_factory=list)
    """PEP 508 requirements, runtime and test, in the order found (duplicates removed)."""
    unenforced: list[str] = field(default_factory=list)
    """Requirements a date cannot limit, as written, each with what it is."""
    build: str | None = None
    """The packaging file uv must build to learn the runtime dependencies (`setup.py`,
    or `pyproject.toml` with dynamic dependencies); None when they are declared."""
    requires_python: str | None = None
    classifiers: list[str] = field(default_factory=list)
    """The `X.Y` versions the classifiers name, oldest first."""
    read: list[str] = field(default_factory=list)
    """The files the requirements came from, for display."""

    def add(self, requirements: Iterable[str], source: str) -> None:
        added = False
        for raw in requirements:
            requirement = " ".join(raw.split())
            if not requirement:
                continue
            kind = _escapes(requirement)
            if kind == "local":
                if requirement.removeprefix("-e ").strip() not in (".", "./"):
                    self.unenforced.append(f"{requirement} (a local path, left out)")
                continue
            if kind is not None:
                self.unenforced.append(f"{requirement} ({kind}, not limited by date)")
            if requirement not in self.requirements:
                self.requirements.append(requirement)
                added = True
        if added and source not in self.read:
            self.read.append(source)


def _escapes(requirement: str) -> str | None:
    """Which kind of requirement a date cannot limit this is, if any."""
    text = requirement.removeprefix("-e ").strip()
    _, at, target = text.partition(" @ ")
    target = target.strip() if at else text
    if _VCS.match(target):
        return "a VCS requirement"
    if _URL.match(target):
        return "a direct URL" if at or not target.startswith("file:") else "a local path"
    if target.startswith((".", "/", "~")) or (not at and "/" in target):
        return "local"
    return None


def requirement_name(requirement: str) -> str:
    """The normalized project name a requirement or a pin starts with (`Six>=1.9` and
    `six==1.11.0` are both `six`)."""
    head = re.split(r"[\s<>=!~;\[@(,]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", head).lower()


def read_manifests(tree: Path) -> Manifests:
    """The requirements and Python constraints the packaging files in `tree` declare."""
    found = Manifests()
    declared = _pyproject(tree / "pyproject.toml", found)
    declared = _setup_cfg(tree / "setup.cfg", found) or declared
    setup_py = tree / "setup.py"
    if setup_py.is_file():
        text = setup_py.read_text(encoding="utf-8", errors="replace")
        if found.requires_python is None and (match := _SETUP_PY_PYTHON.search(text)):
            found.requires_python = match.group(1)
        _classifiers(_CLASSIFIER.findall(text), found)
        # pbr reads the dependencies from requirements.txt, which is read below.
        pbr = re.search(r"\bpbr\s*=\s*True", text) is not None
        if not declared and found.build is None and not pbr:
            found.build = "setup.py"
            found.read.append("setup.py")
    for path in requirement_files(tree):
        lines = requirement_lines(path, tree)
        requirements = [line.text for line in lines if not line.constraint]
        found.add(requirements, path.relative_to(tree).as_posix())
    _tox(tree / "tox.ini", found)
    return found


def _classifiers(versions: Iterable[str], found: Manifests) -> None:
    merged = set(found.classifiers) | set(versions)
    found.classifiers = sorted(merged, key=lambda v: tuple(int(p) for p in v.split(".")))


def _pyproject(path: Path, found: Manifests) -> bool:
    """Read pyproject.toml; True when it declares the runtime dependencies statically."""
    if not path.is_file():
        return False
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False
    project = data.get("project")
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for name in groups:
            if TEST_EXTRA.match(str(name)):
                found.add(
                    dependency_group(groups, str(name), set()),
                    f"pyproject.toml [dependency-groups] {name}",
                )
    if not isinstance(project, dict):
        return False
    if isinstance(python := project.get("requires-python"), str):
        found.requires_python = python
    classifiers = project.get("classifiers")
    if isinstance(classifiers, list):
        _classifiers(_CLASSIFIER.findall("\n".join(map(str, classifiers))), found)
    dynamic = project.get("dynamic", [])
    static = not (isinstance(dynamic, list) and "dependencies" in dynamic)
    dependencies = project.get("dependencies", [])
    if static and isinstance(dependencies, list):
        found.add(map(str, dependencies), "pyproject.toml [project] dependencies")
    elif not static:
        found.build = "pyproject.toml"
        found.read.append("pyproject.toml (built)")
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for name, listed in extras.items():
            if TEST_EXTRA.match(str(name)) and isinstance(listed, list):
                found.add(
                    map(str, listed), f"pyproject.toml [project.optional-dependencies] {name}"
                )
    return True


def dependency_group(groups: dict[str, object], name: str, seen: set[str]) -> list[str]:
    """A dependency group's requirements, its `include-group`s followed."""
    seen.add(name)
    listed = groups.get(name)
    out: list[str] = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, str):
            out.append(item)
        elif (
            isinstance(item, dict)
            and isinstance(other := item.get("include-group"), str)
            and other not in seen
        ):
            out += dependency_group(groups, other, seen)
    return out


def _setup_cfg(path: Path, found: Manifests) -> bool:
    """Read setup.cfg; True when it declares `install_requires`."""
    if not path.is_file():
        return False
    parser = ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (ConfigParserError, UnicodeDecodeError):
        return False
    if found.requires_python is None:
        python = parser.get("options", "python_requires", fallback=None)
        found.requires_python = python.strip() if python else None
    for key in ("classifiers", "classifier"):
        _classifiers(_CLASSIFIER.findall(parser.get("metadata", key, fallback="")), found)
    install = parser.get("options", "install_requires", fallback=None)
    if install is not None and not install.strip().startswith("file:"):
        found.add(install.splitlines(), "setup.cfg install_requires")
    tests = parser.get("options", "tests_require", fallback="")
    found.add(tests.splitlines(), "setup.cfg tests_require")
    if parser.has_section("options.extras_require"):
        for name, listed in parser.items("options.extras_require"):
            if TEST_EXTRA.match(name):
                found.add(listed.splitlines(), f"setup.cfg extras {name}")
    return install is not None


def is_tooling_list(path: str) -> bool:
    """A requirement file of tooling other than the tests (`docs/requirements.txt`,
    `requirements-lint.txt`, typing, releases, benchmarks), relative to the tree: what
    the tests run with never comes from one."""
    return _TOOLING_FILE.search(path) is not None


def requirement_files(tree: Path) -> list[Path]:
    """`requirements*.txt`, `*-requirements.txt` and `requirements/*.txt`, tooling aside."""
    candidates = {
        *tree.glob("requirements*.txt"),
        *tree.glob("*requirements.txt"),
        *tree.glob("requirements/*.txt"),
    }
    return sorted(
        path
        for path in candidates
        if path.is_file() and not is_tooling_list(path.relative_to(tree).as_posix())
    )


@dataclass(frozen=True)
class RequirementLine:
    """One requirement of a pip requirements file, and where it was read."""

    text: str
    """As written, comments and hashes left out; an editable one as `-e <target>`."""
    source: Path
    """The file that holds it: the one read, or one it includes."""
    constraint: bool = False
    """Read from a constraints file (`-c`): it limits a version, it declares nothing."""


def requirement_lines(path: Path, tree: Path) -> list[RequirementLine]:
    """The requirements of a pip requirements file, its `-r` and `-c` includes followed
    inside the tree; options (indexes, hashes) are not requirements."""
    return _requirement_lines(path, tree, set(), constraint=False)


def _requirement_lines(
    path: Path, tree: Path, seen: set[Path], *, constraint: bool
) -> list[RequirementLine]:
    seen.add(path)
    out: list[RequirementLine] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for raw in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        include = re.match(r"^(-r|--requirement|-c|--constraint)[\s=]+(\S+)", line)
        if include:
            target = (path.parent / include.group(2)).resolve()
            inside = target.is_relative_to(tree.resolve())
            if inside and target.is_file() and target not in seen:
                limits = constraint or include.group(1) in ("-c", "--constraint")
                out += _requirement_lines(target, tree, seen, constraint=limits)
            continue
        editable = re.match(r"^(?:-e|--editable)[\s=]+(\S+)", line)
        if editable:
            out.append(RequirementLine(f"-e {editable.group(1)}", path, constraint))
            continue
        if line.startswith("-"):
            continue
        out.append(RequirementLine(re.sub(r"\s+--hash[=\s]\S+", "", line), path, constraint))
    return out


def _tox(path: Path, found: Manifests) -> None:
    """Plain requirements of tox's `[testenv] deps` (substitutions and options aside)."""
    if not path.is_file():
        return
    parser = ConfigParser(interpolation=None)
    with contextlib.suppress(ConfigParserError, UnicodeDecodeError):
        parser.read(path, encoding="utf-8")
        deps = parser.get("testenv", "deps", fallback="")
        plain = [
            line.strip()
            for line in deps.splitlines()
            if _NAME.match(line.strip()) and "{" not in line and ":" not in line.split(";")[0]
        ]
        found.add(plain, "tox.ini [testenv] deps")
