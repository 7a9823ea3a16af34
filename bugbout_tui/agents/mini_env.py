"""A mini-swe-agent environment that runs each shell command inside bugbout's sandbox.

mini-swe-agent imports its environment class by dotted path inside its own process, which
may live in another Python installation (`uv tool install mini-swe-agent`), where bugbout
cannot be imported. So this module depends on the standard library, pydantic and
mini-swe-agent only, and the adapter copies it next to the run's configuration. bugbout
computes the sandboxed command line once, with a placeholder where the command goes;
this class only substitutes the command and runs the result.
"""

from __future__ import annotations

import importlib
import os
import platform
import signal
import subprocess
from typing import Any

from pydantic import BaseModel

FINISHED = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The first output line with which mini-swe-agent's prompts tell the model to finish."""


class SandboxedEnvironmentConfig(BaseModel):
    """What bugbout writes into the run's configuration under `environment`."""

    argv: list[str]
    """The sandboxed command line, with `placeholder` as one whole argument."""
    placeholder: str
    env: dict[str, str]
    """The complete environment of each command: no credentials, no model keys."""
    cwd: str
    timeout: int = 600
    """Seconds one command may run before its process group is killed."""


class SandboxedEnvironment:
    """Runs `bash -c <command>` through the sandbox, one fresh confinement per command."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = SandboxedEnvironmentConfig(**kwargs)
        if self.config.argv.count(self.config.placeholder) != 1:
            raise ValueError("the sandboxed command line must hold the placeholder exactly once")

    def execute(
        self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None
    ) -> dict[str, Any]:
        """Run one action; its output, return code and any failure, as mini-swe-agent expects."""
        command = str(action.get("command", ""))
        argv = [command if part == self.config.placeholder else part for part in self.config.argv]
        limit = timeout or self.config.timeout
        process = subprocess.Popen(
            argv,
            cwd=cwd or self.config.cwd,
            env=self.config.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        try:
            stdout, _ = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, _ = process.communicate()
            output: dict[str, Any] = {
                "output": stdout or "",
                "returncode": -1,
                "exception_info": f"The command was stopped after {limit} seconds.",
                "extra": {"exception_type": "TimeoutExpired", "exception": f"timeout {limit}s"},
            }
        else:
            output = {"output": stdout, "returncode": process.returncode, "exception_info": ""}
        self._check_finished(output)
        return output

    def _check_finished(self, output: dict[str, Any]) -> None:
        """Raise mini-swe-agent's `Submitted` when the command printed the finishing line."""
        lines = str(output.get("output", "")).lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == FINISHED and output.get("returncode") == 0:
            submission = "".join(lines[1:])
            exceptions = importlib.import_module("minisweagent.exceptions")
            raise exceptions.Submitted(
                {
                    "role": "exit",
                    "content": submission,
                    "extra": {"exit_status": "Submitted", "submission": submission},
                }
            )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """The variables mini-swe-agent's prompt templates use (system, release, machine, ...)."""
        return {
            **self.config.model_dump(),
            **platform.uname()._asdict(),
            **self.config.env,
            **kwargs,
        }

    def serialize(self) -> dict[str, Any]:
        """The environment's part of the trajectory file."""
        return {
            "info": {
                "config": {
                    "environment": self.config.model_dump(mode="json"),
                    "environment_type": f"{type(self).__module__}.{type(self).__name__}",
                }
            }
        }
