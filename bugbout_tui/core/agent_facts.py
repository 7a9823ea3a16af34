"""What bugbout knows about each built-in agent, written once, and who made a model.

Two layers need these facts: the config, which checks `bugbout.toml` and fills in each
entry's defaults, and the adapters, which start the agents. The config may not import
the adapters (layers point downward), so the facts live here, as data, and each adapter
takes its own from here (`class CodexAgent(CodingAgent, facts=CODEX)`). Nothing else
spells them out: an option an adapter accepts is an option the config accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "BUILTIN_FACTS",
    "CLAUDE_CODE",
    "CODEX",
    "COMMAND",
    "COMMON_KEYS",
    "ENTRY_POINT_GROUP",
    "GEMINI_CLI",
    "MINI_SWE_AGENT",
    "UNKNOWN_VENDOR",
    "AgentFacts",
    "guess_vendor",
]

ENTRY_POINT_GROUP = "bugbout.agents"
"""The entry-point group under which an installed package publishes more agent types."""

UNKNOWN_VENDOR = "unknown"
"""The vendor of a model whose maker neither its name nor its agent tells."""

COMMON_KEYS = frozenset({"agent", "model", "name", "vendor", "quota", "view", "billing", "budget"})
"""Keys every agent entry may have; any other key is an option of the adapter."""


@dataclass(frozen=True)
class AgentFacts:
    """One agent type, as both the config and its adapter need to know it."""

    harness: str
    """The agent type, as written in bugbout.toml (`agent = "..."`)."""
    executable: str
    """The program looked up on PATH; empty when each entry names its own (`command`)."""
    install_hint: str = ""
    """How to install the program, shown when it is missing."""
    options: frozenset[str] = frozenset()
    """The pass-through options the adapter accepts; any other key of an entry is refused."""
    tested_version: str | None = None
    """The program version whose command line the adapter was checked against."""
    default_vendor: str | None = None
    """The vendor when the model says nothing, e.g. Codex's default model is OpenAI's."""
    model_example: str | None = None
    """Set when the agent has no model of its own: what to name instead, as an example."""
    needs_name: bool = False
    """Whether an entry must be named, there being no fixed program to name it after."""


CODEX = AgentFacts(
    harness="codex",
    executable="codex",
    install_hint="Install it with `npm install -g @openai/codex` (or `brew install codex`).",
    options=frozenset({"reasoning-effort", "local-provider", "base-url"}),
    tested_version="0.171.0",
    default_vendor="openai",
)

CLAUDE_CODE = AgentFacts(
    harness="claude-code",
    executable="claude",
    install_hint=(
        "Install it with `npm install -g @anthropic-ai/claude-code`. On Linux its sandbox "
        "also needs bubblewrap and socat (`sudo apt-get install bubblewrap socat`)."
    ),
    options=frozenset({"effort"}),
    tested_version="2.1.197",
    default_vendor="anthropic",
)

GEMINI_CLI = AgentFacts(
    harness="gemini-cli",
    executable="gemini",
    install_hint="Install it with `npm install -g @google/gemini-cli`.",
    tested_version="0.61.0",
    default_vendor="google",
)

MINI_SWE_AGENT = AgentFacts(
    harness="mini-swe-agent",
    executable="mini",
    install_hint=(
        "Install it with `pip install 'bugbout-tui[mini]'` (into bugbout's environment) "
        "or `pip install mini-swe-agent`."
    ),
    options=frozenset({"text-actions", "step-limit", "model-kwargs"}),
    tested_version="2.4.6",
    model_example='a LiteLLM model, e.g. "ollama/qwen3-coder:30b"',
)

COMMAND = AgentFacts(
    harness="command",
    executable="",
    options=frozenset({"command", "env", "state-dirs", "sandboxed"}),
    needs_name=True,
)

BUILTIN_FACTS: dict[str, AgentFacts] = {
    facts.harness: facts for facts in (CODEX, CLAUDE_CODE, GEMINI_CLI, MINI_SWE_AGENT, COMMAND)
}
"""Every built-in agent type by name, in the order bugbout lists them."""


# Model families and their makers. A family matches a whole word of the model name, or a
# word that continues with a version number (`qwen3`, `llama3`, `gpt5`).
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("gpt", "openai"),
    ("chatgpt", "openai"),
    ("codex", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("sonnet", "anthropic"),
    ("opus", "anthropic"),
    ("haiku", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("codellama", "meta"),
    ("qwen", "alibaba"),
    ("qwq", "alibaba"),
    ("deepseek", "deepseek"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("ministral", "mistral"),
    ("codestral", "mistral"),
    ("devstral", "mistral"),
    ("magistral", "mistral"),
    ("pixtral", "mistral"),
    ("grok", "xai"),
    ("glm", "zhipu"),
    ("kimi", "moonshot"),
    ("phi", "microsoft"),
    ("granite", "ibm"),
)


def guess_vendor(model: str) -> str | None:
    """The model's maker from its name, or None when the name does not tell.

    Only the last part of a LiteLLM name counts: the provider prefix says who serves the
    model, not who made it (`ollama/gemma3` is Google's, not Meta's because of "llama").
    The `cross-vendor` policy needs the answer to tell authors apart.
    """
    words = [w for w in re.split(r"[^a-z0-9]+", model.lower().rsplit("/", 1)[-1]) if w]
    for family, vendor in _FAMILIES:
        for word in words:
            rest = word.removeprefix(family)
            if rest != word and (not rest or rest[0].isdigit()):
                return vendor
    return None
