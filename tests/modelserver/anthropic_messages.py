"""Anthropic's Messages API, streamed, as Claude Code speaks it (`POST /v1/messages`).

Claude Code reads with `Read`, edits with `Edit` (which refuses a file it has not read in
the session), creates files with `Write` and runs commands with `Bash`; all of them take
absolute paths. A stream is `message_start` (with the prompt's usage), one
`content_block_start`/`_delta`/`_stop` group per block, `message_delta` (stop reason and
output tokens) and `message_stop`. Calls without tools (a title, a topic check) and token
counting are side requests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from modelserver.script import Edit, Finish, Limit, Read, Shell, Turn, Usage, Write
from modelserver.server import Dialect, Reply, Request, Workdir

_CWD = re.compile(r"(?:Primary working directory|Working directory):\s*(/[^\s\"\\]+)")

RATE_LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later."


class AnthropicMessages(Dialect):
    """Claude Code's dialect. `model` is echoed back in every message."""

    def __init__(self, model: str = "claude-sonnet-4-5") -> None:
        self.model = model

    def is_model_call(self, request: Request) -> bool:
        if request.method != "POST" or not request.path.endswith("/v1/messages"):
            return False
        body = request.json
        return isinstance(body, dict) and bool(body.get("tools"))

    def workdir(self, request: Request) -> str | None:
        found = _CWD.search(request.text)
        return found.group(1) if found else None

    def answer(self, turn: Turn, step: int, request: Request, reply: Reply, at: Workdir) -> None:
        if isinstance(turn, Limit):
            reply.json(
                429,
                {
                    "type": "error",
                    "error": {"type": "rate_limit_error", "message": RATE_LIMIT_MESSAGE},
                },
                headers={"retry-after": "3600"},
            )
            return
        if isinstance(turn, Finish):
            block: dict[str, Any] = {"type": "text", "text": turn.message}
            stop = "end_turn"
        else:
            name, tool_input = _tool(turn, at)
            block = {
                "type": "tool_use",
                "id": f"toolu_{step:02d}",
                "name": name,
                "input": tool_input,
            }
            stop = "tool_use"
        reply.sse(_stream(f"msg_{step:02d}", self.model, block, stop, turn.usage))

    def side(self, request: Request, reply: Reply) -> None:
        if request.path.endswith("/count_tokens"):
            reply.json(200, {"input_tokens": max(1, len(request.body) // 4)})
            return
        if request.method == "POST" and request.path.endswith("/v1/messages"):
            body = request.json if isinstance(request.json, dict) else {}
            block = {"type": "text", "text": "Fixing a bug"}
            if body.get("stream"):
                reply.sse(_stream("msg_side", self.model, block, "end_turn", Usage()))
            else:
                reply.json(200, _message("msg_side", self.model, [block], "end_turn", Usage()))
            return
        reply.json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})


def _tool(turn: Turn, at: Workdir) -> tuple[str, dict[str, Any]]:
    if isinstance(turn, Read):
        return "Read", {"file_path": at.resolve(turn.path)}
    if isinstance(turn, Shell):
        return "Bash", {"command": turn.command, "description": "Run a command"}
    if isinstance(turn, Edit):
        return "Edit", {
            "file_path": at.resolve(turn.path),
            "old_string": turn.old,
            "new_string": turn.new,
        }
    assert isinstance(turn, Write)
    return "Write", {"file_path": at.resolve(turn.path), "content": turn.content}


def _wire_usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input - usage.cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cached,
        "output_tokens": usage.output,
    }


def _message(
    message_id: str, model: str, content: list[dict[str, Any]], stop: str | None, usage: Usage
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _wire_usage(usage),
    }


def _stream(
    message_id: str, model: str, block: dict[str, Any], stop: str, usage: Usage
) -> list[tuple[str | None, object]]:
    start = _message(message_id, model, [], None, usage)
    start["usage"]["output_tokens"] = 1
    if block["type"] == "text":
        opened: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
    else:
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": opened},
        ),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage.output},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
