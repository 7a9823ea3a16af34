"""The race: every entrant on every task, each in its own sandboxed, history-free copy.

Attempts run in quota lanes (`engine.scheduler`); each one's record is written the
moment it ends, so a run that is stopped, or killed, loses only what was in flight.
What the agent says it did is kept as its summary; what counts is the disk.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote

from bugbout_tui.agents.base import (
    RunReport,
)
from bugbout_tui.agents.quota import limit_resets
from bugbout_tui.core.env_models import EnvSpec, RepairSet
from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptQueued,
    AttemptStarted,
    AttemptStatus,
    BoutDecided,
    ErrorRaised,
    QuotaParked,
    QuotaResumed,
)
from bugbout_tui.core.models import BASE, Attempt, Task, Tokens, attempt_name
from bugbout_tui.core.patch import Patch
from bugbout_tui.core.paths import bugbout_home, known_homes
from bugbout_tui.core.store import Store
from bugbout_tui.core.trials import agent_of, trial_number
from bugbout_tui.engine.agent_run import AgentRun, Entrant, Launch, launch_problem
from bugbout_tui.engine.budget import BudgetKeeper, Spender
from bugbout_tui.engine.cluster_attempts import WORKER_LOST, RemoteAttempts, unpack_logs
from bugbout_tui.engine.context import StageContext, StageRunner
from bugbout_tui.engine.decided import DecisionWatch
from bugbout_tui.engine.env_runs import base_paths
from bugbout_tui.engine.env_sources import is_env
from bugbout_tui.engine.scheduler import (
    SYSTEM_CLOCK,
    Clock,
    Job,
    Parking,
    QuotaParkedError,
    run_in_lanes,
)
from bugbout_tui.engine.windows import WindowBook
from bugbout_tui.infra.git import repository_paths
from bugbout_tui.infra.proc import ProcessResult
from bugbout_tui.infra.trees import repo_key
from bugbout_tui.rules.cost import costing_for
from bugbout_tui.rules.env_repairs import failing_log, failure_tail
from bugbout_tui.rules.judge import author_identity
from bugbout_tui.rules.prompts import render_env_prompt

SUMMARY_LIMIT = 4000
RETRYABLE = frozenset({"quota", "crashed", "timeout"})
"""Statuses `--retry-failed` runs again; finished attempts never run twice, and neither
do `oversized` ones, whose agent did finish (its patch was over a cap)."""
CANCELLED = "cancelled by the user"
"""The detail of an attempt stopped on its own: recorded as crashed, so a retry runs it."""
NOT_STARTED = "could not start"
"""How the detail of an attempt whose agent never ran begins; it is recorded skipped."""


def check_programs(entrants: Sequence[Entrant]) -> None:
    """Stop before the race when an entrant's program cannot be started.

    A missing agent is a set-up mistake, not a result: raced, every one of its attempts
    would fail alike. `UsageError` names each such entrant with the adapter's fix.
    """
    problems = []
    for entrant in entrants:
        try:
            entrant.agent.command()
        except ToolMissingError as exc:
            fix = f" {exc.hint}" if exc.hint else ""
            problems.append(f"the {entrant.role} {entrant.agent.name!r}: {exc.message}{fix}")
    if problems:
        raise UsageError(
            "cannot start the race: " + "\n".join(problems),
            hint="Nothing was run. Install or correct each one (`bugbout doctor` checks "
            "them all), then run again.",
        )


def attempt_path(attempts_dir: Path, task: str, name: str) -> Path:
    """Where an attempt's record lives; agent names may hold `/`, so they are quoted."""
    return attempts_dir / task / f"{quote(name, safe='')}.json"


def pending_attempts(
    tasks: Sequence[Task],
    entrants: Sequence[Entrant],
    store: Store,
    *,
    retry_failed: bool,
    waits: bool = False,
) -> list[tuple[Task, Entrant]]:
    """The attempts a race over `tasks` would start, in the order it starts them
    (task-major: each lane alternates between its agents). `waits`: lanes wait out
    their usage windows (`wait-for-quota`). Examiners write tests, and an environment
    task has none to write: they never take one."""
    return [
        (task, entrant)
        for task in tasks
        for entrant in entrants
        if entrant.role == "contestant" or not is_env(task)
        if needs_attempt(
            task,
            store.read(attempt_path(store.attempts_dir, task.id, entrant.agent.name), Attempt),
            retry_failed=retry_failed,
            waits=waits,
        )
    ]


def needs_attempt(
    task: Task, stored: Attempt | None, *, retry_failed: bool, waits: bool = False
) -> bool:
    """Whether to run an attempt. A skipped one (no issue text, or an agent that could
    not be started) runs once the task has its text (an environment task needs none:
    its failing log is what the agent is given), and one stopped by a budget runs
    whenever the budget allows: no agent ran, so nothing would run twice. One that met a
    usage limit runs again whenever lanes wait out their windows (`waits`): a run
    stopped while a lane waited carries on where it was."""
    if stored is None or stored.status == "budget":
        return True
    if stored.status == "skipped":
        return bool(task.statement) or is_env(task)
    if stored.status == "quota" and waits:
        return True
    return retry_failed and stored.status in RETRYABLE


def hidden_files(task: Task, *, hide_touched_tests: bool) -> list[str]:
    """What of the base is kept out of an agent's checkout.

    Nothing by default: the base's test files hold nothing of the fix, and the agent's
    test command needs them to collect (another module may import from one the fix
    edits). Under `hide-touched-tests`, every test file the fix touched, with its old
    content: the agent cannot see what the fix's tests replaced, at the cost of a test
    command that may not collect and tests that lose their helpers.
    """
    return [*task.test_files, *task.test_data_files] if hide_touched_tests else []


@dataclass
class _InProgress:
    """An attempt under way: what its record says, whichever way it ends.

    `folder` holds its agent's logs, home and working copy; an attempt ended before it
    had one (cancelled while queued, never let out of a spent quota) has none.
    """

    task: Task
    entrant: Entrant
    id: str
    folder: Path | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    clock: float = field(default_factory=time.monotonic)
    worker: str | None = None
    """The cluster's worker its agent ran on; None on this machine."""

    @property
    def workspace(self) -> Path:
        assert self.folder is not None, "an attempt not begun has no folder"
        return self.folder

    @property
    def logdir(self) -> Path:
        return self.workspace / "logs"


class Race(StageRunner):
    """Runs the attempts a bout still needs and returns every stored attempt per task."""

    def __init__(
        self,
        context: StageContext,
        entrants: Sequence[Entrant],
        *,
        watch: DecisionWatch | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        """`watch`, under `[run] stop-when-decided`, scores each task as its contestants'
        attempts are all recorded and says when no new task need start; `clock` is what
        lanes that wait out a usage window go by (a test's waits take no time)."""
        super().__init__(context)
        self.entrants = list(entrants)
        self.watch = watch
        self._begun: set[str] = set()
        """Tasks an attempt has started on (in this run or one before): once the bout is
        decided, these still run to their end, and no other starts."""
        self._queued: dict[str, str] = {}
        """This run's attempts, by id, to their task's."""
        self._announced = False
        self._in_turn = sorted(self.entrants, key=lambda e: trial_number(e.agent.name))
        """Trial by trial, each in the entrants' order: on a task every agent's first
        trial comes before any agent's second, so a lane shared by several agents
        alternates between them rather than running one agent's trials back to back."""
        self.clock = clock
        self.windows = WindowBook(self.project.store)
        self._parkings: dict[str, Parking] = {}
        """How each lane that parked in this run last did."""
        self.scratch = bugbout_home() / "attempts" / repo_key(self.repo)
        project_paths = _unique(
            [self.project.store.root, self.project.dir.resolve(), *repository_paths(self.repo)]
        )
        self.hidden = (*known_homes(), *project_paths)
        """What no agent may read: every bugbout home (the fix's pristine trees, clones,
        other attempts, the demo's store), the store, the project and the repository
        with its history. An attempt's own directories are writable inside a home, so
        they stay visible."""
        self.agents = AgentRun(self.project.config, self.sandbox, self.hidden, tuple(project_paths))
        """Where this race's agents run when they run here."""
        self._stops: dict[str, asyncio.Event] = {}
        """One per attempt of this run not yet recorded; set, it stops that attempt."""
        self._budget = self._budget_keeper()
        self.remote = (
            RemoteAttempts(self.cluster, self._started_on, self._lines_of)
            if self.cluster is not None
            else None
        )
        """Attempts whose agent a worker declares, sent to the cluster."""
        self._on_cluster: dict[str, _InProgress] = {}

    def cancel(self, attempt_id: str) -> bool:
        """Stop one attempt of this run, queued or running, and say whether there was one.

        A running agent's process group is ended as on a timeout; a queued one is never
        started. Either is recorded as crashed, cancelled by the user, and the rest of
        the race goes on. Call it from the loop that runs the race.
        """
        stop = self._stops.get(attempt_id)
        if stop is None:
            return False
        stop.set()
        return True

    def pending(self, tasks: Sequence[Task]) -> list[tuple[Task, Entrant]]:
        """The attempts `run(tasks)` would start, in its order."""
        return pending_attempts(
            tasks,
            self._in_turn,
            self.project.store,
            retry_failed=self.retry_failed,
            waits=self.project.config.run.wait_for_quota is not None,
        )

    async def run(
        self, tasks: Sequence[Task], pending: Sequence[tuple[Task, Entrant]] | None = None
    ) -> dict[str, list[Attempt]]:
        """Run what `tasks` still need and return every stored attempt per task;
        `pending` is what `self.pending(tasks)` gave, when the caller already asked."""
        needed = list(pending) if pending is not None else self.pending(tasks)
        withheld = await self._decide_before(tasks, needed)
        needed = [(task, entrant) for task, entrant in needed if task.id not in withheld]
        check_programs(list({id(e): e for _, e in needed}.values()))
        jobs: list[Job] = []
        waiting: dict[int, tuple[Task, Entrant, str]] = {}
        for task, entrant in needed:
            attempt_id = attempt_name(task.id, entrant.agent.name)
            self._queue(task, entrant, attempt_id)
            self._queued[attempt_id] = task.id
            job = Job(entrant.agent.quota, self._job(task, entrant, attempt_id))
            waiting[id(job)] = (task, entrant, attempt_id)
            jobs.append(job)
        not_started = await run_in_lanes(
            jobs,
            self.project.config.run.quotas,
            on_parked=self._parked,
            on_resumed=self._resumed,
            on_requeued=lambda job: self._queue(*waiting[id(job)]),
            wait_for=self.project.config.run.wait_for_quota,
            closed=self.windows.closed(self.clock.now()),
            clock=self.clock,
        )
        for job in not_started:
            task, entrant, attempt_id = waiting[id(job)]
            if not self._still_to_start(task):
                continue
            parking = self._parkings.get(job.quota)
            detail = f"not started: the {job.quota} quota ran out earlier in this run"
            if parking is not None and parking.stored and parking.resets_at is not None:
                until = parking.resets_at.astimezone().isoformat(sep=" ", timespec="seconds")
                detail = f"not started: the {job.quota} usage window is closed until {until}"
            resets_at = parking.resets_at if parking is not None else None
            self._record(
                _InProgress(task, entrant, attempt_id), "quota", detail, resets_at=resets_at
            )
        return {
            task.id: [
                *(a for e in self.entrants if (a := self._stored(task, e)) is not None),
                *self._trials_beyond(task),
            ]
            for task in tasks
        }

    def _trials_beyond(self, task: Task) -> list[Attempt]:
        """Stored trials of a contestant past the number it runs now (`trials` lowered
        since they ran). None is started again, but what is stored stays in the bout:
        the attempts were paid for, and their patches and tests still stand."""
        names = {e.agent.name for e in self.entrants}
        contestants = {agent_of(e.agent.name) for e in self.entrants if e.role == "contestant"}
        folder = self.project.store.attempts_dir / task.id
        beyond = sorted(
            name
            for path in (folder.glob("*.json") if folder.is_dir() else [])
            if (name := unquote(path.stem)) not in names
            and trial_number(name) > 1
            and agent_of(name) in contestants
        )
        store = self.project.store
        found = (store.read(attempt_path(store.attempts_dir, task.id, n), Attempt) for n in beyond)
        return [a for a in found if a is not None and a.role == "contestant"]

    def _parked(self, parking: Parking) -> None:
        """Say a lane parked, and keep its window for later runs when the agent said
        when it reopens."""
        self._parkings[parking.quota] = parking
        now = self.clock.now()
        if not parking.stored and parking.resets_at is not None and parking.resets_at > now:
            self.windows.close(parking.quota, parking.message, parking.resets_at, now)
        self.bus.emit(
            QuotaParked(
                quota=parking.quota,
                message=parking.message,
                resets_at=parking.resets_at,
                resumes_at=parking.resumes_at,
            )
        )

    def _resumed(self, quota: str) -> None:
        self.windows.reopen(quota)
        self.bus.emit(QuotaResumed(quota=quota))

    def _queue(self, task: Task, entrant: Entrant, attempt_id: str) -> None:
        """Put an attempt in its lane's queue, where it can be cancelled, and say so. An
        attempt that hit a usage limit is queued again once its lane resumes."""
        self._stops[attempt_id] = asyncio.Event()
        self.bus.emit(
            AttemptQueued(
                attempt=attempt_id,
                task=task.id,
                contestant=entrant.agent.name,
                role=entrant.role,
                quota=entrant.agent.quota,
            )
        )

    def _stored(self, task: Task, entrant: Entrant) -> Attempt | None:
        store = self.project.store
        return store.read(attempt_path(store.attempts_dir, task.id, entrant.agent.name), Attempt)

    def _job(self, task: Task, entrant: Entrant, attempt_id: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            attempt = await self._attempt(task, entrant, attempt_id)
            if attempt is None:
                return
            await self._task_recorded(task, entrant)
            if attempt.status == "quota":
                raise QuotaParkedError(attempt.detail or "usage limit reached", attempt.resets_at)

        return run

    async def _attempt(self, task: Task, entrant: Entrant, attempt_id: str) -> Attempt | None:
        """Run one attempt and record how it ended, whichever way that was; None when it
        is not to start at all (nothing ran, so nothing is recorded)."""
        if self._stops[attempt_id].is_set():
            run = _InProgress(task, entrant, attempt_id)
            return self._record(run, "crashed", f"{CANCELLED} before it started")
        if not self._still_to_start(task):
            self._stops.pop(attempt_id, None)
            return None
        over_budget = self._over_budget(entrant, attempt_id)
        if over_budget is not None:
            return self._record(_InProgress(task, entrant, attempt_id), "budget", over_budget)
        run = self._begin(task, entrant, attempt_id)
        if not task.statement and not is_env(task):
            return self._record(run, "skipped", f"no issue text to give: {task.statement_missing}")
        resource = None if is_env(task) or self.remote is None else self.remote.resource(entrant)
        if resource is not None:
            return await self._attempt_on_cluster(run, resource)
        try:
            launch = await self._prepare(run, task.statement or "")
        except BugboutError as exc:
            return self._not_started(run, exc.message)
        argv = self.agents.argv(entrant, launch)
        too_long = launch_problem(argv, launch)
        if too_long is not None:
            return self._not_started(run, too_long)
        try:
            result = await self._run_agent(run, launch, argv)
        except OSError as exc:
            return self._not_started(run, f"{argv[0]}: {exc.strerror or exc}")
        if result.cancelled:
            _clear_copy(run.workspace)
            return self._record(run, "crashed", CANCELLED)
        return await self._settle(run, launch, result)

    async def _attempt_on_cluster(self, run: _InProgress, resource: str) -> Attempt:
        """Run one attempt on a worker that declares `resource`, and record how it ended;
        a worker lost during it makes it crashed, never run again on its own."""
        assert self.remote is not None and self.cluster is not None
        task = run.task
        try:
            environment = await self.cluster.recipe(await self.environments.for_task(task))
        except BugboutError as exc:
            return self._not_started(run, exc.message)
        unit = self.remote.unit(
            run.id,
            task=task,
            entrant=run.entrant,
            statement=task.statement or "",
            config=self.project.config,
            hidden_files=self._hidden(task),
            environment=environment,
            sandbox=self.sandbox.name,
        )
        self._on_cluster[run.id] = run
        try:
            ended = await self.remote.run(unit, resource, self._stops[run.id])
        finally:
            self._on_cluster.pop(run.id, None)
            self.bus.flush_output(run.id)
        await asyncio.to_thread(unpack_logs, ended.logs, run.logdir)
        run.worker = ended.worker or None
        if ended.lost:
            gone = f"{WORKER_LOST}: {ended.worker or 'its worker'} left the cluster during it"
            return self._record(run, "crashed", gone)
        if ended.failed is not None:
            self.bus.emit(ErrorRaised(message=f"{run.id}: {ended.failed}", task=task.id))
            return self._record(run, "crashed", ended.failed)
        if ended.not_started is not None:
            return self._not_started(run, ended.not_started)
        if ended.cancelled:
            return self._record(run, "crashed", CANCELLED)
        result = ProcessResult(
            returncode=ended.returncode,
            timed_out=ended.timed_out,
            cancelled=False,
            duration=ended.duration,
            stdout_tail="",
            stderr_tail="",
            truncated=False,
        )
        if ended.unread is not None or ended.patch is None or ended.report is None:
            problem = ended.unread or "the worker sent back no patch"
            self.bus.emit(ErrorRaised(message=problem, task=task.id))
            unread = f"could not read what it left: {problem}"
            return self._record(run, "crashed", unread, exit_code=ended.returncode)
        return self._ended(run, result, ended.patch, ended.report)

    def _started_on(self, attempt: str, worker: str) -> None:
        run = self._on_cluster.get(attempt)
        if run is not None:
            self.bus.emit(AttemptStarted(attempt=attempt, logdir=str(run.logdir), worker=worker))

    def _lines_of(self, attempt: str, lines: list[tuple[str, str]]) -> None:
        for stream, line in lines:
            self.bus.output(attempt, "stderr" if stream == "stderr" else "stdout", line)

    def _budget_keeper(self) -> BudgetKeeper:
        """The budgets of `[run] budget` and each agent's `budget`, with what the bout's
        stored attempts have spent of them."""
        config = self.project.config
        own = {a.name: limit for a in config.agents if (limit := a.budget_limit) is not None}
        spenders = {
            author_identity(e.agent.name): Spender(e.agent.harness, e.agent.model)
            for e in self.entrants
        }
        stored = (
            [a for group in self.project.store.attempts().values() for a in group]
            if own or config.run.budget is not None
            else []
        )
        return BudgetKeeper(
            bout=config.run.budget_limit,
            own=own,
            spenders=spenders,
            costing=costing_for(config, {e.agent.name: e.agent.model for e in self.entrants}),
            stored=stored,
        )

    def _over_budget(self, entrant: Entrant, attempt_id: str) -> str | None:
        """Why the attempt may not start (a budget it would pass), or None when it may;
        a lane asks at the moment it would start it, so attempts under way count."""
        return self._budget.admit(attempt_id, entrant.agent.name)

    def _still_to_start(self, task: Task) -> bool:
        """Whether an attempt on `task` may start: not once the bout is decided, unless
        the task is already under way (its attempts all run, so every raced task has
        each contestant's). Deciding starts the task."""
        if self.watch is not None and self.watch.decided and task.id not in self._begun:
            return False
        self._begun.add(task.id)
        return True

    async def _decide_before(
        self, tasks: Sequence[Task], needed: Sequence[tuple[Task, Entrant]]
    ) -> set[str]:
        """Under `stop-when-decided`, the decision the stored records already make (a
        restart of a decided bout starts no new task either), and the tasks it keeps
        from starting. Environment tasks are no part of the comparison, which is of
        bugs: they count as begun, so the decision never keeps them from starting."""
        if self.watch is None:
            return set()
        recorded = {t.id: found for t in tasks if (found := self._contestants_of(t)) is not None}
        self._begun = {
            t.id for t in tasks if is_env(t) or any(self._stored(t, e) for e in self.entrants)
        }
        await self.watch.catch_up(recorded)
        if not self.watch.decided:
            return set()
        withheld = {task.id for task, _ in needed if task.id not in self._begun}
        withdrawn = [attempt_name(t.id, e.agent.name) for t, e in needed if t.id in withheld]
        self._announce(withdrawn)
        return withheld

    async def _task_recorded(self, task: Task, entrant: Entrant) -> None:
        """An attempt of `task` is recorded: once every contestant's is, the task is
        scored and every pair tested again; the first time all are decided, say so."""
        watch = self.watch
        if watch is None or entrant.agent.name not in watch.contestants or is_env(task):
            return
        attempts = self._contestants_of(task)
        if attempts is None:
            return
        await watch.task_recorded(task, attempts)
        if watch.decided:
            withdrawn = [
                attempt_id
                for attempt_id, task_id in self._queued.items()
                if task_id not in self._begun and attempt_id in self._stops
            ]
            self._announce(withdrawn)

    def _contestants_of(self, task: Task) -> list[Attempt] | None:
        """The compared contestants' stored attempts on `task`; None while one is missing."""
        assert self.watch is not None
        store = self.project.store
        found = []
        for name in self.watch.contestants:
            attempt = store.read(attempt_path(store.attempts_dir, task.id, name), Attempt)
            if attempt is None:
                return None
            found.append(attempt)
        return found

    def _announce(self, withdrawn: list[str]) -> None:
        """Say, once, that the bout is decided, and which queued attempts will not start."""
        watch = self.watch
        if self._announced or watch is None or watch.decision is None:
            return
        decision = watch.decision
        after = decision.decided_after
        if after is None:
            return
        self._announced = True
        self.bus.emit(
            BoutDecided(
                after=watch.tasks[after - 1].id,
                tasks_done=after,
                tasks=decision.horizon,
                level=float(decision.level),
                pairs=[
                    f"{p.first} ahead of {p.second}: {p.wins} to {p.losses}, "
                    f"p = {float(p.p_value):.3g}"
                    for p in decision.pairs
                ],
                withdrawn=withdrawn,
            )
        )

    def _begin(self, task: Task, entrant: Entrant, attempt_id: str) -> _InProgress:
        """The attempt's own folder, made afresh (its agent's logs and home), and its
        clock started."""
        # No "%" in the path: Gemini CLI 0.61 percent-decodes its working directory.
        folder = self.scratch / task.id / quote(entrant.agent.name, safe="").replace("%", "+")
        shutil.rmtree(folder, ignore_errors=True)  # left over from a run that died
        for directory in (folder / "logs", folder / "home"):
            directory.mkdir(parents=True)
        return _InProgress(task, entrant, attempt_id, folder)

    async def _prepare(self, run: _InProgress, statement: str) -> Launch:
        """The agent's working copy, its prompt (kept in its logs) and its invocation.

        Raises:
            BugboutError: the copy cannot be made, or the adapter cannot start the agent.
        """
        task = run.task
        repo = self.sources.repo_for(task)
        copy = await self.agents.checkout(repo, task, run.workspace, self._hidden(task))
        if is_env(task):
            python = await self.environments.interpreter(_env_spec(task).python)
            prompt, command = await self._env_brief(task, python)
        else:
            environment = await self.environments.for_task(task)
            python = environment.python
            prompt, command = self.agents.bug_brief(run.entrant, task, copy, environment, statement)
        return await self.agents.launch(run.entrant, copy, run.workspace, prompt, command, python)

    async def _env_brief(self, task: Task, python: Path) -> tuple[str, str]:
        """An environment task's prompt, and its command with `python` (the interpreter
        the task names; the agent gets no test environment, making one is its task)."""
        spec = _env_spec(task)
        index = await self.sources.index_for(task)
        failure = await asyncio.to_thread(self._base_failure, task)
        prompt = render_env_prompt(
            statement=task.statement,
            failure=failure,
            command=spec.command,
            python=spec.python,
            interpreter=str(python),
            index=index.simple,
            date=spec.date,
        )
        command = shlex.join([str(python) if word == "python" else word for word in spec.command])
        return prompt, command

    def _base_failure(self, task: Task) -> str:
        """The tail of what the base control printed where it failed."""
        store = self.project.store
        repairs = store.read(store.repairs_path, RepairSet) or RepairSet()
        base = repairs.controls.get(task.id, {}).get(BASE)
        log = failing_log(base) if base is not None else None
        if log is None:
            return "(no output was kept)"
        try:
            text = (store.root / log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(its output could not be read)"
        return failure_tail(text, paths=base_paths(self.repo, task))

    async def _run_agent(self, run: _InProgress, launch: Launch, argv: list[str]) -> ProcessResult:
        """The agent's process to its end, every line it prints on the bus.

        Raises:
            OSError: the program could not be started.
        """

        def on_line(stream: str, line: str) -> None:
            self.bus.output(run.id, "stderr" if stream == "stderr" else "stdout", line)

        self.bus.emit(AttemptStarted(attempt=run.id, logdir=str(run.logdir)))
        try:
            return await self.agents.run(launch, argv, on_line=on_line, stop=self._stops[run.id])
        finally:
            self.bus.flush_output(run.id)

    async def _settle(self, run: _InProgress, launch: Launch, result: ProcessResult) -> Attempt:
        """Record what an agent that ran to its end left: its patch, what it reports of
        itself, and the status they make."""
        try:
            patch, report = await self.agents.collect(run.entrant, launch, result)
        except (BugboutError, OSError) as exc:  # one attempt's mess must not sink the race
            problem = exc.message if isinstance(exc, BugboutError) else str(exc)
            self.bus.emit(ErrorRaised(message=problem, task=run.task.id))
            unread = f"could not read what it left: {problem}"
            return self._record(run, "crashed", unread, exit_code=result.returncode)
        attempt = self._ended(run, result, patch, report)
        _clear_copy(run.workspace)
        return attempt

    def _ended(
        self, run: _InProgress, result: ProcessResult, patch: Patch, report: RunReport
    ) -> Attempt:
        """Record an attempt whose agent ran to its end, by what it left."""
        cfg = self.project.config
        status, detail = _ending(result, patch, report, timeout=cfg.run.timeout)
        resets_at = None
        if status == "quota" and detail is not None:
            resets_at = limit_resets(detail, self.clock.now())
        usage = report.usage
        return self._record(
            run,
            status,
            detail,
            resets_at=resets_at,
            exit_code=result.returncode,
            summary=(report.summary or "")[-SUMMARY_LIMIT:] or None,
            tokens=Tokens(
                input=usage.input_tokens, output=usage.output_tokens, cached=usage.cached_tokens
            ),
            cost=usage.cost_usd,
            patch=patch,
        )

    def _hidden(self, task: Task) -> list[str]:
        return hidden_files(task, hide_touched_tests=self.project.config.run.hide_touched_tests)

    def _not_started(self, run: _InProgress, problem: str) -> Attempt:
        """Record an attempt whose agent never ran as skipped, so the next run tries it
        again: nothing can be said about an agent that was not started."""
        self.bus.emit(ErrorRaised(message=f"{run.id} could not start: {problem}", task=run.task.id))
        return self._record(run, "skipped", f"{NOT_STARTED}: {problem}")

    def _record(
        self,
        run: _InProgress,
        status: AttemptStatus,
        detail: str | None,
        *,
        exit_code: int | None = None,
        summary: str | None = None,
        tokens: Tokens | None = None,
        cost: float | None = None,
        patch: Patch | None = None,
        resets_at: datetime | None = None,
    ) -> Attempt:
        """Store how the attempt ended, and say so on the bus."""
        seconds = time.monotonic() - run.clock
        prompt = run.logdir / "prompt.md" if run.folder is not None else None
        attempt = Attempt(
            task=run.task.id,
            contestant=run.entrant.agent.name,
            role=run.entrant.role,
            status=status,
            detail=detail,
            started_at=run.started_at,
            ended_at=datetime.now(UTC),
            seconds=seconds,
            exit_code=exit_code,
            tokens=tokens or Tokens(),
            cost_usd=cost,
            summary=summary,
            patch=patch or Patch(),
            logdir=str(run.logdir) if run.folder is not None else "",
            prompt_file=str(prompt) if prompt is not None and prompt.exists() else None,
            hidden=self._hidden(run.task),
            resets_at=resets_at,
            worker=run.worker,
        )
        store = self.project.store
        store.write(attempt_path(store.attempts_dir, run.task.id, run.entrant.agent.name), attempt)
        self._budget.recorded(attempt)
        self._stops.pop(run.id, None)
        self.bus.emit(
            AttemptFinished(
                attempt=run.id,
                status=status,
                seconds=seconds,
                detail=detail,
                input_tokens=attempt.tokens.input,
                output_tokens=attempt.tokens.output,
            )
        )
        return attempt


def _ending(
    result: ProcessResult, patch: Patch, report: RunReport, *, timeout: float
) -> tuple[AttemptStatus, str | None]:
    """The status and detail of an attempt whose agent ran to its end."""
    if result.timed_out:
        return "timeout", f"stopped after {timeout}s"
    if patch.oversized is not None:
        return "oversized", patch.oversized
    if report.quota_message and patch.is_empty:
        return "quota", report.quota_message
    if patch.is_empty:
        if result.returncode == 0:
            return "no-change", None
        return "crashed", f"exited with {result.returncode}"
    return "finished", None


def _env_spec(task: Task) -> EnvSpec:
    assert task.env is not None, "an environment task carries its spec"
    return task.env


def _clear_copy(folder: Path) -> None:
    """Drop an attempt's working copy and its index once its record holds the patch."""
    shutil.rmtree(folder / "workdir", ignore_errors=True)
    shutil.rmtree(folder / "git", ignore_errors=True)


def _unique(paths: Sequence[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
