"""Each task's test environment: dated from its own commit, shared where resolutions agree.

Under `[project] environments = "dated"` (the default) a task's environment holds what
its base commit's packaging files declare, resolved as of the fix's date, for a Python
chosen from that commit's constraints (`infra.manifests`, `infra.pythons`,
`infra.dated_env`). When that cannot be done the task climbs down a ladder, and records
the rung it stands on:

1. `dated`: resolved as of the fix's date;
2. `relaxed`: the same, with the date lifted for the packages that blocked it (named);
3. `tip`: the one environment built from the tip's packaging files;
4. `none`: not even that; the reason quotes uv.

Under `environments = "tip"`, or with an `interpreter` of the user's (there is nothing to
date then), every task gets the one environment of the project, as before.

Builds run a few at a time while the stages run tests on tasks whose environment is
ready; concurrent asks for one environment wait for one build.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bugbout_tui.core.config import ProjectConfig
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import OracleSet, Task, TaskEnvironment
from bugbout_tui.core.paths import bugbout_home
from bugbout_tui.engine.environment import project_environment
from bugbout_tui.infra.dated_env import (
    RUNNER,
    RUNNER_CORE,
    BuildFailed,
    Failed,
    Inputs,
    Resolution,
    ensure_pinned,
    plugin_name,
    probe_runner,
    remember,
    resolve,
    runner_needs,
    runner_pins,
    runner_works,
)
from bugbout_tui.infra.env import Environment, find_uv
from bugbout_tui.infra.legacy_env import is_legacy
from bugbout_tui.infra.manifests import Manifests, read_manifests, requirement_name
from bugbout_tui.infra.python_list import available_pythons
from bugbout_tui.infra.pythons import (
    Choice,
    Python,
    choose,
    satisfies,
)
from bugbout_tui.infra.trees import pristine_tree

BUILDS_AT_ONCE = 2
"""Environment builds (and resolutions) at a time: they share the machine with tests."""
_SETTLED = "; chosen by the ground truth: on the first Python chosen no test failed before the fix"


class NoEnvironment(BugboutError):
    """A task for which no environment could be made: the ladder's last rung."""

    def __init__(self, message: str, record: TaskEnvironment) -> None:
        super().__init__(message)
        self.record = record


@dataclass
class Built:
    """What this bout's service did, for summaries and the benchmark."""

    builds: int = 0
    """Environments built, counting one that was built again with a later test runner."""
    seconds: float = 0.0
    keys: set[str] = field(default_factory=set)


class Environments:
    """The environment of each task of a bout; see the module docstring."""

    def __init__(
        self,
        repo: Path,
        project: ProjectConfig,
        *,
        retry_failed: bool = False,
        home: Path | None = None,
        settled: Mapping[str, str] | None = None,
    ) -> None:
        self.repo = repo
        self.project = project
        self.retry_failed = retry_failed
        self.settled = dict(settled or {})
        """The Python each task's ground truth settled on, where it is not the first
        choice (`TaskEnvironment.settled`): task id → version."""
        self._others: dict[str, list[str]] = {}
        self.envs = (home or bugbout_home()).resolve() / "envs"
        self.built = Built()
        self._records: dict[str, TaskEnvironment] = {}
        self._tasks: dict[str, asyncio.Future[Environment]] = {}
        self._builds: dict[str, asyncio.Future[Environment]] = {}
        self._probes: dict[str, asyncio.Future[str | None]] = {}
        self._shared: asyncio.Future[Environment] | None = None
        self._pythons: asyncio.Future[list[Python]] | None = None
        self._gate = asyncio.Semaphore(BUILDS_AT_ONCE)
        self._single: Environment | None = None

    @classmethod
    def single(cls, environment: Environment, repo: Path, project: ProjectConfig) -> Environments:
        """A service that gives every task `environment` (one made by the caller)."""
        service = cls(repo, project)
        service._single = environment
        return service

    @property
    def dated(self) -> bool:
        """Whether tasks get environments of their own (not the one of the project)."""
        if self._single is not None:
            return False
        return self.project.environments == "dated" and self.project.interpreter is None

    async def shared(self) -> Environment:
        """The project's one environment, from the tip (or the user's interpreter)."""
        if self._single is not None:
            return self._single
        if self._shared is None:
            self._shared = asyncio.ensure_future(self._build_shared())
        return await asyncio.shield(self._shared)

    async def _build_shared(self) -> Environment:
        started = time.monotonic()
        environment = await project_environment(self.repo, self.project)
        self._count(environment, started)
        return environment

    async def for_task(self, task: Task) -> Environment:
        """The environment `task`'s tests run in, built on first need.

        Raises:
            NoEnvironment: the ladder ended without one (dated environments only).
            BugboutError: the project's one environment cannot be built (tip).
        """
        if not self.dated:
            return await self.shared()
        if task.id not in self._tasks:
            self._tasks[task.id] = asyncio.ensure_future(self._dated(task))
        return await asyncio.shield(self._tasks[task.id])

    def record(self, task_id: str) -> TaskEnvironment | None:
        """How `task_id`'s environment was found; None before `for_task`, and always under
        `environments = "tip"` or an interpreter of the user's."""
        return self._records.get(task_id)

    async def _dated(self, task: Task) -> Environment:
        async with self._gate:
            tree = await asyncio.to_thread(pristine_tree, self.repo, task.base_commit)
            manifests = await asyncio.to_thread(read_manifests, tree)
            unenforced = list(manifests.unenforced)
            available = await self._available()
            settled = self.settled.get(task.id)
            pythons = [p for p in available if p.text == settled] if settled else available
            choice = self._choose(
                pythons or available, manifests.requires_python, manifests.classifiers
            )
            if choice.python is None:
                return await self._down_to_tip(task, choice.why, unenforced)
            if not settled:
                self._others[task.id] = self._named_others(available, manifests, choice.python)
            declared = self.project.install_project
            inputs = Inputs(
                requirements=[
                    *self.project.test_dependencies,
                    *(manifests.requirements if declared else []),
                ],
                python=choice.python,
                date=task.date,
                build=tree / manifests.build if declared and manifests.build else None,
            )
            uv_bin = find_uv()
            found = await resolve(uv_bin, inputs, envs=self.envs, reuse=not self.retry_failed)
            if isinstance(found, Failed) and inputs.build is not None:
                # The build that would tell the dependencies failed (its build backend is
                # not dated, and today's may not run yesterday's setup.py): what the other
                # files declare is still the commit's own word.
                unenforced.append(
                    f"{manifests.build} (could not be built to learn its dependencies: "
                    f"{found.quoted()})"
                )
                inputs = dataclasses.replace(inputs, build=None)
                found = await resolve(uv_bin, inputs, envs=self.envs, reuse=not self.retry_failed)
            if isinstance(found, Failed) and is_legacy(inputs.python.text):
                # bugbout.toml's test-dependencies are today's, which Python 2 may never
                # have had (or have had only with builds it cannot run): the commit's own
                # requirements and the runner stand; the rest is left out, and said.
                extra = [
                    r
                    for r in self.project.test_dependencies
                    if not RUNNER.match(requirement_name(r))
                ]
                if extra:
                    kept = [r for r in inputs.requirements if r not in extra]
                    inputs = dataclasses.replace(inputs, requirements=kept)
                    unenforced += [f"{r} (bugbout.toml's, left out on Python 2)" for r in extra]
                    found = await resolve(
                        uv_bin, inputs, envs=self.envs, reuse=not self.retry_failed
                    )
            if (
                isinstance(found, Failed)
                and is_legacy(found_python := inputs.python.text)
                and not settled
            ):
                # A commit that names Python 2 and 3 may ask for what Python 2 never had:
                # its Python 3 next.
                pythons = [p for p in await self._available() if not is_legacy(p.text)]
                again = self._choose(pythons, manifests.requires_python, manifests.classifiers)
                if again.python is not None:
                    said = f"Python {found_python} first, whose resolution failed: {found.quoted()}"
                    choice = dataclasses.replace(again, why=f"{again.why}; {said}")
                    inputs = dataclasses.replace(inputs, python=again.python)
                    found = await resolve(
                        uv_bin, inputs, envs=self.envs, reuse=not self.retry_failed
                    )
            if isinstance(found, Failed):
                why = f"the dated resolution failed: {found.quoted()} (log: {found.log})"
                return await self._down_to_tip(task, why, unenforced)
            if found.build_error is not None and not self.retry_failed:
                return await self._down_to_tip(task, found.build_error, unenforced)
        try:
            environment, found = await self._pinned(uv_bin, inputs, found)
        except BuildFailed as error:
            remember(found.model_copy(update={"build_error": str(error)}), inputs, envs=self.envs)
            return await self._down_to_tip(task, f"the dated environment: {error}", unenforced)
        unenforced += [f"{name} (its index gives no upload time)" for name in found.no_upload_time]
        self._records[task.id] = TaskEnvironment(
            rung="relaxed" if found.relaxed else "dated",
            key=environment.key,
            python=found.python,
            date=task.date,
            packages=found.packages,
            relaxed=found.relaxed,
            runner_later=found.runner_later,
            unenforced=unenforced,
            note=_note(choice.why, found) + (_SETTLED if settled else ""),
            older_python=choice.older,
            settled=bool(settled) and found.python == settled,
        )
        return environment

    def others(self, task_id: str) -> list[str]:
        """The other installed Pythons `task_id`'s commit names (newest first), to try
        when no test fails before the fix on the first: the bug may be of one of them."""
        return list(self._others.get(task_id, []))

    def settle(self, task_id: str, python: str | None) -> None:
        """Give `task_id` the environment of `python` (a version `others` gave) from now
        on, or its first choice again (None)."""
        if python is None:
            self.settled.pop(task_id, None)
        else:
            self.settled[task_id] = python
        self._tasks.pop(task_id, None)
        self._records.pop(task_id, None)

    def _named_others(
        self, available: list[Python], manifests: Manifests, chosen: Python
    ) -> list[str]:
        """The newest installed Python of each other version the commit names."""
        if self.project.python is not None:
            return []
        named = {tuple(int(x) for x in c.split(".")) for c in manifests.classifiers}
        best: dict[tuple[int, ...], Python] = {}
        for python in available:
            minor = python.version[:2]
            if python.path is None or minor not in named or minor == chosen.version[:2]:
                continue
            if not satisfies(python.version, manifests.requires_python):
                continue
            if minor not in best or python.version > best[minor].version:
                best[minor] = python
        return [best[minor].text for minor in sorted(best, reverse=True)]

    async def _pinned(
        self, uv_bin: Path, inputs: Inputs, found: Resolution
    ) -> tuple[Environment, Resolution]:
        """The environment of `found`, its runner lifted to a later date when the dated
        one cannot run on the interpreter (learnt once, then remembered).

        The dated runner is tried alone first (`probe_runner`), so a dead one costs no
        build of the environment it would have been in; the built environment is tried
        again, since a package outside the runner can still break it (a plugin that
        registers itself from another distribution)."""
        if found.checked:
            return await self._build(uv_bin, found), found
        problem = await self._probe(uv_bin, found)
        environment = None if problem is not None else await self._build(uv_bin, found)
        if environment is not None:
            problem = await runner_works(environment)
        if problem is not None:
            runner = [p.split("==")[0].lower() for p in found.packages if "==" in p]
            runner = [name for name in runner if RUNNER.match(name)]
            needs = await runner_needs(uv_bin, runner, inputs, envs=self.envs)
            runner = list(dict.fromkeys([*runner, *RUNNER_CORE, *needs]))
            later = await resolve(
                uv_bin, inputs, envs=self.envs, extra_relaxed=runner, carried=found.relaxed
            )
            if isinstance(later, Failed):
                found = found.model_copy(
                    update={"runner_problem": f"{problem}; a later runner: {later.quoted()}"}
                )
                environment = environment or await self._build(uv_bin, found)
            else:
                relaxed = list(dict.fromkeys([*found.relaxed, *later.relaxed]))
                found = later.model_copy(update={"relaxed": relaxed})
                environment = await self._build(uv_bin, found)
                still = await runner_works(environment)
                if still is not None:
                    environment, found = await self._without_plugins(
                        uv_bin, inputs, found, environment, still
                    )
        assert environment is not None
        found = found.model_copy(update={"checked": True})
        remember(found, inputs, envs=self.envs)
        return environment, found

    async def _without_plugins(
        self,
        uv_bin: Path,
        inputs: Inputs,
        found: Resolution,
        environment: Environment,
        problem: str,
    ) -> tuple[Environment, Resolution]:
        """A later runner that still cannot run: the commit's pytest plugins are left out
        (bugbout's runs need none of them, and a plugin of a pytest long gone breaks
        every run), and named. When even that does not run, the problem is recorded."""
        plugins = [name for r in inputs.requirements if (name := plugin_name(r)) is not None]
        if not plugins:
            return environment, found.model_copy(update={"runner_problem": problem})
        kept = [r for r in inputs.requirements if plugin_name(r) is None]
        bare = dataclasses.replace(inputs, requirements=kept)
        core = [name for name in found.runner_later if name not in plugins]
        again = await resolve(
            uv_bin, bare, envs=self.envs, extra_relaxed=core, carried=found.relaxed
        )
        if isinstance(again, Failed):
            return environment, found.model_copy(update={"runner_problem": problem})
        again = again.model_copy(
            update={"relaxed": list(dict.fromkeys([*found.relaxed, *again.relaxed]))}
        )
        rebuilt = await self._build(uv_bin, again)
        still = await runner_works(rebuilt)
        if still is not None:
            return environment, found.model_copy(update={"runner_problem": problem})
        return rebuilt, again.model_copy(update={"dropped": plugins})

    async def _probe(self, uv_bin: Path, resolution: Resolution) -> str | None:
        """`probe_runner`'s answer, asked once per runner and interpreter in a bout:
        neighbouring commits resolve to other environments with the same old pytest."""
        key = "\0".join([resolution.python, resolution.interpreter or "", *runner_pins(resolution)])
        if key not in self._probes:
            self._probes[key] = asyncio.ensure_future(self._probe_once(uv_bin, resolution))
        return await asyncio.shield(self._probes[key])

    async def _probe_once(self, uv_bin: Path, resolution: Resolution) -> str | None:
        async with self._gate:
            return await probe_runner(uv_bin, resolution, envs=self.envs)

    async def _build(self, uv_bin: Path, resolution: Resolution) -> Environment:
        key = resolution.key()
        if key not in self._builds:
            self._builds[key] = asyncio.ensure_future(self._build_once(uv_bin, resolution))
        return await asyncio.shield(self._builds[key])

    async def _build_once(self, uv_bin: Path, resolution: Resolution) -> Environment:
        async with self._gate:
            started = time.monotonic()
            environment = await ensure_pinned(uv_bin, resolution, envs=self.envs)
            self._count(environment, started)
            return environment

    def in_use(self) -> int:
        """How many environments the tasks stand on: tasks whose resolutions agree share
        one, and one replaced by a later runner's is not counted."""
        return len({record.key for record in self._records.values() if record.key})

    def _count(self, environment: Environment, started: float) -> None:
        self.built.keys.add(environment.key)
        if environment.built:
            self.built.builds += 1
            self.built.seconds += time.monotonic() - started

    async def _down_to_tip(self, task: Task, why: str, unenforced: list[str]) -> Environment:
        """The ladder's third rung, and its last when the tip's environment fails too."""
        try:
            environment = await self.shared()
        except BugboutError as error:
            record = TaskEnvironment(
                rung="none",
                date=task.date,
                unenforced=unenforced,
                note=f"{why}; the tip's environment failed too: {error.message}",
            )
            self._records[task.id] = record
            raise NoEnvironment(f"no environment for {task.id}: {record.note}", record) from None
        self._records[task.id] = TaskEnvironment(
            rung="tip", key=environment.key, date=task.date, unenforced=unenforced, note=why
        )
        return environment

    def _choose(
        self, pythons: list[Python], requires_python: str | None, classifiers: list[str]
    ) -> Choice:
        """The commit's interpreter; `[project] python`, when set, decides for every commit."""
        wanted = self.project.python
        if wanted is None:
            return choose(pythons, requires_python, classifiers)
        matching = [p for p in pythons if p.minor == wanted]
        picked = choose(matching, None, [])
        if picked.python is None:
            return Choice(
                None, f"[project] python is {wanted}, which uv can neither find nor install"
            )
        return Choice(picked.python, f"Python {picked.python.text} ([project] python)")

    async def interpreter(self, version: str) -> Path:
        """The newest installed interpreter of `version` (`3.11`): what an environment
        task's agent is given, since it needs none of the project's test environments.

        Raises:
            BugboutError: no such interpreter is installed here.
        """
        wanted = tuple(int(part) for part in version.split(".") if part.isdigit())
        found = [
            p
            for p in await self._available()
            if p.path is not None and p.version[: len(wanted)] == wanted
        ]
        if not found:
            raise BugboutError(
                f"the task runs on Python {version}, and none is installed here",
                hint=f"`uv python install {version}` installs one.",
            )
        best = max(found, key=lambda p: p.version)
        assert best.path is not None
        return best.path

    async def _available(self) -> list[Python]:
        if self._pythons is None:
            self._pythons = asyncio.ensure_future(available_pythons(self.envs))
        return await asyncio.shield(self._pythons)


def _note(chosen: str, found: Resolution) -> str:
    """How the interpreter was chosen, and what the runner had to give up."""
    note = chosen
    if found.dropped:
        note += (
            f"; pytest plugins left out, no runnable pytest loads them: {', '.join(found.dropped)}"
        )
    if found.runner_problem is not None:
        note += f"; the test runner cannot run here: {found.runner_problem}"
    return note


def settled_pythons(oracles: OracleSet | None) -> dict[str, str]:
    """The Python each task's stored ground truth settled on, where it is not the first
    choice: what `Environments` gives those tasks in a later bout."""
    if oracles is None:
        return {}
    return {
        task_id: oracle.environment.python
        for task_id, oracle in oracles.oracles.items()
        if oracle.environment is not None
        and oracle.environment.settled
        and oracle.environment.python is not None
    }
