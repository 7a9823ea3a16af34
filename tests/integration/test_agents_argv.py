"""Each adapter's exact command line, environment and isolated home.

The command lines are the ones checked against the real CLIs' `--help` (codex-cli
0.171.0, Claude Code 2.1.197, Gemini CLI 0.61.0, mini-swe-agent 2.4.6); a change to any of
them must be deliberate, so they are spelled out here in full.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from fakes.harness import FAKES, fake_env, make_session

from bugbout_tui.agents import (
    ClaudeCodeAgent,
    CodexAgent,
    CommandAgent,
    GeminiCliAgent,
    MiniSweAgent,
    Session,
)
from bugbout_tui.agents.base import CodingAgent
from bugbout_tui.agents.claude_code import SETTINGS
from bugbout_tui.agents.command import PROMPT_FILE
from bugbout_tui.agents.gemini_cli import POLICY
from bugbout_tui.agents.mini_swe_agent import ENV_MODULE, PLACEHOLDER, TRAJECTORY
from bugbout_tui.core.agent_facts import guess_vendor
from bugbout_tui.core.errors import ToolMissingError, UsageError
from bugbout_tui.infra.sandbox import BubblewrapSandbox, NoSandbox

FOREIGN = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY")
TESTS_RULE = "Bash(python -m pytest:*)"
"""Claude Code's allow rule for the session's test command, `python -m pytest -q`."""


@pytest.fixture(autouse=True)
def fakes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture
def session(tmp_path: Path) -> Session:
    user = tmp_path / "user"
    (user / ".codex").mkdir(parents=True)
    (user / ".codex" / "auth.json").write_text('{"tokens": "codex"}')
    (user / ".codex" / "config.toml").write_text('model = "personal"\n')
    (user / ".codex" / "AGENTS.md").write_text("personal rules\n")
    (user / ".claude").mkdir()
    (user / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    (user / ".claude" / "settings.json").write_text('{"hooks": {}}')
    (user / ".claude" / "CLAUDE.md").write_text("personal memory\n")
    (user / ".gemini").mkdir()
    (user / ".gemini" / "oauth_creds.json").write_text('{"access_token": "g"}')
    (user / ".gemini" / "google_accounts.json").write_text('{"active": "me@example.com"}')
    (user / ".gemini" / "GEMINI.md").write_text("personal context\n")
    (user / ".gemini" / "settings.json").write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "oauth-personal"}},
                "mcpServers": {"personal": {"command": "srv"}},
                "model": {"name": "gemini-personal"},
            }
        )
    )
    env = fake_env(tmp_path, XDG_CONFIG_HOME=str(user / ".config"))
    return make_session(tmp_path, NoSandbox(), base_env=env, prompt="-fix the bug")


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_codex_command_line_environment_and_home(session: Session) -> None:
    agent = CodexAgent("gpt-5.1-codex", options={"reasoning-effort": "high"})
    invocation = agent.invocation(session)

    features = [
        "apps",
        "plugins",
        "remote_plugin",
        "hooks",
        "browser_use",
        "browser_use_external",
        "in_app_browser",
        "computer_use",
        "image_generation",
    ]
    assert invocation.argv == [
        str(FAKES / "codex"),
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
        *[arg for f in features for arg in ("-c", f"features.{f}=false")],
        "-m",
        "gpt-5.1-codex",
        "-c",
        'model_reasoning_effort="high"',
        "-",
    ]
    assert invocation.stdin == "-fix the bug"
    assert invocation.confinement is None
    env = invocation.env
    assert env["CODEX_HOME"] == str(session.home / ".codex")
    assert env["HOME"] == str(session.home)
    assert env["CODEX_API_KEY"] == "codex-test"
    assert env["OPENAI_API_KEY"] == "sk-openai-test"
    for name in (*FOREIGN, "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XDG_CONFIG_HOME"):
        assert name not in env
    assert env["PATH"] == session.base_env["PATH"]
    assert files_under(session.home) == [".codex/auth.json"]
    assert (session.home / ".codex" / "auth.json").stat().st_mode & 0o777 == 0o600


def test_codex_local_provider_and_codex_home_from_the_environment(
    session: Session, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "codex-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "auth.json").write_text('{"tokens": "elsewhere"}')
    session.base_env = {**session.base_env, "CODEX_HOME": str(elsewhere)}
    invocation = CodexAgent("gpt-oss:20b", options={"local-provider": "ollama"}).invocation(session)

    assert invocation.argv[-6:] == ["-m", "gpt-oss:20b", "--oss", "--local-provider", "ollama", "-"]
    assert (session.home / ".codex" / "auth.json").read_text() == '{"tokens": "elsewhere"}'
    assert invocation.env["CODEX_HOME"] == str(session.home / ".codex")


def test_codex_without_model_or_auth_file(session: Session) -> None:
    (Path(session.base_env["HOME"]) / ".codex" / "auth.json").unlink()
    invocation = CodexAgent().invocation(session)

    assert "-m" not in invocation.argv
    assert not any(a.startswith("model_reasoning_effort") for a in invocation.argv)
    assert files_under(session.home) == []


def test_claude_code_command_line_environment_and_home(session: Session) -> None:
    invocation = ClaudeCodeAgent("sonnet", options={"effort": "max"}).invocation(session)

    assert invocation.argv == [
        str(FAKES / "claude"),
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
        json.dumps(
            {**SETTINGS, "permissions": {**SETTINGS["permissions"], "allow": [TESTS_RULE]}},
            separators=(",", ":"),
        ),
        "--disallowedTools",
        "WebFetch,WebSearch",
        "--no-session-persistence",
        "--model",
        "sonnet",
        "--effort",
        "max",
    ]
    settings = json.loads(invocation.argv[invocation.argv.index("--settings") + 1])
    assert settings["sandbox"]["enabled"] is True
    assert settings["sandbox"]["failIfUnavailable"] is True
    assert settings["sandbox"]["allowUnsandboxedCommands"] is False
    assert settings["sandbox"]["network"] == {"allowedDomains": []}
    assert settings["permissions"] == {"deny": ["WebFetch", "WebSearch"], "allow": [TESTS_RULE]}
    assert invocation.stdin == "-fix the bug"
    assert invocation.confinement is None
    env = invocation.env
    assert env["CLAUDE_CONFIG_DIR"] == str(session.home / ".claude")
    assert env["HOME"] == str(session.home)
    assert env["ANTHROPIC_API_KEY"] == "anthropic-test"
    assert env["DISABLE_AUTOUPDATER"] == "1"
    for name in (*FOREIGN, "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY"):
        assert name not in env
    assert files_under(session.home) == [".claude/.credentials.json"]


def test_gemini_cli_command_line_settings_and_confinement(session: Session) -> None:
    invocation = GeminiCliAgent("gemini-2.5-pro").invocation(session)

    policy = session.home / "bugbout-no-web.toml"
    assert invocation.argv == [
        str(FAKES / "gemini"),
        "--prompt=-fix the bug",
        "--output-format",
        "json",
        "--approval-mode",
        "yolo",
        "--skip-trust",
        "--policy",
        str(policy),
        "--model",
        "gemini-2.5-pro",
    ]
    assert invocation.stdin is None
    assert policy.read_text() == POLICY
    assert 'toolName = "web_fetch"' in POLICY and 'toolName = "google_web_search"' in POLICY
    settings = json.loads((session.home / ".gemini" / "settings.json").read_text())
    assert settings == {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "tools": {"exclude": ["google_web_search", "web_fetch"]},
        "security": {"auth": {"selectedType": "oauth-personal"}},
    }
    assert files_under(session.home) == [
        ".gemini/google_accounts.json",
        ".gemini/oauth_creds.json",
        ".gemini/settings.json",
        "bugbout-no-web.toml",
    ]
    env = invocation.env
    assert env["GEMINI_CLI_HOME"] == env["HOME"] == str(session.home)
    assert env["GEMINI_API_KEY"] == "gemini-test"
    for name in (*FOREIGN, "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        assert name not in env
    confinement = invocation.confinement
    assert confinement is not None
    assert confinement.writable == (session.workdir, session.logdir, session.home)
    assert confinement.network is True
    assert dict(confinement.env) == env


def test_gemini_cli_reads_the_flat_auth_setting_of_old_versions(session: Session) -> None:
    settings_file = Path(session.base_env["HOME"]) / ".gemini" / "settings.json"
    settings_file.write_text(json.dumps({"selectedAuthType": "gemini-api-key", "theme": "x"}))
    GeminiCliAgent().invocation(session)

    settings = json.loads((session.home / ".gemini" / "settings.json").read_text())
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert "theme" not in settings


def test_codex_base_url_defines_a_responses_provider(session: Session) -> None:
    agent = CodexAgent("gpt-5.5", options={"base-url": "http://127.0.0.1:8000/v1"})
    invocation = agent.invocation(session)

    argv = invocation.argv
    at = argv.index('model_provider="bugbout"')
    assert argv[at - 1] == argv[at + 1] == "-c"
    key, _, table = argv[at + 2].partition("=")
    assert key == "model_providers.bugbout"
    assert tomllib.loads(f"t = {table}")["t"] == {
        "name": "bugbout",
        "base_url": "http://127.0.0.1:8000/v1",
        "wire_api": "responses",
        "env_key": "OPENAI_API_KEY",
    }
    assert argv[at + 3 :] == ["-m", "gpt-5.5", "-"]
    # Codex makes no sandbox helper under the temp dir; its own lies in the attempt's home.
    assert invocation.env["TMPDIR"] == str(session.home / "tmp")
    assert (session.home / "tmp").is_dir()

    session.base_env = {k: v for k, v in session.base_env.items() if k != "OPENAI_API_KEY"}
    keyless = agent.invocation(session).argv
    assert "env_key" not in keyless[keyless.index('model_provider="bugbout"') + 2]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base-url": "localhost:8000"}, "must be an http:// or https:// URL"),
        ({"base-url": 8000}, "must be an http:// or https:// URL"),
        ({"base-url": "http://x/v1", "local-provider": "ollama"}, "cannot be used together"),
    ],
)
def test_codex_base_url_refusals(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        CodexAgent(options=options)


def test_claude_code_nested_in_bubblewrap_as_root_binds_proc(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    def settings() -> dict[str, object]:
        argv = ClaudeCodeAgent().invocation(session).argv
        found: dict[str, object] = json.loads(argv[argv.index("--settings") + 1])
        return found

    session.sandbox = BubblewrapSandbox()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert settings()["sandbox"] == {**SETTINGS["sandbox"], "enableWeakerNestedSandbox": True}
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert settings()["sandbox"] == SETTINGS["sandbox"]
    session.sandbox = NoSandbox()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert settings()["sandbox"] == SETTINGS["sandbox"]


def test_claude_code_may_run_the_test_command_with_any_pytest_arguments(
    session: Session,
) -> None:
    session.test_command = "PYTHONPATH=src:. /venv/bin/python -m pytest -p no:cacheprovider tests"
    argv = ClaudeCodeAgent().invocation(session).argv
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert settings["permissions"]["allow"] == [
        "Bash(PYTHONPATH=src:. /venv/bin/python -m pytest:*)"
    ]
    session.test_command = "make check"
    argv = ClaudeCodeAgent().invocation(session).argv
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert settings["permissions"]["allow"] == ["Bash(make check:*)"]


def test_gemini_cli_signs_in_with_the_api_key_at_a_custom_address(session: Session) -> None:
    (Path(session.base_env["HOME"]) / ".gemini" / "settings.json").unlink()
    GeminiCliAgent().invocation(session)
    assert "security" not in json.loads((session.home / ".gemini" / "settings.json").read_text())

    session.base_env = {**session.base_env, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
    GeminiCliAgent().invocation(session)
    settings = json.loads((session.home / ".gemini" / "settings.json").read_text())
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `mini` program on PATH; these tests only build its command line."""
    program = tmp_path / "bin" / "mini"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    return program


def test_mini_swe_agent_configuration_and_environment(session: Session, mini: Path) -> None:
    mini_config = Path(session.base_env["HOME"]) / "mini-config"
    mini_config.mkdir()
    (mini_config / ".env").write_text(
        "MSWEA_MODEL_NAME=openai/gpt-5\nANTHROPIC_API_KEY='saved'\nOPENAI_API_KEY=other\n"
    )
    session.base_env = {
        **session.base_env,
        "MSWEA_GLOBAL_CONFIG_DIR": str(mini_config),
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "PYTHONPATH": "/somewhere",
    }
    agent = MiniSweAgent(
        "anthropic/claude-sonnet-4-5",
        options={"step-limit": 30, "model-kwargs": {"temperature": 0}},
    )
    invocation = agent.invocation(session)

    config_file = session.home / "bugbout-mini.yaml"
    assert invocation.argv == [
        str(mini),
        "--config",
        "mini.yaml",
        "--config",
        str(config_file),
        "--model",
        "anthropic/claude-sonnet-4-5",
        "--yolo",
        "--exit-immediately",
        "--output",
        str(session.logdir / TRAJECTORY),
    ]
    assert invocation.confinement is None
    config = json.loads(config_file.read_text())
    assert config["run"] == {"task": "-fix the bug"}
    assert config["agent"] == {"step_limit": 30, "cost_limit": 0}
    assert config["model"] == {
        "model_name": "anthropic/claude-sonnet-4-5",
        "model_kwargs": {"temperature": 0},
        "cost_tracking": "ignore_errors",
    }
    environment = config["environment"]
    assert environment["environment_class"] == f"{ENV_MODULE}.SandboxedEnvironment"
    assert environment["argv"] == ["bash", "-c", PLACEHOLDER]
    assert environment["cwd"] == str(session.workdir)
    command_env = environment["env"]
    for name in (*FOREIGN, "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        assert name not in command_env
    assert command_env["TMPDIR"] == str(session.home / "tmp")

    env = invocation.env
    assert env["ANTHROPIC_API_KEY"] == "anthropic-test"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    for name in (*FOREIGN, "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY"):
        assert name not in env
    assert env["MSWEA_CONFIGURED"] == "true"
    assert env["MSWEA_GLOBAL_CONFIG_DIR"] == str(session.home / "mini-swe-agent")
    assert env["PYTHONPATH"] == f"{session.home}{os.pathsep}/somewhere"
    assert (session.home / "mini-swe-agent" / ".env").read_text() == "ANTHROPIC_API_KEY='saved'\n"
    copied = (session.home / f"{ENV_MODULE}.py").read_text()
    assert "class SandboxedEnvironment" in copied and "bugbout_tui" not in copied.split('"""', 2)[2]


def test_mini_swe_agent_text_actions_and_sandboxed_commands(session: Session, mini: Path) -> None:
    sandbox = BubblewrapSandbox()
    session.sandbox = sandbox
    invocation = MiniSweAgent("ollama/qwen3-coder:30b", options={"text-actions": True}).invocation(
        session
    )

    assert invocation.argv[1:3] == ["--config", "mini_textbased.yaml"]
    assert invocation.argv[-2:] == ["--model-class", "litellm_textbased"]
    config = json.loads((session.home / "bugbout-mini.yaml").read_text())
    assert config["model"]["model_class"] == "litellm_textbased"
    argv = config["environment"]["argv"]
    assert argv[0].endswith("bwrap") and "--unshare-net" in argv
    assert argv[-3:] == ["bash", "-c", PLACEHOLDER]
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert sorted(bound) == sorted([str(session.workdir), str(session.home / "tmp")])
    # Only the model's provider: an Ollama model gets no OpenAI or Anthropic key.
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CODEX_API_KEY"} & set(invocation.env)


def test_mini_swe_agent_options_are_checked() -> None:
    with pytest.raises(UsageError, match="needs a model") as missing:
        MiniSweAgent()
    assert missing.value.hint is not None and "ollama/" in missing.value.hint
    with pytest.raises(UsageError, match="step-limit"):
        MiniSweAgent("openai/gpt-5", options={"step-limit": 0})
    with pytest.raises(UsageError, match="step-limit"):
        MiniSweAgent("openai/gpt-5", options={"step-limit": True})
    with pytest.raises(UsageError, match="text-actions"):
        MiniSweAgent("openai/gpt-5", options={"text-actions": "yes"})
    with pytest.raises(UsageError, match="model-kwargs"):
        MiniSweAgent("openai/gpt-5", options={"model-kwargs": ["temperature"]})


def test_command_placeholders_and_prompt_file(session: Session) -> None:
    agent = CommandAgent(
        "gpt-5",
        name="aider",
        options={
            "command": [
                "codex",
                "--model",
                "{model}",
                "--message-file",
                "{prompt_file}",
                "{workdir}:{logdir}",
            ],
        },
    )
    invocation = agent.invocation(session)

    assert invocation.argv == [
        str(FAKES / "codex"),
        "--model",
        "gpt-5",
        "--message-file",
        str(session.logdir / PROMPT_FILE),
        f"{session.workdir}:{session.logdir}",
    ]
    assert invocation.stdin is None
    assert (session.logdir / PROMPT_FILE).read_text() == "-fix the bug"
    confinement = invocation.confinement
    assert confinement is not None
    assert confinement.writable == (session.workdir, session.logdir)
    assert confinement.network is True
    assert dict(confinement.env) == invocation.env
    for name in (*FOREIGN, "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CODEX_API_KEY"):
        assert name not in invocation.env
    assert invocation.env["HOME"] == session.base_env["HOME"]


def test_command_prompt_argument_or_standard_input(session: Session) -> None:
    inline = CommandAgent(name="x", options={"command": ["codex", "--message", "{prompt}"]})
    assert inline.invocation(session).argv[-1] == "-fix the bug"
    assert inline.invocation(session).stdin is None
    assert not (session.logdir / PROMPT_FILE).exists()

    piped = CommandAgent(name="y", options={"command": ["codex", "-"]})
    assert piped.invocation(session).stdin == "-fix the bug"


def test_command_env_state_dirs_and_unsandboxed(session: Session) -> None:
    agent = CommandAgent(
        name="aider",
        options={
            "command": ["codex"],
            "env": {"OPENAI_API_KEY": "$OPENAI_API_KEY", "AIDER_X": 3, "FLAG": True, "KEEP": "$$1"},
            "state-dirs": ["~/.aider", str(session.home / "abs")],
            "sandboxed": False,
        },
    )
    invocation = agent.invocation(session)

    assert invocation.env["OPENAI_API_KEY"] == "sk-openai-test"
    assert invocation.env["AIDER_X"] == "3"
    assert invocation.env["FLAG"] == "true"
    assert invocation.env["KEEP"] == "$1"
    assert "ANTHROPIC_API_KEY" not in invocation.env
    assert invocation.confinement is None
    assert (Path(session.base_env["HOME"]) / ".aider").is_dir()
    assert (session.home / "abs").is_dir()

    confined = CommandAgent(name="a", options={"command": ["codex"], "state-dirs": ["~/.aider"]})
    confinement = confined.invocation(session).confinement
    assert confinement is not None
    assert confinement.writable[-1] == Path(session.base_env["HOME"]) / ".aider"


@pytest.mark.parametrize(
    ("options", "name", "message"),
    [
        (
            {"command": ["x", "{promt}"]},
            "a",
            r"unknown placeholder \{promt\}. Did you mean 'prompt'",
        ),
        ({"command": ["x", "{model}"]}, "a", "uses {model}, but no model"),
        ({}, "a", "has no `command`"),
        ({"command": []}, "a", "is empty"),
        ({"command": "x --yes"}, "a", "must be a list of strings"),
        ({"command": ["x"], "env": ["A=1"]}, "a", "must be a table"),
        ({"command": ["x"], "state-dirs": ["rel/dir"]}, "a", "neither absolute nor under ~"),
        ({"command": ["x"], "sandboxed": "no"}, "a", "true or false"),
        ({"command": ["x"]}, None, "needs a name"),
        (
            {"command": ["x"], "sandbox": False},
            "a",
            "no option 'sandbox'. Did you mean 'sandboxed'",
        ),
    ],
)
def test_command_configuration_errors(
    options: dict[str, object], name: str | None, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        CommandAgent(name=name, options=options)


@pytest.mark.parametrize(
    ("agent", "options", "message", "hint"),
    [
        (
            CodexAgent,
            {"reasoning_effort": "high"},
            "Did you mean 'reasoning-effort'",
            "local-provider",
        ),
        (CodexAgent, {"reasoning-effort": "hihg"}, "Did you mean 'high'", "xhigh"),
        (CodexAgent, {"local-provider": "olama"}, "Did you mean 'ollama'", "lmstudio"),
        (ClaudeCodeAgent, {"efort": "high"}, "Did you mean 'effort'", "effort"),
        (ClaudeCodeAgent, {"effort": "huge"}, "cannot be 'huge'", "low, medium"),
        (
            GeminiCliAgent,
            {"approval-mode": "yolo"},
            "no option 'approval-mode'",
            "takes no options",
        ),
    ],
)
def test_option_errors_name_the_fix(
    agent: type[CodingAgent], options: dict[str, object], message: str, hint: str
) -> None:
    with pytest.raises(UsageError, match=message) as error:
        agent("m", options=options)
    assert error.value.hint is not None and hint in error.value.hint


@pytest.mark.parametrize(
    ("agent", "install"),
    [
        (CodexAgent(), "npm install -g @openai/codex"),
        (ClaudeCodeAgent(), "npm install -g @anthropic-ai/claude-code"),
        (GeminiCliAgent(), "npm install -g @google/gemini-cli"),
        (MiniSweAgent("openai/gpt-5"), "pip install 'bugbout-tui[mini]'"),
        (CommandAgent(name="aider", options={"command": ["aider-not-here"]}), "Install it"),
    ],
)
def test_missing_programs_say_how_to_install_them(
    agent: CodingAgent, install: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(ToolMissingError) as error:
        agent.command()
    assert error.value.hint is not None and install in error.value.hint
    assert agent.version() is None


def test_versions_are_read_from_the_programs() -> None:
    assert CodexAgent().version() == "0.171.0" == CodexAgent.tested_version
    assert ClaudeCodeAgent().version() == "2.1.197" == ClaudeCodeAgent.tested_version
    assert GeminiCliAgent().version() == "0.61.0" == GeminiCliAgent.tested_version


def test_names_vendors_and_quotas() -> None:
    assert CodexAgent().name == "codex"
    assert CodexAgent("gpt-5").name == "codex/gpt-5"
    assert CodexAgent("gpt-5", name="mine").name == "mine"
    assert CodexAgent().vendor == "openai"
    assert ClaudeCodeAgent().vendor == "anthropic"
    assert GeminiCliAgent().vendor == "google"
    assert CodexAgent("qwen3-coder", options={"local-provider": "ollama"}).vendor == "alibaba"
    assert MiniSweAgent("openrouter/some-lab/unknown-model").vendor is None
    assert MiniSweAgent("openai/gpt-5", vendor="acme").vendor == "acme"
    assert CodexAgent().quota == "codex"
    assert CodexAgent(quota="work-plan").quota == "work-plan"
    assert CommandAgent(name="aider", options={"command": ["aider"]}).quota == "command"


@pytest.mark.parametrize(
    ("model", "vendor"),
    [
        ("gpt-5.1-codex", "openai"),
        ("gpt-oss:20b", "openai"),
        ("o3-mini", "openai"),
        ("ollama/qwen3-coder:30b", "alibaba"),
        ("claude-sonnet-4-5", "anthropic"),
        ("opus", "anthropic"),
        ("gemini/gemini-2.5-pro", "google"),
        ("llama3.1:8b", "meta"),
        ("deepseek-coder-v2", "deepseek"),
        ("devstral-small", "mistral"),
        ("phi4", "microsoft"),
        ("ollama/gemma3", "google"),
        ("ollama/qwq", "alibaba"),
        ("ollama/phi4", "microsoft"),
        ("chatgpt-4o-latest", "openai"),
        ("codellama:13b", "meta"),
        ("ministral-8b", "mistral"),
        ("zeta-o3x", None),
    ],
)
def test_vendor_guesses(model: str, vendor: str | None) -> None:
    assert guess_vendor(model) == vendor


def test_mini_swe_agent_confines_its_commands_not_its_process() -> None:
    assert MiniSweAgent("openai/gpt-5").wants_sandbox is False
    assert CodexAgent().wants_sandbox and ClaudeCodeAgent().wants_sandbox
