"""A scripted model server for running the real agent CLIs in tests.

One module per wire format: the OpenAI Responses API (Codex CLI), Anthropic's Messages
API (Claude Code), OpenAI chat completions (mini-swe-agent through LiteLLM) and the
Gemini API (Gemini CLI). A script of turns (`script.py`) says what the model does; the
dialect turns each into that API's answer, streamed where the agent streams.
"""

from modelserver.anthropic_messages import AnthropicMessages
from modelserver.gemini_api import GeminiApi
from modelserver.openai_chat import OpenAIChat
from modelserver.openai_responses import OpenAIResponses
from modelserver.script import Edit, Finish, Limit, Read, Shell, Turn, Usage, Write
from modelserver.server import Dialect, HitRecorder, ModelServer, Request

__all__ = [
    "AnthropicMessages",
    "Dialect",
    "Edit",
    "Finish",
    "GeminiApi",
    "HitRecorder",
    "Limit",
    "ModelServer",
    "OpenAIChat",
    "OpenAIResponses",
    "Read",
    "Request",
    "Shell",
    "Turn",
    "Usage",
    "Write",
]
