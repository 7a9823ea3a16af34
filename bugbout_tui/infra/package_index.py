"""A package index on 127.0.0.1 that a test, a benchmark or the offline demo fills with
distributions it builds.

One index for all of them, so that dated environments, environment-repair bouts and
their benchmark run offline, against upload times, yanked releases and advisories they
chose. It ships with bugbout because the built-in demo serves its Lite projects from it.

It speaks the JSON simple API (PEP 691) with each file's upload time (PEP 700) and yanked
state (PEP 592), which is what uv's `--exclude-newer` and its resolver read, so a test can
publish version 1 of a package "in 2020" and version 2 "in 2023" and watch a resolution
dated in between pick version 1. Beside it, under `api_url`, a stand-in for PyPI's own
JSON API (`/pypi/<name>/json`, `/pypi/<name>/<version>/json`) with the same shape as
PyPI's, vulnerabilities included, for the dependency audit. Nothing is fetched from the
internet: wheels and sdists are written here, and the test runner (pytest and what it
needs) is repacked from the distributions installed in the running interpreter, published
at a date older than any the tests ask for.

    with PackageIndex() as index:
        index.publish(build_wheel(tmp, "shapes", "1.0", {"shapes/__init__.py": "..."}),
                      uploaded=datetime(2020, 1, 1, tzinfo=UTC))
        os.environ["UV_DEFAULT_INDEX"] = index.url
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import re
import tarfile
import threading
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from packaging.version import InvalidVersion, Version

from bugbout_tui.core.env_models import normalize_name

RUNNER = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")
"""pytest and its dependencies on the Python running the tests (3.11+)."""
LONG_AGO = datetime(2015, 1, 1, tzinfo=UTC)
"""When the repacked runner is said to have been uploaded: before any date a test uses."""
PURE = "py3-none-any"

_BACKEND_DIR = "_backend"
_BACKEND = '''"""The build backend of this sdist: the standard library alone, so that it builds with
no index to fetch a build system from. Building a wheel runs this code, as building any
sdist runs its project's own code."""

import base64
import csv
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"PKG-INFO", "pyproject.toml"}


def _field(metadata, key):
    for line in metadata.splitlines():
        if line.startswith(key + ": "):
            return line[len(key) + 2 :]
    raise KeyError(key)


def _stem():
    metadata = (ROOT / "PKG-INFO").read_text()
    name = _field(metadata, "Name").replace("-", "_").replace(".", "_").lower()
    return name + "-" + _field(metadata, "Version")


def _files():
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT).as_posix()
        if (
            path.is_file()
            and relative not in SKIP
            and not relative.startswith("_backend/")
            and "__pycache__" not in relative
        ):
            yield relative, path.read_bytes()


def _hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    stem = _stem()
    info = stem + ".dist-info"
    contents = dict(_files())
    contents[info + "/METADATA"] = (ROOT / "PKG-INFO").read_bytes()
    contents[info + "/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: bugbout-sdist\\nRoot-Is-Purelib: true\\n"
        b"Tag: py3-none-any\\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\\n")
    for path, data in contents.items():
        writer.writerow([path, _hash(data), len(data)])
    writer.writerow([info + "/RECORD", "", ""])
    contents[info + "/RECORD"] = record.getvalue().encode()
    filename = stem + "-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w") as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    stem = _stem()
    filename = stem + ".tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as archive:
        archive.add(ROOT, arcname=stem)
    return filename
'''


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def _stem(name: str, version: str) -> str:
    """A distribution's file-name stem: its name normalized with underscores (PEP 625)."""
    return f"{normalize_name(name).replace('-', '_')}-{version}"


def _metadata(name: str, version: str, requires: Sequence[str], requires_python: str | None) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    return "\n".join(lines) + "\n"


def _write_wheel(
    dest: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    metadata: str,
    tag: str = PURE,
) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    stem = f"{re.sub(r'[-.]+', '_', name)}-{version}"
    info = f"{stem}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = metadata.encode()
    pure = "true" if tag.endswith("-none-any") else "false"
    contents[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: bugbout-tests\nRoot-Is-Purelib: {pure}\nTag: {tag}\n"
    ).encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in contents.items():
        writer.writerow([path, _record_hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    contents[f"{info}/RECORD"] = record.getvalue().encode()
    wheel = dest / f"{stem}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return wheel


def build_wheel(
    dest: Path,
    name: str,
    version: str,
    files: Mapping[str, str],
    *,
    requires: Sequence[str] = (),
    requires_python: str | None = None,
    tag: str = PURE,
) -> Path:
    """A wheel of `name` `version` holding `files` (path → text), pure Python unless `tag`
    says otherwise (`cp27-cp27mu-manylinux1_x86_64`: a wheel no current interpreter can
    install, so that a version has no usable wheel)."""
    encoded = {path: text.encode() for path, text in files.items()}
    metadata = _metadata(name, version, requires, requires_python)
    return _write_wheel(dest, name, version, encoded, metadata, tag)


def build_sdist(
    dest: Path,
    name: str,
    version: str,
    files: Mapping[str, str],
    *,
    requires: Sequence[str] = (),
    build_system: tuple[Sequence[str], str] | None = None,
) -> Path:
    """A source distribution of `name` `version` holding `files` (path → text), with its
    own build backend inside (`backend-path`), so uv builds it with no index to fetch a
    build system from; installing it runs that code, which is what an sdist costs.

    With `build_system` (its requirements and its backend's module) the sdist names that
    build system instead, which the builder fetches from the index as an old sdist's
    setuptools is fetched."""
    dest.mkdir(parents=True, exist_ok=True)
    stem = _stem(name, version)
    contents = {**files, "PKG-INFO": _metadata(name, version, requires, None)}
    if build_system is None:
        contents["pyproject.toml"] = (
            "[build-system]\nrequires = []\n"
            'build-backend = "sdist_backend"\n'
            f'backend-path = ["{_BACKEND_DIR}"]\n'
        )
        contents[f"{_BACKEND_DIR}/sdist_backend.py"] = _BACKEND
    else:
        build_requires, backend = build_system
        contents["pyproject.toml"] = (
            f"[build-system]\nrequires = {json.dumps(list(build_requires))}\n"
            f"build-backend = {json.dumps(backend)}\n"
        )
    sdist = dest / f"{stem}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for path, text in contents.items():
            data = text.encode()
            member = tarfile.TarInfo(f"{stem}/{path}")
            member.size = len(data)
            member.mtime = int(LONG_AGO.timestamp())
            member.mode = 0o644
            archive.addfile(member, io.BytesIO(data))
    return sdist


def repack_installed(dest: Path, distribution: str) -> Path:
    """A wheel of a distribution installed in the running interpreter, as it is installed
    (its modules and its metadata), so the index can serve pytest without the internet."""
    dist = importlib.metadata.distribution(distribution)
    files: dict[str, bytes] = {}
    for entry in dist.files or ():
        path = str(entry)
        if ".dist-info/" in path or "__pycache__" in path or path.startswith(".."):
            continue
        located = Path(str(dist.locate_file(entry)))
        if located.is_file():
            files[path] = located.read_bytes()
    metadata = dist.read_text("METADATA") or ""
    return _write_wheel(dest, dist.metadata["Name"], dist.version, files, metadata)


def _name_and_version(filename: str) -> tuple[str, str]:
    """A distribution file's project and version, read from its name."""
    if filename.endswith(".whl"):
        name, version = filename.split("-")[:2]
    else:
        stem = filename.removesuffix(".tar.gz").removesuffix(".zip")
        name, version = stem.rsplit("-", 1)
    return normalize_name(name), version


def _version_key(version: str) -> tuple[int, Version | str]:
    """Versions in PEP 440 order; one that is not PEP 440 sorts first, by its text."""
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def _stamp(when: datetime, fraction: bool = True) -> str:
    pattern = "%Y-%m-%dT%H:%M:%S.%fZ" if fraction else "%Y-%m-%dT%H:%M:%S"
    return when.astimezone(UTC).strftime(pattern)


@dataclass
class _File:
    path: Path
    uploaded: datetime | None
    sha256: str
    version: str
    yanked: str | bool = False
    """False, True, or the reason it was yanked (PEP 592)."""

    @property
    def wheel(self) -> bool:
        return self.path.name.endswith(".whl")


@dataclass(frozen=True)
class _Advisory:
    id: str
    aliases: tuple[str, ...]
    fixed_in: tuple[str, ...]
    summary: str | None
    withdrawn: datetime | None


@dataclass
class PackageIndex:
    """A JSON simple index and a JSON API served from a thread; publish distributions,
    then point uv at `url` and the audit at `api_url`."""

    files: dict[str, list[_File]] = field(default_factory=dict)
    advisories: dict[tuple[str, str], list[_Advisory]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The simple API, for uv (`UV_DEFAULT_INDEX`)."""
        return f"{self.root}/simple"

    @property
    def api_url(self) -> str:
        """The stand-in for PyPI's JSON API (`https://pypi.org/pypi` on the real index)."""
        return f"{self.root}/pypi"

    def publish(self, path: Path, *, uploaded: datetime | None, yanked: str | bool = False) -> None:
        """Serve the wheel or sdist at `path`, uploaded at `uploaded` (None: an index that
        does not say), yanked when `yanked` is True or gives the reason."""
        name, version = _name_and_version(path.name)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        state: str | bool = (yanked or True) if isinstance(yanked, str) else yanked
        self.files.setdefault(name, []).append(_File(path, uploaded, digest, version, state))

    def advise(
        self,
        name: str,
        version: str,
        *,
        id: str,
        aliases: Sequence[str] = (),
        fixed_in: Sequence[str] = (),
        summary: str | None = None,
        withdrawn: datetime | None = None,
    ) -> None:
        """Publish an advisory on `name` `version` (an OSV `id`), withdrawn at `withdrawn`
        when its authors took it back."""
        advisory = _Advisory(id, tuple(aliases), tuple(fixed_in), summary, withdrawn)
        self.advisories.setdefault((normalize_name(name), version), []).append(advisory)

    def remove(self, name: str) -> None:
        """Take a project down: both APIs answer 404 for it from now on."""
        key = normalize_name(name)
        self.files.pop(key, None)
        for advised in [advised for advised in self.advisories if advised[0] == key]:
            del self.advisories[advised]

    def publish_runner(
        self, dest: Path, *, pytest_uploaded: datetime = LONG_AGO, with_pytest: Sequence[str] = ()
    ) -> None:
        """pytest and its dependencies, repacked from this interpreter, uploaded long ago
        (pytest itself, and those `with_pytest` names, at `pytest_uploaded`)."""
        for name in RUNNER:
            late = name == "pytest" or name in with_pytest
            uploaded = pytest_uploaded if late else LONG_AGO
            self.publish(repack_installed(dest, name), uploaded=uploaded)

    def simple_page(self, name: str) -> dict[str, object] | None:
        """The PEP 691 page of a project, None when the index does not know it."""
        published = self.files.get(name)
        if not published:
            return None
        entries = []
        for item in published:
            entry: dict[str, object] = {
                "filename": item.path.name,
                "url": f"/files/{item.path.name}",
                "hashes": {"sha256": item.sha256},
            }
            if item.uploaded is not None:
                entry["upload-time"] = _stamp(item.uploaded)
            if item.yanked:
                entry["yanked"] = item.yanked
            entries.append(entry)
        return {"meta": {"api-version": "1.1"}, "name": name, "files": entries}

    def project_json(self, name: str) -> dict[str, object] | None:
        """PyPI's `/pypi/<name>/json`: the project, every release's files, and the
        advisories of its newest release (as PyPI gives them), None when unknown."""
        published = self.files.get(name)
        if not published:
            return None
        releases: dict[str, list[dict[str, object]]] = {}
        for version in sorted({item.version for item in published}, key=_version_key):
            releases[version] = [self._file_json(f) for f in published if f.version == version]
        standing = [v for v, files in releases.items() if not all(f["yanked"] for f in files)]
        newest = (standing or list(releases))[-1]
        return {
            "info": {"name": name, "version": newest},
            "releases": releases,
            "urls": releases[newest],
            "vulnerabilities": self._vulnerabilities(name, newest),
        }

    def release_json(self, name: str, version: str) -> dict[str, object] | None:
        """PyPI's `/pypi/<name>/<version>/json`: one release, its files and advisories."""
        files = [item for item in self.files.get(name, []) if item.version == version]
        if not files:
            return None
        yanked = all(item.yanked for item in files)
        reasons = [item.yanked for item in files if isinstance(item.yanked, str)]
        return {
            "info": {
                "name": name,
                "version": version,
                "yanked": yanked,
                "yanked_reason": reasons[0] if yanked and reasons else None,
            },
            "urls": [self._file_json(item) for item in files],
            "vulnerabilities": self._vulnerabilities(name, version),
        }

    def _file_json(self, item: _File) -> dict[str, object]:
        uploaded = item.uploaded or LONG_AGO
        return {
            "filename": item.path.name,
            "packagetype": "bdist_wheel" if item.wheel else "sdist",
            "python_version": item.path.name.split("-")[-3] if item.wheel else "source",
            "url": f"{self.root}/files/{item.path.name}",
            "digests": {"sha256": item.sha256},
            "size": item.path.stat().st_size,
            "upload_time": _stamp(uploaded, fraction=False),
            "upload_time_iso_8601": _stamp(uploaded),
            "yanked": bool(item.yanked),
            "yanked_reason": item.yanked if isinstance(item.yanked, str) else None,
        }

    def _vulnerabilities(self, name: str, version: str) -> list[dict[str, object]]:
        return [
            {
                "id": advisory.id,
                "aliases": list(advisory.aliases),
                "summary": advisory.summary,
                "details": advisory.summary or "",
                "fixed_in": list(advisory.fixed_in),
                "link": f"https://osv.dev/vulnerability/{advisory.id}",
                "source": "osv",
                "withdrawn": _stamp(advisory.withdrawn) if advisory.withdrawn else None,
            }
            for advisory in self.advisories.get((name, version), [])
        ]

    def _file(self, filename: str) -> Path | None:
        for published in self.files.values():
            for item in published:
                if item.path.name == filename:
                    return item.path
        return None

    def __enter__(self) -> PackageIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            head_only = False

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_HEAD(self) -> None:
                self.head_only = True
                self.do_GET()

            def do_GET(self) -> None:
                index.requests.append(self.path)
                parts = [part for part in self.path.split("?")[0].split("/") if part]
                page: dict[str, object] | None = None
                kind = "application/json"
                if len(parts) == 2 and parts[0] == "simple":
                    page = index.simple_page(normalize_name(parts[1]))
                    kind = "application/vnd.pypi.simple.v1+json"
                elif len(parts) == 3 and parts[0] == "pypi" and parts[2] == "json":
                    page = index.project_json(normalize_name(parts[1]))
                elif len(parts) == 4 and parts[0] == "pypi" and parts[3] == "json":
                    page = index.release_json(normalize_name(parts[1]), parts[2])
                elif len(parts) == 2 and parts[0] == "files":
                    path = index._file(parts[1])
                    if path is not None:
                        self._send(path.read_bytes(), "application/octet-stream")
                        return
                if page is None:
                    self.send_error(404)
                else:
                    self._send(json.dumps(page).encode(), kind)

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not self.head_only:
                    self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
