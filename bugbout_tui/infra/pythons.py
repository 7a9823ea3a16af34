"""Which Python a commit's tests run on: from its `requires-python` and classifiers, among
the interpreters uv finds on this machine or can install.

uv looks on PATH, where a version manager shows only the versions selected for the
current shell: the others it installed are looked for in its own folder
(`version_manager_dirs`).

An installed interpreter is preferred to a download (a download may be impossible here,
and takes a while). Among those that satisfy `requires-python`, one the classifiers name
wins, the newest of them; failing that, the oldest newer than the classifiers (the code
is most likely to run on the release right after the ones it was written for); failing
that, the newest. With no interpreter that satisfies `requires-python`, the answer says
which version is needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

Version = tuple[int, ...]

_CLAUSE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9.]*)(\.\*)?\s*$")


@dataclass(frozen=True)
class Python:
    """An interpreter uv knows of: installed (with a path) or downloadable."""

    version: Version
    path: Path | None

    @property
    def text(self) -> str:
        return ".".join(map(str, self.version))

    @property
    def minor(self) -> str:
        return ".".join(map(str, self.version[:2]))


@dataclass(frozen=True)
class Choice:
    """The interpreter chosen, or why there is none (`python` is then None)."""

    python: Python | None
    why: str
    older: str | None = None
    """The newest Python the commit's classifiers name, when none of those was at hand
    and a newer one was chosen: the code may no longer run on what was chosen."""


_MANAGERS = (
    ("PYENV_ROOT", ".pyenv", "versions"),
    ("ASDF_DATA_DIR", ".asdf", "installs/python"),
    ("MISE_DATA_DIR", ".local/share/mise", "installs/python"),
)
"""Version managers: the variable naming the data folder, its default under the home
folder, and where each installed version lives inside it."""


def version_manager_dirs(environ: Mapping[str, str], home: Path) -> list[Path]:
    """The `bin` folders of the Pythons that pyenv, asdf and mise installed, selected or
    not: the old Pythons an old commit needs are usually there, one per folder, and
    absent from PATH. Links (pyenv's virtual environments, asdf's aliases) are left out:
    they name an installation already listed."""
    found: list[Path] = []
    for variable, default, inside in _MANAGERS:
        root = Path(environ.get(variable) or home / default) / inside
        try:
            versions = sorted(root.iterdir())
        except OSError:
            continue
        found += [v / "bin" for v in versions if not v.is_symlink() and (v / "bin").is_dir()]
    return found


def parse_list(output: str) -> list[Python]:
    """CPython builds (no free-threaded, no pre-releases) from `uv python list
    --output-format json`, installed ones with their path."""
    try:
        entries = json.loads(output)
    except json.JSONDecodeError:
        return []
    found: dict[tuple[Version, str | None], Python] = {}
    for entry in entries if isinstance(entries, list) else []:
        key = str(entry.get("key", ""))
        version = str(entry.get("version", ""))
        if entry.get("implementation") != "cpython" or "freethreaded" in key:
            continue
        if not re.fullmatch(r"\d+\.\d+\.\d+", version):
            continue
        parts = tuple(int(p) for p in version.split("."))
        path = entry.get("path")
        found.setdefault((parts, path), Python(parts, Path(path) if path else None))
    real = {p.version for p in found.values() if p.path is not None and not is_shim(p.path)}
    return [
        p for p in found.values() if p.path is None or not (is_shim(p.path) and p.version in real)
    ]


def is_shim(path: Path) -> bool:
    """A version manager's shim runs whatever version the calling shell selects, so
    the same path may be another Python in a build's process: the installation itself
    is kept when both are listed."""
    return path.parent.name == "shims"


def satisfies(version: Version, specifier: str | None) -> bool:
    """Whether `version` meets a `requires-python` specifier; an unreadable clause is
    ignored rather than taken to exclude everything."""
    if not specifier:
        return True
    for clause in specifier.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            continue
        op, text, star = match.groups()
        wanted = tuple(int(p) for p in text.split(".") if p)
        if star or op in ("==", "!=", "==="):
            size = len(wanted)
            head = version[:size] + (0,) * max(0, size - len(version))
            equal = head == wanted if star else _pad(version, wanted) == _pad(wanted, version)
            if (op in ("==", "===")) != equal:
                return False
            continue
        left, right = _pad(version, wanted), _pad(wanted, version)
        if op == ">=" and not left >= right:
            return False
        if op == "<=" and not left <= right:
            return False
        if op == ">" and not left > right:
            return False
        if op == "<" and not left < right:
            return False
        if op == "~=":
            prefix = wanted[:-1]
            if not (left >= right and version[: len(prefix)] == prefix):
                return False
    return True


def _pad(version: Version, other: Version) -> Version:
    return version + (0,) * max(0, len(other) - len(version))


def choose(pythons: list[Python], requires_python: str | None, classifiers: list[str]) -> Choice:
    """The interpreter for a commit (see the module docstring for the order)."""
    fitting = [p for p in pythons if satisfies(p.version, requires_python)]
    named = {tuple(int(x) for x in c.split(".")) for c in classifiers}
    top = max(named) if named else None

    def best(group: list[Python]) -> Python | None:
        if not group:
            return None
        listed = [p for p in group if p.version[:2] in named]
        if listed:
            return max(listed, key=lambda p: p.version)
        if top is not None:
            newer = [p for p in group if p.version[:2] > top]
            if newer:
                return min(newer, key=lambda p: (p.version[:2], tuple(-x for x in p.version[2:])))
        return max(group, key=lambda p: p.version)

    def older(chosen: Python) -> str | None:
        if top is None or chosen.version[:2] <= top:
            return None
        return ".".join(map(str, top))

    installed = best([p for p in fitting if p.path is not None])
    if installed is not None:
        why = _said(installed, requires_python, classifiers, "installed")
        return Choice(installed, why, older(installed))
    download = best(fitting)
    if download is not None:
        why = _said(download, requires_python, classifiers, "to be installed")
        return Choice(download, why, older(download))
    wanted = requires_python or "a Python 3"
    return Choice(
        None,
        f"the commit needs Python {wanted.strip()}, and uv can neither find nor install one "
        f"(it knows of {', '.join(sorted({p.minor for p in pythons})) or 'none'})",
    )


def _said(python: Python, requires: str | None, classifiers: list[str], how: str) -> str:
    bounds = f"requires-python {requires.strip()}" if requires else "no requires-python"
    listed = f"classifiers {', '.join(classifiers)}" if classifiers else "no classifiers"
    return f"Python {python.text} ({how}; {bounds}; {listed})"
