"""Adapters driving the strict fake CLIs for real, then reading their logs back.

Each fake parses its command line as strictly as the real CLI and prints the real output
format (tests/fakes), so a run here checks the command line, the environment, the
isolated home and `parse` together. Runs that bugbout confines go through bubblewrap as
well as through no sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.harness import (
    FAKES,
    bubblewrap,
    calls,
    fake_env,
    make_session,
    run,
    write_script,
)

from bugbout_tui.agents import (
    ClaudeCodeAgent,
    CodexAgent,
    CommandAgent,
    GeminiCliAgent,
    Session,
)
from bugbout_tui.infra.sandbox import BubblewrapSandbox, NoSandbox, Sandbox

FIX = {"write": "calc.py", "content": "def add(a, b):\n    return a + b\n"}
TEST = {
    "write": "test_calc.py",
    "content": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
FIXED = "def add(a, b):\n    return a + b\n"


@pytest.fixture(autouse=True)
def fakes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture(params=["none", "bubblewrap"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return NoSandbox() if request.param == "none" else bubblewrap()


def new_session(tmp_path: Path, sandbox: Sandbox | None = None, **env: str) -> Session:
    (tmp_path / "user").mkdir(exist_ok=True)
    return make_session(tmp_path, sandbox or NoSandbox(), base_env=fake_env(tmp_path, **env))


def only_call(session: Session) -> dict[str, Any]:
    recorded = calls(session.logdir / "fake-calls.jsonl")
    assert len(recorded) == 1
    return recorded[0]


# --- Codex ---------------------------------------------------------------------------


def test_codex_fixes_reports_and_sees_only_its_own_credentials(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    (tmp_path / "user" / ".codex").mkdir()
    (tmp_path / "user" / ".codex" / "auth.json").write_text("{}")
    (tmp_path / "user" / ".codex" / "config.toml").write_text('model = "mine"\n')
    write_script(
        session,
        [
            FIX,
            TEST,
            {"run": "python3 -c 'import calc; print(calc.add(1, 2))'"},
            {"say": "Fixed add() and added a regression test."},
            {"usage": {"input": 24763, "cached": 24448, "output": 122}},
        ],
    )
    agent = CodexAgent("gpt-5.1-codex", options={"reasoning-effort": "low"})

    assert run(agent, session) == 0
    assert (session.workdir / "calc.py").read_text() == FIXED
    assert (session.workdir / "test_calc.py").exists()
    report = agent.parse(session.logdir, 0)
    assert report.summary == "Fixed add() and added a regression test."
    assert (report.usage.input_tokens, report.usage.cached_tokens) == (24763, 24448)
    assert report.usage.output_tokens == 122
    assert report.usage.cost_usd is None
    assert report.quota_message is None

    call = only_call(session)
    assert call["argv"] == agent.invocation(session).argv[1:]
    assert call["prompt"] == session.prompt
    assert call["home_files"] == ["auth.json"]
    assert call["env"]["CODEX_API_KEY"] == "codex-test"
    assert not {"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN"} & set(call["env"])
    events = [json.loads(line) for line in (session.logdir / "stdout.log").read_text().splitlines()]
    commands = [e["item"] for e in events if e.get("item", {}).get("type") == "command_execution"]
    assert commands[-1]["aggregated_output"].strip() == "3"
    # The fake warns about feature flags it does not know; ours are all known to 0.171.
    assert not any(e.get("item", {}).get("type") == "error" for e in events)


@pytest.mark.parametrize("apostrophe", ["’", "'"])
def test_codex_usage_limit(tmp_path: Path, apostrophe: str) -> None:
    session = new_session(tmp_path)
    message = f"You{apostrophe}ve hit your usage limit. Try again at 4:57 PM."
    write_script(session, [{"say": "Looking at calc.py"}, {"limit": message}])
    agent = CodexAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.quota_message == message
    assert report.summary == "Looking at calc.py"


def test_codex_other_failure_is_no_usage_limit(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    write_script(session, [{"fail": "stream disconnected before completion"}])
    agent = CodexAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.quota_message is None
    assert report.summary == "stream disconnected before completion"


def test_codex_has_no_web_search(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    write_script(session, [{"web": "python calc bug fix"}, {"say": "done"}])

    assert run(CodexAgent(), session) == 0
    events = [json.loads(line) for line in (session.logdir / "stdout.log").read_text().splitlines()]
    assert not [e for e in events if e.get("item", {}).get("type") == "web_search"]


def run_fake(
    name: str, *args: str, cwd: Path, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The fake `name` run directly with `args`, outside any session: how it answers a
    command line."""
    return subprocess.run(
        [str(FAKES / name), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True
    )


def test_codex_fake_is_as_strict_as_codex(tmp_path: Path) -> None:
    def codex(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CODEX_HOME": str(tmp_path)}
        return run_fake("codex", *args, cwd=cwd, env=env, stdin="hi")

    for removed in (["--full-auto"], ["--search"], ["-a", "never"], ["--json-output"]):
        result = codex("exec", *removed, "--skip-git-repo-check", "-")
        assert result.returncode == 2, removed
        assert f"unexpected argument '{removed[0]}'" in result.stderr
    assert codex("exec", "--ski", "-").returncode == 2  # no abbreviations
    outside = codex("exec", "--json", "-")
    assert outside.returncode == 1
    assert "--skip-git-repo-check was not specified" in outside.stderr
    bad_mode = codex("exec", "--skip-git-repo-check", "-c", 'web_search="off"', "-")
    assert bad_mode.returncode == 1 and "unknown variant `off`" in bad_mode.stderr
    assert codex("--version").stdout.strip() == "codex-cli 0.171.0"


def test_codex_sandbox_mode_decides_what_the_fake_may_edit(tmp_path: Path) -> None:
    """Without `-s workspace-write` Codex edits nothing: the fake must show that too."""
    (tmp_path / "w").mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([FIX]))
    env = {**os.environ, "CODEX_HOME": str(tmp_path), "BUGBOUT_FAKE_SCRIPT": str(script)}
    base = [
        str(FAKES / "codex"),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        str(tmp_path / "w"),
    ]
    subprocess.run([*base, "-"], env=env, input=b"fix", capture_output=True, check=True)
    assert not (tmp_path / "w" / "calc.py").exists()
    subprocess.run(
        [*base, "-s", "workspace-write", "-"],
        env=env,
        input=b"fix",
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "w" / "calc.py").read_text() == FIXED


# --- Claude Code ---------------------------------------------------------------------


def test_claude_code_fixes_reports_usage_and_cost(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    write_script(
        session,
        [
            FIX,
            {"run": "python3 -c 'import calc; assert calc.add(1, 2) == 3'"},
            {"web": "https://github.com/example/calc/issues/1"},
            {"write": str(tmp_path / "outside.txt"), "content": "no"},
            {"say": "The sign was wrong; fixed it."},
            {"usage": {"input": 560, "cached": 4000, "output": 24}, "cost": 0.1637},
        ],
    )
    agent = ClaudeCodeAgent("sonnet", options={"effort": "high"})

    assert run(agent, session) == 0
    assert (session.workdir / "calc.py").read_text() == FIXED
    assert not (tmp_path / "outside.txt").exists()
    report = agent.parse(session.logdir, 0)
    assert report.summary == "The sign was wrong; fixed it."
    assert report.usage.input_tokens == 4560
    assert report.usage.cached_tokens == 4000
    assert report.usage.output_tokens == 24
    assert report.usage.cost_usd == pytest.approx(0.1637)
    assert report.quota_message is None

    lines = [json.loads(line) for line in (session.logdir / "stdout.log").read_text().splitlines()]
    result = lines[-1]
    denied = [d["tool_name"] for d in result["permission_denials"]]
    assert denied == ["WebFetch", "Write"]
    init = lines[0]
    assert "WebFetch" not in init["tools"] and "WebSearch" not in init["tools"]
    call = only_call(session)
    assert call["argv"] == agent.invocation(session).argv[1:]
    assert call["stdin"] == session.prompt
    assert not {"OPENAI_API_KEY", "CODEX_API_KEY", "GITHUB_TOKEN"} & set(call["env"])


def test_claude_code_usage_limit_reads_as_success_with_an_error(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    write_script(session, [{"say": "Reading calc.py"}, {"limit": True}])
    agent = ClaudeCodeAgent()

    assert run(agent, session) == 1
    result = json.loads((session.logdir / "stdout.log").read_text().splitlines()[-1])
    assert (result["subtype"], result["is_error"], result["api_error_status"]) == (
        "success",
        True,
        429,
    )
    report = agent.parse(session.logdir, 1)
    assert report.quota_message == "You've hit your limit · resets 2:50am (UTC)"


def test_claude_code_logged_in_with_copied_credentials_only(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    session.base_env = {k: v for k, v in session.base_env.items() if k != "ANTHROPIC_API_KEY"}
    write_script(session, [{"say": "hello"}])
    agent = ClaudeCodeAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.summary == "Not logged in · Please run /login"
    assert report.quota_message is None

    (tmp_path / "user" / ".claude").mkdir()
    (tmp_path / "user" / ".claude" / ".credentials.json").write_text("{}")
    (tmp_path / "user" / ".claude" / "CLAUDE.md").write_text("personal\n")
    (session.logdir / "fake-calls.jsonl").unlink()
    assert run(agent, session) == 0
    assert agent.parse(session.logdir, 0).summary == "hello"
    assert only_call(session)["home_files"] == [".credentials.json"]


def test_claude_code_killed_run_keeps_its_last_words(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    write_script(session, [{"say": "Halfway through the fix"}, {"exit": 137}])
    agent = ClaudeCodeAgent()

    assert run(agent, session) == 137
    report = agent.parse(session.logdir, None)
    assert report.summary == "Halfway through the fix"
    assert report.quota_message is None


def test_claude_fake_is_as_strict_as_claude(tmp_path: Path) -> None:
    def claude(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
        return run_fake("claude", *args, cwd=tmp_path, env=env, stdin="hi")

    unknown = claude("-p", "--bogus-flag")
    assert unknown.returncode == 1 and "unknown option '--bogus-flag'" in unknown.stderr
    stream = claude("-p", "--output-format", "stream-json")
    assert stream.returncode == 1 and "requires --verbose" in stream.stderr
    assert claude("-p", "--permission-mode", "manual").returncode == 1  # not in 2.1.197
    assert claude("-p", "--setting-sources", "user,global").returncode == 1
    if os.geteuid() == 0:
        assert claude("-p", "--dangerously-skip-permissions").returncode == 1
    assert claude("--version").stdout.strip() == "2.1.197 (Claude Code)"


# --- Gemini CLI ----------------------------------------------------------------------


def test_gemini_cli_fixes_and_reports(tmp_path: Path, sandbox: Sandbox) -> None:
    session = new_session(tmp_path, sandbox)
    write_script(
        session,
        [
            FIX,
            {"web": "https://github.com/example/calc/issues/1"},
            {"say": "Fixed the subtraction."},
            {"usage": {"input": 9000, "cached": 1000, "output": 300}},
        ],
    )
    agent = GeminiCliAgent("gemini-2.5-flash")

    assert run(agent, session) == 0
    assert (session.workdir / "calc.py").read_text() == FIXED
    report = agent.parse(session.logdir, 0)
    assert report.summary == "Fixed the subtraction."
    assert (report.usage.input_tokens, report.usage.output_tokens) == (9000, 300)
    assert report.usage.cached_tokens == 1000
    assert report.quota_message is None
    stderr = (session.logdir / "stderr.log").read_text()
    assert 'Tool "web_fetch" not found in registry' in stderr
    call = only_call(session)
    assert call["argv"] == agent.invocation(session).argv[1:]
    assert call["env"]["GEMINI_API_KEY"] == "gemini-test"
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"} & set(call["env"])


def test_gemini_cli_signs_in_with_copied_oauth_credentials(tmp_path: Path) -> None:
    session = new_session(tmp_path, bubblewrap())
    session.base_env = {k: v for k, v in session.base_env.items() if k != "GEMINI_API_KEY"}
    user = tmp_path / "user" / ".gemini"
    user.mkdir()
    (user / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "oauth-personal"}}})
    )
    write_script(session, [{"say": "signed in"}])
    agent = GeminiCliAgent()

    assert run(agent, session) == 41
    assert "no cached credentials" in (session.logdir / "stderr.log").read_text()
    (user / "oauth_creds.json").write_text("{}")
    assert run(agent, session) == 0
    assert agent.parse(session.logdir, 0).summary == "signed in"


def test_gemini_cli_is_confined_to_its_checkout(tmp_path: Path) -> None:
    session = new_session(tmp_path, bubblewrap())
    outside = tmp_path / "outside"
    outside.mkdir()
    write_script(
        session,
        [
            {"run": f"touch {outside}/escaped; touch {session.workdir}/inside"},
            {"say": "tried"},
        ],
    )

    assert run(GeminiCliAgent(), session) == 0
    assert (session.workdir / "inside").exists()
    assert not (outside / "escaped").exists()


@pytest.mark.parametrize(
    "message",
    ["You have exhausted your daily quota on this model.", "Quota exceeded: RESOURCE_EXHAUSTED"],
)
def test_gemini_cli_usage_limit(tmp_path: Path, message: str) -> None:
    session = new_session(tmp_path)
    write_script(session, [{"limit": message}])
    agent = GeminiCliAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.quota_message == message
    assert report.summary == message


def test_gemini_cli_usage_limit_keeps_the_suggested_retry_below_it(tmp_path: Path) -> None:
    """Gemini CLI adds the API's retry delay on a line of its own: the lane's reset time."""
    session = new_session(tmp_path)
    message = "Resource has been exhausted (e.g. check quota).\nSuggested retry after 3600s."
    write_script(session, [{"limit": message}])
    agent = GeminiCliAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.quota_message == (
        "Resource has been exhausted (e.g. check quota). Suggested retry after 3600s."
    )


@pytest.mark.parametrize(
    "script",
    [
        [{"fail": "Context window will overflow (RESOURCE_EXHAUSTED)"}],
        [
            {
                "stderr": "Attempt 1 failed: You have exhausted your capacity on this model. "
                "Your quota will reset after 5s.. Retrying after 5000ms..."
            },
            {"fail": "Requested entity was not found."},
        ],
    ],
    ids=["context-overflow", "retried-then-other-error"],
)
def test_gemini_cli_other_failures_are_no_usage_limit(
    tmp_path: Path, script: list[dict[str, str]]
) -> None:
    session = new_session(tmp_path)
    write_script(session, script)
    agent = GeminiCliAgent()

    assert run(agent, session) == 1
    report = agent.parse(session.logdir, 1)
    assert report.quota_message is None
    assert report.summary == script[-1]["fail"]


def test_gemini_fake_is_as_strict_as_gemini(tmp_path: Path) -> None:
    def gemini(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "GEMINI_CLI_HOME": str(tmp_path), "GEMINI_API_KEY": "k"}
        env.pop("BUGBOUT_FAKE_SCRIPT", None)
        return run_fake("gemini", *args, cwd=tmp_path, env=env)

    unknown = gemini("--bogus-flag", "-p", "x")
    assert unknown.returncode == 1 and "Unknown arguments: bogus-flag, bogusFlag" in unknown.stderr
    both = gemini("--yolo", "--approval-mode", "yolo", "-p", "x")
    assert both.returncode == 1 and "Cannot use both --yolo" in both.stderr
    assert gemini("--approval-mode", "auto", "-p", "x").returncode == 1
    untrusted = gemini("--approval-mode", "yolo", "-p", "x")
    assert 'overridden to "default" because the current folder is not trusted' in untrusted.stderr
    assert gemini("--version").stdout.strip() == "0.61.0"


# --- command agents ------------------------------------------------------------------

AGENT = """
import os, pathlib, socket, sys
prompt = pathlib.Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else sys.stdin.read()
pathlib.Path("calc.py").write_text("def add(a, b):\\n    return a + b\\n")
with socket.create_connection(("127.0.0.1", int(os.environ["MODEL_PORT"])), timeout=5) as s:
    s.sendall(prompt.encode())
for target in os.environ["TRY_WRITE"].split(":"):
    try:
        pathlib.Path(target).write_text("x")
        print("wrote", target)
    except OSError:
        print("refused", target)
print("I fixed add().")
"""


@pytest.fixture
def model_server() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on the loopback standing in for the agent's model."""
    received: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                received.append(conn.recv(65536))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
    server.close()
    thread.join(timeout=5)


@pytest.mark.parametrize("prompt_file", [True, False])
def test_command_agent_runs_confined_with_network(
    tmp_path: Path, sandbox: Sandbox, model_server: tuple[int, list[bytes]], prompt_file: bool
) -> None:
    port, received = model_server
    state = tmp_path / "user" / ".state"
    outside = tmp_path / "outside.txt"
    session = new_session(
        tmp_path,
        sandbox,
        MODEL_PORT=str(port),
        TRY_WRITE=f"{state}/s.txt:{outside}",
    )
    command = [sys.executable, "-c", AGENT, *(["{prompt_file}"] if prompt_file else [])]
    agent = CommandAgent(name="scripted", options={"command": command, "state-dirs": ["~/.state"]})

    assert run(agent, session) == 0
    assert (session.workdir / "calc.py").read_text() == FIXED
    assert received == [session.prompt.encode()]
    output = (session.logdir / "stdout.log").read_text()
    assert f"wrote {state}/s.txt" in output
    # Under bubblewrap the write lands in the sandbox's private /tmp and vanishes with it.
    assert outside.exists() is not isinstance(sandbox, BubblewrapSandbox)
    report = agent.parse(session.logdir, 0)
    assert report.summary is not None and report.summary.endswith("I fixed add().")
    assert report.quota_message is None


def test_command_agent_usage_limit_only_on_a_failed_exit(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    say = "print('Error: You’ve hit your usage limit. Try again later.'); raise SystemExit({})"
    stopped = CommandAgent(name="a", options={"command": [sys.executable, "-c", say.format(1)]})
    assert run(stopped, session) == 1
    assert stopped.parse(session.logdir, 1).quota_message == (
        "Error: You’ve hit your usage limit. Try again later."
    )
    finished = CommandAgent(name="b", options={"command": [sys.executable, "-c", say.format(0)]})
    assert run(finished, session) == 0
    assert finished.parse(session.logdir, 0).quota_message is None
