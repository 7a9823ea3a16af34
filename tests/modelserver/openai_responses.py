"""OpenAI's Responses API, streamed, as Codex CLI speaks it (`POST {base_url}/responses`).

Codex runs shell commands with its `exec_command` function tool and edits files with its
freeform `apply_patch` tool (offered to models it knows, such as `gpt-5.5`). A stream
is `response.created`, an `response.output_item.added`/`.done` pair per output item, and
`response.completed` carrying the usage; Codex ignores a stream without that last event.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

from modelserver.openai_chat import QUOTA_ERROR
from modelserver.script import Edit, Finish, Limit, Read, Shell, Turn, Usage, Write
from modelserver.server import Dialect, Reply, Request, Workdir

_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


class OpenAIResponses(Dialect):
    """Codex's dialect. `limit` picks the usage-limit shape: `usage_limit_reached` is what
    ChatGPT plans get, `insufficient_quota` what an API key out of credit gets."""

    def __init__(self, limit: str = "usage_limit_reached") -> None:
        self.limit = limit
        self._ids = itertools.count(1)

    def is_model_call(self, request: Request) -> bool:
        return request.method == "POST" and request.path.endswith("/responses")

    def workdir(self, request: Request) -> str | None:
        found = _CWD.search(request.text)
        return found.group(1) if found else None

    def answer(self, turn: Turn, step: int, request: Request, reply: Reply, at: Workdir) -> None:
        if isinstance(turn, Limit):
            self._limit(reply)
            return
        response_id = f"resp_{step}"
        items = [self._item(turn, step)]
        events: list[tuple[str | None, object]] = [
            _event("response.created", response={"id": response_id, "status": "in_progress"})
        ]
        for index, item in enumerate(items):
            events.append(_event("response.output_item.added", output_index=index, item=item))
            if item["type"] == "message":
                text = item["content"][0]["text"]
                events.append(
                    _event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=text,
                    )
                )
            events.append(_event("response.output_item.done", output_index=index, item=item))
        events.append(
            _event(
                "response.completed",
                response={
                    "id": response_id,
                    "status": "completed",
                    "output": items,
                    "usage": _usage(turn.usage),
                },
            )
        )
        reply.sse(events)

    def side(self, request: Request, reply: Reply) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            reply.json(200, {"object": "list", "data": [], "models": []})
            return
        reply.json(404, {"error": {"message": f"no such endpoint: {request.path}"}})

    def _item(self, turn: Turn, step: int) -> dict[str, Any]:
        call_id = f"call_{step}_{next(self._ids)}"
        if isinstance(turn, Finish):
            return {
                "type": "message",
                "id": f"msg_{step}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.message, "annotations": []}],
            }
        if isinstance(turn, Read | Shell):
            command = f"cat {turn.path}" if isinstance(turn, Read) else turn.command
            return {
                "type": "function_call",
                "id": f"fc_{step}",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": json.dumps({"cmd": command}),
                "status": "completed",
            }
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{step}",
            "call_id": call_id,
            "name": "apply_patch",
            "input": _patch(turn),
            "status": "completed",
        }

    def _limit(self, reply: Reply) -> None:
        if self.limit == "insufficient_quota":
            reply.json(429, QUOTA_ERROR)  # the same body on both of OpenAI's APIs
            return
        error = {
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": "plus",
            "resets_at": int(time.time()) + 3 * 3600,
            "resets_in_seconds": 3 * 3600,
        }
        reply.json(429, {"error": error})


def _patch(turn: Turn) -> str:
    """The `apply_patch` grammar: one hunk that adds a file or replaces lines in one."""
    if isinstance(turn, Write):
        added = "".join(f"+{line}\n" for line in turn.content.splitlines())
        return f"*** Begin Patch\n*** Add File: {turn.path}\n{added}*** End Patch\n"
    assert isinstance(turn, Edit)
    removed = "".join(f"-{line}\n" for line in turn.old.splitlines())
    added = "".join(f"+{line}\n" for line in turn.new.splitlines())
    return f"*** Begin Patch\n*** Update File: {turn.path}\n@@\n{removed}{added}*** End Patch\n"


def _event(kind: str, **fields: object) -> tuple[str, dict[str, object]]:
    return kind, {"type": kind, **fields}


def _usage(usage: Usage) -> dict[str, object]:
    return {
        "input_tokens": usage.input,
        "input_tokens_details": {"cached_tokens": usage.cached},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input + usage.output,
    }
