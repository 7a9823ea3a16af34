"""A date-limited view of a package index, on 127.0.0.1, for installers that know no date.

uv's `--exclude-newer` dates every environment bugbout makes, but uv makes none for Python
2. Its pip has no such option; what it has is `--index-url`. This view stands between pip
and the index: it asks the index for each project's files with their upload times (the
JSON simple API, PEP 691 and 700), leaves out those uploaded after the date (except for
the projects whose date is lifted), and answers in the HTML form every pip reads (PEP
503), each file linked where the index keeps it, with its hash and its `requires-python`.

A file whose index gives no upload time cannot be dated: it is kept, and its project named
in `undated`.
"""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Collection, Mapping
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urljoin

PYPI_SIMPLE = "https://pypi.org/simple/"
_INDEX_SETTINGS = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
"""Where the user points their installers, in the order bugbout's environments honour."""
_JSON = "application/vnd.pypi.simple.v1+json"
_FETCH_TIMEOUT_SECONDS = 60.0


def upstream_index(environ: Mapping[str, str]) -> str:
    """The index the user's uv settings name (or pip's), else PyPI's."""
    for name in _INDEX_SETTINGS:
        if environ.get(name):
            return environ[name].rstrip("/") + "/"
    return PYPI_SIMPLE


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dated_page(
    page: Mapping[str, object],
    *,
    base: str,
    date: datetime | None,
    lifted: Collection[str],
) -> tuple[str, bool]:
    """The PEP 503 page of a PEP 691 `page` fetched from `base`: its files uploaded by
    `date` (all of them with no date, or for a lifted project). Also whether a file was
    kept for want of an upload time."""
    name = normalize(str(page.get("name", "")))
    undated = False
    links = []
    files = page.get("files")
    for entry in files if isinstance(files, list) else []:
        if not isinstance(entry, dict) or "url" not in entry or "filename" not in entry:
            continue
        uploaded = entry.get("upload-time")
        if date is not None and name not in lifted:
            if not isinstance(uploaded, str):
                undated = True
            elif datetime.fromisoformat(uploaded.replace("Z", "+00:00")) > date:
                continue
        url = urljoin(base, str(entry["url"]))
        hashes = entry.get("hashes")
        if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
            url += f"#sha256={hashes['sha256']}"
        attributes = f' href="{html.escape(url)}"'
        requires = entry.get("requires-python")
        if isinstance(requires, str) and requires:
            attributes += f' data-requires-python="{html.escape(requires)}"'
        yanked = entry.get("yanked")
        if yanked:
            reason = yanked if isinstance(yanked, str) else ""
            attributes += f' data-yanked="{html.escape(reason)}"'
        links.append(f"<a{attributes}>{html.escape(str(entry['filename']))}</a><br>")
    body = "\n".join(links)
    return f"<!DOCTYPE html>\n<html><body>\n{body}\n</body></html>\n", undated


class DatedIndex:
    """The view, served while the `with` block lasts:

    with DatedIndex(upstream, date, lifted={"pytest"}) as index:
        run(["python2.7", "-m", "pip", "install", "--index-url", index.url, ...])
    """

    def __init__(self, upstream: str, date: datetime | None, lifted: Collection[str] = ()):
        self.upstream = upstream.rstrip("/") + "/"
        self.date = date
        self.lifted = {normalize(name) for name in lifted}
        self.undated: set[str] = set()
        """Projects with a file kept for want of an upload time."""
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def page(self, name: str) -> tuple[int, bytes]:
        """The status and body this view answers for project `name`."""
        base = f"{self.upstream}{normalize(name)}/"
        request = urllib.request.Request(base, headers={"Accept": _JSON})
        try:
            with urllib.request.urlopen(request, timeout=_FETCH_TIMEOUT_SECONDS) as answer:
                kind = answer.headers.get("Content-Type", "")
                raw = answer.read()
                base = answer.geturl()
        except urllib.error.HTTPError as error:
            return error.code, b""
        except (OSError, ValueError):
            return 502, b""
        if _JSON not in kind:
            return 502, b""  # an index without upload times: nothing could be dated
        try:
            page = json.loads(raw)
        except ValueError:
            return 502, b""
        text, undated = dated_page(page, base=base, date=self.date, lifted=self.lifted)
        if undated:
            self.undated.add(normalize(name))
        return 200, text.encode()

    def __enter__(self) -> DatedIndex:
        view = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                parts = [part for part in self.path.split("?")[0].split("/") if part]
                status, body = (404, b"")
                if len(parts) == 2 and parts[0] == "simple":
                    status, body = view.page(parts[1])
                if status != 200:
                    self.send_error(status)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
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
