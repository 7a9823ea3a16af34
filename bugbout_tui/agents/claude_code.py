"""Anthropic's Claude Code, run as `claude --print`.

Claude Code runs its Bash tool in its own sandbox (bubblewrap and socat on Linux,
seatbelt on macOS), configured here through `--settings`: sandbox on and required, no
network for commands, no way to run a command outside it, and sandboxed commands allowed
without asking, the project's test command included. Edits are accepted only inside the
checkout (`acceptEdits`); anything else that would need a person's approval is refused,
because nobody is there to give it.
Safe mode and an empty list of setting sources leave out CLAUDE.md, skills, plugins,
hooks, MCP servers and every settings file, and `CLAUDE_CONFIG_DIR` points at a fresh
directory holding only a copy of the user's credentials.

Output is `stream-json`: the same closing `result` object as `json`, but preceded by one
line per message, so a run that is killed still leaves its last words in the log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bugbout_tui.agents.base import (
    STDOUT_LOG,
    CodingAgent,
    Invocation,
    RunReport,
    Session,
    Usage,
    choice_option,
    copy_credentials,
    isolated_environment,
    json_lines,
    read_log,
    token_count,
    user_home,
)
from bugbout_tui.agents.quota import CLAUDE_LIMIT
from bugbout_tui.core.agent_facts import CLAUDE_CODE
from bugbout_tui.infra.sandbox import BubblewrapSandbox

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""Claude Code ignores an unknown effort with a warning; bugbout refuses it up front."""

CREDENTIAL_VARIABLES = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"}
)
"""What Claude Code reads to authenticate and to find its API."""

SETTINGS: dict[str, Any] = {
    "sandbox": {
        "enabled": True,
        "failIfUnavailable": True,
        "autoAllowBashIfSandboxed": True,
        "allowUnsandboxedCommands": False,
        "network": {"allowedDomains": []},
    },
    "permissions": {"deny": ["WebFetch", "WebSearch"]},
}
"""Settings that take precedence over project settings; checked against Claude Code 2.1.197,
which refuses to start (rather than run unconfined) when its sandbox cannot work."""

WEB_TOOLS = "WebFetch,WebSearch"


class ClaudeCodeAgent(CodingAgent, facts=CLAUDE_CODE):
    """Claude Code in print mode, the prompt on standard input."""

    def read_options(self) -> None:
        self.effort = choice_option(self, "effort", EFFORTS)

    def invocation(self, session: Session) -> Invocation:
        config_dir = session.home / ".claude"
        config_dir.mkdir(parents=True, exist_ok=True)
        source = session.base_env.get("CLAUDE_CONFIG_DIR") or str(
            user_home(session.base_env) / ".claude"
        )
        copy_credentials(Path(source).expanduser(), config_dir, [".credentials.json"])

        env = isolated_environment(session.base_env, keep=CREDENTIAL_VARIABLES, home=session.home)
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        # An update in the middle of a bout would race two versions against each other.
        env["DISABLE_AUTOUPDATER"] = "1"

        argv = [
            self.command(),
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--safe-mode",
            "--setting-sources",
            "",
            "--strict-mcp-config",
            "--permission-mode",
            "acceptEdits",
            "--settings",
            json.dumps(settings_for(session), separators=(",", ":")),
            "--disallowedTools",
            WEB_TOOLS,
            "--no-session-persistence",
        ]
        if self.model:
            argv += ["--model", self.model]
        if self.effort:
            argv += ["--effort", self.effort]
        return Invocation(argv=argv, stdin=session.prompt, env=env)

    def parse(self, logdir: Path, exit_code: int | None) -> RunReport:
        """Summary, usage and cost from the `result` line; the last message when there is none.

        A usage limit arrives as `is_error` with status 429 or a limit text, even when
        `subtype` says "success".
        """
        result: dict[str, Any] | None = None
        last_text: str | None = None
        limited_text: str | None = None
        for message in json_lines(read_log(logdir, STDOUT_LOG)):
            kind = message.get("type")
            if kind == "result":
                result = message
            elif kind == "assistant":
                text = _text(message.get("message"))
                if text:
                    last_text = text
                    if message.get("error") == "rate_limit":
                        limited_text = text
        if result is None:
            return RunReport(summary=last_text, usage=Usage(), quota_message=limited_text)

        summary = result.get("result")
        if not isinstance(summary, str) or not summary.strip():
            errors = result.get("errors")
            summary = (
                "\n".join(map(str, errors)) if isinstance(errors, list) and errors else last_text
            )
        quota = None
        limited = result.get("api_error_status") == 429 or bool(
            isinstance(summary, str) and CLAUDE_LIMIT.search(summary)
        )
        if result.get("is_error") is True and isinstance(summary, str) and limited:
            quota = summary.strip()
        cost = result.get("total_cost_usd")
        return RunReport(
            summary=summary.strip() if isinstance(summary, str) else None,
            usage=_usage(result.get("usage"), cost),
            quota_message=quota,
        )


def settings_for(session: Session) -> dict[str, Any]:
    """`SETTINGS`, fitted to the attempt: its test command allowed, and the sandbox nested.

    Claude Code asks before running a command that sets `PYTHONPATH`, as the project's
    test command does, and nobody is there to answer (checked with 2.1.197); an allow
    rule for that command, with any arguments after `-m pytest`, lets it run.

    Claude Code's bubblewrap mounts a fresh `/proc` for each command. Inside bugbout's
    bubblewrap only an unprivileged user may do that; as root every command would fail.
    The weaker nested mode binds the `/proc` it finds instead: bugbout's, which shows
    only this attempt's processes (the agent's among them).
    """
    head, marker, _ = session.test_command.partition(" -m pytest")
    permissions = {**SETTINGS["permissions"], "allow": [f"Bash({head}{marker}:*)"]}
    sandbox = dict(SETTINGS["sandbox"])
    if isinstance(session.sandbox, BubblewrapSandbox) and os.geteuid() == 0:
        sandbox["enableWeakerNestedSandbox"] = True
    return {**SETTINGS, "sandbox": sandbox, "permissions": permissions}


def _text(message: object) -> str | None:
    """The text blocks of one assistant message, joined."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return None
    parts = [
        block["text"]
        for block in message["content"]
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    text = "\n".join(parts).strip()
    return text or None


def _usage(raw: object, cost: object) -> Usage:
    cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if not isinstance(raw, dict):
        return Usage(cost_usd=cost_usd)
    fresh = token_count(raw.get("input_tokens"))
    written = token_count(raw.get("cache_creation_input_tokens")) or 0
    read = token_count(raw.get("cache_read_input_tokens"))
    # The API counts cache reads and writes apart from `input_tokens`; bugbout's input is
    # every prompt token, as the other agents report it.
    total = None if fresh is None else fresh + written + (read or 0)
    return Usage(
        input_tokens=total,
        output_tokens=token_count(raw.get("output_tokens")),
        cached_tokens=read,
        cost_usd=cost_usd,
    )
