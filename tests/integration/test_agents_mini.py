"""mini-swe-agent for real: the `mini` program against a scripted model server.

The model is an OpenAI-compatible chat-completions server on 127.0.0.1 that answers with a
fixed sequence of bash tool calls, so the run exercises mini-swe-agent's own loop, the
generated configuration, the sandboxed environment class and `parse` together. These
tests need mini-swe-agent (`pip install 'bugbout-tui[mini]'`) and are skipped without it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fakes.harness import bubblewrap, make_session, run

from bugbout_tui.agents import MiniSweAgent, Session
from bugbout_tui.agents.mini_env import SandboxedEnvironment
from bugbout_tui.agents.mini_swe_agent import PLACEHOLDER, TRAJECTORY, yaml_compatible_json
from bugbout_tui.infra.sandbox import Confinement, NoSandbox, Sandbox

FIXED = "def add(a, b):\n    return a + b\n"
AWKWARD = (
    'Fix add(). tab\tnewline\n quote" backslash\\ del\x7f nel\x85 c1\x9f'
    " separator\u2028 bom\ufeff bug 🐛 {{ task }} {% raw %}"
)
"""A prompt with everything that could trip the configuration file or the templates."""


class ModelServer:
    """Replies to each chat completion with the next scripted reply, and records requests."""

    def __init__(self, replies: list[tuple[int, dict[str, Any]]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                status, reply = (
                    server.replies.pop(0)
                    if server.replies
                    else (500, {"error": {"message": "script over"}})
                )
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def bash(
    call: int, command: str, prompt_tokens: int = 1000, cached: int = 200
) -> tuple[int, dict[str, Any]]:
    """A chat completion asking for one bash command, with usage."""
    return 200, {
        "id": f"chatcmpl-{call}",
        "object": "chat.completion",
        "created": 1767139200,
        "model": "scripted-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": f"Step {call}.",
                    "tool_calls": [
                        {
                            "id": f"call_{call}",
                            "type": "function",
                            "function": {
                                "name": "bash",
                                "arguments": json.dumps({"command": command}),
                            },
                        }
                    ],
                },
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 50,
            "total_tokens": prompt_tokens + 50,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


RATE_LIMITED = (
    429,
    {
        "error": {
            "message": "Rate limit reached for requests per day. Please try again in 6h.",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    },
)


@pytest.fixture
def mini_program(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real `mini`: on PATH, beside this Python, or named by BUGBOUT_TEST_MINI."""
    found = os.environ.get("BUGBOUT_TEST_MINI") or shutil.which("mini")
    beside = Path(sys.executable).parent / "mini"
    if not found and beside.exists():
        found = str(beside)
    if not found:
        pytest.skip("mini-swe-agent is not installed (pip install 'bugbout-tui[mini]')")
    monkeypatch.setenv("PATH", f"{Path(found).parent}{os.pathsep}{os.environ['PATH']}")
    return Path(found)


def session_for(tmp_path: Path, sandbox: Sandbox, port: int) -> Session:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "user"),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-scripted",
        "ANTHROPIC_API_KEY": "must-not-leak",
        "GITHUB_TOKEN": "ghp_must_not_leak",
        # Offline: LiteLLM's bundled price list, and one attempt per model call.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
    }
    (tmp_path / "user").mkdir()
    return make_session(
        tmp_path, sandbox, base_env=env, model="openai/scripted-model", prompt=AWKWARD
    )


def agent(port: int) -> MiniSweAgent:
    return MiniSweAgent(
        "openai/scripted-model",
        options={
            "step-limit": 10,
            "model-kwargs": {"api_base": f"http://127.0.0.1:{port}/v1", "max_retries": 0},
        },
    )


@pytest.mark.slow
def test_mini_fixes_the_bug_with_sandboxed_commands(tmp_path: Path, mini_program: Path) -> None:
    sandbox = bubblewrap()
    outside = tmp_path / "outside"
    outside.mkdir()
    probe = (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\" "
        "&& echo NETWORK-OPEN || echo NETWORK-CLOSED"
    )
    with ModelServer([]) as server:
        commands = [
            "cat calc.py",
            "sed -i 's/a - b/a + b/' calc.py && printf "
            "'from calc import add\\n\\n\\ndef test_add():\\n    assert add(1, 2) == 3\\n'"
            " > test_calc.py",
            probe.format(port=server.port),
            f"touch {outside}/escaped || echo WRITE-REFUSED",
            'echo "key=${OPENAI_API_KEY:-none} token=${GITHUB_TOKEN:-none}"',
            "echo persisted > $TMPDIR/note && cat $TMPDIR/note",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ]
        server.replies = [bash(i + 1, c) for i, c in enumerate(commands)]
        session = session_for(tmp_path, sandbox, server.port)
        adapter = agent(server.port)
        code = run(adapter, session)

    stderr = (session.logdir / "stderr.log").read_text()
    assert code == 0, stderr[-3000:]
    assert (session.workdir / "calc.py").read_text() == FIXED
    assert (session.workdir / "test_calc.py").exists()
    assert not (outside / "escaped").exists()
    assert len(server.requests) == len(commands)
    assert server.requests[0]["auth"] == "Bearer sk-scripted"
    assert server.requests[0]["body"]["model"] == "scripted-model"
    task = server.requests[0]["body"]["messages"][1]["content"]
    assert AWKWARD in (task if isinstance(task, str) else task[0]["text"])

    trajectory = json.loads((session.logdir / TRAJECTORY).read_text())
    observations = [m["content"] for m in trajectory["messages"] if m.get("role") == "tool"]
    assert "NETWORK-CLOSED" in observations[2]
    assert "WRITE-REFUSED" in observations[3]
    assert "key=none token=none" in observations[4]
    assert "persisted" in observations[5]
    assert trajectory["info"]["exit_status"] == "Submitted"

    report = adapter.parse(session.logdir, code)
    assert report.usage.input_tokens == 1000 * len(commands)
    assert report.usage.output_tokens == 50 * len(commands)
    assert report.usage.cached_tokens == 200 * len(commands)
    assert report.usage.cost_usd == 0.0
    assert report.summary == f"Step {len(commands)}."
    assert report.quota_message is None


@pytest.mark.slow
def test_mini_rate_limit_is_a_quota_stop(tmp_path: Path, mini_program: Path) -> None:
    with ModelServer([bash(1, "cat calc.py"), RATE_LIMITED]) as server:
        session = session_for(tmp_path, NoSandbox(), server.port)
        adapter = agent(server.port)
        code = run(adapter, session)

    assert code != 0
    report = adapter.parse(session.logdir, code)
    assert report.quota_message is not None
    assert "Rate limit reached for requests per day" in report.quota_message
    assert report.usage.input_tokens == 1000


# --- without mini-swe-agent installed -------------------------------------------------


def trajectory_report(tmp_path: Path, trajectory: object) -> Any:
    (tmp_path / TRAJECTORY).write_text(json.dumps(trajectory))
    return MiniSweAgent("openai/gpt-5").parse(tmp_path, 1)


def test_parse_reads_usage_cost_and_rate_limits(tmp_path: Path) -> None:
    usage = {
        "prompt_tokens": 700,
        "completion_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 100},
    }
    report = trajectory_report(
        tmp_path,
        {
            "info": {
                "model_stats": {"instance_cost": 0.05, "api_calls": 2},
                "exit_status": "RateLimitError",
            },
            "messages": [
                {"role": "system", "content": "s"},
                {
                    "role": "assistant",
                    "content": "Looking.",
                    "extra": {"response": {"usage": usage}},
                },
                {"role": "tool", "content": "out", "extra": {"returncode": 0}},
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Editing."}],
                    "extra": {"response": {"usage": usage}},
                },
                {
                    "role": "exit",
                    "content": "x",
                    "extra": {
                        "exit_status": "RateLimitError",
                        "exception_str": "litellm.RateLimitError: quota",
                    },
                },
            ],
            "trajectory_format": "mini-swe-agent-1.1",
        },
    )
    assert (report.usage.input_tokens, report.usage.output_tokens, report.usage.cached_tokens) == (
        1400,
        60,
        200,
    )
    assert report.usage.cost_usd == 0.05
    assert report.summary == "Editing."
    assert report.quota_message == "litellm.RateLimitError: quota"


def test_parse_other_errors_and_missing_trajectory(tmp_path: Path) -> None:
    report = trajectory_report(
        tmp_path,
        {
            "info": {"exit_status": "AuthenticationError"},
            "messages": [
                {"role": "exit", "content": "x", "extra": {"exception_str": "Incorrect API key"}}
            ],
        },
    )
    assert report.quota_message is None
    (tmp_path / TRAJECTORY).unlink()
    (tmp_path / "stdout.log").write_text("ImportError: no module named litellm\n")
    fallback = MiniSweAgent("openai/gpt-5").parse(tmp_path, 1)
    assert fallback.summary == "ImportError: no module named litellm"
    assert fallback.usage.input_tokens is None


def test_sandboxed_environment_runs_each_command_confined(tmp_path: Path) -> None:
    sandbox = bubblewrap()
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    confinement = Confinement(writable=(workdir,), network=False, env=env)
    environment = SandboxedEnvironment(
        argv=sandbox.wrap(["bash", "-c", PLACEHOLDER], confinement, cwd=workdir),
        placeholder=PLACEHOLDER,
        env=env,
        cwd=str(workdir),
        timeout=2,
    )

    wrote = environment.execute({"command": "echo hi > made.txt && pwd && touch /usr/escaped"})
    assert (workdir / "made.txt").read_text() == "hi\n"
    assert str(workdir) in wrote["output"] and wrote["returncode"] != 0
    slow = environment.execute({"command": "sleep 30"})
    assert slow["returncode"] == -1 and "stopped after 2 seconds" in slow["exception_info"]
    assert environment.get_template_vars()["system"] == "Linux"
    assert environment.serialize()["info"]["config"]["environment"]["cwd"] == str(workdir)
    with pytest.raises(ValueError, match="placeholder exactly once"):
        SandboxedEnvironment(argv=["bash", "-c", "x"], placeholder=PLACEHOLDER, env={}, cwd="/")


def test_configuration_survives_a_yaml_reader(tmp_path: Path) -> None:
    """Prompts carry anything an issue does; the JSON must read back the same as YAML."""
    written = yaml_compatible_json({"task": AWKWARD})
    assert json.loads(written) == {"task": AWKWARD}
    for char in "\x7f\x85\x9f\u2028\ufeff":
        assert char not in written
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(written) == {"task": AWKWARD}
