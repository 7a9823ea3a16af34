"""The ground-truth stage of a bout: each task's oracle, from the maintainers' own tests.

For every task the fix's test modules run on the base (with the fix's test files put
in) and `[tasks] reruns` times on the fix (twice by default), in scratch copies of
pristine trees, inside the sandbox.
Tasks run side by side up to the number of cores; each oracle is stored the moment it
is known, so a stopped run resumes with the tasks it had not finished.

An oracle is kept with the conditions it was made under (`Conditions`): one made under
other conditions than the current ones is made again, and so is one that is not scored
when the run asks to retry what failed. A run that failed for a reason that may pass
(a full disk, a sandbox that could not start, pytest killed by a signal) is no answer
about the task: it is recorded as such, and the next run tries again; the same failure
twice in a row is kept as the answer (`rules.ground_truth.failed_again`). Each run's
pytest output is kept in the store, and the oracle names the folder. Every outcome goes
into the flake ledger, once per stage; a test the ledger quarantines is set aside as
unstable in every stored oracle of the tasks run.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core import look
from bugbout_tui.core.events import ErrorRaised, StageProgress
from bugbout_tui.core.models import SUITE, Conditions, Oracle, OracleSet, Task, TaskEnvironment
from bugbout_tui.engine.environments import NoEnvironment
from bugbout_tui.engine.testing import (
    PytestRunner,
    first_error,
    put_fix_tests,
    transient_failure,
)
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_run import TestRun, expand_collection_errors
from bugbout_tui.infra.submodules import MissingSubmodule
from bugbout_tui.infra.trees import copy_tree, missing_submodules, pristine_tree
from bugbout_tui.rules.examine import is_test_module
from bugbout_tui.rules.flakes import oracle_without, repository_tests, tree_of
from bugbout_tui.rules.ground_truth import (
    PASSING,
    compute_oracle,
    failed_again,
    lacking_submodules,
    on_newer_python,
    unrunnable,
)


def log_names(reruns: int) -> tuple[str, ...]:
    """The output of each run, in the oracle's log folder: the base's, then each of the
    `reruns` runs of the fix."""
    return ("base.log", *(f"fix-{n}.log" for n in range(1, reruns + 1)))


_LISTED = 3
"""How many failing tests a reason names before it only counts the rest."""


@dataclass(frozen=True)
class MayPass:
    """Runs that failed in a way that may pass (`problem` says how): no answer yet."""

    problem: str
    logs: str | None = None
    """The store's folder with their output, when they ran."""


class GroundTruth(PytestRunner):
    """Runs and stores the oracles of a project's tasks."""

    stage_dir = "oracle"

    def needs_run(self, stored: Oracle | None, current: Conditions) -> bool:
        """Whether a task's oracle is to be made (again).

        A record from before conditions were kept is trusted when it is scored, and made
        again once when it is not: those are the records an earlier version could have
        stored after a run that failed for a passing reason. A run that failed once in a
        way that may pass is no answer yet, so it is made again.
        """
        if stored is None or stored.may_pass is not None:
            return True
        if stored.conditions is None:
            return not stored.scored
        return stored.conditions != current or (self.retry_failed and not stored.scored)

    async def run(self, tasks: Sequence[Task]) -> OracleSet:
        """Every task's oracle, made where it is missing or stale.

        Each task first gets its environment (built a few at a time, shared between tasks
        whose resolutions agree), then waits its turn to run, so tests run on tasks whose
        environment is ready while others are still being built.
        """
        store = self.project.store
        oracles = store.read(store.oracles_path, OracleSet) or OracleSet()
        gate = asyncio.Semaphore(self.parallel)
        done = 0

        def keep(task: Task, oracle: Oracle | None) -> None:
            if oracle is not None:
                oracles.oracles[task.id] = oracle
                store.write(store.oracles_path, oracles)
            elif oracles.oracles.pop(task.id, None) is not None:  # stale, and no answer now
                store.write(store.oracles_path, oracles)

        async def settle(task: Task) -> None:
            nonlocal done
            stored = oracles.oracles.get(task.id)
            try:
                environment = await self.environments.for_task(task)
            except NoEnvironment as missing:
                current = _without_environment(self.conditions(_NONE))
                if self.needs_run(stored, current):
                    reason = f"no test environment: {missing.record.note}"
                    update = {"conditions": current, "environment": missing.record}
                    keep(task, unrunnable(reason).model_copy(update=update))
                done += 1
                return
            current = self.conditions(environment)
            record = self.environments.record(task.id)
            if not self.needs_run(stored, current):
                if stored is not None and stored.conditions is None:
                    stored = stored.model_copy(update={"conditions": current})
                    keep(task, stored)
                if stored is not None and record is not None and stored.environment != record:
                    # The same environment, reached another way (the tip's, now as a rung).
                    keep(task, stored.model_copy(update={"environment": record}))
                done += 1
                return
            async with gate:
                oracle = await self.oracle_for(task, current, environment)
            if isinstance(oracle, Oracle) and _nothing_failed(oracle):
                other = await self._on_another_python(task, gate)
                if other is not None:
                    oracle, current, record = other
            if isinstance(oracle, MayPass):
                last = stored if stored is not None and stored.conditions == current else None
                oracle = failed_again(oracle.problem, last).model_copy(
                    update={"conditions": current, "logs": oracle.logs}
                )
                self._failed(task, oracle)
            oracle = oracle.model_copy(
                update={"environment": record, "reason": on_newer_python(oracle, record)}
            )
            keep(task, oracle)
            done += 1
            self.bus.emit(
                StageProgress(stage="ground-truth", done=done, total=len(tasks), detail=task.id)
            )

        try:
            async with asyncio.TaskGroup() as group:
                for task in tasks:
                    group.create_task(settle(task))
        finally:
            ledger = self.save_ledger()
        quarantined = False
        for task in tasks:
            stored = oracles.oracles.get(task.id)
            if stored is None:
                continue
            kept = oracle_without(stored, repository_tests(ledger, task.id))
            if kept != stored:
                oracles.oracles[task.id] = kept
                quarantined = True
        if quarantined:
            store.write(store.oracles_path, oracles)
        return oracles

    def logs_for(self, task: Task) -> Path:
        return self.project.store.logs_dir / "ground-truth" / task.id

    async def _on_another_python(
        self, task: Task, gate: asyncio.Semaphore
    ) -> tuple[Oracle, Conditions, TaskEnvironment | None] | None:
        """The ground truth on another Python the commit names, the first on which the
        fix's tests tell (the task keeps that Python from then on); None when none does,
        and the task keeps its first."""
        for python in self.environments.others(task.id):
            self.environments.settle(task.id, python)
            try:
                environment = await self.environments.for_task(task)
            except NoEnvironment:
                continue
            record = self.environments.record(task.id)
            if record is None or record.python != python:
                continue  # that Python could not be given an environment
            current = self.conditions(environment)
            async with gate:
                oracle = await self.oracle_for(task, current, environment)
            if isinstance(oracle, Oracle) and oracle.scored:
                return oracle, current, record
        self.environments.settle(task.id, None)
        return None

    async def oracle_for(
        self, task: Task, conditions: Conditions, environment: Environment
    ) -> Oracle | MayPass:
        """The task's oracle, or how its runs failed when that may pass."""
        tests = [path for path in task.test_files if is_test_module(path)]
        if not tests:
            reason = "the fix changed no test module that pytest would collect"
            return unrunnable(reason).model_copy(update={"conditions": conditions})
        workspace = self.scratch / task.id
        logs = self.logs_for(task)
        shutil.rmtree(workspace, ignore_errors=True)
        try:
            shutil.rmtree(logs, ignore_errors=True)
            workspace.mkdir(parents=True)
            logs.mkdir(parents=True)
            base, fix, missing = await asyncio.to_thread(self._prepare, task, workspace)
            tests = [path for path in tests if (fix / path).is_file()]
            if not tests:
                reason = "the fix deleted the test modules it touched"
                return unrunnable(reason).model_copy(update={"conditions": conditions})
            names = log_names(self.project.config.tasks.reruns)
            base_run, first = await asyncio.gather(
                self.run_tests(
                    task.id,
                    "base",
                    base,
                    tests,
                    workspace / "base-run",
                    environment=environment,
                    log_path=logs / names[0],
                    origin=task.base_commit,
                ),
                self.run_tests(
                    task.id,
                    "fix",
                    fix,
                    tests,
                    workspace / "fix-run-1",
                    environment=environment,
                    log_path=logs / names[1],
                    origin=task.fix_commit,
                ),
            )
            fixes = [first]
            for n in range(2, len(names)):
                fixes.append(
                    await self.run_tests(
                        task.id,
                        f"fix (run {n})",
                        fix,
                        tests,
                        workspace / f"fix-run-{n}",
                        environment=environment,
                        log_path=logs / names[n],
                        origin=task.fix_commit,
                    )
                )
        except Exception as exc:  # a task that cannot be prepared must not sink the others
            return MayPass(f"its tests could not be set up: {exc}")
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        kept = logs.relative_to(self.project.store.root).as_posix()
        stored = {"logs": kept, "conditions": conditions}
        for label, run, tree in [("base", base_run, base), *(("fix", r, fix) for r in fixes)]:
            if transient_failure(run):
                assert run.error is not None
                problem = f"a run on the {label} failed: {first_error(run.error, tree=tree)}"
                return MayPass(problem, kept)
        base_tree = tree_of(
            f"base {task.base_commit[:9]} with the fix's tests",
            conditions,
            "base",
            task.base_commit,
            "tests",
            task.fix_commit,
        )
        fix_tree = tree_of(f"fix {task.fix_commit[:9]}", conditions, "fix", task.fix_commit)
        self.observe(task.id, SUITE, base_tree, _outcomes(base_run))
        for run in fixes:
            self.observe(task.id, SUITE, fix_tree, _outcomes(run))
        for run in fixes:
            if run.error is not None:
                reason = f"the tests could not run on the fix: {first_error(run.error, tree=fix)}"
                if missing:
                    reason = lacking_submodules(missing, reason)
                return unrunnable(reason).model_copy(update=stored)
        known = {test for run in fixes for test in run.outcomes}
        base_run = expand_collection_errors(base_run, known)
        oracle = compute_oracle(_outcomes(base_run), *(_outcomes(run) for run in fixes))
        if not oracle.scored:
            why = _why_unscored(oracle, first, fix) or oracle.reason
            if missing and why is not None:
                why = lacking_submodules(missing, why)
            stored["reason"] = why
        return oracle.model_copy(update=stored)

    def _failed(self, task: Task, oracle: Oracle) -> None:
        """Say that a task's runs failed in a way that may pass, and what follows."""
        if oracle.may_pass is not None:
            said = f"{oracle.may_pass}. This may pass: the next run tries again"
        else:
            said = f"{oracle.reason}, so that is kept as its answer (--retry-failed tries again)"
        self.bus.emit(ErrorRaised(message=f"{task.id}: {said}.", task=task.id))

    def _prepare(self, task: Task, workspace: Path) -> tuple[Path, Path, list[MissingSubmodule]]:
        """Scratch copies: the base with the fix's test files put in, and the fix; and
        the submodules either lacks."""
        fixed = pristine_tree(self.repo, task.fix_commit)
        unfixed = pristine_tree(self.repo, task.base_commit)
        base = copy_tree(unfixed, workspace / "base")
        put_fix_tests(base, fixed, task)
        missing = {
            (gap.path, gap.url, gap.commit): gap
            for gap in [*missing_submodules(unfixed), *missing_submodules(fixed)]
        }
        return base, copy_tree(fixed, workspace / "fix"), list(missing.values())


_NONE = Environment(python=Path(), root=None, key="none", built=False)
"""Stands for the environment a task could not get, in its conditions."""


def _nothing_failed(oracle: Oracle) -> bool:
    """Whether the tests ran on both sides and none failed before the fix."""
    return not oracle.scored and not oracle.fail_to_pass and bool(oracle.pass_to_pass)


def _without_environment(conditions: Conditions) -> Conditions:
    """The conditions of a task with no environment: the same again (say, the next bout
    with nothing changed) leaves its answer alone; `--retry-failed` asks again."""
    return conditions.model_copy(update={"interpreter": ""})


def _outcomes(run: TestRun) -> dict[str, str]:
    return {test: result.outcome for test, result in run.outcomes.items()}


def _why_unscored(oracle: Oracle, fix: TestRun, tree: Path) -> str | None:
    """Why no test is fail-to-pass, in the words that lead to a fix.

    A module of the fix's tests that cannot be collected on the fix is named with the
    first line of its error (a dependency missing from the test environment, most
    often). Otherwise the reason says what the tests did on each side.
    """
    broken = sorted(
        (node, result)
        for node, result in fix.outcomes.items()
        if "::" not in node and result.outcome == "error"
    )
    if broken:
        node, result = broken[0]
        message = first_error(result.message or "", tree=tree) or "an error while importing it"
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return f"the fix's tests cannot be collected: {node}: {message}{more}"
    tests = {node: result for node, result in fix.outcomes.items() if "::" in node}
    if not tests:
        return None
    failing = sorted(node for node, result in tests.items() if result.outcome not in PASSING)
    parts = []
    if oracle.pass_to_pass:
        kept = len(oracle.pass_to_pass)
        parts.append(f"{kept} {look.verb(kept, 'passes', 'pass')} before and after it")
    if failing:
        named = ", ".join(failing[:_LISTED])
        rest = f" and {len(failing) - _LISTED} more" if len(failing) > _LISTED else ""
        parts.append(
            f"{len(failing)} {look.verb(len(failing), 'fails', 'fail')} on the fix too "
            f"({named}{rest})"
        )
    if not parts:
        return None
    return f"{oracle.reason}: {'; '.join(parts)}"
