"""From a `[[contestants]]` entry of bugbout.toml to an adapter.

Built-in adapters are known by their type names; any installed package can add more by
publishing a `CodingAgent` subclass under the `bugbout.agents` entry-point group, and
bugbout.toml then names it like a built-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from bugbout_tui.agents.base import CodingAgent, did_you_mean
from bugbout_tui.agents.claude_code import ClaudeCodeAgent
from bugbout_tui.agents.codex import CodexAgent
from bugbout_tui.agents.command import CommandAgent
from bugbout_tui.agents.gemini_cli import GeminiCliAgent
from bugbout_tui.agents.mini_swe_agent import MiniSweAgent
from bugbout_tui.core.agent_facts import COMMON_KEYS, ENTRY_POINT_GROUP
from bugbout_tui.core.errors import BugboutError, UsageError

__all__ = ["BUILTIN_AGENTS", "ENTRY_POINT_GROUP", "agent_from_config", "available_agents"]

BUILTIN_AGENTS: dict[str, type[CodingAgent]] = {
    agent.harness: agent
    for agent in (CodexAgent, ClaudeCodeAgent, GeminiCliAgent, MiniSweAgent, CommandAgent)
}

BOUT_KEYS = frozenset({"assignment", "trials"})
"""Keys of an entry that concern bugbout, not the adapter: an examiner's assignment,
a contestant's trials."""


def available_agents() -> dict[str, type[CodingAgent]]:
    """Every agent type by name: the built-ins, then those installed as entry points.

    A plug-in cannot replace a built-in type; its entry is skipped.
    """
    agents = dict(BUILTIN_AGENTS)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in agents:
            continue
        where = f"{entry.dist.name} " if entry.dist is not None else ""
        try:
            loaded = entry.load()
        except Exception as error:  # a broken plug-in must not take bugbout down with a trace
            raise BugboutError(
                f"The agent {entry.name!r} from the package {where}could not be loaded: "
                f"{type(error).__name__}: {error}",
                hint=f"Its entry point is {entry.value!r} in the group {ENTRY_POINT_GROUP!r}; "
                "reinstall or remove that package.",
            ) from error
        if not (isinstance(loaded, type) and issubclass(loaded, CodingAgent)):
            raise BugboutError(
                f"The agent {entry.name!r} from the package {where}is not a CodingAgent "
                f"subclass: {entry.value!r} names {loaded!r}.",
                hint="An adapter must subclass bugbout's CodingAgent.",
            )
        agents[entry.name] = loaded
    return agents


def agent_from_config(entry: Mapping[str, Any]) -> CodingAgent:
    """The adapter for one contestant or examiner entry, its options checked.

    `entry` holds the entry's keys as written (dashed). Options may also come nested
    under `options`, as a config model may keep them apart.
    """
    kind = entry.get("agent")
    agents = available_agents()
    if not isinstance(kind, str) or not kind:
        raise UsageError(
            "An agent entry has no `agent` type.",
            hint="Set agent to one of: " + ", ".join(sorted(agents)) + ".",
        )
    adapter = agents.get(kind)
    if adapter is None:
        raise UsageError(
            f"Unknown agent type {kind!r}." + did_you_mean(kind, agents),
            hint="Available agent types: "
            + ", ".join(sorted(agents))
            + f" (more can be installed as {ENTRY_POINT_GROUP!r} entry points).",
        )
    options = {k: v for k, v in entry.items() if k not in COMMON_KEYS | BOUT_KEYS}
    nested = options.pop("options", None)
    if isinstance(nested, Mapping):
        options.update(nested)
    elif nested is not None:
        options["options"] = nested
    return adapter(
        _text(entry, "model"),
        name=_text(entry, "name"),
        vendor=_text(entry, "vendor"),
        quota=_text(entry, "quota"),
        options=options,
    )


def _text(entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is None or isinstance(value, str):
        return value or None
    raise UsageError(
        f"The key {key!r} of the {entry.get('agent')} entry must be text, not {value!r}."
    )
