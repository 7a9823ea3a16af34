"""A scripted model API on 127.0.0.1, in a thread, logging every request it gets.

The server knows nothing of any one API: a `Dialect` says which requests are the agent's
model calls (each answered with the next turn of the script) and how to answer those and
everything else an agent asks on the side (token counts, model lists, titles). Replies
are plain JSON or server-sent events written by hand, as the real APIs stream them.

    with ModelServer(AnthropicMessages(), [Read("calc.py"), Finish("Done.")]) as server:
        ...  # point the agent at server.url
    assert server.problems == []
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import PurePosixPath
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from modelserver.script import Finish, Limit, Turn, Usage


@dataclass
class Request:
    """One request as the agent sent it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    model_call: bool = False
    """Whether the dialect took it for a model call (answered from the script)."""
    turn: Turn | None = None
    """The turn it was answered with, for model calls."""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Reply:
    """Writes one response; a dialect calls exactly one of its methods."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._handler = handler

    def json(self, status: int, payload: object, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self._head(
            status, "application/json", {"Content-Length": str(len(data)), **(headers or {})}
        )
        self._handler.wfile.write(data)

    def sse(self, events: Iterable[tuple[str | None, object]]) -> None:
        """Server-sent events, `(event name or None, data)` each, then the connection closes."""
        self._head(200, "text/event-stream", {"Cache-Control": "no-cache", "Connection": "close"})
        self._handler.close_connection = True
        for name, data in events:
            chunk = "" if name is None else f"event: {name}\n"
            chunk += f"data: {json.dumps(data)}\n\n"
            self._handler.wfile.write(chunk.encode())
            self._handler.wfile.flush()

    def _head(self, status: int, content_type: str, headers: Mapping[str, str]) -> None:
        self._handler.send_response(status)
        self._handler.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self._handler.send_header(name, value)
        self._handler.end_headers()


class Dialect(ABC):
    """One provider's wire format."""

    @abstractmethod
    def is_model_call(self, request: Request) -> bool:
        """Whether `request` asks the model for the agent's next step."""

    @abstractmethod
    def workdir(self, request: Request) -> str | None:
        """The working directory the agent announces in a model call, if it does."""

    @abstractmethod
    def answer(self, turn: Turn, step: int, request: Request, reply: Reply, at: Workdir) -> None:
        """Answer model call number `step` (from 1) with `turn`."""

    @abstractmethod
    def side(self, request: Request, reply: Reply) -> None:
        """Answer anything that is not a model call."""


@dataclass
class Workdir:
    """The agent's working directory, once a model call has named it."""

    path: str | None = None

    def resolve(self, relative: str) -> str:
        if self.path is None:
            raise LookupError("the agent has not named its working directory yet")
        return str(PurePosixPath(self.path) / relative)


class _Loopback:
    """A threading HTTP server on a free loopback port, served from a daemon thread while
    the `with` block runs."""

    _httpd: ThreadingHTTPServer
    _thread: threading.Thread

    def _serve(self, httpd: ThreadingHTTPServer) -> None:
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@dataclass
class ModelServer(_Loopback):
    """Serves `turns` in `dialect`'s format; a usage limit, once reached, answers every
    later model call too, as a real one would until it resets."""

    dialect: Dialect
    turns: list[Turn]
    requests: list[Request] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Requests the script could not answer: a test expects none."""
    workdir: Workdir = field(default_factory=Workdir)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._step = 0
        self._serve(ThreadingHTTPServer(("127.0.0.1", 0), _handler(self)))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def model_calls(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.model_call]

    @property
    def usage(self) -> Usage:
        """The usage of every answer given to a model call, added up."""
        total = Usage()
        for request in self.model_calls:
            if request.turn is not None and not isinstance(request.turn, Limit):
                total += request.turn.usage
        return total

    @property
    def finished(self) -> bool:
        """Whether the closing turn was given."""
        return any(isinstance(r.turn, Finish) for r in self.model_calls)

    def handle(self, request: Request, reply: Reply) -> None:
        with self._lock:
            self.requests.append(request)
            request.model_call = self.dialect.is_model_call(request)
            turn: Turn | None = None
            if request.model_call:
                if self.workdir.path is None:
                    self.workdir.path = self.dialect.workdir(request)
                limited = [t for t in self.turns[: self._step] if isinstance(t, Limit)]
                if limited:
                    turn = limited[0]
                elif self._step < len(self.turns):
                    turn = self.turns[self._step]
                    self._step += 1
                request.turn = turn
            step = self._step
        if not request.model_call:
            self.dialect.side(request, reply)
            return
        if turn is None:
            self._refuse(reply, f"model call {len(self.model_calls)} after the script ended")
            return
        try:
            self.dialect.answer(turn, step, request, reply, self.workdir)
        except LookupError as error:
            self._refuse(reply, f"cannot answer {turn!r}: {error}")

    def _refuse(self, reply: Reply, problem: str) -> None:
        with self._lock:
            self.problems.append(problem)
        reply.json(400, {"error": {"type": "invalid_request_error", "message": problem}})


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            url = urlsplit(self.path)
            request = Request(
                method=self.command,
                path=url.path,
                query=parse_qs(url.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            server.handle(request, Reply(self))

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class HitRecorder(_Loopback):
    """A server that only notes what reached it: the target of escape attempts.

    `connections` counts every TCP connection, so a probe that connects and says nothing
    still counts; `hits` are the paths of HTTP requests.
    """

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.connections = 0
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.hits.append(self.path)
                data = b"ESCAPED\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def verify_request(self, request: Any, client_address: Any) -> bool:
                recorder.connections += 1
                return True

        self._serve(Server(("127.0.0.1", 0), Handler))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/escape"
