"""A package index on 127.0.0.1 that a test or a benchmark fills with wheels it builds.

One index for both (the tests import it from here), so that the tests of dated
environments and their benchmark run offline, against upload times they chose.

It speaks the JSON simple API (PEP 691) with each file's upload time (PEP 700), which is
what uv's `--exclude-newer` reads, so a test can publish version 1 of a package "in 2020"
and version 2 "in 2023" and watch a resolution dated in between pick version 1. Nothing
is fetched from the internet: pure-Python wheels are written here, and the test runner
(pytest and what it needs) is repacked from the distributions installed in the running
interpreter, published at a date older than any the tests ask for.

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
import threading
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

RUNNER = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")
"""pytest and its dependencies on the Python running the tests (3.11+)."""
LONG_AGO = datetime(2015, 1, 1, tzinfo=UTC)
"""When the repacked runner is said to have been uploaded: before any date a test uses."""


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def _write_wheel(
    dest: Path, name: str, version: str, files: Mapping[str, bytes], metadata: str
) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    stem = f"{re.sub(r'[-.]+', '_', name)}-{version}"
    info = f"{stem}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = metadata.encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: bugbout-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in contents.items():
        writer.writerow([path, _record_hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    contents[f"{info}/RECORD"] = record.getvalue().encode()
    wheel = dest / f"{stem}-py3-none-any.whl"
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
) -> Path:
    """A pure-Python wheel of `name` `version` holding `files` (path → text)."""
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    encoded = {path: text.encode() for path, text in files.items()}
    return _write_wheel(dest, name, version, encoded, "\n".join(lines) + "\n")


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


@dataclass
class _File:
    path: Path
    uploaded: datetime | None
    sha256: str


@dataclass
class PackageIndex:
    """A JSON simple index served from a thread; publish wheels, then point uv at `url`."""

    files: dict[str, list[_File]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/simple"

    def publish(self, wheel: Path, *, uploaded: datetime | None) -> None:
        """Serve `wheel`, uploaded at `uploaded` (None: an index that does not say)."""
        name = normalise(wheel.name.split("-")[0])
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        self.files.setdefault(name, []).append(_File(wheel, uploaded, digest))

    def publish_runner(
        self, dest: Path, *, pytest_uploaded: datetime = LONG_AGO, with_pytest: Sequence[str] = ()
    ) -> None:
        """pytest and its dependencies, repacked from this interpreter, uploaded long ago
        (pytest itself, and those `with_pytest` names, at `pytest_uploaded`)."""
        for name in RUNNER:
            late = name == "pytest" or name in with_pytest
            uploaded = pytest_uploaded if late else LONG_AGO
            self.publish(repack_installed(dest, name), uploaded=uploaded)

    def __enter__(self) -> PackageIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_HEAD(self) -> None:
                self.head_only = True
                self.do_GET()

            def do_GET(self) -> None:
                index.requests.append(self.path)
                parts = [part for part in self.path.split("?")[0].split("/") if part]
                if len(parts) == 2 and parts[0] == "simple":
                    self._project(normalise(parts[1]))
                elif len(parts) == 2 and parts[0] == "files":
                    self._file(parts[1])
                else:
                    self.send_error(404)

            def _project(self, name: str) -> None:
                published = index.files.get(name)
                if not published:
                    self.send_error(404)
                    return
                entries = []
                for item in published:
                    entry: dict[str, object] = {
                        "filename": item.path.name,
                        "url": f"/files/{item.path.name}",
                        "hashes": {"sha256": item.sha256},
                    }
                    if item.uploaded is not None:
                        stamp = item.uploaded.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                        entry["upload-time"] = stamp
                    entries.append(entry)
                body = json.dumps(
                    {"meta": {"api-version": "1.1"}, "name": name, "files": entries}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _file(self, filename: str) -> None:
                for published in index.files.values():
                    for item in published:
                        if item.path.name == filename:
                            body = item.path.read_bytes()
                            self.send_response(200)
                            self.send_header("Content-Type", "application/octet-stream")
                            self.send_header("Content-Length", str(len(body)))
                            self.end_headers()
                            if not getattr(self, "head_only", False):
                                self.wfile.write(body)
                            return
                self.send_error(404)

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
