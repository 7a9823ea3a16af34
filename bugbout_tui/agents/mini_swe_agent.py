"""mini-swe-agent, the SWE-bench team's minimal agent, for racing models rather than products.

The `mini` process itself runs unconfined: it only talks to the model (through LiteLLM)
and writes its trajectory. Every shell command the model asks for runs through
`mini_env.SandboxedEnvironment`, inside bugbout's sandbox, with no network, writes only
in the checkout and a scratch directory that persists between commands (`$TMPDIR`; each
command's `/tmp` is its own), and an environment holding no credential at all.

The run is described by one configuration file written into the attempt's home, layered
on mini-swe-agent's own `mini.yaml` so its prompts stay as its authors tuned them. The
model's keys come from the user's environment, and only the keys of the model's provider
(`anthropic/…` gets `ANTHROPIC_*`), so a run never sees another vendor's credentials.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from bugbout_tui.agents.base import (
    CodingAgent,
    Invocation,
    RunReport,
    Session,
    Usage,
    isolated_environment,
    token_count,
)
from bugbout_tui.agents.quota import ANY_LIMIT, LITELLM_RATE_LIMITS
from bugbout_tui.core.agent_facts import MINI_SWE_AGENT, guess_vendor
from bugbout_tui.core.errors import ToolMissingError, UsageError
from bugbout_tui.infra.sandbox import Confinement, scrub_environment

TRAJECTORY = "trajectory.json"
"""mini-swe-agent's trajectory, written into the attempt's log directory after every step."""

DEFAULT_STEP_LIMIT = 75
COMMAND_TIMEOUT = 600
"""Seconds one shell command may take: long enough for a project's test suite."""

ENV_MODULE = "bugbout_mini_env"
"""The name under which `mini_env.py` is importable in the `mini` process."""
PLACEHOLDER = "\x00bugbout-command\x00"
"""Stands for the command in the sandboxed command line; no real argument can contain NUL."""

# LiteLLM provider prefixes whose variables do not start with the provider's own name.
_PROVIDER_VARIABLES: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_", "GOOGLE_API_KEY"),
    "vertex_ai": ("VERTEXAI_", "VERTEX_", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_"),
    "bedrock": ("AWS_",),
    "sagemaker": ("AWS_",),
    "azure": ("AZURE_",),
    "azure_ai": ("AZURE_",),
    "ollama_chat": ("OLLAMA_",),
    "together_ai": ("TOGETHERAI_", "TOGETHER_"),
    "fireworks_ai": ("FIREWORKS_",),
    "huggingface": ("HF_TOKEN", "HUGGINGFACE_"),
    "perplexity": ("PERPLEXITYAI_", "PERPLEXITY_"),
    "cohere": ("COHERE_", "CO_API_KEY"),
    "cohere_chat": ("COHERE_", "CO_API_KEY"),
}
# Without a provider prefix LiteLLM infers the provider from the model family.
_VENDOR_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "google": "gemini"}


class MiniSweAgent(CodingAgent, facts=MINI_SWE_AGENT):
    """`mini` in yolo mode on one task, commands confined by bugbout."""

    def read_options(self) -> None:
        if not self.model:
            raise UsageError(
                "The mini-swe-agent agent needs a model: it has no default of its own.",
                hint='Set model to a LiteLLM model name, e.g. model = "ollama/qwen3-coder:30b" '
                'or model = "anthropic/claude-sonnet-4-5".',
            )
        self.model_name: str = self.model
        self.text_actions = self.settings.get("text-actions", False)
        if not isinstance(self.text_actions, bool):
            raise UsageError(
                "The mini-swe-agent option 'text-actions' must be true or false, "
                f"not {self.text_actions!r}."
            )
        self.step_limit = self.settings.get("step-limit", DEFAULT_STEP_LIMIT)
        if (
            isinstance(self.step_limit, bool)
            or not isinstance(self.step_limit, int)
            or self.step_limit < 1
        ):
            raise UsageError(
                f"The mini-swe-agent option 'step-limit' must be a whole number above 0, "
                f"not {self.step_limit!r}."
            )
        kwargs = self.settings.get("model-kwargs", {})
        if not isinstance(kwargs, Mapping) or not all(isinstance(k, str) for k in kwargs):
            raise UsageError(
                f"The mini-swe-agent option 'model-kwargs' must be a table, not {kwargs!r}.",
                hint="For example: model-kwargs = { temperature = 0 }",
            )
        self.model_kwargs: dict[str, Any] = dict(kwargs)

    def command(self) -> str:
        """`mini` on PATH, else beside the running Python (installed as bugbout's extra)."""
        try:
            return super().command()
        except ToolMissingError:
            beside = Path(sys.executable).parent / self.executable
            if beside.is_file() and os.access(beside, os.X_OK):
                return str(beside)
            raise

    @property
    def wants_sandbox(self) -> bool:
        """No: the model acts only through commands, each confined with the hidden paths
        masked, and `mini` itself must start those sandboxes, which a sandbox around it
        would forbid when bugbout runs as root (no namespaces for an uncapable root)."""
        return False

    def version_argv(self) -> list[str]:
        """`mini` has no `--version`; the banner it prints on start names the version."""
        return [self.command(), "--help"]

    def invocation(self, session: Session) -> Invocation:
        scratch = session.home / "tmp"
        scratch.mkdir(parents=True, exist_ok=True)
        command_env = scrub_environment(session.base_env)
        command_env["TMPDIR"] = str(scratch)
        confinement = Confinement(
            writable=(session.workdir, scratch),
            network=False,
            env=command_env,
            hidden=session.hidden,
            readable=session.readable,
            view=session.view,
        )
        sandboxed = session.sandbox.wrap(
            ["bash", "-c", PLACEHOLDER], confinement, cwd=session.workdir
        )

        shutil.copyfile(Path(__file__).with_name("mini_env.py"), session.home / f"{ENV_MODULE}.py")
        config_dir = session.home / "mini-swe-agent"
        config_dir.mkdir(parents=True, exist_ok=True)
        prefixes = self._credential_prefixes()
        (config_dir / ".env").write_text(
            _dotenv_lines(_user_dotenv(session.base_env), prefixes), encoding="utf-8"
        )

        model: dict[str, Any] = {
            "model_name": self.model_name,
            "model_kwargs": self.model_kwargs,
            # A local or custom model has no price list; a cost error must not end the run.
            "cost_tracking": "ignore_errors",
        }
        if self.text_actions:
            model["model_class"] = "litellm_textbased"
        config = {
            "run": {"task": session.prompt},
            "agent": {"step_limit": self.step_limit, "cost_limit": 0},
            "model": model,
            "environment": {
                "environment_class": f"{ENV_MODULE}.SandboxedEnvironment",
                "argv": sandboxed,
                "placeholder": PLACEHOLDER,
                "env": command_env,
                "cwd": str(session.workdir),
                "timeout": COMMAND_TIMEOUT,
            },
        }
        config_file = session.home / "bugbout-mini.yaml"
        config_file.write_text(yaml_compatible_json(config), encoding="utf-8")

        keys = {name for name in session.base_env if name.startswith(prefixes)}
        env = isolated_environment(session.base_env, keep=keys, home=session.home)
        env["MSWEA_CONFIGURED"] = "true"
        env["MSWEA_GLOBAL_CONFIG_DIR"] = str(config_dir)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(session.home), session.base_env.get("PYTHONPATH", "")) if p
        )
        argv = [
            self.command(),
            "--config",
            "mini_textbased.yaml" if self.text_actions else "mini.yaml",
            "--config",
            str(config_file),
            "--model",
            self.model_name,
            "--yolo",
            "--exit-immediately",
            "--output",
            str(session.logdir / TRAJECTORY),
        ]
        if self.text_actions:
            argv += ["--model-class", "litellm_textbased"]
        return Invocation(argv=argv, env=env)

    def parse(self, logdir: Path, exit_code: int | None) -> RunReport:
        """Usage summed over the model's responses; a rate-limit exit status is a quota stop."""
        try:
            trajectory = json.loads((logdir / TRAJECTORY).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return super().parse(logdir, exit_code)
        if not isinstance(trajectory, dict):
            return super().parse(logdir, exit_code)
        info = _mapping(trajectory.get("info"))
        messages = trajectory.get("messages")
        if not isinstance(messages, list):
            messages = []
        return RunReport(
            summary=_last_assistant_text(messages),
            usage=_usage(messages, info.get("model_stats")),
            quota_message=_quota(info, messages),
        )

    def _credential_prefixes(self) -> tuple[str, ...]:
        """Names of the variables of the model's provider, and of LiteLLM's own settings."""
        provider = self.model_name.split("/", 1)[0] if "/" in self.model_name else None
        if provider is None:
            provider = _VENDOR_PROVIDERS.get(guess_vendor(self.model_name) or "")
        prefixes: tuple[str, ...] = ("LITELLM_",)
        if provider:
            prefixes += _PROVIDER_VARIABLES.get(provider, (f"{provider.upper()}_",))
        return prefixes


def yaml_compatible_json(value: object) -> str:
    """JSON that a YAML 1.1 reader (PyYAML) loads back unchanged.

    JSON is YAML, except for a few characters a YAML reader refuses or folds even inside
    a quoted string; those are written as `\\u` escapes instead.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


# Characters a YAML reader refuses outright (DEL, C1 controls, non-characters, surrogates)
# or reads as a line break and folds into a space (NEL, the Unicode line separators).
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def _user_dotenv(base_env: Mapping[str, str]) -> Path:
    configured = base_env.get("MSWEA_GLOBAL_CONFIG_DIR")
    return Path(configured or user_config_dir("mini-swe-agent")).expanduser() / ".env"


def _dotenv_lines(path: Path, prefixes: tuple[str, ...]) -> str:
    """The lines of the user's mini-swe-agent `.env` (where `mini-extra config set` saves
    API keys) that set a variable of the model's provider; the rest stays behind."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    kept = []
    for line in lines:
        name, sep, _ = line.strip().removeprefix("export ").partition("=")
        if sep and name.strip().startswith(prefixes):
            kept.append(line.strip() + "\n")
    return "".join(kept)


def _last_assistant_text(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                content = "\n".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            if isinstance(content, str) and content.strip():
                return content.strip()
    return None


def _usage(messages: list[Any], stats: object) -> Usage:
    prompt = completion = cached = 0
    seen = False
    for message in messages:
        extra = message.get("extra") if isinstance(message, dict) else None
        response = extra.get("response") if isinstance(extra, dict) else None
        usage = response.get("usage") if isinstance(response, dict) else None
        if not isinstance(usage, dict):
            continue
        seen = True
        prompt += token_count(usage.get("prompt_tokens")) or 0
        completion += token_count(usage.get("completion_tokens")) or 0
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict):
            cached += token_count(details.get("cached_tokens")) or 0
    cost = stats.get("instance_cost") if isinstance(stats, dict) else None
    cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if not seen:
        return Usage(cost_usd=cost_usd)
    return Usage(
        input_tokens=prompt, output_tokens=completion, cached_tokens=cached, cost_usd=cost_usd
    )


def _quota(info: dict[str, Any], messages: list[Any]) -> str | None:
    """The exception text when the run ended on a rate limit (after LiteLLM's retries)."""
    status = info.get("exit_status")
    extra = _mapping(_mapping(messages[-1] if messages else None).get("extra"))
    text = extra.get("exception_str")
    text = text.strip() if isinstance(text, str) and text.strip() else None
    if status in LITELLM_RATE_LIMITS:
        return text or str(status)
    if text and isinstance(status, str) and status.endswith("Error") and ANY_LIMIT.search(text):
        return text
    return None


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
