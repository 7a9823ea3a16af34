"""D¹: the packages a tree's environment files declare, one per name, as written.

An environment repair is judged partly on what it declares: every declared package is
audited, and the declared names are compared with those the traced run used. They are
what the clean install is asked to install, read by the same function
(`infra/run_declaration.py`): the project's own requirements and its test extras
(`pyproject.toml`, `setup.cfg`, the literal lists of `setup.py`, parsed and never run),
`tests_require`, the test dependency groups, and the requirement files of the tests and
the runtime with the files they include (not those of docs or linters, which the
install leaves out too).

Names are normalized as PEP 503; extras and markers stay in `requirement`. A direct URL,
a VCS checkout or a local path is a declared package too, named by `name @`, its
`#egg=` fragment, its file name, or (a local path) its own packaging files. A name
declared twice is kept once: where it is pinned exactly, if anywhere, so the version the
install is held to is the one audited; a constraints file (`-c`) pins a package declared
elsewhere without declaring one. The project itself (`-e .`, `name[test]` in its own
extras) is not a dependency.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from bugbout_tui.core.env_models import Declared, normalize_name
from bugbout_tui.infra.run_declaration import project_name, run_declaration

_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_WHEEL = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._]*)-[^-]+(-[^-]+)?-[^-]+-[^-]+-[^-]+\.whl$")
_SDIST = re.compile(r"^(.+)-[^-]+\.(tar\.gz|tar\.bz2|tgz|zip)$")
_LOCATION = re.compile(r"^([a-z][a-z0-9+.-]*:|[./~]|[^\s;]*/)", re.IGNORECASE)
"""A URL, a VCS checkout or a path: a requirement that may be written without a name."""


def declared_packages(tree: Path) -> list[Declared]:
    """Every package the environment files in `tree` declare (see the module's doc)."""
    own = project_name(tree)
    found: list[Declared] = []
    pins: dict[str, str] = {}
    for line in run_declaration(tree).requirements:
        source = _relative(line.source, tree)
        declared = _declared(line.text, source, tree)
        if declared is None or declared.name == own:
            continue
        if not line.constraint:
            found.append(declared)
        elif declared.pinned:
            pins.setdefault(declared.name, declared.pinned)
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
            return project_name(path) or path.name
    last = location.rsplit("/", 1)[-1].split("@")[0]
    for pattern in (_WHEEL, _SDIST):
        if match := pattern.match(last):
            return match.group(1)
    return last.removesuffix(".git") or None


def _relative(path: Path, tree: Path) -> str:
    """`path` relative to `tree` (the files read all lie inside it)."""
    return path.resolve().relative_to(tree.resolve()).as_posix()
