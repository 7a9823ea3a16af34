"""What an agent adapter is: how to start one agent headlessly, and how to read its logs.

bugbout judges an agent only by what it leaves on disk, so an adapter has two small jobs.
`invocation` turns one attempt (a `Session`) into a command line, its standard input and
its complete environment, plus the confinement bugbout must add when the agent does not
confine its own commands. `parse` reads the agent's logs back for the things a diff
cannot show: its closing summary, its token use and cost, and whether it stopped on a
usage limit. Everything else (checkouts, timeouts, logs, patches, scoring) is the
engine's.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bugbout_tui.agents.quota import ANY_LIMIT, find_limit
from bugbout_tui.core.agent_facts import AgentFacts, guess_vendor
from bugbout_tui.core.errors import ToolMissingError, UsageError
from bugbout_tui.core.trials import trial_name
from bugbout_tui.infra.sandbox import Confinement, Sandbox, View, scrub_environment

STDOUT_LOG = "stdout.log"
"""The agent's standard output, written by the engine into `Session.logdir`."""
STDERR_LOG = "stderr.log"
"""The agent's standard error, beside it."""

SUMMARY_CHARS = 2000
"""How much of the end of an agent's output stands in for a summary it did not give."""

_VERSION_TIMEOUT = 15.0
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")

_FACT_ATTRIBUTES = frozenset(
    {"harness", "executable", "install_hint", "options", "tested_version", "default_vendor"}
)
"""The class attributes an adapter built on `AgentFacts` takes from them."""

# Variables that point a program at a user's personal configuration; an isolated home
# only isolates when these no longer lead back to the real one.
_PERSONAL_DIRS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


@dataclass
class Session:
    """One attempt, as the engine hands it to an adapter.

    Attributes:
        prompt: The full task prompt.
        workdir: The history-free checkout; the agent's working directory.
        logdir: The attempt's log directory; the engine writes `stdout.log` and
            `stderr.log` there, and an adapter may point the agent's own logs at it.
        home: A fresh, empty directory for this attempt only, used as the agent's home
            and configuration directory so that nothing personal reaches it.
        sandbox: The sandbox of this run, for adapters that confine the agent themselves.
        model: The configured model, or None for the agent's default.
        options: The contestant's pass-through options from bugbout.toml, keys as written.
        test_command: The command that runs the project's tests in this checkout.
        base_env: The user's environment, unscrubbed: the adapter picks what to carry over.
        hidden: Paths no confined part of the agent may read (the fix's pristine tree,
            the repository's history); an adapter building its own `Confinement` for the
            agent's commands passes them on.
        readable: Paths a confined part must read: the test interpreter's paths, which
            may lie inside a hidden one (a test environment in a bugbout home, a `.venv`
            inside the project).
        view: What a confined part may read, `host` or `minimal` (see
            `Confinement.view`); an adapter building its own `Confinement` for the
            agent's commands passes it on.
    """

    prompt: str
    workdir: Path
    logdir: Path
    home: Path
    sandbox: Sandbox
    model: str | None
    options: Mapping[str, Any]
    test_command: str
    base_env: Mapping[str, str]
    hidden: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    view: View = "host"


@dataclass
class Invocation:
    """How to start the agent for one attempt.

    Attributes:
        argv: The command line.
        stdin: Text for standard input, closed after it; None gives the agent an empty one.
        env: The complete environment of the agent process.
        confinement: When set, the engine runs `argv` through
            `session.sandbox.wrap(argv, confinement, cwd=workdir)`; None leaves the process
            unconfined, for agents that sandbox their own commands.
    """

    argv: list[str]
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    confinement: Confinement | None = None


@dataclass
class Usage:
    """Tokens and money one attempt spent, as far as the agent reports them.

    Input counts every prompt token, cached ones included (`cached_tokens` says how many
    of them were read from a cache); output counts every generated token, reasoning
    included. None means the agent did not say.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None


@dataclass
class RunReport:
    """What an adapter reads back from an attempt's logs.

    Attributes:
        summary: The agent's closing words, or the end of its output.
        usage: Tokens and cost.
        quota_message: The agent's own usage-limit text when it stopped on one.
    """

    summary: str | None
    usage: Usage
    quota_message: str | None


class CodingAgent(ABC):
    """One kind of coding agent, configured with one model.

    Subclasses set the class attributes and implement `invocation`; `parse` has a
    default that suits any agent printing plain text. A built-in adapter takes its class
    attributes from its `AgentFacts` instead (`class CodexAgent(CodingAgent, facts=CODEX)`),
    the one description the config reads as well.
    """

    def __init_subclass__(cls, facts: AgentFacts | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if facts is None:
            return
        own = sorted(set(vars(cls)) & _FACT_ATTRIBUTES)
        if own:
            raise TypeError(
                f"{cls.__name__} takes its {', '.join(own)} from its AgentFacts; "
                "set them there, not in the class"
            )
        cls.harness = facts.harness
        cls.executable = facts.executable
        cls.install_hint = facts.install_hint
        cls.options = facts.options
        cls.tested_version = facts.tested_version
        cls.default_vendor = facts.default_vendor

    harness: ClassVar[str]
    """The agent type, as written in bugbout.toml (`agent = "..."`)."""
    executable: ClassVar[str]
    """The program looked up on PATH."""
    install_hint: ClassVar[str] = ""
    """How to install the program, shown when it is missing."""
    options: ClassVar[frozenset[str]] = frozenset()
    """The pass-through options the adapter accepts."""
    tested_version: ClassVar[str | None] = None
    """The program version whose command line this adapter was checked against."""
    default_vendor: ClassVar[str | None] = None
    """The vendor when the model says nothing, e.g. Codex's default model is OpenAI's."""

    def __init__(
        self,
        model: str | None = None,
        *,
        name: str | None = None,
        vendor: str | None = None,
        quota: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model or None
        self._name = name
        self._vendor = vendor
        self._quota = quota
        self.settings: dict[str, Any] = dict(options or {})
        """The pass-through options given, checked against `options`."""
        unknown = sorted(set(self.settings) - self.options)
        if unknown:
            raise UsageError(
                f"The {self.harness} agent has no option {unknown[0]!r}."
                + did_you_mean(unknown[0], self.options),
                hint=_options_hint(self.harness, self.options),
            )
        self.read_options()

    def read_options(self) -> None:  # noqa: B027 - optional hook; most adapters need none
        """Check the adapter's own options in `settings` and keep what they mean.

        Called at the end of construction, once the model and the names are set and
        no unknown option is left; raise UsageError for a value the agent cannot take,
        so the mistake is reported when the config loads, not when an attempt starts.
        """

    @property
    def name(self) -> str:
        """How the contestant appears in reports: `agent/model`, or `agent` alone."""
        if self._name:
            return self._name
        return f"{self.harness}/{self.model}" if self.model else self.harness

    def trial(self, number: int) -> CodingAgent:
        """This agent as its trial `number`: the same adapter, model, vendor, quota and
        options under the trial's name (`codex#2`; trial 1 is the agent itself)."""
        if number == 1:
            return self
        twin = copy.copy(self)
        twin._name = trial_name(self.name, number)
        twin.settings = dict(self.settings)
        return twin

    @property
    def vendor(self) -> str | None:
        """Who made the model: as configured, else guessed from its name; None if unknown."""
        if self._vendor:
            return self._vendor
        guessed = guess_vendor(self.model) if self.model else None
        return guessed or self.default_vendor

    @property
    def quota(self) -> str:
        """The rate limit this contestant shares with others: the agent type by default."""
        return self._quota or self.harness

    def command(self) -> str:
        """The program's full path; `ToolMissingError` saying how to install it if absent."""
        return find_program(
            self.executable, what=f"the {self.harness} agent", hint=self.install_hint
        )

    @property
    def wants_sandbox(self) -> bool:
        """Whether bugbout confines the agent's process. A user can say no for an agent that
        sandboxes itself (`sandboxed = false` on a command agent); an adapter only for an
        agent whose process never touches files at the model's request (mini-swe-agent)."""
        return True

    def version_argv(self) -> list[str]:
        """The command line that prints the program's version."""
        return [self.command(), "--version"]

    def version(self) -> str | None:
        """The installed program's version, or None when it cannot be told quickly."""
        try:
            result = subprocess.run(
                self.version_argv(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=_VERSION_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired, ToolMissingError):
            return None
        found = _VERSION.search(result.stdout) or _VERSION.search(result.stderr)
        return found.group(0) if found else None

    @abstractmethod
    def invocation(self, session: Session) -> Invocation:
        """How to start the agent on this attempt."""

    def parse(self, logdir: Path, exit_code: int | None) -> RunReport:
        """The end of standard output as the summary; a usage limit only on a failed exit."""
        stdout = read_log(logdir, STDOUT_LOG)
        stderr = read_log(logdir, STDERR_LOG)
        quota = None
        if exit_code not in (0, None):
            quota = find_limit([_tail(stdout), _tail(stderr)], ANY_LIMIT)
        return RunReport(summary=_tail(stdout).strip() or None, usage=Usage(), quota_message=quota)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r})"


def find_program(program: str, *, what: str, hint: str) -> str:
    """`program` resolved on PATH (or as a path), else a `ToolMissingError` with `hint`."""
    if os.sep in program:
        candidate = Path(program).expanduser()
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.absolute())
        if candidate.is_file():
            raise ToolMissingError(
                f"`{program}`, which runs {what}, is not executable.",
                hint=f"Make it executable (chmod +x {program}), or correct the command.",
            )
        found = None
    else:
        found = shutil.which(program)
    if found is None:
        raise ToolMissingError(
            f"`{program}`, which runs {what}, is not installed or not on PATH.", hint=hint or None
        )
    return found


def isolated_environment(
    base_env: Mapping[str, str], *, keep: Iterable[str], home: Path
) -> dict[str, str]:
    """The user's environment without credentials (but `keep`), with `home` as HOME.

    A fresh HOME keeps out everything personal a CLI would find there (its own config,
    `~/.env` files, global git and tool settings); the XDG variables are dropped so they
    cannot lead back to the real configuration.
    """
    env = scrub_environment(base_env, keep=keep)
    for variable in _PERSONAL_DIRS:
        env.pop(variable, None)
    env["HOME"] = str(home)
    return env


def user_home(base_env: Mapping[str, str]) -> Path:
    """The user's real home directory, as the environment names it."""
    return Path(base_env.get("HOME") or Path.home()).expanduser()


def copy_credentials(source: Path, target: Path, names: Iterable[str]) -> list[str]:
    """Copy the named credential files from `source` to `target`, private to the user.

    Only files that exist are copied; the list of those copied is returned.
    """
    copied: list[str] = []
    for name in names:
        original = source / name
        if not original.is_file():
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(original, destination)
        destination.chmod(0o600)
        copied.append(name)
    return copied


def read_log(logdir: Path, name: str) -> str:
    """A log file's text, or "" when the agent never got to write it (or made it unreadable)."""
    try:
        return (logdir / name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """ " Did you mean 'x'?" for the closest choice, or "" when none is close."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def choice_option(agent: CodingAgent, key: str, choices: Iterable[str]) -> str | None:
    """The option `key` of `agent`, checked to be one of `choices`; None when not given."""
    value = agent.settings.get(key)
    if value is None:
        return None
    allowed = tuple(choices)
    if not isinstance(value, str) or value not in allowed:
        raise UsageError(
            f"The {agent.harness} option {key!r} cannot be {value!r}."
            + (did_you_mean(value, allowed) if isinstance(value, str) else ""),
            hint=f"Use one of: {', '.join(allowed)}.",
        )
    return value


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects among the lines of a log; anything else (a stray warning) is skipped."""
    objects: list[dict[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def token_count(value: object) -> int | None:
    """A token count from parsed JSON, or None for anything that is not a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _options_hint(harness: str, options: frozenset[str]) -> str:
    if not options:
        return (
            f"The {harness} agent takes no options besides agent, model, name, vendor, quota "
            "and view."
        )
    return f"Options of the {harness} agent: " + ", ".join(sorted(options)) + "."


def _tail(text: str) -> str:
    return text[-SUMMARY_CHARS:]
