"""OpenAI's Codex CLI, run as `codex exec`.

Codex confines the shell commands it runs in its own `workspace-write` sandbox (writes
only in the checkout, no network), so bugbout leaves the Codex process itself unconfined.
Personal set-up stays out through three layers: a fresh `CODEX_HOME` holding only a copy
of `auth.json`, `--ignore-user-config` and `--ignore-rules` (in case a config arrives
another way), and features that reach beyond the checkout switched off by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

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
from bugbout_tui.agents.quota import CODEX_LIMIT, find_limit

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
"""Codex sends the effort to the model unchecked, so a typo would only fail mid-run."""

LOCAL_PROVIDERS = ("ollama", "lmstudio")

CREDENTIAL_VARIABLES = frozenset(
    {"CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_OSS_BASE_URL", "CODEX_OSS_PORT"}
)
"""What Codex reads to authenticate and to find its model server."""

DISABLED_FEATURES = (
    "apps",
    "plugins",
    "remote_plugin",
    "hooks",
    "browser_use",
    "browser_use_external",
    "in_app_browser",
    "computer_use",
    "image_generation",
)
"""Feature flags (codex 0.171) that reach past the checkout or load a user's add-ons.
Codex ignores names it does not know, with a warning, so older versions still start."""


class CodexAgent(CodingAgent):
    """Codex CLI in `exec` mode, JSON events on standard output, the prompt on standard input."""

    harness = "codex"
    executable = "codex"
    install_hint = "Install it with `npm install -g @openai/codex` (or `brew install codex`)."
    options: ClassVar[frozenset[str]] = frozenset({"reasoning-effort", "local-provider"})
    tested_version = "0.171.0"
    default_vendor = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        name: str | None = None,
        vendor: str | None = None,
        quota: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(model, name=name, vendor=vendor, quota=quota, options=options)
        self.reasoning_effort = choice_option(self, "reasoning-effort", REASONING_EFFORTS)
        self.local_provider = choice_option(self, "local-provider", LOCAL_PROVIDERS)

    def invocation(self, session: Session) -> Invocation:
        codex_home = session.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        source = session.base_env.get("CODEX_HOME") or str(user_home(session.base_env) / ".codex")
        copy_credentials(Path(source).expanduser(), codex_home, ["auth.json"])

        env = isolated_environment(session.base_env, keep=CREDENTIAL_VARIABLES, home=session.home)
        env["CODEX_HOME"] = str(codex_home)

        argv = [
            self.command(),
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "--ignore-rules",
            "-C",
            str(session.workdir),
            "-s",
            "workspace-write",
            "-c",
            "sandbox_workspace_write.network_access=false",
            "-c",
            'web_search="disabled"',
        ]
        for feature in DISABLED_FEATURES:
            argv += ["-c", f"features.{feature}=false"]
        if self.model:
            argv += ["-m", self.model]
        if self.reasoning_effort:
            argv += ["-c", f"model_reasoning_effort={json.dumps(self.reasoning_effort)}"]
        if self.local_provider:
            argv += ["--oss", "--local-provider", self.local_provider]
        # "-" reads the prompt from standard input: no argument-length limit, and a prompt
        # that starts with a dash cannot be mistaken for an option.
        argv.append("-")
        return Invocation(argv=argv, stdin=session.prompt, env=env)

    def parse(self, logdir: Path, exit_code: int | None) -> RunReport:
        """Summary: the last agent message. Usage: the last `turn.completed` (it is cumulative)."""
        summary: str | None = None
        failure: str | None = None
        usage = Usage()
        errors: list[str] = []
        for event in json_lines(read_log(logdir, STDOUT_LOG)):
            kind = event.get("type")
            if kind == "item.completed":
                item = event.get("item")
                if isinstance(item, dict) and item.get("type") == "agent_message":
                    text = item.get("text")
                    if isinstance(text, str) and text.strip():
                        summary = text.strip()
            elif kind == "turn.completed":
                usage = _usage(event.get("usage"))
            elif kind == "turn.failed":
                error = event.get("error")
                message = error.get("message") if isinstance(error, dict) else None
                if isinstance(message, str):
                    failure = message
                    errors.append(message)
            elif kind == "error" and isinstance(event.get("message"), str):
                errors.append(event["message"])
        return RunReport(
            summary=summary or failure,
            usage=usage,
            quota_message=find_limit(errors, CODEX_LIMIT),
        )


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=token_count(raw.get("input_tokens")),
        output_tokens=token_count(raw.get("output_tokens")),
        cached_tokens=token_count(raw.get("cached_input_tokens")),
    )
