"""PEP 517 hooks: a wheel of the module named after the project, with its metadata read
from the `[project]` table of pyproject.toml."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import tomllib
import zipfile
from pathlib import Path

__all__ = ["build_editable", "build_wheel", "prepare_metadata_for_build_wheel"]


def _project() -> dict[str, object]:
    with open("pyproject.toml", "rb") as handle:
        return dict(tomllib.load(handle)["project"])


def _module(project: dict[str, object]) -> str:
    return str(project["name"]).replace("-", "_").lower()


def _stem(project: dict[str, object]) -> str:
    return f"{_module(project)}-{project['version']}"


def _metadata(project: dict[str, object]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {req}" for req in project.get("dependencies", [])]
    extras = dict(project.get("optional-dependencies", {}))
    for extra, requirements in extras.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {req} ; extra == "{extra}"' for req in requirements]
    return "\n".join(lines) + "\n"


def _hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _wheel(directory: str, contents: dict[str, bytes], project: dict[str, object]) -> str:
    info = f"{_stem(project)}.dist-info"
    contents[f"{info}/METADATA"] = _metadata(project).encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: flit 3.9.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in contents.items():
        writer.writerow([path, _hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    contents[f"{info}/RECORD"] = record.getvalue().encode()
    filename = f"{_stem(project)}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / filename, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return filename


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    project = _project()
    module = _module(project)
    contents = {
        path.as_posix(): path.read_bytes()
        for path in sorted(Path(module).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    if not contents:
        raise ValueError(f"No file/folder found for module {module}")
    return _wheel(wheel_directory, contents, project)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    project = _project()
    here = str(Path.cwd()).encode()
    return _wheel(wheel_directory, {f"{_module(project)}.pth": here + b"\n"}, project)


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, object] | None = None
) -> str:
    project = _project()
    info = Path(metadata_directory) / f"{_stem(project)}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(project), encoding="utf-8")
    return info.name
