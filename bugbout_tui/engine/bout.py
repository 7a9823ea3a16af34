"""A bout: the whole pipeline over one project, resumable at every stage."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.agents.base import CodingAgent
from bugbout_tui.agents.registry import agent_from_config
from bugbout_tui.core import look
from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.estimate import Estimate
from bugbout_tui.core.events import (
    STAGES,
    BaseEvent,
    BoutFinished,
    BoutStarted,
    RaceEstimated,
    Stage,
    StageFinished,
    StageStarted,
)
from bugbout_tui.core.models import Attempt, Matrix, OracleSet, ResolutionSet, Task, TaskSet
from bugbout_tui.core.trials import agent_of
from bugbout_tui.engine.agent_run import Entrant
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.cluster import Cluster, check_address, cluster_address
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.decided import DecisionWatch
from bugbout_tui.engine.env_controls import EnvControls
from bugbout_tui.engine.env_sources import EnvSources, is_env
from bugbout_tui.engine.environments import Environments, settled_pythons
from bugbout_tui.engine.estimate import estimate_race
from bugbout_tui.engine.examine import CrossExamination
from bugbout_tui.engine.ground_truth import GroundTruth
from bugbout_tui.engine.judge import judge_matrices
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.race import Race, pending_attempts
from bugbout_tui.engine.repairs import RepairScoring
from bugbout_tui.engine.report import load_report, write_report
from bugbout_tui.engine.scheduler import SYSTEM_CLOCK, Clock
from bugbout_tui.engine.score import Scoring
from bugbout_tui.infra.git import open_repository
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox
from bugbout_tui.report import Report
from bugbout_tui.rules.cost import costing_for
from bugbout_tui.rules.env_judge import EnvVerdict, choose_repair
from bugbout_tui.rules.env_repairs import control_problem
from bugbout_tui.rules.judge import VerdictSet
from bugbout_tui.rules.sequential import first_trials

_DONE = "done"
"""The summary of a stage that has nothing to count."""


class Bout:
    """One project's pipeline. Every stage reads what the last run stored and adds to it."""

    def __init__(
        self,
        project: Project,
        *,
        contestants: Sequence[CodingAgent] | None = None,
        examiners: Sequence[Entrant] | None = None,
        retry_failed: bool = False,
        sandbox: Sandbox | None = None,
        clock: Clock = SYSTEM_CLOCK,
        cluster: str | None = None,
    ) -> None:
        """`contestants` (adapter objects) replace the config's; examiners likewise;
        `sandbox` replaces the one `[run] sandbox` picks (the demo's fallback); `clock`
        is what the race's lanes wait out usage windows by; `cluster` (a scheduler's
        address, "" for none) replaces `BUGBOUT_CLUSTER` and `[run] cluster`."""
        self.project = project
        self.clock = clock
        self.bus = EventBus()
        """The journal opens only once `arun` holds the store's lock: constructing a bout
        beside a live run (a watcher, a second command) must not wipe that run's journal."""
        self.retry_failed = retry_failed
        self._contestants = list(contestants) if contestants is not None else None
        self._examiners = list(examiners) if examiners is not None else None
        self.taskset: TaskSet | None = None
        self.oracles: OracleSet | None = None
        self.attempts: dict[str, list[Attempt]] = {}
        self.matrices: dict[str, Matrix] = {}
        self.verdicts: VerdictSet | None = None
        self.resolutions: ResolutionSet | None = None
        self.repairs: RepairSet | None = None
        """Environment tasks' controls (from ground truth) and scored repairs."""
        self.env_verdicts: dict[str, EnvVerdict] = {}
        self.report: Report | None = None
        self._entrants: list[Entrant] | None = None
        self._repo: Path | None = None
        self._environments: Environments | None = None
        self._sandbox: Sandbox | None = sandbox
        self._context: StageContext | None = None
        self._sources: EnvSources | None = None
        self._running_race: Race | None = None
        self.cluster_address = cluster_address(cluster, project.config.run.cluster)
        if self.cluster_address is not None:
            check_address(self.cluster_address)
        self._cluster: Cluster | None = None

    @classmethod
    def load(cls, path: str | Path = ".") -> Bout:
        return cls(Project.load(path))

    def subscribe(self, subscriber: Callable[[BaseEvent], None]) -> Callable[[], None]:
        return self.bus.subscribe(subscriber)

    def cancel_attempt(self, attempt_id: str) -> bool:
        """Stop one attempt (`task/contestant`) of the race in progress, queued or running.

        It is recorded as crashed, cancelled by the user, so `retry_failed` runs it
        again; the rest of the race goes on. Returns False when no race is running or
        that attempt is not pending in it. Call it from the loop that runs `arun`.
        """
        return self._running_race is not None and self._running_race.cancel(attempt_id)

    def run(self, *, until: Stage | None = None) -> Report | None:
        """Run the pipeline to `until` (default: the end) and return the report, if reached."""
        return asyncio.run(self.arun(until=until))

    async def arun(self, *, until: Stage | None = None) -> Report | None:
        stages = _stages_until(until)
        if "race" in stages and not any(e.role == "contestant" for e in self.entrants()):
            raise UsageError(
                "no contestant is configured, so a bout has no agent to race",
                hint="Add a [[contestants]] table to bugbout.toml (`bugbout init --force` "
                "writes one for each agent on PATH), or stop before the race with "
                "`--until ground-truth`.",
            )
        with self.project.store.lock():
            self.bus.open_journal(self.project.store.events_path)
            self.bus.emit(
                BoutStarted(project=str(self.project.dir), stages=list(stages), pid=os.getpid())
            )
            try:
                try:
                    for stage in stages:
                        await self._run_stage(stage)
                except BaseExceptionGroup as group:
                    error = _user_error(group)
                    if error is None:
                        raise
                    raise error from None
            except asyncio.CancelledError:
                await self._close_cluster(stopping=True)
                self.bus.emit(BoutFinished(outcome="stopped", message="stopped by the user"))
                raise
            except BugboutError as exc:
                # The journal may be what failed (a full disk): the first error is the news.
                with contextlib.suppress(BugboutError):
                    self.bus.emit(BoutFinished(outcome="failed", message=exc.message))
                raise
            else:
                self.bus.emit(BoutFinished(outcome="done"))
            finally:
                await self._close_cluster(stopping=False)
                if self._sources is not None:
                    self._sources.close()
                self.bus.close()
        return self.report

    async def _run_stage(self, stage: Stage) -> None:
        entry = _BY_STAGE[stage]
        self.bus.emit(StageStarted(stage=stage))
        await entry.run(self)
        self.bus.emit(StageFinished(stage=stage, summary=entry.summary(self)))

    async def _mine(self) -> None:
        self.taskset = await asyncio.to_thread(mine_tasks, self.project)

    async def _ground_truth(self) -> None:
        """Bugs get their oracles from the maintainers' tests; environment tasks their
        controls (the files as written, and the known repair), in that order."""
        context = await self.context()
        raceable = self.raceable_tasks()
        self.oracles = await GroundTruth(context).run([t for t in raceable if not is_env(t)])
        self.repairs = await EnvControls(context).run([t for t in raceable if is_env(t)])

    async def _race(self) -> None:
        context = await self.context()
        race = self._running_race = Race(
            context, self.entrants(), watch=self._decision_watch(context), clock=self.clock
        )
        tasks = self.scored_tasks()
        pending = race.pending(tasks)  # read once: every attempt the store holds for them
        self.bus.emit(RaceEstimated(estimate=self._estimate(tasks, pending)))
        try:
            self.attempts = await race.run(tasks, pending)
        finally:
            self._running_race = None

    def _decision_watch(self, context: StageContext) -> DecisionWatch | None:
        """What `[run] stop-when-decided` needs in the race: nothing without it, or with
        fewer than two contestants to compare."""
        run = self.project.config.run
        names = first_trials([e.agent.name for e in self.entrants() if e.role == "contestant"])
        if not run.stop_when_decided or len(names) < 2:
            return None
        assert self.oracles is not None
        bugs = [t for t in self.scored_tasks() if not is_env(t)]
        return DecisionWatch(context, bugs, self.oracles, names, run.decided_at)

    async def _examine(self) -> None:
        """Bugs are cross-examined; environment tasks, which have no tests to examine,
        get their repairs scored here instead, so the judge finds them stored."""
        context = await self.context()
        vendors = {e.agent.name: e.agent.vendor or "unknown" for e in self.entrants()}
        examination = CrossExamination(context, vendors=vendors)
        scored = self.scored_tasks()
        self.matrices = await examination.run([t for t in scored if not is_env(t)], self.attempts)
        self.repairs = await RepairScoring(context).run(
            [t for t in scored if is_env(t)], self.attempts
        )

    async def _judge(self) -> None:
        """Bugs' verdicts are stored; environment tasks' are judged from their stored
        repairs here for the summary, and again by every report, which shows them."""
        self.verdicts = judge_matrices(self.project, self.matrices)
        repairs = self.repairs.repairs if self.repairs is not None else {}
        self.env_verdicts = {
            task.id: choose_repair(task.id, repairs.get(task.id, {}))
            for task in self.scored_tasks()
            if is_env(task)
        }

    async def _score(self) -> None:
        assert self.oracles is not None
        scoring = Scoring(await self.context())
        bugs = [t for t in self.scored_tasks() if not is_env(t)]
        self.resolutions = await scoring.run(bugs, self.oracles, self.attempts)

    async def _report(self) -> None:
        # The same computation as `bugbout report`: from the store, with the person's
        # decisions, not from what this run holds in memory.
        entrants = self.entrants()
        self.report = load_report(
            self.project,
            contestants=None
            if self._contestants is None
            else list(
                dict.fromkeys(agent_of(e.agent.name) for e in entrants if e.role == "contestant")
            ),
            examiners=None
            if self._examiners is None
            else [e.agent.name for e in entrants if e.role == "examiner"],
        )
        write_report(self.project, self.report)

    def estimate(self) -> Estimate:
        """What the race would start and spend, from what the store holds, running
        nothing: no mining, no ground truth (which cost no agent anything, but take
        minutes). Tasks not mined yet are none; tasks whose ground truth is not stored
        yet are counted as if it will score them, and the notes say so."""
        store = self.project.store
        notes: list[str] = []
        self.taskset = store.read(store.tasks_path, TaskSet)
        if self.taskset is None:
            notes.append(
                "no tasks mined yet, so no attempt is counted: `bugbout run --until mine` "
                "mines them (ground truth is no agent's cost)"
            )
            return self._estimate([], [], notes)
        oracles = store.read(store.oracles_path, OracleSet) or OracleSet()
        self.repairs = store.read(store.repairs_path, RepairSet) or RepairSet()
        raceable = self.raceable_tasks()
        unknown = [t for t in raceable if not self._has_ground_truth(t, oracles)]
        self.oracles = oracles
        tasks = [t for t in raceable if t in unknown or t in self.scored_tasks()]
        if unknown:
            notes.append(
                f"{look.plural(len(unknown), 'task')} without ground truth yet are counted "
                "as if it will score them; it may not"
            )
        pending = pending_attempts(
            tasks,
            self.entrants(),
            store,
            retry_failed=self.retry_failed,
            waits=self.project.config.run.wait_for_quota is not None,
        )
        return self._estimate(tasks, pending, notes)

    def _estimate(
        self,
        tasks: Sequence[Task],
        pending: Sequence[tuple[Task, Entrant]],
        notes: Sequence[str] = (),
    ) -> Estimate:
        entrants = self.entrants()
        stored = [a for group in self.project.store.attempts().values() for a in group]
        return estimate_race(
            pending,
            tasks=len(tasks),
            entrants=entrants,
            stored=stored,
            config=self.project.config,
            costing=costing_for(
                self.project.config, {e.agent.name: e.agent.model for e in entrants}
            ),
            notes=notes,
        )

    def raceable_tasks(self) -> list[Task]:
        """Mined tasks a person has not excluded (and accepted, when review is required)."""
        assert self.taskset is not None
        return [t for t in self.taskset.tasks if self.project.config.tasks.is_raceable(t.id)]

    def scored_tasks(self) -> list[Task]:
        """Raceable tasks whose ground truth can score a patch (a bug's oracle) or a
        repair (an environment task's controls)."""
        assert self.oracles is not None
        oracles = self.oracles.oracles
        controls = self.repairs.controls if self.repairs is not None else {}
        return [
            t
            for t in self.raceable_tasks()
            if (
                control_problem(controls.get(t.id)) is None
                if is_env(t)
                else t.id in oracles and oracles[t.id].scored
            )
        ]

    def _has_ground_truth(self, task: Task, oracles: OracleSet) -> bool:
        if is_env(task):
            controls = self.repairs.controls if self.repairs is not None else {}
            return task.id in controls
        return task.id in oracles.oracles

    def entrants(self) -> list[Entrant]:
        """The contestants and examiners, from the config unless given as objects."""
        if self._entrants is None:
            self._entrants = self._make_entrants()
        return self._entrants

    def _make_entrants(self) -> list[Entrant]:
        """Each contestant once per trial (trial 1 under its own name, trial k as
        `name#k`), then the examiners, who write their tests once per task."""
        cfg = self.project.config
        if self._contestants is not None:
            contestants = [
                Entrant(agent.trial(k))
                for agent in self._contestants
                for k in range(1, cfg.run.trials + 1)
            ]
        else:
            contestants = [
                Entrant(agent.trial(k), view=c.view)
                for c in cfg.contestants
                for agent in [agent_from_config(c.model_dump())]
                for k in range(1, cfg.trials_of(c) + 1)
            ]
        if self._examiners is not None:
            examiners = self._examiners
        else:
            examiners = [
                Entrant(agent_from_config(e.model_dump()), "examiner", e.assignment, view=e.view)
                for e in cfg.examiners
            ]
        return [*contestants, *examiners]

    def repo(self) -> Path:
        """The repository, opened (cloned or fetched) once per bout."""
        if self._repo is None:
            self._repo = open_repository(self.project.config.project.repository, self.project.dir)
        return self._repo

    async def environments(self) -> Environments:
        """The test environments of this bout's tasks. The project's one environment
        (`environments = "tip"`, or an `interpreter` of the user's) is built here, before
        any stage needs it; dated ones are built as each task comes to need its own."""
        if self._environments is None:
            store = self.project.store
            environments = Environments(
                self.repo(),
                self.project.config.project,
                retry_failed=self.retry_failed,
                settled=settled_pythons(store.read(store.oracles_path, OracleSet)),
            )
            if not environments.dated and self._has_bugs():
                await environments.shared()
            self._environments = environments
        return self._environments

    def _has_bugs(self) -> bool:
        """Whether any task may need the project's test environment: environment tasks
        install their own. Before mining, that is not known, so it may."""
        return self.taskset is None or any(not is_env(t) for t in self.taskset.tasks)

    def sources(self) -> EnvSources:
        """Where environment tasks' commits and packages come from, for this bout."""
        if self._sources is None:
            self._sources = EnvSources(self.project, self.repo())
        return self._sources

    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = select_sandbox(self.project.config.run.sandbox)
        return self._sandbox

    async def context(self) -> StageContext:
        """What the stages that work on the repository share, made on first need (the
        repository opened, the environments service made, the sandbox chosen, the
        cluster connected, in that order)."""
        if self._context is None:
            self._context = StageContext(
                self.project,
                self.repo(),
                await self.environments(),
                self.sandbox(),
                self.bus,
                retry_failed=self.retry_failed,
                sources=self.sources(),
                cluster=await self._connect(),
            )
        return self._context

    async def _connect(self) -> Cluster | None:
        if self.cluster_address is None:
            return None
        cluster = Cluster(self.cluster_address, self.repo(), self.bus)
        await cluster.open()
        self._cluster = cluster
        return cluster

    async def _close_cluster(self, *, stopping: bool) -> None:
        """Let go of the cluster; `stopping` ends what its workers run for this bout."""
        cluster, self._cluster = self._cluster, None
        if cluster is not None:
            await asyncio.shield(cluster.close(stopping=stopping))

    def _mine_summary(self) -> str:
        if self.taskset is None:
            return _DONE
        summary = f"{len(self.taskset.tasks)} tasks from {self.taskset.examined} changes"
        if self.taskset.retried:
            summary += f"; asked again for {self.taskset.retried} issue lookups that had failed"
        if unread := self.taskset.unread():
            summary += f"; {unread} still unread, asked again next run"
        return summary

    def _ground_truth_summary(self) -> str:
        if self.oracles is None:
            return _DONE
        scored = sum(1 for o in self.oracles.oracles.values() if o.scored)
        parts = [f"{scored} of {len(self.oracles.oracles)} tasks scored"]
        if self.repairs is not None and self.repairs.controls:
            controls = self.repairs.controls.values()
            fit = sum(1 for pair in controls if control_problem(pair) is None)
            env = f"{fit} of {look.plural(len(controls), 'environment task')} scored"
            parts = [env] if not self.oracles.oracles else [*parts, env]
        summary = "; ".join(parts)
        environments = self._environments
        if environments is not None and environments.dated and environments.built.keys:
            built = environments.built
            summary += (
                f"; {look.plural(environments.in_use(), 'environment')} for them, "
                f"{look.plural(built.builds, 'build')} now ({built.seconds:.0f} s of building)"
            )
        return summary

    def _race_summary(self) -> str:
        attempts = [a for group in self.attempts.values() for a in group]
        counts = Counter(a.status for a in attempts)
        shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        return f"{len(attempts)} attempts ({shown or 'none'})"

    def _examine_summary(self) -> str:
        runs = sum(len(m.trees) for m in self.matrices.values())
        summary = f"{len(self.matrices)} matrices, {runs} trees"
        if self.repairs is not None and self.repairs.repairs:
            scored = [r for per in self.repairs.repairs.values() for r in per.values()]
            resolved = sum(1 for r in scored if r.resolved)
            summary += f"; {resolved} of {look.plural(len(scored), 'repair')} resolved"
        return summary

    def _judge_summary(self) -> str:
        if self.verdicts is None:
            return _DONE
        policy = self.project.config.judge.policy
        judged = [v[policy] for v in self.verdicts.verdicts.values() if v[policy].assessments]
        picks = sum(1 for verdict in judged if verdict.pick is not None)
        parts = [f"{picks} of {len(judged)} tasks with a patch picked under {policy}"]
        if self.env_verdicts:
            chosen = [v for v in self.env_verdicts.values() if v.pick is not None]
            approved = sum(1 for verdict in chosen if verdict.approved)
            env = (
                f"{len(chosen)} of {look.plural(len(self.env_verdicts), 'environment task')} "
                f"with a repair picked, {approved} approved by the merge gate"
            )
            parts = [env] if not judged else [*parts, env]
        return "; ".join(parts)

    def _score_summary(self) -> str:
        if self.resolutions is None:
            return _DONE
        patches = [r for per in self.resolutions.patches.values() for r in per.values()]
        resolved = sum(1 for r in patches if r.status == "resolved")
        if not patches and self.env_verdicts:
            return "no bug to score; environment repairs were scored before the judge"
        return f"{resolved} of {len(patches)} patches resolved"

    def _report_summary(self) -> str:
        return f"written to {self.project.store.report_markdown_path}"


@dataclass(frozen=True)
class _StageEntry:
    """How the bout runs one stage, and the summary its `StageFinished` carries."""

    run: Callable[[Bout], Awaitable[None]]
    summary: Callable[[Bout], str]


_BY_STAGE: dict[Stage, _StageEntry] = {
    "mine": _StageEntry(Bout._mine, Bout._mine_summary),
    "ground-truth": _StageEntry(Bout._ground_truth, Bout._ground_truth_summary),
    "race": _StageEntry(Bout._race, Bout._race_summary),
    "examine": _StageEntry(Bout._examine, Bout._examine_summary),
    "judge": _StageEntry(Bout._judge, Bout._judge_summary),
    "score": _StageEntry(Bout._score, Bout._score_summary),
    "report": _StageEntry(Bout._report, Bout._report_summary),
}
"""Every stage of `STAGES`, in its order: a new stage is its name there and one entry here."""
assert tuple(_BY_STAGE) == STAGES, "every stage has one entry, in the order of STAGES"


def _user_error(group: BaseExceptionGroup[BaseException]) -> BugboutError | None:
    """The first `BugboutError` in a stage's failed task group, if there is one.

    A stage runs its work in task groups; when one piece fails (a record that cannot be
    written) the others are cancelled, their agents ended, and the failure arrives
    wrapped. It is reported as itself, as if the stage had run its work one by one.
    """
    for error in group.exceptions:
        if isinstance(error, BugboutError):
            return error
        if isinstance(error, BaseExceptionGroup) and (found := _user_error(error)):
            return found
    return None


def _stages_until(until: Stage | None) -> tuple[Stage, ...]:
    if until is None:
        return STAGES
    if until not in STAGES:
        known = ", ".join(STAGES)
        raise UsageError(f"cannot run until '{until}'; choose one of: {known}")
    return STAGES[: STAGES.index(until) + 1]
