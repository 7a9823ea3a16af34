"""OpenAI's chat completions, as mini-swe-agent calls them through LiteLLM.

mini-swe-agent has one tool, `bash`, so reading, editing and writing are shell commands
here, and finishing is the command that prints mini-swe-agent's end marker, with the
closing message as the text of that last answer. LiteLLM does not stream these calls.
"""

from __future__ import annotations

import json

from modelserver.script import Edit, Finish, Limit, Read, Shell, Turn, Usage, Write
from modelserver.server import Dialect, Reply, Request, Workdir

FINISHED = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

QUOTA_ERROR = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing "
        "details. For more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}


class OpenAIChat(Dialect):
    """mini-swe-agent's dialect (tool calls, not text actions)."""

    def __init__(self, model: str = "scripted-model") -> None:
        self.model = model

    def is_model_call(self, request: Request) -> bool:
        return request.method == "POST" and request.path.endswith("/chat/completions")

    def workdir(self, request: Request) -> str | None:
        return None  # commands run in the checkout: relative paths suffice

    def answer(self, turn: Turn, step: int, request: Request, reply: Reply, at: Workdir) -> None:
        if isinstance(turn, Limit):
            reply.json(429, QUOTA_ERROR)
            return
        content = turn.message if isinstance(turn, Finish) else f"Step {step}."
        call = {
            "id": f"call_{step}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command(turn)})},
        }
        reply.json(
            200,
            {
                "id": f"chatcmpl-{step}",
                "object": "chat.completion",
                "created": 1767139200,
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "content": content, "tool_calls": [call]},
                    }
                ],
                "usage": _usage(turn.usage),
            },
        )

    def side(self, request: Request, reply: Reply) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            reply.json(200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
            return
        reply.json(404, {"error": {"message": f"no such endpoint: {request.path}"}})


def command(turn: Turn) -> str:
    """The shell command that does what `turn` asks."""
    if isinstance(turn, Read):
        return f"cat {turn.path}"
    if isinstance(turn, Shell):
        return turn.command
    if isinstance(turn, Edit):
        program = (
            "import pathlib\n"
            f"p = pathlib.Path({turn.path!r})\n"
            f"p.write_text(p.read_text().replace({turn.old!r}, {turn.new!r}, 1))\n"
        )
        return f"python3 - <<'EOF'\n{program}EOF"
    if isinstance(turn, Write):
        content = turn.content if turn.content.endswith("\n") else turn.content + "\n"
        return f"cat > {turn.path} <<'EOF'\n{content}EOF"
    return FINISHED


def _usage(usage: Usage) -> dict[str, object]:
    return {
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cached},
    }
