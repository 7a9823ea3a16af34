"""Projects for the environment-repair tests: installable offline, by uv, for real.

A project's `pyproject.toml` names a build backend that lives in the project itself
(`backend-path`), written with the standard library alone, so building the project asks
the index for nothing and the tests need no setuptools or hatchling.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bugbout_tui.infra.package_index import PackageIndex

BACKEND = '''"""Builds this project's package into a wheel: the standard library alone."""

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    package = Path("src", name) if Path("src", name).is_dir() else Path(name)
    contents = {
        path.relative_to(package.parent).as_posix(): path.read_bytes()
        for path in sorted(package.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    info = f"{name}-{version}.dist-info"
    metadata = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {r}" for r in project.get("dependencies", [])]
    for extra, listed in project.get("optional-dependencies", {}).items():
        metadata.append(f"Provides-Extra: {extra}")
        metadata += [f'Requires-Dist: {r} ; extra == "{extra}"' for r in listed]
    contents[f"{info}/METADATA"] = ("\\n".join(metadata) + "\\n").encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: envkit\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    )
    record = "".join(f"{p},{_hash(d)},{len(d)}\\n" for p, d in contents.items())
    contents[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\\n").encode()
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w") as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return wheel
'''


@contextmanager
def offline_index(factory: pytest.TempPathFactory) -> Iterator[tuple[PackageIndex, Path]]:
    """A local index serving this interpreter's pytest, with uv kept to it and to a cache
    of its own; yields the index and a folder to build the test's own wheels in."""
    wheels = factory.mktemp("wheels")
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        served.publish_runner(wheels)
        patch.setenv("UV_CACHE_DIR", str(factory.mktemp("uv-cache")))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        yield served, wheels


def env_settings(index: PackageIndex, kinds: Sequence[str], contestants: Sequence[str]) -> str:
    """The bugbout.toml lines an environment bout's tests share: pytest without the
    machine's plugins, the kinds mined, the local index for installs and the audit, and
    the contestants' tables; they go before `[run]`."""
    mined = ", ".join(f'"{kind}"' for kind in kinds)
    return "\n".join(
        [
            'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }',
            "",
            "[tasks]",
            f"kinds = [{mined}]",
            "",
            "[env]",
            f'index = "{index.url}"',
            f'advisories = "{index.api_url}"',
            "",
            *contestants,
        ]
    )


def when(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, 12, tzinfo=UTC)


def write_project(
    root: Path,
    name: str,
    *,
    dependencies: Sequence[str] = (),
    extras: Mapping[str, Sequence[str]] | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """A project `name` (its package `name/`, or `src/name/` when `files` puts it there)
    that declares `dependencies` and `extras` (name → requirements), with `files` beside
    it (path → text)."""
    listed = ", ".join(json.dumps(d) for d in dependencies)
    optional = "".join(f"{extra} = {json.dumps(list(r))}\n" for extra, r in (extras or {}).items())
    texts = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "envkit_backend"\n'
        'backend-path = ["."]\n\n'
        f'[project]\nname = "{name}"\nversion = "0.1"\ndependencies = [{listed}]\n'
        + (f"\n[project.optional-dependencies]\n{optional}" if optional else ""),
        "envkit_backend.py": BACKEND,
        **(files or {}),
    }
    if not any(path.startswith((f"{name}/", f"src/{name}/")) for path in texts):
        texts[f"{name}/__init__.py"] = ""
    for path, text in texts.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
