"""A fake of GitHub's REST API on a real loopback socket, for tests that read issues.

It serves configured issues and pull requests as `GET /repos/{owner}/{repo}/issues/{n}`
and `GET /rate_limit`, answers 404 for everything else, and can be told to rate-limit
or to reject tokens. Every request is recorded with its headers, so a test can assert
exactly what was asked and what was not.

Use the `github_server` fixture (a started `FakeGitHub`), and `github_env` to run
without the developer's own token or GitHub CLI login leaking into a test;
`closed_port` stands for a GitHub that cannot be reached. A test module gets them with
`pytest_plugins = ["github_server"]`, importing this module for types only (under
`TYPE_CHECKING`) so pytest can still rewrite its asserts.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _RateLimit:
    after: int
    status: int
    reset: int | None
    retry_after: int | None
    message: str


class FakeGitHub:
    """The fake API: configure it, point a client at `url`, then read `requests`."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        """A path prefix the API lives under, as GitHub Enterprise's `/api/v3`."""
        self.requests: list[RecordedRequest] = []
        self._issues: dict[tuple[str, int], dict[str, Any]] = {}
        self._replies: dict[str, Reply] = {}
        self._rate_limit: _RateLimit | None = None
        self._token: str | None = None
        self._served = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """The API base URL to give a client."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def add_issue(
        self,
        repo: str,
        number: int,
        title: str,
        body: str | None = None,
        *,
        pull: bool = False,
        state: str = "open",
        labels: tuple[str, ...] = ("bug",),
    ) -> dict[str, Any]:
        """Serve an issue (or, with `pull`, a pull request) shaped like GitHub's."""
        kind = "pull" if pull else "issues"
        issue: dict[str, Any] = {
            "url": f"{self.url}/repos/{repo}/issues/{number}",
            "html_url": f"https://github.com/{repo}/{kind}/{number}",
            "number": number,
            "title": title,
            "body": body,
            "state": state,
            "user": {"login": "someone"},
            "labels": [{"name": name, "color": "d73a4a"} for name in labels],
            "comments": 0,
        }
        if pull:
            issue["pull_request"] = {
                "url": f"{self.url}/repos/{repo}/pulls/{number}",
                "html_url": f"https://github.com/{repo}/pull/{number}",
                "merged_at": "2024-05-01T10:00:00Z",
            }
        with self._lock:
            self._issues[(repo.lower(), number)] = issue
        return issue

    def reply(
        self, path: str, status: int, body: Any, headers: dict[str, str] | None = None
    ) -> None:
        """Answer `path` (after the prefix) with exactly this, whatever is configured."""
        with self._lock:
            self._replies[path] = Reply(status, body, headers or {})

    def forget_reply(self, path: str) -> None:
        """Answer `path` as configured again, after a `reply` for it."""
        with self._lock:
            self._replies.pop(path, None)

    def rate_limit_after(
        self,
        served: int,
        *,
        reset: int | None = None,
        status: int = 403,
        retry_after: int | None = None,
        secondary: bool = False,
    ) -> None:
        """Answer normally `served` more issue requests, then refuse every request.

        The refusal is GitHub's primary limit (`X-RateLimit-Remaining: 0` and an epoch
        `X-RateLimit-Reset`), or with `secondary` its abuse limit, which says so in the
        message and usually sends `Retry-After` instead.
        """
        message = (
            "You have exceeded a secondary rate limit. Please wait a few minutes."
            if secondary
            else "API rate limit exceeded for 127.0.0.1."
        )
        with self._lock:
            self._rate_limit = _RateLimit(
                self._served + served, status, reset, retry_after, message
            )

    def require_token(self, token: str) -> None:
        """Reject, with 401 Bad credentials, every request without this bearer token."""
        with self._lock:
            self._token = token

    def issue_requests(self) -> list[str]:
        """The paths of the issue requests received, in order."""
        return [r.path for r in self.requests if "/issues/" in r.path]

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _answer(self, path: str, headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(RecordedRequest("GET", path, headers))
            route = path.split("?")[0]
            if not route.startswith(self.prefix):
                return Reply(404, {"message": "Not Found"})
            route = route[len(self.prefix) :]
            if route in self._replies:
                return self._replies[route]
            if self._token is not None and headers.get("authorization") != f"Bearer {self._token}":
                return Reply(
                    401,
                    {
                        "message": "Bad credentials",
                        "documentation_url": "https://docs.github.com/rest",
                    },
                )
            limit = self._rate_limit
            if route == "/rate_limit":
                remaining = 0 if limit is not None and self._served >= limit.after else 57
                core = {"limit": 60, "remaining": remaining, "reset": 1_900_000_000, "used": 3}
                return Reply(200, {"resources": {"core": core}, "rate": core})
            if limit is not None and self._served >= limit.after:
                extra: dict[str, str] = {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0"}
                if limit.reset is not None:
                    extra["X-RateLimit-Reset"] = str(limit.reset)
                if limit.retry_after is not None:
                    extra["Retry-After"] = str(limit.retry_after)
                return Reply(limit.status, {"message": limit.message}, extra)
            parts = route.strip("/").split("/")
            if len(parts) == 5 and parts[0] == "repos" and parts[3] == "issues":
                repo = f"{parts[1]}/{parts[2]}".lower()
                issue = self._issues.get((repo, int(parts[4]))) if parts[4].isdigit() else None
                self._served += 1
                if issue is not None:
                    return Reply(200, issue, {"X-RateLimit-Remaining": "42"})
            return Reply(404, {"message": "Not Found"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                reply = fake._answer(self.path, headers)
                raw = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: pytest shows the requests through `FakeGitHub.requests`."""

        return Handler


def install_fake_gh(directory: Path, *, token: str | None, log: Path | None = None) -> Path:
    """Write a `gh` whose `auth token` prints `token` (or fails when None); returns it.

    With `log`, each call appends its arguments there, so a test can check them.
    """
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "gh"
    record = f'echo "$@" >> "{log}"\n' if log is not None else ""
    answer = f'  echo "{token}"\n  exit 0\n' if token is not None else "  exit 1\n"
    script.write_text(
        f'#!/bin/sh\n{record}if [ "$1" = "auth" ] && [ "$2" = "token" ]; then\n{answer}fi\nexit 2\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


@pytest.fixture
def github_server() -> Iterator[FakeGitHub]:
    """A started fake GitHub API, stopped after the test."""
    with FakeGitHub() as server:
        yield server


@dataclass(frozen=True)
class GitHubEnv:
    """The environment `github_env` set up: a directory first on PATH holding `gh`."""

    bin_dir: Path

    def install_gh(self, *, token: str | None, log: Path | None = None) -> Path:
        """Replace the `gh` on PATH; see `install_fake_gh`."""
        return install_fake_gh(self.bin_dir, token=token, log=log)


@pytest.fixture
def github_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> GitHubEnv:
    """No `GITHUB_TOKEN`, no `GITHUB_API_URL`, and a `gh` that is not logged in.

    The developer's own token or GitHub CLI login must not decide a test's outcome.
    """
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    env = GitHubEnv(tmp_path / "github-env-bin")
    env.install_gh(token=None)
    monkeypatch.setenv("PATH", f"{env.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port bound but not listening: connecting is refused at once, deterministically,
    as to a GitHub that cannot be reached."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
