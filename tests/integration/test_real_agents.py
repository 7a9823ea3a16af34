"""The real agent CLIs, raced through bugbout, each against a scripted model on 127.0.0.1.

Fakes show that an adapter's command line is what we believe; these tests show that the
real program accepts it and does what bugbout counts on. Every agent runs the way a bout
runs it: the adapter's invocation, bugbout's sandbox around it (for Codex and Claude Code
an outer one that keeps the network, their own sandboxes inside), a history-free working
copy of a small project, then the harvest and the agent's logs read back. The "model" is
a `modelserver` speaking the agent's own API, whose script reads a file, fixes a one-line
bug, adds a regression test and runs the tests as the prompt says, all with the agent's
own tools; or answers with the provider's usage-limit error; or asks for a command that
reaches the network and for writes outside the working copy.

Codex CLI, Claude Code and Gemini CLI come from npm (`.ci/install-agent-clis` installs
them); they are looked up in `$BUGBOUT_AGENT_CLIS/node_modules/.bin`, then on PATH, then
in `~/.cache/bugbout-ci/agentclis`. mini-swe-agent is a development dependency.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest
from fakes.harness import bubblewrap
from gitrepo import GitRepo
from modelserver import (
    AnthropicMessages,
    Dialect,
    Edit,
    Finish,
    GeminiApi,
    HitRecorder,
    Limit,
    ModelServer,
    OpenAIChat,
    OpenAIResponses,
    Read,
    Request,
    Shell,
    Turn,
    Write,
)
from projects import write_config, write_issues

from bugbout_tui.agents import (
    ClaudeCodeAgent,
    CodexAgent,
    CodingAgent,
    GeminiCliAgent,
    MiniSweAgent,
)
from bugbout_tui.core.models import Attempt
from bugbout_tui.engine.agent_run import test_command as agent_test_command
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.env import Environment

pytestmark = pytest.mark.slow

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
REGRESSION = "from calc.ops import add\n\n\ndef test_add_adds():\n    assert add(2, 3) == 5\n"
STATEMENT = "add() subtracts: add(2, 3) returns -1 instead of 5."
CLOSING = "Fixed add() to add its arguments and added a regression test."
KEY = "sk-scripted-key"


# --- the programs -------------------------------------------------------------------


def agent_clis() -> Iterator[Path]:
    """Where the npm-installed CLIs may be, in the order they are looked for."""
    configured = os.environ.get("BUGBOUT_AGENT_CLIS")
    if configured:
        yield Path(configured) / "node_modules" / ".bin"
    yield from (Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p)
    yield Path.home() / ".cache" / "bugbout-ci" / "agentclis" / "node_modules" / ".bin"


def npm_program(program: str, product: str) -> Path:
    """The installed `program`, or a skip saying how to install it."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{product} runs on Node.js, and node or npm is not installed here")
    for directory in agent_clis():
        candidate = directory / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip(
        f"{product} is not installed: run `bash .ci/install-agent-clis`, or set "
        f"BUGBOUT_AGENT_CLIS to a directory holding node_modules/.bin/{program}"
    )


def mini_program() -> Path:
    found = shutil.which("mini") or str(Path(sys.executable).parent / "mini")
    if not os.access(found, os.X_OK):
        pytest.skip("mini-swe-agent is not installed (pip install 'bugbout-tui[mini]')")
    return Path(found)


# --- the agents -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One agent: how to find it, point it at the server, and check what it sent."""

    name: str
    program: Callable[[], Path]
    dialect: Callable[[], Dialect]
    agent: Callable[[str], CodingAgent]
    """The adapter, given the server's URL."""
    env: Callable[[str], dict[str, str]]
    """The user's variables that point the agent at the server, given its URL."""
    sent: Callable[[Request], None]
    """Checks one model call: credentials, model, and no web tools offered."""
    quota: str
    """How the agent words the usage-limit error the server sends."""
    resets_in: timedelta | None = None
    """When the agent's usage-limit message says the limit resets, if it says so: the
    server's limit resets three hours on, and Codex names the time."""


def codex_sent(call: Request) -> None:
    assert call.path == "/v1/responses"
    assert call.headers["authorization"] == f"Bearer {KEY}"
    body = call.json
    assert body["model"] == "gpt-5.5" and body["stream"] is True
    assert {t.get("name") for t in body["tools"]} >= {"exec_command", "apply_patch"}
    assert not any(t.get("type") == "web_search" for t in body["tools"])


def claude_sent(call: Request) -> None:
    assert call.path == "/v1/messages"
    assert call.headers["x-api-key"] == KEY
    body = call.json
    assert body["model"] == "claude-sonnet-4-5" and body["stream"] is True
    tools = {t["name"] for t in body["tools"]}
    assert tools >= {"Bash", "Read", "Edit", "Write"}
    assert not tools & {"WebFetch", "WebSearch"}


def gemini_sent(call: Request) -> None:
    assert call.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    assert call.headers["x-goog-api-key"] == KEY
    tools = {f["name"] for t in call.json["tools"] for f in t.get("functionDeclarations", [])}
    assert tools >= {"run_shell_command", "read_file", "replace", "write_file"}
    assert not tools & {"web_fetch", "google_web_search"}


def mini_sent(call: Request) -> None:
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == f"Bearer {KEY}"
    body = call.json
    assert body["model"] == "scripted-model"
    assert [t["function"]["name"] for t in body["tools"]] == ["bash"]


CASES = [
    Case(
        name="codex",
        program=lambda: npm_program("codex", "Codex CLI"),
        dialect=OpenAIResponses,
        agent=lambda url: CodexAgent("gpt-5.5", options={"base-url": f"{url}/v1"}),
        env=lambda url: {"OPENAI_API_KEY": KEY},
        sent=codex_sent,
        quota="You’ve hit your usage limit. Upgrade to Pro",
        resets_in=timedelta(hours=3),
    ),
    Case(
        name="claude-code",
        program=lambda: npm_program("claude", "Claude Code"),
        dialect=AnthropicMessages,
        agent=lambda url: ClaudeCodeAgent("claude-sonnet-4-5"),
        env=lambda url: {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        sent=claude_sent,
        quota="API Error: Request rejected (429) · This request would exceed your account's "
        "rate limit.",
    ),
    Case(
        name="gemini-cli",
        program=lambda: npm_program("gemini", "Gemini CLI"),
        dialect=GeminiApi,
        agent=lambda url: GeminiCliAgent("gemini-2.5-pro"),
        env=lambda url: {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": KEY},
        sent=gemini_sent,
        quota="You have exhausted your daily quota on this model.",
    ),
    Case(
        name="mini-swe-agent",
        program=mini_program,
        dialect=OpenAIChat,
        agent=lambda url: MiniSweAgent(
            "openai/scripted-model",
            options={
                "step-limit": 20,
                "model-kwargs": {"api_base": f"{url}/v1", "max_retries": 0},
            },
        ),
        env=lambda url: {
            "OPENAI_API_KEY": KEY,
            # Offline: LiteLLM's bundled price list; a usage limit is not retried.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
        },
        sent=mini_sent,
        quota="You exceeded your current quota, please check your plan and billing details.",
    ),
]


# --- the project ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-bug project, mined and through ground truth once for the whole module."""
    base = tmp_path_factory.mktemp("real-agents")
    root = base / "calc"
    repo = GitRepo(root)
    repo.commit(
        "Add the calculator",
        files={
            "src/calc/__init__.py": "",
            "src/calc/ops.py": BUGGY,
            "tests/test_ops.py": "from calc.ops import add\n\n\n"
            "def test_add_runs():\n    add(1, 1)\n",
        },
    )
    repo.commit(
        "Fix add subtracting (#1)",
        files={
            "src/calc/ops.py": FIXED,
            "tests/test_add.py": "from calc.ops import add\n\n\n"
            "def test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    config = write_config(root, "calc", extra="timeout = 300\n")
    config.write_text(
        config.read_text().replace(
            "\n[run]\n", '\nenv = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n\n[run]\n', 1
        )
    )
    write_issues(root, {1: ("add() subtracts", STATEMENT)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BUGBOUT_HOME", str(base / "home"))
        bout = Bout(Project.load(root))
        bout.run(until="ground-truth")
    assert bout.oracles is not None
    scored = [task for task, oracle in bout.oracles.oracles.items() if oracle.scored]
    assert scored == ["calc-1"], bout.oracles
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the template with its own bugbout home, and a user without credentials."""
    bubblewrap()  # skips where bwrap cannot run
    copy = tmp_path / "calc"
    shutil.copytree(template, copy, symlinks=True, ignore=shutil.ignore_patterns("events.jsonl"))
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "bugbout-home"))
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "MSWEA_GLOBAL_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "XDG_")):
            monkeypatch.delenv(name)
    return copy


def race(
    case: Case, project: Path, turns: list[Turn], monkeypatch: pytest.MonkeyPatch
) -> tuple[Attempt, ModelServer]:
    """Race `case`'s agent on the project's one task against a server playing `turns`."""
    program = case.program()
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    with ModelServer(case.dialect(), turns) as server:
        for name, value in case.env(server.url).items():
            monkeypatch.setenv(name, value)
        bout = Bout(Project.load(project), contestants=[case.agent(server.url)])
        asyncio.run(bout.arun(until="race"))
    (attempt,) = bout.attempts["calc-1"]
    assert server.problems == [], server.problems
    for call in server.model_calls:
        case.sent(call)
    assert STATEMENT in server.model_calls[0].text
    assert prompted_test_command(project) in server.model_calls[0].text
    return attempt, server


def prompted_test_command(project: Path) -> str:
    """The command bugbout's prompt tells the agent to run the tests with."""
    interpreter = Environment(python=Path(sys.executable), root=None, key="", built=False)
    return agent_test_command(interpreter, Project.load(project).config.project)


def changed_lines(diff: str) -> list[str]:
    """The added and removed lines of a unified diff, headers left out."""
    return [
        line
        for line in diff.splitlines()
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
    ]


def log(attempt: Attempt) -> str:
    logs = Path(attempt.logdir)
    return "\n".join(f"{p.name}:\n{p.read_text()[-3000:]}" for p in sorted(logs.glob("*.log")))


ids = [case.name for case in CASES]


# --- the tests ------------------------------------------------------------------------


@pytest.mark.parametrize("view", ["host", "minimal"])
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_the_agent_fixes_the_bug_and_bugbout_records_exactly_that(
    case: Case, view: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In either view: the minimal one shows the agent its installation (the Node.js
    package and `node`, or its virtual environment), the checkout and the test
    interpreter, and nothing else of the machine but the system directories."""
    config = project / "bugbout.toml"
    config.write_text(config.read_text().replace("\n[run]\n", f'\n[run]\nagent-view = "{view}"\n'))
    turns: list[Turn] = [
        Read("src/calc/ops.py"),
        Edit("src/calc/ops.py", "    return a - b", "    return a + b"),
        Write("tests/test_add_regression.py", REGRESSION),
        Shell(prompted_test_command(project)),
        Finish(CLOSING),
    ]
    attempt, server = race(case, project, turns, monkeypatch)

    assert attempt.status == "finished", (attempt.status, attempt.detail, log(attempt))
    assert server.finished and len(server.model_calls) == len(turns)
    # The tests ran in the agent's sandbox: the old one and the new one, not the hidden one.
    assert "2 passed" in server.model_calls[-1].text
    patch = attempt.patch
    assert [(f.path, f.status, f.part) for f in patch.files] == [
        ("src/calc/ops.py", "modified", "source"),
        ("tests/test_add_regression.py", "added", "tests"),
    ]
    assert changed_lines(patch.source) == ["-    return a - b", "+    return a + b"]
    assert changed_lines(patch.tests) == ["+" + line for line in REGRESSION.splitlines()]
    assert patch.other == ""
    assert attempt.summary == CLOSING
    reported = server.usage
    assert (attempt.tokens.input, attempt.tokens.output, attempt.tokens.cached) == (
        reported.input,
        reported.output,
        reported.cached,
    )
    assert attempt.exit_code == 0


QUOTA_CASES = [
    *CASES,
    replace(
        CASES[0],
        name="codex-api-key",
        dialect=lambda: OpenAIResponses(limit="insufficient_quota"),
        quota="Quota exceeded. Check your plan and billing details.",
        resets_in=None,
    ),
]


@pytest.mark.parametrize("case", QUOTA_CASES, ids=[case.name for case in QUOTA_CASES])
def test_a_usage_limit_is_recorded_as_quota_with_the_agents_own_message(
    case: Case, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempt, server = race(case, project, [Limit()], monkeypatch)

    assert attempt.status == "quota", (attempt.status, attempt.detail, log(attempt))
    assert attempt.detail is not None and case.quota in attempt.detail, attempt.detail
    assert attempt.patch.is_empty
    assert attempt.exit_code != 0
    assert not server.finished
    if case.resets_in is not None:  # read from the agent's own words, to the minute
        assert attempt.resets_at is not None, attempt.detail
        off = attempt.resets_at - (attempt.ended_at + case.resets_in)
        assert abs(off) < timedelta(minutes=2), (attempt.detail, attempt.resets_at)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_the_sandbox_stops_escapes_from_the_working_copy(
    case: Case, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl, the network probe, is not installed (.ci/install-agent-clis does)")
    # Inside BUGBOUT_HOME: hidden in the sandbox (an empty, read-only directory), and
    # writable for anything outside it, so a write that got through would land there.
    outside = tmp_path / "bugbout-home" / "escaped-by-command"
    edited = tmp_path / "bugbout-home" / "escaped-by-edit"
    with HitRecorder() as recorder:
        # Claude Code itself refuses /dev/tcp redirections and Python code that opens a
        # URL, before its sandbox is tried; curl it lets through. "$?" keeps the command's
        # text from holding what its output is checked for.
        probe = f"curl -fsS -m 5 {recorder.url}; echo NETWORK-EXIT-$?"
        turns: list[Turn] = [
            Shell(probe),
            Shell(f"touch {outside} && echo WRITE'-OPEN' || echo WRITE'-CLOSED'"),
            Write(str(edited), "escaped\n"),
            Finish("Tried to get out."),
        ]
        attempt, server = race(case, project, turns, monkeypatch)

    assert server.finished, log(attempt)
    assert not outside.exists() and not edited.exists()
    results = server.model_calls[-1].text
    assert "WRITE-CLOSED" in results and "WRITE-OPEN" not in results
    (curl_exit,) = re.findall(r"NETWORK-EXIT-(\d+)", results)
    if case.name == "gemini-cli":
        # Documented: Gemini CLI runs whole inside bugbout's sandbox, network kept, so its
        # commands reach the network too (docs/agents.md). This keeps that page honest.
        assert recorder.hits == ["/escape"] and curl_exit == "0"
    else:
        assert recorder.connections == 0 and curl_exit != "0"
    assert attempt.status == "no-change", (attempt.status, attempt.detail, log(attempt))
    assert attempt.patch.is_empty
