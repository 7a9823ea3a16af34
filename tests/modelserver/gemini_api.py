"""Google's Gemini API, streamed, as Gemini CLI speaks it (`GOOGLE_GEMINI_BASE_URL`).

Model calls are `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with tools;
each answer is one server-sent `GenerateContentResponse` (no event names) holding a
function call of `read_file`, `run_shell_command`, `replace` or `write_file` (absolute
paths), or the closing text with `finishReason: STOP`, and its `usageMetadata`. Calls
without tools (the CLI's own checks, such as whether the model or the user speaks next)
and token counting are side requests.
"""

from __future__ import annotations

import re
from typing import Any

from modelserver.script import Edit, Finish, Limit, Read, Shell, Turn, Usage, Write
from modelserver.server import Dialect, Reply, Request, Workdir

_CWD = re.compile(r"Workspace Directories:\**\s*\n\s*-\s*(/[^\s\"\\]+)")

QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
)


class GeminiApi(Dialect):
    """Gemini CLI's dialect; `model` is echoed as the model version of every answer."""

    def __init__(self, model: str = "gemini-2.5-pro") -> None:
        self.model = model

    def is_model_call(self, request: Request) -> bool:
        if request.method != "POST" or not request.path.endswith(":streamGenerateContent"):
            return False
        body = request.json
        return isinstance(body, dict) and bool(body.get("tools"))

    def workdir(self, request: Request) -> str | None:
        found = _CWD.search(_texts(request.json))
        return found.group(1) if found else None

    def answer(self, turn: Turn, step: int, request: Request, reply: Reply, at: Workdir) -> None:
        if isinstance(turn, Limit):
            reply.json(429, _quota_error(self.model))
            return
        if isinstance(turn, Finish):
            part: dict[str, Any] = {"text": turn.message}
        else:
            name, args = _call(turn, at)
            part = {"functionCall": {"name": name, "args": args}}
        reply.sse([(None, _response(self.model, f"resp-{step}", part, turn.usage))])

    def side(self, request: Request, reply: Reply) -> None:
        if request.path.endswith(":countTokens"):
            reply.json(200, {"totalTokens": max(1, len(request.body) // 4)})
            return
        if request.method == "POST" and ":" in request.path:
            # The CLI's own questions ask for JSON; "the user speaks next" ends a turn.
            part = {"text": '{"reasoning": "The task is done.", "next_speaker": "user"}'}
            answer = _response(self.model, "resp-side", part, Usage())
            if request.path.endswith(":streamGenerateContent"):
                reply.sse([(None, answer)])
            else:
                reply.json(200, answer)
            return
        if request.method == "GET" and request.path.endswith("/models"):
            reply.json(200, {"models": [{"name": f"models/{self.model}"}]})
            return
        reply.json(404, {"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}})


def _call(turn: Turn, at: Workdir) -> tuple[str, dict[str, Any]]:
    if isinstance(turn, Read):
        return "read_file", {"file_path": at.resolve(turn.path)}
    if isinstance(turn, Shell):
        return "run_shell_command", {"command": turn.command, "description": "Run a command"}
    if isinstance(turn, Edit):
        return "replace", {
            "file_path": at.resolve(turn.path),
            "instruction": "Fix the bug.",
            "old_string": turn.old,
            "new_string": turn.new,
        }
    assert isinstance(turn, Write)
    return "write_file", {"file_path": at.resolve(turn.path), "content": turn.content}


def _response(model: str, response_id: str, part: dict[str, Any], usage: Usage) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [part]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": usage.input,
            "candidatesTokenCount": usage.output,
            "cachedContentTokenCount": usage.cached,
            "totalTokenCount": usage.input + usage.output,
        },
        "modelVersion": model,
        "responseId": response_id,
    }


def _quota_error(model: str) -> dict[str, Any]:
    """The free tier's daily request quota, which Gemini CLI treats as final."""
    return {
        "error": {
            "code": 429,
            "message": QUOTA_MESSAGE,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": model},
                            "quotaValue": "100",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [
                        {
                            "description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                        }
                    ],
                },
            ],
        }
    }


def _texts(body: object) -> str:
    """Every text part of a request's contents, joined: where the CLI states its context."""
    if not isinstance(body, dict):
        return ""
    texts = [
        part["text"]
        for content in body.get("contents") or []
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts)
