"""A stage's pytest run as a cluster unit, and its result back as the local run's.

The stage builds its tree here as on one machine; the unit carries the commit the tree
was copied from and the files that differ from it, so the worker rebuilds the same tree.
The result comes back with the worker's paths put back to the tree's here, so what is
stored reads the same wherever the run was made.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.engine.cluster import Cluster
from bugbout_tui.infra.cluster_units import EachRun, TestUnit, TreeRecipe, UnitResult
from bugbout_tui.infra.env import Environment
from bugbout_tui.infra.file_sets import changes, snapshot
from bugbout_tui.infra.pytest_each import SeparateRun
from bugbout_tui.infra.pytest_run import PytestCommand, TestRun
from bugbout_tui.infra.trees import missing_submodules, pristine_tree


def tree_recipe(repo: Path, tree: Path, origin: str | None) -> TreeRecipe:
    """`tree` as `origin`'s pristine tree (None: an empty tree) and its changes."""
    if origin is None:
        return TreeRecipe(commit=None, changes=snapshot(tree))
    pristine = pristine_tree(repo, origin)
    return TreeRecipe(
        commit=origin, changes=changes(tree, pristine), whole=not missing_submodules(pristine)
    )


async def make_unit(
    cluster: Cluster,
    command: PytestCommand,
    environment: Environment,
    *,
    origin: str | None,
    sandbox: str,
    each: Sequence[SeparateRun] | None = None,
    keep_log: bool = False,
) -> TestUnit:
    """The unit that makes `command`'s run (or `each` of its runs) on a worker."""
    recipe = await cluster.recipe(environment)
    tree = await asyncio.to_thread(tree_recipe, cluster.repo, command.tree, origin)
    runs = None
    if each is not None:
        runs = [
            EachRun(
                name=run.name,
                paths=list(run.paths),
                overlay=await asyncio.to_thread(snapshot, run.overlay) if run.overlay else None,
                overlay_at=run.overlay_at,
            )
            for run in each
        ]
    return TestUnit(
        repository=cluster.repository,
        tree=tree,
        environment=recipe,
        sandbox=sandbox,
        paths=list(command.paths),
        pythonpath=[str(path.relative_to(command.tree)) for path in command.pythonpath],
        pytest_args=list(command.pytest_args),
        env=dict(command.env),
        timeout=command.timeout,
        each=runs,
        keep_log=keep_log,
        stop=cluster.stop_name,
    )


def brought_back(result: UnitResult, tree: Path) -> dict[str, TestRun]:
    """`result`'s runs as if made in `tree` here: every mention of the worker's tree is
    of `tree`, and each run knows the worker that made it."""
    theirs, ours = json.dumps(result.tree)[1:-1], json.dumps(str(tree))[1:-1]
    return {
        name: TestRun.model_validate_json(run.model_dump_json().replace(theirs, ours)).model_copy(
            update={"worker": result.address}
        )
        for name, run in result.runs.items()
    }
