"""Records of environment-repair tasks: the code is right, what it declares it needs is not.

A bug task is scored by hidden tests; an environment task by whether a clean install at
the task's date and a traced run of its command succeed, and by how safe and how faithful
the declared dependencies are. These are the records that scoring keeps, per repair:

- D¹, what the repaired files declare (`Declared`);
- D², what a clean install put in the environment (`EnvInstall.installed`);
- D³, the distributions whose files the traced run imported or opened (`EnvTrace.used`);
- the audit of every declared package (`AuditFinding`), against the index of the task's
  date and the index's advisories.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.record import Record

TaskKind = Literal["bug", "env"]
"""What a task asks for: a fix in the source code (scored by hidden tests), or a repair of
the environment files (scored by a clean install and a traced run)."""
TASK_KINDS: tuple[TaskKind, ...] = ("bug", "env")

EnvDefect = Literal[
    "undeclared-import",
    "import-name-differs",
    "pin-missing",
    "pin-yanked",
    "pins-conflict",
    "api-broke",
    "test-dependency-missing",
    "typo-name",
    "no-wheel",
    "mined",
]
"""Why a task's environment fails as written. The Lite set has one of each of the first
nine; a task mined from a project's history is `mined`."""


def normalize_name(name: str) -> str:
    """A distribution name as PEP 503 compares it: `Foo.Bar_baz` → `foo-bar-baz`."""
    return re.sub(r"[-_.]+", "-", name).lower()


class EnvSpec(BaseModel):
    """What makes a task an environment task: its command, its date, what it failed with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: list[str]
    """What must run once the environment is installed, as argv with `python` standing
    for the environment's interpreter (`["python", "-m", "pytest", "-q"]`)."""
    python: str
    """The interpreter's version the task runs on (`3.11`)."""
    date: datetime
    """Packages uploaded later were not published yet: the install's `--exclude-newer`."""
    env_files: list[str]
    """The environment files the known repair changed (relative paths)."""
    defect: EnvDefect
    security: bool = False
    """The task carries a security label (its issue, or the Lite project's own)."""
    lite: bool = False
    """A project of the built-in Lite set rather than one mined from the history."""


RepairStatus = Literal[
    "resolved",
    "install-failed",
    "run-failed",
    "rejected",
    "no-repair",
    "not-run",
]
"""How a repair ended: installed and ran; the clean install failed; it installed and the
traced run failed; it changed a file that is not an environment file (never installed);
the attempt left no change to the environment files; the attempt did not count (a spent
quota, a budget, never started)."""


class Declared(BaseModel):
    """One package the environment files declare: an element of D¹."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Normalized as PEP 503 (`normalize_name`)."""
    requirement: str
    """As written, extras and markers kept (`Foo[bar]==1.2; python_version<'3.12'`)."""
    pinned: str | None = None
    """The version of an exact pin (`==1.2`, `===1.2`), else None."""
    source: str
    """The file that declares it (`requirements.txt`, `pyproject.toml`)."""


class Advisory(BaseModel):
    """A published vulnerability of one version, as the index's JSON API gives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """The OSV identifier (`PYSEC-2023-74`, `GHSA-...`)."""
    aliases: list[str] = Field(default_factory=list)
    fixed_in: list[str] = Field(default_factory=list)
    summary: str | None = None


class AuditFinding(BaseModel):
    """What the audit learned of one declared package. None: could not be learned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    requirement: str
    pinned: str | None = None
    exists: bool | None = None
    """The index knows the project."""
    removed: bool | None = None
    """The pinned version (or, unpinned, every version) is gone or yanked."""
    yanked: bool | None = None
    """The pinned version is yanked (PEP 592)."""
    advisories: list[Advisory] = Field(default_factory=list)
    """Published advisories of the pinned version."""
    typo_of: str | None = None
    """A popular package one edit away from this name (this name not being popular)."""
    install_code: bool | None = None
    """No wheel for the target interpreter: installing it builds an sdist, which runs the
    package's own code."""
    unchecked: str | None = None
    """Why the audit could not answer (the index unreachable, an error): such a package
    does not count as safe."""

    @property
    def safe(self) -> bool:
        """Exists, not removed, not vulnerable, pinned, and checked: what `safe_install`
        counts. A loosened pin loses the point even when the build passes."""
        return (
            self.unchecked is None
            and self.exists is True
            and self.removed is False
            and not self.advisories
            and self.pinned is not None
        )

    @property
    def blocks_merge(self) -> bool:
        """Vulnerable, removed, uncheckable, or named one edit from a popular package: the
        merge gate refuses a repair with one. A squat that installs and runs is exactly
        what a gate is for, and it counts as safe by the share's rule; a name that is
        what it seems, a person can still merge by hand."""
        return (
            self.unchecked is not None
            or bool(self.advisories)
            or self.removed is True
            or self.typo_of is not None
        )


class Newest(BaseModel):
    """ "Newest is not the same as safe": one pinned package against the index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    declared: str
    newest_today: str | None = None
    newest_at_date: str | None = None
    """The newest version uploaded before the task's date, where the index says when."""
    advisories: dict[str, list[str]] = Field(default_factory=dict)
    """version → advisory ids, for each of the three versions above that has any."""


class EnvStep(BaseModel):
    """One command of the scoring (the install, the traced run): how it ended and where
    its whole output is kept."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    exit_code: int | None = None
    seconds: float = 0.0
    log: str | None = None
    """The output's file, relative to the store."""
    detail: str | None = None
    """Why it failed, in a line (a timeout, uv's first error line)."""


class EnvInstall(EnvStep):
    installed: list[str] = Field(default_factory=list)
    """D²: what the environment holds after the install, `name==version`."""
    unenforced: list[str] = Field(default_factory=list)
    """What the date limit could not govern: direct URLs, VCS and path dependencies,
    files of an index that gives no upload time; and what bugbout took as of the
    interpreter's release rather than the task's date (build tools, its test runner)."""
    brought: list[str] = Field(default_factory=list)
    """Normalized names of what bugbout installed for its test runner that the tree does
    not declare (pytest and what it needs): not the repair's, so left out of D³. Empty
    in records made before bugbout brought a runner."""


class EnvTrace(EnvStep):
    used: list[str] = Field(default_factory=list)
    """D³: normalized names of the distributions whose files the run imported or opened
    (the standard library and the interpreter's own files left out)."""


class EnvConditions(BaseModel):
    """What a stored repair's install and traced run depended on: the same files under
    other conditions may install otherwise, so a repair (or a control) made under other
    conditions than the current ones is made again, and one made under the same is not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: str
    """A digest of what was installed: the commit of a control, the environment files'
    change of an attempt (an attempt run again leaves another change)."""
    index: str
    """The index installed from, or `lite` with the version for the built-in Lite index
    (served on a port that differs from run to run)."""
    advisories: str
    python: str
    date: datetime
    command: list[str]
    sandbox: str
    """The sandbox backend the traced run ran in."""
    timeout: int
    """Seconds each of the install and the traced run may take."""
    tools: list[str] = Field(default_factory=list)
    """What bugbout brings when the tree does not declare it: its test runner's
    requirements and the build tools, both taken as of the later of the task's date and
    the interpreter's release (`infra/brought_tools.py`). Empty in records made before
    it brought any, which are therefore made again."""


class Repair(BaseModel):
    """One repair scored: an agent's attempt, the known repair (`GOLD`), or the base."""

    model_config = ConfigDict(extra="forbid")

    task: str
    contestant: str
    status: RepairStatus
    detail: str | None = None
    changed: list[str] = Field(default_factory=list)
    """The environment files the repair changed."""
    rejected_files: list[str] = Field(default_factory=list)
    """Files other than environment files it changed: why it is `rejected`."""
    declared: list[Declared] = Field(default_factory=list)
    """D¹."""
    install: EnvInstall | None = None
    trace: EnvTrace | None = None
    audit: list[AuditFinding] = Field(default_factory=list)
    newest: list[Newest] = Field(default_factory=list)
    precision: float | None = None
    """|D¹ ∩ D³| / |D¹|; None when D¹ is empty or nothing was traced."""
    recall: float | None = None
    """|D¹ ∩ D³| / |D³|."""
    f1: float | None = None
    safe_install: float | None = None
    """|safe packages of D¹| / |D¹|; None when D¹ is empty."""
    size: int = 0
    """Changed lines in the environment files: the judge's last tie-break."""
    network: str | None = None
    """What bugbout could and could not log of the agent's network use."""
    conditions: EnvConditions | None = None
    """What its install and run were made under; None when nothing ran (a rejected
    repair, no repair)."""

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"


class RepairSet(Record):
    """`repairs.json`: every environment task's repairs, scored, and each task's controls.

    The base control is the task's ground truth and its failing log: what its install and
    traced run printed is what the agents are given."""

    repairs: dict[str, dict[str, Repair]] = Field(default_factory=dict)
    """task → contestant → repair."""
    controls: dict[str, dict[str, Repair]] = Field(default_factory=dict)
    """task → `base` (the files as written: must fail) and `gold` (the known repair: must
    succeed). A task whose base succeeds or whose known repair fails is not scored."""
