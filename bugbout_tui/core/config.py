"""`bugbout.toml` as a validated model.

Keys are written with dashes, as in `pyproject.toml`; in Python they are snake_case
attributes. Unknown keys are errors everywhere except in an agent's table, where any
extra key is an option for that agent's adapter. Loading reports every problem at once,
each with the line to fix (see `config_errors`).
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from importlib.metadata import entry_points
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Self

import tomlkit
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from tomlkit.exceptions import ParseError, TOMLKitError

from bugbout_tui.core.agent_facts import (
    BUILTIN_FACTS,
    ENTRY_POINT_GROUP,
    UNKNOWN_VENDOR,
    AgentFacts,
    guess_vendor,
)
from bugbout_tui.core.config_errors import (
    ConfigError,
    ConfigProblem,
    Explain,
    Loc,
    config_error,
    display_path,
    problems_from,
    raise_all,
    redefinitions,
    suggest,
)
from bugbout_tui.core.env_models import TaskKind
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.git_urls import github_repo_from_url, is_git_url
from bugbout_tui.core.models import BASE, SUITE
from bugbout_tui.core.patch import MAX_PATCH_BYTES, MAX_PATCH_FILES
from bugbout_tui.core.prices import Budget, Price, PriceTable, parse_budget, shipped_prices
from bugbout_tui.core.trials import TRIAL_SUFFIX

__all__ = [
    "CONFIG_NAME",
    "RESERVED_NAMES",
    "AgentConfig",
    "AgentView",
    "Assignment",
    "Billing",
    "Config",
    "ConfigError",
    "ConfigProblem",
    "ContestantConfig",
    "Decision",
    "ExaminerConfig",
    "JudgeConfig",
    "Policy",
    "PriceConfig",
    "ProjectConfig",
    "RunConfig",
    "Sandbox",
    "TasksConfig",
    "load_config",
    "parse_config_text",
    "parse_toml",
    "read_config_text",
    "validate_config",
]

CONFIG_NAME = "bugbout.toml"

RESERVED_NAMES: dict[str, str] = {
    BASE: "the unfixed code in the cross-examination matrix",
    SUITE: "the repository's own tests in the cross-examination matrix",
    "oracle": "the report's row “Oracle (any patch right)”",
    "judge": "the report's row “Judge (policy)” and its column “Judge only”",
    "random": "the report's row “Random agent (expected)”",
    "total": "the report's row “Total” of cost and tokens",
    "abstained": "what the report shows for a task the judge picked no patch for",
}
"""Names no agent may take, in any case: the report and the matrix would show it as
something else. Each maps to what already goes by that name."""

Sandbox = Literal["auto", "bubblewrap", "seatbelt", "none"]
EnvironmentsMode = Literal["dated", "tip"]
AgentView = Literal["host", "minimal"]
Policy = Literal["majority", "unanimous", "strict", "cross-vendor", "credible"]
Assignment = Literal["reproduce", "specify"]
Decision = Literal["accepted", "excluded"]
Billing = Literal["api", "plan"]
"""How an agent's use is paid: per token at API prices, or by a subscription plan whose
tokens cost nothing more each (Codex signed in with ChatGPT, Claude Code on Pro/Max,
Gemini CLI with a Google login)."""

_AGENT_NICKNAMES = {
    "claude": "claude-code",
    "claude-cli": "claude-code",
    "gemini": "gemini-cli",
    "mini": "mini-swe-agent",
    "mini-swe": "mini-swe-agent",
    "swe-agent": "mini-swe-agent",
    "codex-cli": "codex",
}

_GITHUB_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+$")
_PYTHON_VERSION = re.compile(r"^3\.\d{1,2}$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BUDGET_INVALID = (
    'must be an amount with its unit in quotes, e.g. "$20", "2M tokens" or "40 attempts"'
)
_PRICE_INVALID = "must be a number of dollars per million tokens, at least 0"
_DURATION = re.compile(r"(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?")
_SCHEDULER = re.compile(r"(?:[a-z][a-z0-9+]*://)?[^\s:/]+(?::\d+)?/?")
_SCHEDULER_EXAMPLE = 'must be a scheduler\'s address such as "tcp://10.0.0.5:8786"'
_DURATION_EXAMPLE = 'must be a duration such as "6h", "90m", "1h30m" or "45s"'


def _dashed(name: str) -> str:
    return name.replace("_", "-")


def _vendor_of(agent: str, model: str | None) -> str:
    """Who made the model, which the `cross-vendor` policy needs to tell authors apart.

    The model's name decides when it names a known family; otherwise the agent type,
    whose default model is its maker's; otherwise "unknown".
    """
    facts = BUILTIN_FACTS.get(agent)
    guessed = guess_vendor(model) if model else None
    return guessed or (facts.default_vendor if facts else None) or UNKNOWN_VENDOR


def _registered_agents() -> set[str]:
    return set(entry_points(group=ENTRY_POINT_GROUP).names)


def _misspelled_agent(agent: str) -> str | None:
    """The built-in meant by a name that is clearly a slip, or None for a plausible adapter.

    Names an installed package registers are never slips. Anything else that is not close
    to a built-in is left to the adapter registry, which can list what is installed.
    """
    if agent in BUILTIN_FACTS:
        return None
    folded = agent.strip().lower().replace("_", "-")
    guess = _AGENT_NICKNAMES.get(folded) or (folded if folded in BUILTIN_FACTS else None)
    guess = guess or suggest(folded, BUILTIN_FACTS, cutoff=0.8)
    if guess is None or agent in _registered_agents():
        return None
    return guess


class _Section(BaseModel):
    """A table of bugbout.toml: strict types, dashed keys, nothing unknown."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=_dashed,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


def _root(info: ValidationInfo) -> Path | None:
    """The directory of bugbout.toml, when the caller gave one for checking paths."""
    context = info.context
    if isinstance(context, Mapping):
        root = context.get("root")
        if isinstance(root, Path):
            return root
    return None


def _budget_text(value: str | None) -> str | None:
    """A budget as written, checked to be an amount with its unit."""
    if value is None:
        return None
    try:
        parse_budget(value)
    except ValueError as exc:
        raise config_error(str(exc)) from None
    return value


def _relative_dir(value: str, what: str) -> str:
    path = PurePosixPath(value.strip())
    if not value.strip() or path.is_absolute() or ".." in path.parts:
        raise config_error(f"must be a directory inside the repository, e.g. {what}")
    return str(path)


class ProjectConfig(_Section):
    """`[project]`: the code under test and how its tests run."""

    source: Annotated[
        str,
        Explain(
            invalid='must be the package directory in quotes, e.g. "src/mypkg"',
            missing='name the package directory, relative to the repository root, e.g. "src/mypkg"',
        ),
    ]
    tests: str = "tests"
    repository: str = "."
    github: Annotated[
        str | None, Explain(invalid='must be a GitHub repository in quotes, e.g. "owner/name"')
    ] = None
    python: Annotated[
        str | None, Explain(invalid='must be a Python version in quotes, e.g. "3.12"')
    ] = None
    test_dependencies: list[str] = Field(default_factory=lambda: ["pytest"])
    pytest_args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    install_project: bool = True
    interpreter: str | None = None
    issues_file: str | None = None
    environments: EnvironmentsMode = "dated"
    """`dated`: each task's environment is resolved from its own commit's manifests as
    of the fix's date; `tip`: one environment from the tip's, for every task."""

    @field_validator("source")
    @classmethod
    def _source_is_relative(cls, value: str) -> str:
        normalised = _relative_dir(value, '"src/mypkg"')
        if normalised == ".":
            raise config_error('must name the package directory itself, e.g. "src/mypkg"')
        return normalised

    @field_validator("tests")
    @classmethod
    def _tests_is_relative(cls, value: str) -> str:
        return _relative_dir(value, '"tests"')

    @field_validator("github")
    @classmethod
    def _github_shape(cls, value: str | None) -> str | None:
        if value is None or _GITHUB_REPO.match(value):
            return value
        from_url = github_repo_from_url(value)
        raise config_error(
            'must be a GitHub repository as owner/name, e.g. "psf/requests"',
            suggestion=from_url,
        )

    @field_validator("python")
    @classmethod
    def _python_shape(cls, value: str | None) -> str | None:
        if value is None or _PYTHON_VERSION.match(value):
            return value
        raise config_error('must be a Python 3 version as major.minor, e.g. "3.12"')

    @field_validator("repository", "interpreter", "issues_file")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise config_error("must not be empty")
        return value

    @model_validator(mode="after")
    def _paths_exist(self, info: ValidationInfo) -> Self:
        """Check the paths a run will need, so a typo surfaces now and with its line."""
        root = _root(info)
        if root is None:
            return self
        errors: list[tuple[Loc, PydanticCustomError]] = []
        repository = self.repository_dir(root)
        if repository is not None:
            if not repository.is_dir():
                errors.append((("repository",), config_error(f"no directory at {repository}")))
            elif (
                not _is_bare_repository(repository)  # no files to look at, only history
                and not (repository / self.source).is_dir()
            ):
                errors.append(
                    (("source",), config_error(f"no directory '{self.source}' in {repository}"))
                )
        if self.interpreter is not None:
            interpreter = _resolve(root, self.interpreter)
            if not interpreter.is_file():
                errors.append((("interpreter",), config_error(f"no Python at {interpreter}")))
        if self.issues_file is not None:
            issues = _resolve(root, self.issues_file)
            if not issues.is_file():
                errors.append((("issues-file",), config_error(f"no file at {issues}")))
        raise_all(type(self).__name__, errors)
        return self

    @property
    def repository_is_url(self) -> bool:
        return is_git_url(self.repository)

    def repository_dir(self, root: Path) -> Path | None:
        """The repository's directory, or None when it is a URL still to be cloned."""
        return None if self.repository_is_url else _resolve(root, self.repository)

    def python_version(self) -> str:
        """The configured version, else the running interpreter's, as `3.X`."""
        return self.python or f"{sys.version_info.major}.{sys.version_info.minor}"


def _bugs_only() -> list[TaskKind]:
    return ["bug"]


class TasksConfig(_Section):
    """`[tasks]`: which fixes become tasks, and a person's decisions about them."""

    since: Annotated[date | None, Explain(invalid='must be a date such as "2023-01-01"')] = None
    limit: Annotated[int, Field(ge=1), Explain(invalid="must be a whole number, at least 1")] = 20
    max_source_files: Annotated[
        int, Field(ge=1), Explain(invalid="must be a whole number, at least 1")
    ] = 2
    reruns: Annotated[
        int, Field(ge=1, le=20), Explain(invalid="must be a whole number from 1 to 20")
    ] = 2
    """How many times the ground truth runs the fix (the base runs once): a test whose
    outcome differs between those runs is unstable, and quarantined. 1 finds no flake
    there; the ledger may still find one elsewhere."""
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    require_review: bool = False
    kinds: Annotated[
        list[TaskKind],
        Explain(invalid='must list what to mine: "bug", "env" or both, e.g. ["bug", "env"]'),
    ] = Field(default_factory=_bugs_only)
    """What the history is mined for: fixes with a new test (`bug`), changes to the
    environment files alone that make a failing install or run succeed (`env`). Empty
    mines nothing, for a bout of the Lite set alone (`[env] lite`)."""

    @field_validator("since", mode="before")
    @classmethod
    def _parse_since(cls, value: object) -> object:
        if isinstance(value, datetime):
            raise config_error("must be a date without a time, e.g. 2023-01-01")
        if isinstance(value, str):
            if not _ISO_DATE.match(value):
                raise config_error('must be a date such as "2023-01-01"')
            try:
                return date.fromisoformat(value)
            except ValueError:
                raise config_error(f"'{value}' is not a date in the calendar") from None
        return value

    @model_validator(mode="after")
    def _decided_once(self) -> Self:
        included = set(self.include)
        errors: list[tuple[Loc, PydanticCustomError]] = [
            (
                ("exclude", index),
                config_error(f"task '{task}' is both included and excluded; keep it in one list"),
            )
            for index, task in enumerate(self.exclude)
            if task in included
        ]
        raise_all(type(self).__name__, errors)
        return self

    def decision(self, task_id: str) -> Decision | None:
        if task_id in self.include:
            return "accepted"
        if task_id in self.exclude:
            return "excluded"
        return None

    def is_raceable(self, task_id: str) -> bool:
        """Excluded tasks never race; under `require-review` only accepted ones do."""
        decision = self.decision(task_id)
        if decision == "excluded":
            return False
        return decision == "accepted" or not self.require_review


class RunConfig(_Section):
    """`[run]`: confinement, time limits and how many runs share a quota."""

    sandbox: Sandbox = "auto"
    agent_view: AgentView = "host"
    timeout: Annotated[
        int, Field(gt=0), Explain(invalid="must be a positive whole number of seconds")
    ] = 1800
    test_timeout: Annotated[
        int, Field(gt=0), Explain(invalid="must be a positive whole number of seconds")
    ] = 600
    quotas: Annotated[
        dict[str, Annotated[int, Field(ge=1)]],
        Explain(invalid="must be a whole number of runs at once, at least 1"),
    ] = Field(default_factory=dict)
    max_patch_files: Annotated[
        int, Field(gt=0), Explain(invalid="must be a positive whole number of files")
    ] = MAX_PATCH_FILES
    """A patch changing more files is not kept: the attempt is `oversized`, no fix."""
    max_patch_bytes: Annotated[
        int, Field(gt=0), Explain(invalid="must be a positive whole number of bytes")
    ] = MAX_PATCH_BYTES
    """Nor is one whose changed files weigh more (each the larger of before and after)."""
    hide_touched_tests: bool = False
    """Keep every test file the fix touched out of the agents' checkouts, old content
    and all, rather than hand them the base's test files as they were."""
    budget: Annotated[str | None, Explain(invalid=_BUDGET_INVALID)] = None
    """What the whole bout may spend, every contestant and examiner together: an amount
    in dollars, tokens or attempts (`"$20"`, `"2M tokens"`, `"40 attempts"`)."""
    stop_when_decided: bool = False
    """Start no new bug once every pair of contestants is decided by the sequential
    McNemar comparison of bugs (`rules.sequential`); environment tasks are not compared,
    and still start."""
    decided_at: Annotated[
        float,
        Field(gt=0, lt=1),
        Explain(invalid="must be a level between 0 and 1, such as 0.05"),
    ] = 0.05
    """The chance, at most, that any pair `stop-when-decided` decides is decided wrongly."""

    _check_budget = field_validator("budget")(_budget_text)

    @property
    def budget_limit(self) -> Budget | None:
        return None if self.budget is None else parse_budget(self.budget)

    trials: Annotated[
        int, Field(ge=1), Explain(invalid="must be a whole number of trials, at least 1")
    ] = 1
    """Independent attempts of each contestant on each task, each from a fresh checkout
    and a fresh agent home; a contestant's own `trials` overrides it."""
    wait_for_quota: timedelta | None = None
    """How long a lane parked on a usage limit may wait for its window to reopen and
    then resume within the run; None: it parks until a later run."""
    cluster: str | None = None
    """The address of a Dask scheduler whose workers make the bout's test runs, and the
    attempts of the agents they declare (`--cluster` and `BUGBOUT_CLUSTER` override
    it); None: this machine alone."""

    @field_validator("cluster")
    @classmethod
    def _check_cluster(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not _SCHEDULER.fullmatch(value.strip()):
            raise config_error(_SCHEDULER_EXAMPLE)
        return value.strip()

    @field_validator("wait_for_quota", mode="before")
    @classmethod
    def _parse_wait(cls, value: object) -> object:
        if value is None:
            return None
        found = _DURATION.fullmatch(value.strip()) if isinstance(value, str) else None
        if found is None or not any(found.groupdict().values()):
            raise config_error(_DURATION_EXAMPLE)
        parts = {unit: int(n) for unit, n in found.groupdict().items() if n is not None}
        wait = timedelta(hours=parts.get("h", 0), minutes=parts.get("m", 0),
                         seconds=parts.get("s", 0))  # fmt: skip
        if not wait:
            raise config_error(f"{_DURATION_EXAMPLE}; leave it out not to wait")
        return wait

    def capacity(self, quota: str) -> int:
        """How many runs on `quota` may go at once; one unless raised."""
        return self.quotas.get(quota, 1)


class PriceConfig(_Section):
    """`[prices."<model>"]`: a model's price in dollars per million tokens, over the one
    bugbout ships (or for a model it has none for). `cached` defaults to `input`."""

    input: Annotated[float, Field(ge=0), Explain(invalid=_PRICE_INVALID)]
    output: Annotated[float, Field(ge=0), Explain(invalid=_PRICE_INVALID)]
    cached: Annotated[float | None, Field(ge=0), Explain(invalid=_PRICE_INVALID)] = None

    def price(self) -> Price:
        return Price(
            input=self.input,
            output=self.output,
            cached=self.input if self.cached is None else self.cached,
        )


class EnvConfig(_Section):
    """`[env]`: where environment tasks install from and are audited against."""

    index: str = "https://pypi.org/simple"
    """The package index a repair is installed from (a simple API that gives upload
    times, so the task's date limit holds)."""
    advisories: str = "https://pypi.org/pypi"
    """The index's JSON API: yanked releases, removed projects, published advisories."""
    lite: bool = False
    """Race the built-in Lite projects too (`bugbout env-lite` races them alone)."""


class JudgeConfig(_Section):
    """`[judge]`: the rule that picks one patch per bug."""

    policy: Policy = "majority"
    run_suite: bool = True


class AgentConfig(_Section):
    """One agent with one model. Keys it does not know are options for its adapter."""

    model_config = ConfigDict(extra="allow")

    agent: Annotated[str, Field(min_length=1)]
    model: str | None = None
    name: Annotated[
        str,
        Field(min_length=1),
        Explain(missing="a command agent has no type to be named after; give it a name"),
    ]
    vendor: Annotated[str, Field(min_length=1)]
    quota: Annotated[str, Field(min_length=1)]
    view: AgentView | None = None
    """What the agent may read; None takes `[run] agent-view`."""
    billing: Billing = "api"
    """`plan` for an agent signed in to a subscription: its tokens are shown, no price."""
    budget: Annotated[str | None, Explain(invalid=_BUDGET_INVALID)] = None
    """What this agent may spend over the bout, all its trials together."""

    _check_budget = field_validator("budget")(_budget_text)

    @property
    def budget_limit(self) -> Budget | None:
        return None if self.budget is None else parse_budget(self.budget)

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        """Name, vendor and quota follow from agent and model unless given."""
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str):
            return data
        filled = dict(data)
        agent = filled["agent"]
        model = filled.get("model") if isinstance(filled.get("model"), str) else None
        filled.setdefault("quota", agent)
        filled.setdefault("vendor", _vendor_of(agent, model))
        facts = BUILTIN_FACTS.get(agent)
        if facts is None or not facts.needs_name:
            filled.setdefault("name", f"{agent}/{model}" if model else agent)
        return filled

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        raise_all(type(self).__name__, self._problems())
        return self

    def _problems(self) -> list[tuple[Loc, PydanticCustomError]]:
        errors: list[tuple[Loc, PydanticCustomError]] = []
        meant = _misspelled_agent(self.agent)
        if meant is not None:
            errors.append(
                (("agent",), config_error(f"'{self.agent}' is not an agent", suggestion=meant))
            )
        facts = BUILTIN_FACTS.get(self.agent)
        if facts is not None and facts.model_example is not None and self.model is None:
            errors.append(
                (
                    ("model",),
                    config_error(f"{self.agent} needs {facts.model_example}", kind="missing-key"),
                )
            )
        if self.agent == "command":
            errors.extend(self._command_problems())
        limit = self.budget_limit
        if limit is not None and limit.unit == "usd" and self.billing == "plan":
            errors.append(
                (
                    ("budget",),
                    config_error(
                        'an agent on a plan (billing = "plan") spends no dollars per attempt; '
                        'give its budget in tokens or attempts, e.g. "2M tokens"'
                    ),
                )
            )
        if TRIAL_SUFFIX.search(self.name):
            errors.append(
                (
                    ("name",),
                    config_error(
                        f"'{self.name}' ends like a repeated trial (`#2` is a contestant's "
                        "second trial); choose a name that does not end in # and a number"
                    ),
                )
            )
        own = {info.alias or name for name, info in type(self).model_fields.items()}
        for key in self.options:
            if key in _REFUSED_ELSEWHERE:  # keys of the other table, refused by it
                continue
            if facts is not None:
                errors.extend(_option_problem(facts, key, own))
                continue
            # A plug-in may define any option, but one a letter away from a key every
            # agent has is that key mistyped, and would silently not apply.
            meant = _dashed(key) if _dashed(key) in own and key != _dashed(key) else None
            if meant is None and key not in own:
                close = difflib.get_close_matches(key, sorted(own), n=1, cutoff=0.8)
                meant = close[0] if close and close[0] != key else None
            if meant is not None:
                errors.append(((key,), config_error("", kind="unknown-key", suggestion=meant)))
        return errors

    def _command_problems(self) -> list[tuple[Loc, PydanticCustomError]]:
        command = self.options.get("command")
        if command is None:
            return [
                (
                    ("command",),
                    config_error(
                        "a command agent needs its command line as a list, "
                        'e.g. ["my-agent", "{prompt_file}"]',
                        kind="missing-key",
                    ),
                )
            ]
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            return [
                (
                    ("command",),
                    config_error(
                        'must be a non-empty list of strings, e.g. ["my-agent", "{prompt_file}"]'
                    ),
                )
            ]
        return []

    @property
    def options(self) -> dict[str, Any]:
        """Adapter options: every key of the table this model does not define."""
        return dict(self.model_extra or {})


def _option_problem(
    facts: AgentFacts, key: str, own: set[str]
) -> list[tuple[Loc, PydanticCustomError]]:
    """The error for `key` in an entry of a built-in agent, or none when it takes the option."""
    if key in facts.options:
        return []
    meant = suggest(key, sorted(facts.options | own))
    if meant is not None:
        message = ""
    elif facts.options:
        message = f"the {facts.harness} agent's options are " + ", ".join(sorted(facts.options))
    else:
        message = f"the {facts.harness} agent takes no options"
    return [((key,), config_error(message, kind="unknown-key", suggestion=meant))]


_REFUSED_ELSEWHERE = frozenset({"assignment", "trials"})
"""Keys one kind of agent table has and the other refuses with its own message."""


class ContestantConfig(AgentConfig):
    """A `[[contestants]]` entry: an agent that tries to fix each bug."""

    trials: Annotated[
        int | None, Field(ge=1), Explain(invalid="must be a whole number of trials, at least 1")
    ] = None
    """Its independent attempts per task; None takes `[run] trials`."""

    def _problems(self) -> list[tuple[Loc, PydanticCustomError]]:
        errors = super()._problems()
        if "assignment" in self.options:
            errors.append(
                (
                    ("assignment",),
                    config_error(
                        "only [[examiners]] have an assignment; move this agent there "
                        "or remove the key"
                    ),
                )
            )
        return errors


class ExaminerConfig(AgentConfig):
    """An `[[examiners]]` entry: an agent that writes tests from the issue, fixing nothing."""

    assignment: Assignment = "reproduce"

    def _problems(self) -> list[tuple[Loc, PydanticCustomError]]:
        errors = super()._problems()
        if "trials" in self.options:
            errors.append(
                (
                    ("trials",),
                    config_error(
                        "examiners write their tests once per task and take no trials; "
                        "trials are for [[contestants]], so remove the key"
                    ),
                )
            )
        return errors


class Config(_Section):
    """The whole of bugbout.toml."""

    project: ProjectConfig
    tasks: TasksConfig = Field(default_factory=lambda: TasksConfig.model_validate({}))
    run: RunConfig = Field(default_factory=lambda: RunConfig.model_validate({}))
    judge: JudgeConfig = Field(default_factory=lambda: JudgeConfig.model_validate({}))
    env: EnvConfig = Field(default_factory=lambda: EnvConfig.model_validate({}))
    contestants: Annotated[
        list[ContestantConfig],
        Explain(invalid="must be an array of tables: write each one as [[contestants]]"),
    ] = Field(default_factory=list)
    examiners: Annotated[
        list[ExaminerConfig],
        Explain(invalid="must be an array of tables: write each one as [[examiners]]"),
    ] = Field(default_factory=list)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)

    _file: Path | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _project_table(cls, data: Any) -> Any:
        """A missing `[project]` is reported as its one required key, which says more."""
        if isinstance(data, dict) and "project" not in data:
            return {**data, "project": {}}
        return data

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        errors: list[tuple[Loc, PydanticCustomError]] = []
        seen: dict[str, str] = {}
        for table, agents in (("contestants", self.contestants), ("examiners", self.examiners)):
            agents_seq: list[AgentConfig] = list(agents)
            for index, agent in enumerate(agents_seq):
                taken = RESERVED_NAMES.get(agent.name.casefold()) or seen.get(agent.name)
                if taken is not None:
                    errors.append(
                        (
                            (table, index, "name"),
                            config_error(
                                f"'{agent.name}' is already the name of {taken}; "
                                "give each agent its own name"
                            ),
                        )
                    )
                else:
                    seen[agent.name] = f"[[{table}]] #{index + 1}"
        raise_all(type(self).__name__, errors)
        return self

    @model_validator(mode="after")
    def _something_to_race(self) -> Self:
        """An empty `kinds` mines nothing: without the Lite set, a bout would have no task."""
        if not self.tasks.kinds and not self.env.lite:
            problem = config_error(
                'is empty, so nothing is mined: list "bug", "env" or both, or set '
                "[env] lite = true to race the Lite set alone"
            )
            raise_all(type(self).__name__, [(("tasks", "kinds"), problem)])
        return self

    def trials_of(self, contestant: ContestantConfig) -> int:
        """How many trials `contestant` runs on each task: its own, else `[run] trials`."""
        return contestant.trials if contestant.trials is not None else self.run.trials

    @classmethod
    def load(cls, path: Path) -> Config:
        return load_config(path)

    @property
    def file(self) -> Path | None:
        """The bugbout.toml this was loaded from, if any."""
        return self._file

    @property
    def root(self) -> Path:
        """The directory relative paths in the file are resolved against."""
        return self._file.parent if self._file is not None else Path.cwd()

    def resolve(self, relative: str) -> Path:
        """A path from the file (interpreter, issues-file, repository) made absolute."""
        return _resolve(self.root, relative)

    def price_table(self) -> PriceTable:
        """The shipped prices with this project's `[prices]` over them."""
        return shipped_prices().with_overrides(
            {model: entry.price() for model, entry in self.prices.items()}
        )

    @property
    def agents(self) -> list[AgentConfig]:
        """Contestants then examiners: everyone whose tests take part in cross-examination."""
        return [*self.contestants, *self.examiners]


def _is_bare_repository(path: Path) -> bool:
    """A bare git repository: git's own files at the top, and nothing checked out."""
    return (
        (path / "HEAD").is_file()
        and (path / "objects").is_dir()
        and (path / "refs").is_dir()
        and not (path / ".git").exists()
    )


def _resolve(root: Path, relative: str) -> Path:
    path = Path(relative).expanduser()
    return path if path.is_absolute() else root / path


def parse_toml(text: str, file: Path) -> tomlkit.TOMLDocument:
    """Parse with tomlkit, turning a syntax error into a problem with its line and column."""
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError([_syntax_problem(exc, text, file)]) from None


def _syntax_problem(exc: TOMLKitError, text: str, file: Path) -> ConfigProblem:
    message = re.sub(r" at line \d+ col \d+$", "", str(exc))
    message = message.replace("Unexpected character: '\\x00'", "unexpected end of file")
    message = re.sub(r'^Key "(.*)" already exists\.$', r"'\1' is defined twice", message)
    message = message[:1].lower() + message[1:]
    if not isinstance(exc, ParseError):
        # tomlkit does not place every repeated key; the scanner can.
        repeats = redefinitions(text)
        line = repeats[0][1] if repeats else 1
        return ConfigProblem(file=file, line=line, key="", kind="syntax", message=message)
    lines = text.splitlines()
    source_line = lines[exc.line - 1] if 0 < exc.line <= len(lines) else ""
    before, after = source_line[: exc.col], source_line[exc.col :]
    bare = re.match(r"[A-Za-z][\w.-]*", after)
    if bare and "=" in before and message.startswith("unexpected character"):
        message += f'; text goes in quotes, e.g. "{bare.group()}"'
    return ConfigProblem(
        file=file, line=exc.line, column=exc.col + 1, key="", kind="syntax", message=message
    )


def validate_config(data: Mapping[str, Any], *, file: Path, text: str) -> Config:
    """Validate parsed data, checking paths against the file's directory.

    `text` is the source the data came from; it is only read to find each problem's line.
    """
    try:
        config = Config.model_validate(dict(data), context={"root": file.absolute().parent})
    except ValidationError as exc:
        raise ConfigError(problems_from(exc, root=Config, file=file, text=text)) from None
    config._file = file
    return config


def parse_config_text(text: str, file: Path) -> Config:
    """The config held in `text`, as if read from `file`."""
    return validate_config(parse_toml(text, file).unwrap(), file=file, text=text)


def read_config_text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"no {CONFIG_NAME} at {display_path(file)}",
            hint="Run `bugbout init` in your repository to write one.",
        ) from None
    except UnicodeDecodeError:
        raise UsageError(f"{display_path(file)} is not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"cannot read {display_path(file)}: {exc.strerror}") from None


def load_config(path: Path) -> Config:
    """Read and validate bugbout.toml; `path` may be the file or the directory holding it."""
    file = path / CONFIG_NAME if path.is_dir() else path
    return parse_config_text(read_config_text(file), file)
