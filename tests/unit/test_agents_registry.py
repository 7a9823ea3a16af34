"""From bugbout.toml entries to adapters: built-ins, installed plug-ins, and mistakes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout_tui.agents import (
    BUILTIN_AGENTS,
    ClaudeCodeAgent,
    CodexAgent,
    CommandAgent,
    GeminiCliAgent,
    MiniSweAgent,
    agent_from_config,
    available_agents,
)
from bugbout_tui.agents.base import CodingAgent, Invocation, Session
from bugbout_tui.core.agent_facts import BUILTIN_FACTS, CODEX
from bugbout_tui.core.errors import BugboutError, UsageError

PLUGIN = """
from bugbout_tui.agents import CodingAgent, Invocation


class MyAgent(CodingAgent):
    harness = "my-agent"
    executable = "my-agent"
    options = frozenset({"temperature"})

    def invocation(self, session):
        argv = [self.command(), "--model", self.model or "", "--yes"]
        return Invocation(argv, stdin=session.prompt)


class NotAnAgent:
    pass
"""


def install_plugin(root: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> None:
    """A distribution with `bugbout.agents` entry points, importable from `root`."""
    (root / "my_plugin.py").write_text(PLUGIN)
    info = root / "my_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[bugbout.agents]\n" + textwrap.dedent(entry_points))
    monkeypatch.syspath_prepend(str(root))


def test_built_in_agents_by_type_name() -> None:
    assert {
        "codex": CodexAgent,
        "claude-code": ClaudeCodeAgent,
        "gemini-cli": GeminiCliAgent,
        "mini-swe-agent": MiniSweAgent,
        "command": CommandAgent,
    } == BUILTIN_AGENTS
    agent = agent_from_config(
        {
            "agent": "codex",
            "model": "gpt-5.1-codex",
            "name": "codex-high",
            "vendor": "openai",
            "quota": "plus-plan",
            "reasoning-effort": "high",
        }
    )
    assert isinstance(agent, CodexAgent)
    assert (agent.model, agent.name, agent.vendor, agent.quota) == (
        "gpt-5.1-codex",
        "codex-high",
        "openai",
        "plus-plan",
    )
    assert agent.reasoning_effort == "high"


def test_built_in_adapters_take_their_facts_from_the_one_description() -> None:
    assert list(BUILTIN_AGENTS) == list(BUILTIN_FACTS)
    for harness, adapter in BUILTIN_AGENTS.items():
        facts = BUILTIN_FACTS[harness]
        assert (
            adapter.harness,
            adapter.executable,
            adapter.install_hint,
            adapter.options,
            adapter.tested_version,
            adapter.default_vendor,
        ) == (
            facts.harness,
            facts.executable,
            facts.install_hint,
            facts.options,
            facts.tested_version,
            facts.default_vendor,
        )


def test_an_adapter_on_facts_cannot_state_them_again() -> None:
    with pytest.raises(TypeError, match="takes its options from its AgentFacts"):

        class Restated(CodingAgent, facts=CODEX):
            options = frozenset({"reasoning-effort"})

            def invocation(self, session: Session) -> Invocation:
                return Invocation([self.command()])


def test_options_may_come_nested_and_examiner_keys_are_not_options() -> None:
    agent = agent_from_config(
        {"agent": "claude-code", "assignment": "specify", "options": {"effort": "low"}}
    )
    assert isinstance(agent, ClaudeCodeAgent)
    assert agent.effort == "low"
    assert agent.name == "claude-code"


def test_command_entry_is_built_from_its_keys() -> None:
    agent = agent_from_config(
        {"agent": "command", "name": "aider", "model": "gpt-5", "command": ["aider", "{prompt}"]}
    )
    assert isinstance(agent, CommandAgent)
    assert agent.template == ["aider", "{prompt}"]
    assert agent.vendor == "openai"


def test_unknown_agent_type_suggests_the_closest() -> None:
    with pytest.raises(
        UsageError, match=r"Unknown agent type 'claude'\. Did you mean 'claude-code'"
    ) as error:
        agent_from_config({"agent": "claude"})
    assert error.value.hint is not None
    assert "codex, command, gemini-cli, mini-swe-agent" in error.value.hint
    assert "bugbout.agents" in error.value.hint
    with pytest.raises(UsageError, match="has no `agent` type"):
        agent_from_config({"model": "gpt-5"})
    with pytest.raises(UsageError, match="must be text"):
        agent_from_config({"agent": "codex", "model": 5})


def test_unknown_option_of_an_entry() -> None:
    with pytest.raises(
        UsageError, match=r"no option 'reasoning-efort'\. Did you mean 'reasoning-effort'"
    ):
        agent_from_config({"agent": "codex", "reasoning-efort": "high"})


def test_plug_in_agents_from_entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        """
        my-agent = my_plugin:MyAgent
        codex = my_plugin:MyAgent
        """,
    )
    agents = available_agents()
    assert agents["codex"] is CodexAgent  # a plug-in cannot replace a built-in
    agent = agent_from_config({"agent": "my-agent", "model": "m1", "temperature": 0})
    assert type(agent).__name__ == "MyAgent"
    assert (agent.name, agent.quota, agent.settings) == (
        "my-agent/m1",
        "my-agent",
        {"temperature": 0},
    )
    with pytest.raises(UsageError, match="Did you mean 'my-agent'"):
        agent_from_config({"agent": "my-agnet"})


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("my_plugin:NotAnAgent", "is not a CodingAgent subclass"),
        ("my_plugin:Missing", "could not be loaded: AttributeError"),
        ("no_such_module:Agent", "could not be loaded: ModuleNotFoundError"),
    ],
)
def test_broken_plug_ins_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    install_plugin(tmp_path, monkeypatch, f"broken = {target}\n")
    with pytest.raises(BugboutError, match=message) as error:
        agent_from_config({"agent": "codex"})
    assert "'broken' from the package my-plugin" in error.value.message
