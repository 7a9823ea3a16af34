"""Agent adapters: how each coding agent is started headlessly and how its logs are read."""

from bugbout_tui.agents.base import (
    STDERR_LOG,
    STDOUT_LOG,
    CodingAgent,
    Invocation,
    RunReport,
    Session,
    Usage,
)
from bugbout_tui.agents.claude_code import ClaudeCodeAgent
from bugbout_tui.agents.codex import CodexAgent
from bugbout_tui.agents.command import CommandAgent
from bugbout_tui.agents.gemini_cli import GeminiCliAgent
from bugbout_tui.agents.mini_swe_agent import MiniSweAgent
from bugbout_tui.agents.registry import (
    BUILTIN_AGENTS,
    ENTRY_POINT_GROUP,
    agent_from_config,
    available_agents,
)

__all__ = [
    "BUILTIN_AGENTS",
    "ENTRY_POINT_GROUP",
    "STDERR_LOG",
    "STDOUT_LOG",
    "ClaudeCodeAgent",
    "CodexAgent",
    "CodingAgent",
    "CommandAgent",
    "GeminiCliAgent",
    "Invocation",
    "MiniSweAgent",
    "RunReport",
    "Session",
    "Usage",
    "agent_from_config",
    "available_agents",
]
