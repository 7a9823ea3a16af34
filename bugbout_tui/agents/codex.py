"""OpenAI's Codex CLI, run as `codex exec`.

Codex confines the shell commands it runs in its own `workspace-write` sandbox (writes
only in the checkout, no network), so bugbout leaves the Codex process itself unconfined.
Personal set-up stays out through three layers: a fresh `CODEX_HOME` holding only a copy
of `auth.json`, `--ignore-user-config` and `--ignore-rules` (in case a config arrives
another way), and features that reach beyond the checkout switched off by name.

Codex runs its sandbox helper through links it creates in `CODEX_HOME`, and refuses to
create them when `CODEX_HOME` lies inside the temp directory (checked against codex-cli
0.171: every command and every edit then fails). `TMPDIR` therefore points into the
attempt's home, wherever that home lies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

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
from bugbout_tui.core.agent_facts import CODEX
from bugbout_tui.core.errors import UsageError

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
"""Codex sends the effort to the model unchecked, so a typo would only fail mid-run."""

LOCAL_PROVIDERS = ("ollama", "lmstudio")

PROVIDER = "bugbout"
"""The id of the model provider that the `base-url` option defines."""

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


class CodexAgent(CodingAgent, facts=CODEX):
    """Codex CLI in `exec` mode, JSON events on standard output, the prompt on standard input."""

    def read_options(self) -> None:
        self.reasoning_effort = choice_option(self, "reasoning-effort", REASONING_EFFORTS)
        self.local_provider = choice_option(self, "local-provider", LOCAL_PROVIDERS)
        self.base_url = self.settings.get("base-url")
        if self.base_url is not None and (
            not isinstance(self.base_url, str)
            or not self.base_url.startswith(("http://", "https://"))
        ):
            raise UsageError(
                f"The codex option 'base-url' must be an http:// or https:// URL, "
                f"not {self.base_url!r}.",
                hint='For example: base-url = "http://localhost:8000/v1"',
            )
        if self.base_url is not None and self.local_provider is not None:
            raise UsageError(
                "The codex options 'base-url' and 'local-provider' cannot be used together.",
                hint="Keep 'local-provider' for Ollama or LM Studio on their usual ports, "
                "or 'base-url' for any other server.",
            )

    def invocation(self, session: Session) -> Invocation:
        codex_home = session.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        source = session.base_env.get("CODEX_HOME") or str(user_home(session.base_env) / ".codex")
        copy_credentials(Path(source).expanduser(), codex_home, ["auth.json"])

        temp = session.home / "tmp"
        temp.mkdir(exist_ok=True)

        env = isolated_environment(session.base_env, keep=CREDENTIAL_VARIABLES, home=session.home)
        env["CODEX_HOME"] = str(codex_home)
        env["TMPDIR"] = str(temp)

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
        if self.base_url:
            argv += ["-c", f"model_provider={json.dumps(PROVIDER)}"]
            argv += ["-c", f"model_providers.{PROVIDER}={_provider(self.base_url, env)}"]
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


def _provider(base_url: str, env: Mapping[str, str]) -> str:
    """A Responses API provider at `base_url`, as a TOML inline table; it sends
    `OPENAI_API_KEY` as its key when there is one (a local server may want none)."""
    fields = {"name": PROVIDER, "base_url": base_url, "wire_api": "responses"}
    if env.get("OPENAI_API_KEY"):
        fields["env_key"] = "OPENAI_API_KEY"
    return "{" + ", ".join(f"{key} = {json.dumps(value)}" for key, value in fields.items()) + "}"


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=token_count(raw.get("input_tokens")),
        output_tokens=token_count(raw.get("output_tokens")),
        cached_tokens=token_count(raw.get("cached_input_tokens")),
    )
