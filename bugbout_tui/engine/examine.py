"""The cross-examination stage of a bout: every author's tests on the unfixed code and on
every patch, each author's run apart from the others.

A task with n patches has n + 1 trees; on each, every author's tests and the suite run
apart (`infra.pytest_each`), and the trees of all tasks share the cores. Each task's
matrix is stored as soon as its trees are done; a later run adds only what is new (a new
patch's tree, a new author's tests on the stored trees) and runs nothing when nothing
changed. The layout of a tree and every decision that needs no disk are in
`rules.examine`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.events import ErrorRaised
from bugbout_tui.core.models import SUITE, Attempt, Cell, Matrix, Task, TreeRun
from bugbout_tui.engine.context import StageContext
from bugbout_tui.engine.testing import (
    PytestRunner,
    import_paths,
    tests_dir_at,
    transient_failure,
)
from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.pytest_each import SeparateRun
from bugbout_tui.infra.pytest_run import TestRun
from bugbout_tui.infra.trees import copy_tree, pristine_tree
from bugbout_tui.rules.examine import (
    AUTHORS_DIR,
    AuthorSpec,
    Cast,
    assemble,
    cast_for,
    cells_of,
    overlay_files,
    package_dirs,
    package_name,
    run_paths,
    still_to_run,
    still_valid,
    suite_paths,
    unrun_cells,
)
from bugbout_tui.rules.flakes import tree_of
from bugbout_tui.rules.score import PATCH_DOES_NOT_APPLY


@dataclass(frozen=True)
class _Setup:
    """What every tree of one task is built from."""

    task: Task
    cast: Cast
    base: Path
    """The pristine tree of the base commit."""
    workspace: Path
    overlays: Mapping[str, Path]
    """author → its test files laid over the base's, ready to copy into a tree."""
    packages: Mapping[str, str]
    """author → its directory under `AUTHORS_DIR`."""
    suite: tuple[str, ...]
    pythonpath: tuple[str, ...]
    """Import roots relative to a tree."""
    problems: tuple[str, ...]
    """Why authors were left out, for the event bus (set up in a worker thread, which
    must not call subscribers)."""


class CrossExamination(PytestRunner):
    """Builds, runs and stores each task's cross-examination matrix."""

    stage_dir = "examine"

    def __init__(
        self,
        context: StageContext,
        *,
        vendors: Mapping[str, str],
        parallel: int | None = None,
    ) -> None:
        super().__init__(context, parallel=parallel)
        self.vendors = dict(vendors)

    def matrix_path(self, task_id: str) -> Path:
        return self.project.store.matrix_path(task_id)

    async def run(
        self, tasks: Sequence[Task], attempts: Mapping[str, Sequence[Attempt]]
    ) -> dict[str, Matrix]:
        """Every task's matrix, task id → matrix; a task that cannot be set up is left
        out, with an error event saying why."""
        runs = asyncio.Semaphore(self.parallel)
        matrices: dict[str, Matrix] = {}

        async def examine(task: Task) -> None:
            try:
                matrices[task.id] = await self._matrix_for(task, attempts.get(task.id, ()), runs)
            except BugboutError as exc:
                self.bus.emit(ErrorRaised(message=exc.message, task=task.id))

        # Tasks in flight are bounded too, so scratch trees and overlays stay few.
        try:
            await self.side_by_side(
                "examine", tasks, examine, label=lambda task: task.id, total=len(tasks)
            )
        finally:
            self.save_ledger()
        return {task.id: matrices[task.id] for task in tasks if task.id in matrices}

    async def _matrix_for(
        self, task: Task, attempts: Sequence[Attempt], runs: asyncio.Semaphore
    ) -> Matrix:
        """The task's matrix, with whatever the stored one lacks run now and stored."""
        store = self.project.store
        path = self.matrix_path(task.id)
        on_disk = store.read(path, Matrix)
        cfg = self.project.config
        environment = await self.environments.for_task(task)
        current = self.conditions(environment, suite=True)
        cast = cast_for(attempts, vendors=self.vendors, run_suite=cfg.judge.run_suite)
        same = on_disk is not None and on_disk.conditions in (None, current)
        stored = still_valid(on_disk if same else None, cast)
        plan = still_to_run(stored, cast)
        results: dict[str, TreeRun] = {}
        if plan:
            workspace = self.scratch / task.id
            shutil.rmtree(workspace, ignore_errors=True)
            workspace.mkdir(parents=True)
            try:
                setup = await asyncio.to_thread(self._setup, task, cast, plan, workspace)
                for problem in setup.problems:
                    self.bus.emit(ErrorRaised(message=problem, task=task.id))
                cast = setup.cast
                plan = still_to_run(stored, cast)
                old_trees = set(stored.trees) if stored else set()
                trees = await asyncio.gather(
                    *(
                        self._tree(
                            setup,
                            tree,
                            index,
                            names,
                            fresh=tree not in old_trees,
                            runs=runs,
                            environment=environment,
                        )
                        for index, (tree, names) in enumerate(plan.items())
                    )
                )
            finally:
                shutil.rmtree(workspace, ignore_errors=True)
            results = {tree.tree: tree for tree in trees if tree is not None}
            unanswered = {name for name in plan if name not in results}
            if stored is not None and unanswered:  # redone whole next time
                kept = {k: v for k, v in stored.trees.items() if k not in unanswered}
                stored = stored.model_copy(update={"trees": kept})
        matrix = assemble(task.id, stored, cast, results)
        matrix = matrix.model_copy(update={"conditions": current})
        if matrix != on_disk:
            store.write(path, matrix)
        return matrix

    # --- preparing ------------------------------------------------------------------------

    def _setup(
        self, task: Task, cast: Cast, plan: Mapping[str, Sequence[str]], workspace: Path
    ) -> _Setup:
        """Read the base once: the suite's paths, and each new author's overlay.

        An author whose test changes do not apply to the base's test files is left out,
        with an error event: there is nothing of it to run.
        """
        cfg = self.project.config.project
        base = pristine_tree(self.repo, task.base_commit)
        top_level = [(entry.name, entry.is_dir()) for entry in os.scandir(base)]
        problems: list[str] = []
        found = tests_dir_at(base, cfg.tests, task.test_files)
        tests = found or cfg.tests
        suite = suite_paths(tests, top_level) if found is not None else []
        dropped = [] if suite else ["suite"]
        if found is None and any(author.kind == "suite" for author in cast.authors):
            problems.append(
                f"there is no tests directory '{cfg.tests}' at the base {task.base_commit[:12]} "
                "(nor beside the fix's test files), so the repository's suite is left out "
                "of this task's cross-examination; set [project] tests to where the tests live"
            )
        pythonpath = [str(p.relative_to(base)) for p in import_paths(base, cfg.source)]
        tests_path = base / tests
        if suite and tests_path != base and not (tests_path / "__init__.py").is_file():
            # Agents ran their tests with pytest putting this directory on sys.path, so
            # `from helpers import ...` found the base's helpers; it must here too.
            pythonpath.append(tests)
        running = {name for names in plan.values() for name in names}
        authors = [a for a in cast.authors if a.kind != "suite" and a.name in running]
        packages = {a.name: package_name(index, a.name) for index, a in enumerate(authors)}
        every_file = _walk(base)
        touched = [*task.test_files, *task.test_data_files]
        overlays: dict[str, Path] = {}
        for author in authors:
            overlay = workspace / "authors" / packages[author.name]
            files = overlay_files(
                every_file,
                source=cfg.source,
                tests=tests,
                hidden=touched if author.hidden is None else author.hidden,
            )
            try:
                _lay_over(base, files, overlay, author)
            except BugboutError as exc:
                dropped.append(author.name)
                problems.append(f"{author.name}'s tests cannot be installed: {exc.message}")
                continue
            overlays[author.name] = overlay
        return _Setup(
            task=task,
            cast=cast.without(dropped),
            base=base,
            workspace=workspace,
            overlays=overlays,
            packages=packages,
            suite=tuple(suite),
            pythonpath=tuple(pythonpath),
            problems=tuple(problems),
        )

    def _build(self, setup: _Setup, tree: str, dest: Path) -> str | None:
        """A tree to test: the base with the patch's source changes; each run adds its own
        author's tests to a copy. Returns why it cannot be built (the patch does not
        apply), else None."""
        copy_tree(setup.base, dest)
        patch = setup.cast.patch(tree)
        if patch is not None:
            try:
                apply_patch(dest, patch.source)
            except BugboutError as exc:
                return f"{PATCH_DOES_NOT_APPLY}: {exc.message.replace(str(dest), 'the tree')}"
        return None

    # --- running --------------------------------------------------------------------------

    async def _tree(
        self,
        setup: _Setup,
        tree: str,
        index: int,
        names: Sequence[str],
        *,
        fresh: bool,
        runs: asyncio.Semaphore,
        environment: Environment,
    ) -> TreeRun | None:
        """One tree's runs of `names`' tests, each author's apart from the others, so no
        author's tests, conftest or import-time code can change another's outcomes.

        A run that fails as a whole (a test that kills or hangs pytest, a conftest that
        cannot be imported there) costs only its own author's cells. The tree is in error
        only when it is new and every run on it failed: then the failure is the tree's
        (its patch does not apply, or breaks every run). None when a run failed because
        the machine did (a control run fails too, or the tree could not be copied):
        nothing of the tree is kept, and the next run does it again.
        """
        authors = [setup.cast.author(name) for name in names]
        if not authors and setup.cast.patch(tree) is None:
            return TreeRun(tree=tree)  # the unfixed code with nobody's tests: nothing to learn
        folder = setup.workspace / f"tree-{index}"
        source = folder / "tree"
        async with runs:
            try:
                failed = await asyncio.to_thread(self._build, setup, tree, source)
                if failed is not None:
                    return TreeRun(tree=tree, error=failed)
                if not authors:
                    return TreeRun(tree=tree)  # only the patch's applying was checked
                found = await self.run_each(
                    setup.task.id,
                    tree,
                    source,
                    [self._separate(setup, author) for author in authors],
                    folder / "runs",
                    environment=environment,
                    pythonpath=[source / path for path in setup.pythonpath],
                    origin=setup.task.base_commit,
                )
                suspect = next((r for r in found.values() if transient_failure(r)), None)
                if suspect is not None and await self.machine_failed(
                    suspect, folder / "control", environment
                ):
                    self._unanswered(setup, tree, suspect.error or "")
                    return None
            except OSError as exc:
                self._unanswered(setup, tree, f"could not prepare it: {exc}")
                return None
            finally:
                await asyncio.to_thread(shutil.rmtree, folder, True)
        errors = [found[a.name].error for a in authors if found[a.name].error is not None]
        if fresh and errors and len(errors) == len(authors):
            return TreeRun(tree=tree, error=errors[0])
        cells: dict[str, dict[str, Cell]] = {}
        conditions = self.conditions(environment, suite=True)
        patch = setup.cast.patch(tree)
        for author in authors:
            run = found[author.name]
            if run.error is None:
                own = _cells(setup, author, run)
                cells.update(own)
                where = tree_of(
                    f"cross-examination: {tree}",
                    conditions,
                    "examine",
                    setup.task.base_commit,
                    "-" if patch is None else patch.digest,
                    author.digest or SUITE,
                )
                for name, tests in own.items():
                    outcomes = {test: cell.outcome for test, cell in tests.items()}
                    self.observe(setup.task.id, name, where, outcomes)
            else:
                cells[author.name] = _unrun(setup, author, run)
        return TreeRun(tree=tree, cells=cells)

    def _unanswered(self, setup: _Setup, tree: str, problem: str) -> None:
        first = next((line for line in problem.splitlines() if line.strip()), problem)
        self.bus.emit(
            ErrorRaised(
                message=f"{setup.task.id}: the tree {tree} failed as the machine did ({first}); "
                "nothing of it is kept, and the next run does it again.",
                task=setup.task.id,
            )
        )

    def _separate(self, setup: _Setup, author: AuthorSpec) -> SeparateRun:
        """An author's run: the suite where it lives, anyone else's tests in its own
        directory of the tree."""
        if author.kind == "suite":
            return SeparateRun(name=author.name, paths=setup.suite)
        package = setup.packages[author.name]
        return SeparateRun(
            name=author.name,
            paths=tuple(run_paths([author], setup.packages, setup.suite)),
            overlay=setup.overlays[author.name],
            overlay_at=f"{AUTHORS_DIR}/{package}",
        )


def _cells(setup: _Setup, author: AuthorSpec, run: TestRun) -> dict[str, dict[str, Cell]]:
    """The cells of one author's own run. Only its own test ids are read: whatever else
    its report claims (another author's ids, the suite's) is not its to say."""
    if author.kind == "suite":
        return cells_of(run.outcomes, {}, suite=True)
    return cells_of(run.outcomes, {setup.packages[author.name]: author.name}, suite=False)


def _unrun(setup: _Setup, author: AuthorSpec, run: TestRun) -> dict[str, Cell]:
    return unrun_cells(author, setup.suite, run.error or "the run failed as a whole")


def _walk(root: Path) -> list[str]:
    """Every file (and symlink) under `root`, as a path relative to it."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        relative = Path(directory).relative_to(root)
        links = [d for d in subdirectories if (Path(directory) / d).is_symlink()]
        found += [(relative / name).as_posix() for name in [*files, *links]]
    return found


def _lay_over(base: Path, files: Sequence[str], overlay: Path, author: AuthorSpec) -> None:
    """The base's test files with the author's test changes applied, each directory on
    the way to a module it runs made a package."""
    overlay.mkdir(parents=True)
    for path in files:
        target = overlay / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(base / path, target, follow_symlinks=False)
    apply_patch(overlay, author.tests_diff)
    for module in author.modules:
        if not (overlay / module).is_file():
            raise BugboutError(f"its test module {module} is missing once its changes are applied")
        for directory in package_dirs(module):
            init = overlay / directory / "__init__.py"
            if not init.exists():
                init.parent.mkdir(parents=True, exist_ok=True)
                init.touch()
