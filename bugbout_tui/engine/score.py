"""The scoring stage of a bout: every contestant's patch against the maintainers' tests.

Only a patch's source changes are applied, to a copy of the unfixed code; the fix's own
test files are put in after them, from the fix's pristine tree. Nothing else the agent
wrote reaches the run: not its tests, not a root `conftest.py`, not its settings, so no
patch can grade itself. Runs share the cores, and each score is stored the moment it is
known, so a stopped run resumes with the patches it had not scored.

Each scored task also gets its gold control: the maintainers' own fix, split as an
agent's patch is split and scored through the same path (its source part on the base,
the fix's tests put in, the same environment and sandbox). It is made from the
repository's commits alone, so no agent can move it; a task whose control is not
resolved has a grader that does not work here, and the report counts it nowhere.

A score is kept with the conditions its run was made under and made again under other
conditions. A run that failed because the machine did (a control run fails too) is no
score: nothing is stored, and the next run tries again.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import ErrorRaised
from bugbout_tui.core.models import (
    GOLD,
    SUITE,
    Attempt,
    Ledger,
    Oracle,
    OracleSet,
    Resolution,
    ResolutionSet,
    Task,
    attempt_name,
)
from bugbout_tui.core.patch import Patch
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.testing import PytestRunner, put_fix_tests, tests_dir_at
from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.trees import copy_tree, pristine_tree
from bugbout_tui.infra.workcopy import commit_patch
from bugbout_tui.rules.examine import is_test_module
from bugbout_tui.rules.flakes import (
    digest,
    oracle_without,
    repository_tests,
    resolution_without,
    tree_of,
)
from bugbout_tui.rules.score import (
    CONTROL_WITHOUT_SOURCE,
    PATCH_DOES_NOT_APPLY,
    RUN_FAILED,
    classify,
    is_scored,
    run_outcomes,
    score_without_run,
    took_a_run,
    untestable,
)

CONTROL_WORKSPACE = "+gold"
"""The gold control's scratch folder: `+` is quoted in every contestant's folder name,
so no agent's folder can be this one."""


class Scoring(PytestRunner):
    """Scores and stores every contestant's patch on every scored task."""

    stage_dir = "score"

    def __init__(
        self, context: StageContext, *, parallel: int | None = None, announce: bool = True
    ) -> None:
        """`announce` off keeps its progress off the score stage's: scoring a task
        during the race (`[run] stop-when-decided`) is the race's work."""
        super().__init__(context, parallel=parallel)
        self.announce = announce

    @property
    def path(self) -> Path:
        return self.project.store.resolutions_path

    async def run(
        self,
        tasks: Sequence[Task],
        oracles: OracleSet,
        attempts: Mapping[str, Sequence[Attempt]],
    ) -> ResolutionSet:
        """Score what is not scored yet; unscored tasks and skipped attempts get nothing."""
        store = self.project.store
        scores = store.read(self.path, ResolutionSet) or ResolutionSet()
        ledger = store.read(store.ledger_path, Ledger)
        oracles = OracleSet(
            oracles={
                task: oracle_without(oracle, repository_tests(ledger, task))
                for task, oracle in oracles.oracles.items()
            }
        )
        environments: dict[str, Environment] = {}
        to_run: list[tuple[Task, Oracle, Attempt | None]] = []
        changed = False
        for task in tasks:
            oracle = oracles.oracles.get(task.id)
            if oracle is None or not oracle.scored:
                continue
            try:
                environment = environments[task.id] = await self.environments.for_task(task)
            except BugboutError as exc:  # its environment is gone and cannot be made again
                self.bus.emit(ErrorRaised(message=exc.message, task=task.id))
                continue
            current = self.conditions(environment)
            for attempt in attempts.get(task.id, ()):
                known = scores.patches.get(task.id, {}).get(attempt.contestant)
                if not is_scored(attempt):
                    if known is not None:  # the score of an earlier record, since retried
                        del scores.patches[task.id][attempt.contestant]
                        changed = True
                    continue
                settled = score_without_run(attempt)
                if settled is not None:
                    if settled != known:
                        scores.patches.setdefault(task.id, {})[attempt.contestant] = settled
                        changed = True
                elif known is None or not took_a_run(known):
                    to_run.append((task, oracle, attempt))
                elif known.conditions is None:  # from before conditions were kept: trusted
                    adopted = known.model_copy(update={"conditions": current})
                    scores.patches[task.id][attempt.contestant] = adopted
                    changed = True
                elif known.conditions != current:
                    to_run.append((task, oracle, attempt))
            control = scores.controls.get(task.id)
            if control is None or control.conditions != current:
                to_run.append((task, oracle, None))
        if changed:
            store.write(self.path, scores)

        async def settle(item: tuple[Task, Oracle, Attempt | None]) -> None:
            task, oracle, attempt = item
            environment = environments[task.id]
            current = self.conditions(environment)
            if attempt is None:
                control = await self._control(task, oracle, environment)
                if control is not None:
                    scores.controls[task.id] = control.model_copy(update={"conditions": current})
                    store.write(self.path, scores)
                elif scores.controls.pop(task.id, None) is not None:
                    store.write(self.path, scores)
                return
            resolution = await self._score(
                task,
                oracle,
                attempt.contestant,
                attempt.patch.source,
                quote(attempt.contestant, safe=""),
                environment,
            )
            if resolution is not None:
                scored = resolution.model_copy(update={"conditions": current})
                scores.patches.setdefault(task.id, {})[attempt.contestant] = scored
                store.write(self.path, scores)
            elif scores.patches.get(task.id, {}).pop(attempt.contestant, None) is not None:
                store.write(self.path, scores)  # made under other conditions, and no answer now

        try:
            await self.side_by_side(
                "score" if self.announce else None,
                to_run,
                settle,
                label=_patch_label,
                total=len(to_run),
            )
        finally:
            ledger = self.save_ledger()
        if self._quarantine(scores, [task.id for task in tasks], ledger):
            store.write(self.path, scores)
        return scores

    @staticmethod
    def _quarantine(scores: ResolutionSet, tasks: Sequence[str], ledger: Ledger) -> bool:
        """Decide again, without them, every stored score of `tasks` that counted a test
        the ledger has since quarantined; whether any changed."""
        changed = False
        for task in tasks:
            flaky = repository_tests(ledger, task)
            if not flaky:
                continue
            for name, resolution in scores.patches.get(task, {}).items():
                kept = resolution_without(resolution, flaky)
                if kept != resolution:
                    scores.patches[task][name] = kept
                    changed = True
            if (control := scores.controls.get(task)) is not None:
                kept = resolution_without(control, flaky)
                if kept != control:
                    scores.controls[task] = kept
                    changed = True
        return changed

    async def _control(
        self, task: Task, oracle: Oracle, environment: Environment
    ) -> Resolution | None:
        """The task's gold control: the maintainers' fix scored as a patch, or None when
        its run failed because the machine did.

        Its source part is split from the fix commit by the rule that splits an agent's
        patch and goes through `_score` as one does; nothing an agent made is read.
        """
        try:
            patch = await asyncio.to_thread(self._fix_patch, task)
        except BugboutError as exc:
            self.bus.emit(ErrorRaised(message=exc.message, task=task.id))
            return untestable(task.id, GOLD, RUN_FAILED, exc.message)
        if not patch.has_source_change:
            return Resolution(
                task=task.id, contestant=GOLD, status="no-fix", detail=CONTROL_WITHOUT_SOURCE
            )
        return await self._score(task, oracle, GOLD, patch.source, CONTROL_WORKSPACE, environment)

    def _fix_patch(self, task: Task) -> Patch:
        """The fix commit as a patch on its base, split as the race splits an agent's."""
        cfg = self.project.config.project
        base = pristine_tree(self.repo, task.base_commit)
        tests_dir = tests_dir_at(base, cfg.tests, task.test_files) or cfg.tests
        return commit_patch(self.repo, task.base_commit, task.fix_commit, (cfg.source, tests_dir))

    async def _score(
        self,
        task: Task,
        oracle: Oracle,
        name: str,
        source: str,
        folder: str,
        environment: Environment,
    ) -> Resolution | None:
        """The score of `source` (a patch's source part) as `name`'s, or None when its
        run failed because the machine did; `folder` is its scratch folder's name."""
        workspace = self.scratch / task.id / folder
        shutil.rmtree(workspace, ignore_errors=True)
        workspace.mkdir(parents=True)
        try:
            tree = workspace / "tree"
            problem, modules = await asyncio.to_thread(self._prepare, task, source, tree)
            if problem is not None:
                return untestable(task.id, name, PATCH_DOES_NOT_APPLY, problem)
            if not modules:
                return untestable(task.id, name, RUN_FAILED, "the fix's test modules are missing")
            run = await self.run_tests(
                task.id,
                name,
                tree,
                modules,
                workspace / "run",
                environment=environment,
                origin=task.base_commit,
            )
            if await self.machine_failed(run, workspace, environment):
                assert run.error is not None
                first = next((ln for ln in run.error.splitlines() if ln.strip()), run.error)
                self.bus.emit(
                    ErrorRaised(
                        message=f"{task.id}/{name}: the hidden tests could not run, and a "
                        f"control run failed too: {first} No score is kept; the next run "
                        "tries again.",
                        task=task.id,
                    )
                )
                return None
            label = "the gold control" if folder == CONTROL_WORKSPACE else f"{name}'s patch"
            where = tree_of(
                label,
                self.conditions(environment),
                "patch",
                task.base_commit,
                digest(source),
                "tests",
                task.fix_commit,
            )
            self.observe(task.id, SUITE, where, {t: r.outcome for t, r in run.outcomes.items()})
        except BugboutError as exc:  # the trees could not be made at all
            self.bus.emit(ErrorRaised(message=exc.message, task=task.id))
            return untestable(task.id, name, RUN_FAILED, exc.message)
        except OSError as exc:  # the machine's trouble (a full disk), not the patch's
            self.bus.emit(
                ErrorRaised(
                    message=f"{task.id}/{name}: could not prepare its run: {exc}. No score "
                    "is kept; the next run tries again.",
                    task=task.id,
                )
            )
            return None
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        if run.error is not None:
            return untestable(task.id, name, RUN_FAILED, run.error)
        tests = [*oracle.fail_to_pass, *oracle.pass_to_pass]
        return classify(task.id, name, oracle, run_outcomes(run, tests))

    def _prepare(self, task: Task, source: str, tree: Path) -> tuple[str | None, list[str]]:
        """The base with the patch's source changes, then the fix's test files over it.

        Returns why the source changes do not apply (else None), and the test modules.
        """
        fixed = pristine_tree(self.repo, task.fix_commit)
        copy_tree(pristine_tree(self.repo, task.base_commit), tree)
        try:
            apply_patch(tree, source)
        except BugboutError as exc:
            return exc.message.replace(str(tree), "the unfixed code"), []
        put_fix_tests(tree, fixed, task)
        return None, [p for p in task.test_files if is_test_module(p) and (fixed / p).is_file()]


def _patch_label(item: tuple[Task, Oracle, Attempt | None]) -> str:
    task, _, attempt = item
    return attempt.id if attempt is not None else attempt_name(task.id, GOLD)
