"""Any agent with a command line, configured in bugbout.toml alone.

bugbout knows nothing about such an agent, so it confines the whole process: network on
(the agent must reach its model), writes only in the checkout, its log directory and the
state directories the user lists. Its environment is the user's without credentials; the
user hands it the ones it needs through `env`, explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from string import Template

from bugbout_tui.agents.base import CodingAgent, Invocation, Session, did_you_mean, find_program
from bugbout_tui.core.agent_facts import COMMAND
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.infra.sandbox import Confinement, scrub_environment

PLACEHOLDERS = frozenset({"prompt", "prompt_file", "workdir", "logdir", "model"})
PROMPT_FILE = "prompt.md"
"""The file `{prompt_file}` names, in the attempt's log directory."""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class CommandAgent(CodingAgent, facts=COMMAND):
    """A command line with placeholders, run in bugbout's sandbox unless told otherwise."""

    def read_options(self) -> None:
        name = self._name
        if not name:
            raise UsageError(
                "A command agent needs a name: there is no agent type to name it after.",
                hint='Add name = "..." to its entry in bugbout.toml.',
            )
        self.template = _command(self.settings.get("command"), name)
        used = {m for part in self.template for m in _PLACEHOLDER.findall(part)}
        unknown = sorted(used - PLACEHOLDERS)
        if unknown:
            raise UsageError(
                f"The command of {name!r} has an unknown placeholder {{{unknown[0]}}}."
                + did_you_mean(unknown[0], PLACEHOLDERS),
                hint="Placeholders: " + ", ".join(f"{{{p}}}" for p in sorted(PLACEHOLDERS)) + ".",
            )
        if "model" in used and not self.model:
            raise UsageError(
                f"The command of {name!r} uses {{model}}, but no model is set.",
                hint='Add model = "..." to its entry in bugbout.toml.',
            )
        self.uses_prompt = bool(used & {"prompt", "prompt_file"})
        self.extra_env = _env(self.settings.get("env", {}), name)
        self.state_dirs = _strings(self.settings.get("state-dirs", []), "state-dirs", name)
        for entry in self.state_dirs:
            if not (entry == "~" or entry.startswith("~/") or Path(entry).is_absolute()):
                raise UsageError(
                    f"The state directory {entry!r} of {name!r} is neither absolute nor under ~.",
                    hint='Write it as a full path or from your home, e.g. "~/.aider".',
                )
        sandboxed = self.settings.get("sandboxed", True)
        if not isinstance(sandboxed, bool):
            raise UsageError(f"The option 'sandboxed' of {name!r} must be true or false.")
        self.sandboxed = sandboxed

    @property
    def wants_sandbox(self) -> bool:
        return self.sandboxed

    @property
    def program(self) -> str:
        """The program the command starts."""
        return self.template[0]

    def command(self) -> str:
        return find_program(
            self.program,
            what=f"the agent {self.name!r}",
            hint="Install it, or correct `command` of this agent in bugbout.toml.",
        )

    def invocation(self, session: Session) -> Invocation:
        values = {
            "prompt": session.prompt,
            "prompt_file": str(session.logdir / PROMPT_FILE),
            "workdir": str(session.workdir),
            "logdir": str(session.logdir),
            "model": self.model or "",
        }
        if any("{prompt_file}" in part for part in self.template):
            write_atomic(session.logdir / PROMPT_FILE, session.prompt)
        argv = [self.command()] + [
            _PLACEHOLDER.sub(lambda m: values[m.group(1)], part) for part in self.template[1:]
        ]
        env = scrub_environment(session.base_env)
        # `$NAME` in a value reads the user's own variable, so a key need not be written
        # into bugbout.toml to reach the one agent that should have it.
        env.update(
            {k: Template(v).safe_substitute(session.base_env) for k, v in self.extra_env.items()}
        )
        home = Path(session.base_env.get("HOME") or Path.home())
        state_dirs = []
        for entry in self.state_dirs:
            path = home / entry[2:] if entry == "~" or entry.startswith("~/") else Path(entry)
            path.mkdir(parents=True, exist_ok=True)
            state_dirs.append(path)
        confinement = None
        if self.sandboxed:
            confinement = Confinement(
                writable=(session.workdir, session.logdir, *state_dirs), network=True, env=env
            )
        return Invocation(
            argv=argv,
            stdin=None if self.uses_prompt else session.prompt,
            env=env,
            confinement=confinement,
        )


def _command(value: object, name: str) -> list[str]:
    if value is None:
        raise UsageError(
            f"The command agent {name!r} has no `command`.",
            hint='Give the command line as a list, e.g. command = ["my-agent", "{prompt}"].',
        )
    command = _strings(value, "command", name)
    if not command or not command[0]:
        raise UsageError(f"The `command` of {name!r} is empty.")
    return command


def _strings(value: object, key: str, name: str) -> list[str]:
    if (
        isinstance(value, str)
        or not isinstance(value, Sequence)
        or not all(isinstance(v, str) for v in value)
    ):
        raise UsageError(
            f"The option {key!r} of {name!r} must be a list of strings, not {value!r}.",
            hint=f'For example: {key} = ["..."]',
        )
    return list(value)


def _env(value: object, name: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in value.items()
    ):
        raise UsageError(
            f"The option 'env' of {name!r} must be a table of variables, not {value!r}.",
            hint='For example: env = { OPENAI_API_KEY = "..." }',
        )
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()}
