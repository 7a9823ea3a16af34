"""Google's Gemini CLI, run as `gemini --prompt`.

Gemini CLI has no sandbox of its own that bugbout can rely on for every command, so the
whole process runs inside bugbout's: it keeps the network (it must reach the Gemini API)
but writes only in the checkout, the attempt's logs and its own fresh home. That home
(`HOME` and `GEMINI_CLI_HOME`) holds the user's OAuth credentials and the auth choice from
their settings, nothing else, plus settings and a policy file of bugbout's that take the
web tools away. Headless mode refuses tools in an untrusted folder, so the checkout is
trusted for the session with `--skip-trust`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bugbout_tui.agents.base import (
    STDERR_LOG,
    STDOUT_LOG,
    SUMMARY_CHARS,
    CodingAgent,
    Invocation,
    RunReport,
    Session,
    Usage,
    copy_credentials,
    isolated_environment,
    read_log,
    token_count,
    user_home,
)
from bugbout_tui.agents.quota import GEMINI_LIMIT, GEMINI_NOT_A_LIMIT, find_limit
from bugbout_tui.core.agent_facts import GEMINI_CLI
from bugbout_tui.infra.sandbox import Confinement

CREDENTIAL_VARIABLES = frozenset(
    {
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GEMINI_BASE_URL",
    }
)
"""What Gemini CLI reads to authenticate (API key, Vertex AI, Code Assist) and to find its API."""

CREDENTIAL_FILES = ("oauth_creds.json", "google_accounts.json", "gemini-credentials.json")
"""The sign-in files under `~/.gemini` (OAuth tokens, the account, the file-based keychain)."""

WEB_TOOLS = ("google_web_search", "web_fetch")

POLICY = "".join(
    f'[[rule]]\ntoolName = "{tool}"\ndecision = "deny"\npriority = 100\n\n' for tool in WEB_TOOLS
)
"""A policy-engine rule per web tool; a deny without arguments hides the tool from the model."""


_SUGGESTED_RETRY = re.compile(r"Suggested retry after \S+")
"""Gemini CLI puts a quota error's retry delay on a line of its own below the API's
message; the lane's reset time is read from it."""


class GeminiCliAgent(CodingAgent, facts=GEMINI_CLI):
    """Gemini CLI in headless JSON mode, auto-approving its tools, confined by bugbout."""

    def invocation(self, session: Session) -> Invocation:
        gemini_dir = session.home / ".gemini"
        gemini_dir.mkdir(parents=True, exist_ok=True)
        source = (
            Path(
                session.base_env.get("GEMINI_CLI_HOME") or user_home(session.base_env)
            ).expanduser()
            / ".gemini"
        )
        copy_credentials(source, gemini_dir, CREDENTIAL_FILES)
        settings = _settings(source / "settings.json", session.base_env)
        (gemini_dir / "settings.json").write_text(
            json.dumps(settings, indent=2) + "\n", encoding="utf-8"
        )
        policy = session.home / "bugbout-no-web.toml"
        policy.write_text(POLICY, encoding="utf-8")

        env = isolated_environment(session.base_env, keep=CREDENTIAL_VARIABLES, home=session.home)
        env["GEMINI_CLI_HOME"] = str(session.home)

        argv = [
            self.command(),
            # The `=` form keeps a prompt that starts with a dash from reading as an option.
            f"--prompt={session.prompt}",
            "--output-format",
            "json",
            "--approval-mode",
            "yolo",
            "--skip-trust",
            "--policy",
            str(policy),
        ]
        if self.model:
            argv += ["--model", self.model]
        confinement = Confinement(
            writable=(session.workdir, session.logdir, session.home), network=True, env=env
        )
        return Invocation(argv=argv, env=env, confinement=confinement)

    def parse(self, logdir: Path, exit_code: int | None) -> RunReport:
        """Summary `.response`, tokens summed over `.stats.models`; limits only on failure."""
        stdout = read_log(logdir, STDOUT_LOG)
        stderr = read_log(logdir, STDERR_LOG)
        output = _last_object(stdout) or {}
        error = _error_message(_last_object(stderr)) or _error_message(output)
        response = output.get("response")
        summary = response.strip() if isinstance(response, str) and response.strip() else error
        quota = None
        if exit_code not in (0, None):
            # The error object is how the run ended; the retries logged before it
            # ("Attempt 1 failed: … exhausted your capacity") say nothing about that.
            texts = [error] if error is not None else [stderr[-SUMMARY_CHARS:]]
            quota = find_limit(texts, GEMINI_LIMIT, unless=GEMINI_NOT_A_LIMIT)
            suggested = _SUGGESTED_RETRY.search(error or "")
            if quota is not None and suggested is not None and suggested[0] not in quota:
                quota = f"{quota} {suggested[0]}"
        return RunReport(summary=summary, usage=_usage(output.get("stats")), quota_message=quota)


def _settings(user_settings: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """bugbout's settings, plus the one part of the user's that sign-in needs: `security.auth`.

    Given a custom API address and no sign-in choice, Gemini CLI 0.61 picks its "gateway"
    sign-in, which headless mode refuses ("Invalid auth method selected."); with an API
    key at hand, the API-key sign-in is chosen instead, as without the address.
    """
    settings: dict[str, Any] = {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "tools": {"exclude": list(WEB_TOOLS)},
    }
    auth = _user_auth(user_settings)
    if auth is None and env.get("GOOGLE_GEMINI_BASE_URL") and env.get("GEMINI_API_KEY"):
        auth = {"selectedType": "gemini-api-key"}
    if auth is not None:
        settings["security"] = {"auth": auth}
    return settings


def _user_auth(user_settings: Path) -> dict[str, Any] | None:
    try:
        mine = json.loads(user_settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(mine, dict):
        return None
    security = mine.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    if not isinstance(auth, dict) and isinstance(mine.get("selectedAuthType"), str):
        auth = {"selectedType": mine["selectedAuthType"]}  # the flat settings of Gemini CLI 0.1
    return auth if isinstance(auth, dict) else None


def _last_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in `text` that starts a line; the CLI pretty-prints it over many."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            try:
                value, _ = decoder.raw_decode(text, offset)
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                found = value
        offset += len(line)
    return found


def _error_message(output: dict[str, Any] | None) -> str | None:
    error = output.get("error") if output else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"]).strip() or None
    return None


def _usage(stats: object) -> Usage:
    """Per-model tokens added up: input is `prompt`, output `candidates` plus `thoughts`."""
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict) or not models:
        return Usage()
    prompt = output = cached = 0
    seen = False
    for model in models.values():
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if not isinstance(tokens, dict):
            continue
        seen = True
        prompt += token_count(tokens.get("prompt")) or 0
        output += (token_count(tokens.get("candidates")) or 0) + (
            token_count(tokens.get("thoughts")) or 0
        )
        cached += token_count(tokens.get("cached")) or 0
    if not seen:
        return Usage()
    return Usage(input_tokens=prompt, output_tokens=output, cached_tokens=cached)
