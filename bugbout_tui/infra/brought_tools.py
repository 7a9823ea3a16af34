"""The tools a clean install takes at another date than the task's: the build tools, and
the test runner bugbout brings when the tree declares none.

A task's date limits what its install may take, so that a repair is judged against the
index its project knew. Two kinds of package are not the repair's, though, and holding
them to that date only tells how old the interpreter is:

- **Build tools** (`BUILD_TOOLS`): the backends and helpers that turn a tree, or an
  sdist it depends on, into a wheel. A project of 2016 built with the setuptools of
  2016 on Python 3.11 crashes (it reads `HTMLParser.unescape`, gone since 3.9), and
  uv's default build requirement for a bare `setup.py`, `setuptools>=40.8.0`, did not
  exist yet.
- **The test runner**: a task's command is bugbout's test run (`python -m pytest`), not
  part of the repair. Projects often declare pytest only where no install reads it
  (`tox.ini`, Poetry's dev-dependencies), so bugbout adds it (`runner_requirements`)
  when the tree declares none, with what it needs (`RUNNER_PACKAGES`). A tree that
  declares pytest keeps its own, dated as declared.

Both are taken as of the later of the task's date and the release of the interpreter's
minor version (`PYTHON_RELEASES`): the oldest tools that know this interpreter. uv does
this per package (`--exclude-newer-package`), for the build environments it makes too.
What was taken so is recorded with the install, in words (`BroughtTools.words`), and
the runner bugbout brought is left out of D³ (`BroughtTools.brought`): it is not the
repair's to declare.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from bugbout_tui.core.env_models import normalize_name
from bugbout_tui.infra.dated_env import RUNNER_CORE, RUNNER_NEEDS, _stamp

BUILD_TOOLS: Mapping[str, str] = {
    "setuptools": "build backend",
    "wheel": "build helper",
    "setuptools-scm": "build helper",
    "pbr": "build helper",
    "poetry-core": "build backend",
    "poetry": "build backend",
    "flit-core": "build backend",
    "flit": "build backend",
    "hatchling": "build backend",
    "hatch-vcs": "build helper",
    "pdm-backend": "build backend",
    "pdm-pep517": "build backend",
}
"""Pure-Python build backends and the helpers their builds ask for (name → role), taken
as of the interpreter's release when the task's date is older. Backends that need a
compiler or CMake (scikit-build, maturin, setuptools-rust) are left out: a later one of
those would not make an old build work on its own."""
RUNNER_PACKAGES: tuple[str, ...] = tuple(
    dict.fromkeys(("pytest", *RUNNER_NEEDS, *RUNNER_CORE, "pygments"))
)
"""pytest and what pytests of every age needed (pygments since pytest 8): the runner
bugbout brings, dated with it (held to the task's date, any of them would hold pytest
back to one that predates the interpreter)."""
PYTHON_RELEASES: Mapping[tuple[int, int], datetime] = {
    (3, 8): datetime(2019, 10, 14, tzinfo=UTC),
    (3, 9): datetime(2020, 10, 5, tzinfo=UTC),
    (3, 10): datetime(2021, 10, 4, tzinfo=UTC),
    (3, 11): datetime(2022, 10, 24, tzinfo=UTC),
    (3, 12): datetime(2023, 10, 2, tzinfo=UTC),
    (3, 13): datetime(2024, 10, 7, tzinfo=UTC),
    (3, 14): datetime(2025, 10, 7, tzinfo=UTC),
}
"""The day each minor version's x.0 was released, from its release schedule: PEP 569
(3.8), 596 (3.9), 619 (3.10), 664 (3.11), 693 (3.12), 719 (3.13) and 745 (3.14). A later
version than these is taken to be at least as new as the newest; an older one needs
nothing lifted for it."""
_LEGACY_BUILD = ("setuptools",)
"""What uv builds a tree with when it names no build system: `setuptools>=40.8.0`."""


@dataclass(frozen=True)
class BroughtTools:
    """What one install takes at another date than the task's."""

    runner: tuple[str, ...]
    """Requirements of the test runner added to the install: the tree declares none."""
    lifted: Mapping[str, str]
    """Name → role of every package taken as of `until` rather than the task's date."""
    until: datetime | None
    """The interpreter's release, when it is later than the task's date; else None and
    nothing is lifted."""
    python: str
    """The interpreter's minor version, as the records name it (`3.11`)."""
    declared: frozenset[str]
    """The names the tree declares (D¹): none of them is the runner's to bring."""

    def arguments(self) -> list[str]:
        """uv's options that take the lifted packages as of `until`."""
        if self.until is None:
            return []
        stamp = _stamp(self.until)
        pairs = [("--exclude-newer-package", f"{name}={stamp}") for name in self.lifted]
        return [arg for pair in pairs for arg in pair]

    def words(self, *, build: Collection[str], installed: Collection[str]) -> list[str]:
        """The lifted packages this install took, as the record says them, one line per
        role: those of the tree's own build (`build`), those installed (`installed`, D²'s
        names), and the runner's requirements. A build of an sdist may take other build
        tools the same way; uv does not say which, so they go unnamed."""
        if self.until is None:
            return []
        runner = {_name(requirement) for requirement in self.runner}
        named = {*build, *installed, *runner}
        roles: dict[str, list[str]] = {}
        for name, role in self.lifted.items():
            if name in named:
                roles.setdefault(role, []).append(name)
        when = self.until.date().isoformat()
        return [
            f"{', '.join(names)} ({role}): as of {when}, Python {self.python}'s release, "
            "not the task's date"
            for role, names in roles.items()
        ]

    def brought(self, installed: Collection[str]) -> list[str]:
        """The runner's packages the install put in the environment that the tree does
        not declare: bugbout's, left out of D³."""
        if not self.runner:
            return []
        kept = set(RUNNER_PACKAGES) - self.declared
        return sorted(name for name in installed if name in kept)


def brought_tools(
    *, runner: Sequence[str], declared: Collection[str], python: str | None, date: datetime
) -> BroughtTools:
    """What an install with the tree's `declared` names, asked to bring `runner` (see
    `runner_requirements`), takes later than `date` on an interpreter of version `python`
    (`3.11.7`; None when unknown, which lifts nothing)."""
    names = frozenset(declared)
    brings = tuple(r for r in runner if (name := _name(r)) and name not in names)
    version = _minor(python)
    released = _released(version)
    until = released if released is not None and released > date else None
    lifted = dict(BUILD_TOOLS)
    if brings:
        lifted |= {name: "test runner" for name in RUNNER_PACKAGES if name not in names}
    shown = f"{version[0]}.{version[1]}" if version else ""
    return BroughtTools(runner=brings, lifted=lifted, until=until, python=shown, declared=names)


def runner_requirements(command: Sequence[str], test_dependencies: Sequence[str]) -> list[str]:
    """What a task's `command` needs of bugbout's test runner: for a pytest run, the
    pytest that `[project] test-dependencies` names (what the project's bug tasks run
    with), else any; nothing for a command of another program. Only pytest itself: a
    plugin the tests need is the project's to declare."""
    if list(command[:3]) != ["python", "-m", "pytest"] and list(command[:1]) != ["pytest"]:
        return []
    named = [r for r in test_dependencies if _name(r) == "pytest"]
    return named or ["pytest"]


def condition(runner: Sequence[str]) -> list[str]:
    """What stored repairs record of these tools, so that a repair made before bugbout
    brought them, or with another runner, is made again."""
    return [*runner, *BUILD_TOOLS]


def interpreter_version(venv: Path) -> str | None:
    """The version of the interpreter an environment was made from (`3.11.7`), as
    `pyvenv.cfg` gives it; None when it does not."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string("[venv]\n" + (venv / "pyvenv.cfg").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return parser.get("venv", "version_info", fallback=None) or parser.get(
        "venv", "version", fallback=None
    )


def build_tools_of(tree: Path) -> list[str]:
    """The build tools the tree's own build asks for: `[build-system] requires`, or
    setuptools for a tree that names no build system."""
    try:
        data = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    system = data.get("build-system")
    if not isinstance(system, dict) or "requires" not in system:
        return list(_LEGACY_BUILD)
    requires = system["requires"]
    listed = requires if isinstance(requires, list) else []
    return [name for text in listed if isinstance(text, str) and (name := _name(text))]


def _name(requirement: str) -> str:
    """A requirement's PEP 503 name, or "" when it is no requirement."""
    try:
        return normalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _minor(version: str | None) -> tuple[int, int] | None:
    parts = (version or "").split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def _released(version: tuple[int, int] | None) -> datetime | None:
    """When `version` was released; the newest known release for a later version."""
    if version is None or version < min(PYTHON_RELEASES):
        return None
    return PYTHON_RELEASES.get(version, PYTHON_RELEASES[max(PYTHON_RELEASES)])
