"""An attempt's agent from its checkout to what it left: the part that runs where the
agent runs, on this machine or on a cluster's worker.

The race decides what to run and records how it ended; this starts the agent in its
working copy, confined, and reads back the patch and the agent's own report. Everything
it needs of the place it runs in (the repository, the sandbox, what no agent may read)
is handed to it, so the same steps run on a worker with the worker's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shlex
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bugbout_tui.agents.base import (
    STDERR_LOG,
    STDOUT_LOG,
    CodingAgent,
    Invocation,
    RunReport,
    Session,
)
from bugbout_tui.core.config import Config, ProjectConfig
from bugbout_tui.core.models import Task
from bugbout_tui.core.patch import Patch
from bugbout_tui.engine.testing import import_paths, tests_dir_at
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.proc import LineCallback, ProcessResult, command_line_problem, run_process
from bugbout_tui.infra.programs import interpreter_paths
from bugbout_tui.infra.sandbox import Confinement, Sandbox, View
from bugbout_tui.infra.workcopy import WorkingCopy, harvest, prepare_working_copy
from bugbout_tui.rules.prompts import Role, render_prompt


@dataclass(frozen=True)
class Entrant:
    """An agent in the race, as a contestant (fixes) or an examiner (writes tests).

    `view` is what its confined parts may read (see `Confinement.view`); None takes the
    bout's `[run] agent-view`.
    """

    agent: CodingAgent
    role: Literal["contestant", "examiner"] = "contestant"
    assignment: Literal["reproduce", "specify"] = "reproduce"
    view: View | None = None

    @property
    def prompt_role(self) -> Role:
        return "contestant" if self.role == "contestant" else self.assignment


def test_command(
    environment: Environment, project: ProjectConfig, tests_dir: str | None = None
) -> str:
    """The command an agent can run in its checkout to run the project's tests, with the
    same environment variables and pytest arguments bugbout's own runs use.

    As in bugbout's own runs, a module that cannot be collected (a file the export of a
    commit lacks, such as a submodule's) costs only its own tests, not the whole run.
    `tests_dir` is where the checkout's tests live when that is not `project.tests` (a
    project that has moved its tests since the task's commit)."""
    paths = [str(p) or "." for p in import_paths(Path(), project.source)]
    words = [f"{name}={shlex.quote(value)}" for name, value in sorted(project.env.items())]
    words += [f"PYTHONPATH={':'.join(paths)}", shlex.quote(str(environment.python))]
    words += ["-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    words += map(shlex.quote, project.pytest_args)
    words.append(shlex.quote(tests_dir or project.tests))
    return " ".join(words)


@dataclass(frozen=True)
class Launch:
    """What an attempt's agent is started with."""

    copy: WorkingCopy
    prompt: str
    session: Session
    invocation: Invocation


@dataclass(frozen=True)
class AgentRun:
    """The agents of a bout, where they run.

    Attributes:
        config: The bout's settings.
        sandbox: This machine's sandbox.
        hidden: What no agent may read here (every bugbout home, the store, the project,
            the repository with its history).
        guarded: Of those, what an interpreter's paths must not open again besides the
            bugbout homes (the store, the project, the repository); its own environment
            inside one is still shown (see `interpreter_paths`).
    """

    config: Config
    sandbox: Sandbox
    hidden: tuple[Path, ...]
    guarded: tuple[Path, ...]

    async def checkout(
        self, repo: Path, task: Task, workspace: Path, hidden: list[str]
    ) -> WorkingCopy:
        """The agent's history-free working copy of the task's base."""
        return await asyncio.to_thread(
            prepare_working_copy,
            repo,
            task.base_commit,
            workspace / "workdir",
            hidden=hidden,
            scratch=workspace / "git",
        )

    def bug_brief(
        self,
        entrant: Entrant,
        task: Task,
        copy: WorkingCopy,
        environment: Environment,
        statement: str,
    ) -> tuple[str, str]:
        """A bug's prompt, and the command that runs the project's tests in the task's
        test environment."""
        cfg = self.config.project
        tests_dir = tests_dir_at(copy.path, cfg.tests, task.test_files) or cfg.tests
        command = test_command(environment, cfg, tests_dir)
        prompt = render_prompt(
            entrant.prompt_role, statement=statement, test_command=command, tests_dir=tests_dir
        )
        return prompt, command

    async def launch(
        self,
        entrant: Entrant,
        copy: WorkingCopy,
        workspace: Path,
        prompt: str,
        command: str,
        python: Path,
    ) -> Launch:
        """The agent's session and invocation; the prompt is kept in its logs.

        Raises:
            BugboutError: the adapter cannot start the agent.
        """
        # The interpreter's paths, shown again where they lie in a hidden path (a test
        # environment in a bugbout home, a `.venv` inside the project): the prompt tells
        # the agent to run the tests with it.
        readable = await asyncio.to_thread(interpreter_paths, python, hidden=self.guarded)
        logdir = workspace / "logs"
        (logdir / "prompt.md").write_text(prompt, encoding="utf-8")
        agent = entrant.agent
        session = Session(
            prompt=prompt,
            workdir=copy.path,
            logdir=logdir,
            home=workspace / "home",
            sandbox=self.sandbox,
            model=agent.model,
            options=agent.settings,
            test_command=command,
            base_env=dict(os.environ),
            hidden=self.hidden,
            readable=readable,
            view=self.view(entrant),
        )
        return Launch(copy, prompt, session, agent.invocation(session))

    def argv(self, entrant: Entrant, launch: Launch) -> list[str]:
        """The agent's command line, inside its confinement when it has one."""
        invocation = launch.invocation
        confinement = self._confinement(
            entrant, launch.session, invocation.confinement, invocation.env
        )
        if confinement is None:
            return invocation.argv
        return self.sandbox.wrap(invocation.argv, confinement, cwd=launch.copy.path)

    async def run(
        self,
        launch: Launch,
        argv: Sequence[str],
        *,
        on_line: LineCallback,
        stop: asyncio.Event,
    ) -> ProcessResult:
        """The agent's process to its end (its logs kept plain files).

        Raises:
            OSError: the program could not be started.
        """
        invocation = launch.invocation
        logdir = launch.session.logdir
        result = await run_process(
            argv,
            cwd=launch.copy.path,
            env=invocation.env,
            timeout=self.config.run.timeout,
            stdout_path=logdir / STDOUT_LOG,
            stderr_path=logdir / STDERR_LOG,
            stdin=invocation.stdin.encode() if invocation.stdin is not None else None,
            on_line=on_line,
            stop=stop,
        )
        await asyncio.to_thread(keep_plain_files, logdir)
        return result

    async def collect(
        self, entrant: Entrant, launch: Launch, result: ProcessResult
    ) -> tuple[Patch, RunReport]:
        """The patch the agent left in its copy, and what it reports of itself.

        Raises:
            BugboutError, OSError: what it left cannot be read.
        """
        cfg = self.config
        patch = await asyncio.to_thread(
            harvest,
            launch.copy,
            source_dir=cfg.project.source,
            tests_dir=cfg.project.tests,
            max_files=cfg.run.max_patch_files,
            max_bytes=cfg.run.max_patch_bytes,
        )
        return patch, entrant.agent.parse(launch.session.logdir, result.returncode)

    def view(self, entrant: Entrant) -> View:
        return entrant.view or self.config.run.agent_view

    def _confinement(
        self,
        entrant: Entrant,
        session: Session,
        asked: Confinement | None,
        env: Mapping[str, str],
    ) -> Confinement | None:
        """The adapter's confinement with the answer hidden, in the entrant's view; an
        outer one for agents that confine their own commands, so their process cannot
        read the answer either."""
        if asked is not None:
            return dataclasses.replace(
                asked,
                hidden=(*asked.hidden, *self.hidden),
                readable=(*asked.readable, *session.readable),
                view=session.view,
            )
        if not entrant.agent.wants_sandbox:
            return None
        return Confinement(
            writable=(session.workdir, session.logdir, session.home),
            network=True,
            env=env,
            readable=session.readable,
            hidden=self.hidden,
            nested=True,
            view=session.view,
        )


def keep_plain_files(root: Path) -> None:
    """Delete whatever in `root` is neither a regular file nor a directory.

    The agent could write its log directory; bugbout reads it afterwards, unconfined. A
    link left there would point bugbout at any file of the user (which would then be
    stored as the attempt's summary), and a FIFO would block the run forever.
    """
    for parent, directories, files in os.walk(root):  # links to directories: not entered
        for name in [*directories, *files]:
            path = os.path.join(parent, name)
            with contextlib.suppress(FileNotFoundError):
                if not stat.S_ISREG(mode := os.lstat(path).st_mode) and not stat.S_ISDIR(mode):
                    os.unlink(path)


def launch_problem(argv: Sequence[str], launch: Launch) -> str | None:
    """Why `argv` cannot be started (too long for the system), and where the prompt is
    to go instead when it is the prompt that makes it so; None when it can."""
    problem = command_line_problem(argv, launch.invocation.env)
    if problem is None or not any(launch.prompt in word for word in launch.invocation.argv):
        return problem
    return (
        f"the prompt ({len(launch.prompt.encode()) // 1024} KiB) is on its command "
        f"line, and {problem}; give it to the agent as a file ({{prompt_file}}) "
        "or on standard input"
    )
