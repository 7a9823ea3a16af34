"""The coordinator's connection to a scheduler when things go wrong: an address it cannot
use, a scheduler that goes away, and a cold worker many units ask for the repository at
once. The scheduler and worker run in this process (real ones, on 127.0.0.1), so the
connection's own calls can be watched."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import dask
import pytest
from distributed import Scheduler, Worker
from gitrepo import GitRepo

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.cluster import Cluster, bundle
from bugbout_tui.infra.cluster_units import EnvRecipe, TestUnit, TreeRecipe

pytestmark = [
    pytest.mark.usefixtures("home"),
    # The client a unit's thread gets from its worker (for the bout's stop event) outlives
    # an in-process worker's loop and says so when collected; a worker process ends with it.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TESTS = {"test_one.py": "def test_one():\n    assert 1 + 1 == 2\n"}


@pytest.fixture
def repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("tests", files=TESTS)
    return git_repo


@pytest.fixture
async def scheduler() -> AsyncIterator[Scheduler]:
    async with Scheduler(host="127.0.0.1", port=0, dashboard_address=None) as running:
        yield running


def unit(cluster: Cluster, commit: str) -> TestUnit:
    """A run of the repository's one test, in this interpreter, with no sandbox."""
    return TestUnit(
        repository=cluster.repository,
        tree=TreeRecipe(commit=commit),
        environment=EnvRecipe(interpreter=sys.executable),
        sandbox="none",
        pythonpath=[],
        timeout=60,
        stop=cluster.stop_name,
    )


async def test_a_tls_address_without_its_setup_is_named_without_a_traceback(
    repo: GitRepo,
) -> None:
    cluster = Cluster("tls://127.0.0.1:9", repo.root, EventBus())
    with pytest.raises(BugboutError, match="Cannot reach the cluster's scheduler at tls://"):
        await cluster.open()


async def test_a_cold_worker_is_sent_the_repository_once_however_many_units_ask(
    repo: GitRepo, scheduler: Scheduler, tmp_path: Path
) -> None:
    async with Worker(
        scheduler.address, nthreads=3, dashboard_address=None, local_directory=str(tmp_path)
    ):
        cluster = Cluster(scheduler.address, repo.root, EventBus())
        await cluster.open()
        copies = 0
        read = cluster.bundle_bytes

        async def counted() -> bytes:
            nonlocal copies
            copies += 1
            return await read()

        cluster.bundle_bytes = counted  # type: ignore[method-assign]
        try:
            results = await asyncio.gather(
                *(cluster.run(unit(cluster, repo.head())) for _ in range(3))
            )
        finally:
            await cluster.close()
    assert [sorted(r.runs[""].outcomes) for r in results] == [["test_one.py::test_one"]] * 3
    assert copies == 1


async def test_a_scheduler_gone_mid_bout_is_an_error_that_names_the_cluster(
    repo: GitRepo, scheduler: Scheduler, tmp_path: Path
) -> None:
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        async with Worker(
            scheduler.address, nthreads=1, dashboard_address=None, local_directory=str(tmp_path)
        ):
            cluster = Cluster(scheduler.address, repo.root, EventBus())
            await cluster.open()
            try:
                await scheduler.close()
                while cluster._client.status != "closed":  # it gave up reconnecting
                    await asyncio.sleep(0.1)
                with pytest.raises(BugboutError, match="The cluster could not make a test run"):
                    await cluster.run(unit(cluster, repo.head()))
            finally:
                await cluster.close()


def test_one_history_has_one_name_however_git_packs_it(repo: GitRepo, tmp_path: Path) -> None:
    """A worker keeps the repository by the name units give it: the same history bundled
    again (after a repack, from another coordinator's home) must not be a new one."""
    for n in range(20):
        repo.commit(f"step {n}", files={"data.txt": "\n".join(map(str, range(200 + n)))})
    first, _ = bundle(repo.root, tmp_path / "one")
    repo.git("repack", "-a", "-d", "-F", "--window=0")
    second, _ = bundle(repo.root, tmp_path / "two")
    assert first == second
    repo.commit("one more", files={"data.txt": "changed"})
    assert bundle(repo.root, tmp_path / "two")[0] != first
