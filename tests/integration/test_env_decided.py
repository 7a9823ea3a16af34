"""`[run] stop-when-decided` in a bout of bugs and an environment task: the decision is
about bugs alone, so once it is made no new bug starts, and the environment task still
does. Real git, real uv, the real sandbox, a package index on 127.0.0.1.

`tally` pins `shapes==9.9`, a release that never existed; the maintainers' next change
pins `shapes==1.0` (issue #1): the environment task `tally-1`, the oldest, so raced
last. Then they fix `f2`, `f3` and `f4`, which returned 0 (issues #2 to #4): the bugs
`tally-2` to `tally-4`, raced newest first. Two contestants share one lane
(`tests/agents/envrepair.py`): `right` fixes every bug and pins `shapes==1.0`; `loosen`
fixes nothing and unpins `shapes`. At `decided-at = 0.5` over three bugs (Pocock's
level is 0.5 there, so two bugs all one way decide), the pair is decided after
`tally-3`: `tally-2` never starts, and `tally-1`, no part of the comparison, starts
after the decision and is scored.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from envkit import env_settings, offline_index, when
from gitrepo import GitRepo
from projects import write_config, write_issues
from racekit import AGENTS, contestant

from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.core.events import AttemptQueued, AttemptStarted, BaseEvent, BoutDecided
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.package_index import PackageIndex, build_wheel

pytestmark = pytest.mark.slow

ENV = "tally-1"
RACED, WITHHELD = ("tally-4", "tally-3"), "tally-2"
PYTEST = importlib.metadata.version("pytest")
OPS = "".join(f"def f{n}():\n    return 0\n\n\n" for n in (2, 3, 4)).rstrip() + "\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    with offline_index(tmp_path_factory) as (served, wheels):
        for version, year in (("1.0", 2020), ("2.0", 2023)):
            files = {"shapes/__init__.py": 'NAME = "shapes"\n'}
            served.publish(build_wheel(wheels, "shapes", version, files), uploaded=when(year))
        yield served


def agent(style: str) -> list[str]:
    command = [sys.executable, str(AGENTS / "envrepair.py"), "--style", style]
    command += ["--pin", "shapes==1.0"]
    for n in (2, 3, 4):
        wrong, right = f"def f{n}():\n    return 0", f"def f{n}():\n    return {n}"
        command += ["--fix", "tally/ops.py", wrong, right]
    return [*command, "{prompt_file}", "{workdir}"]


def build(root: Path, index: PackageIndex) -> Path:
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "tally/__init__.py": "",
            "tally/ops.py": OPS,
            "tally/draw.py": "import shapes\n\n\ndef name():\n    return shapes.NAME\n",
            "tests/test_ops.py": "from tally.ops import f2\n\n\ndef test_f2_runs():\n    f2()\n",
            "tests/test_draw.py": "from tally.draw import name\n\n\n"
            "def test_name():\n    assert name() == 'shapes'\n",
            "requirements.txt": f"pytest=={PYTEST}\nshapes==9.9\n",
        },
    )
    repo.commit(
        "Pin shapes to a release that exists (#1)",
        files={"requirements.txt": f"pytest=={PYTEST}\nshapes==1.0\n"},
    )
    ops = OPS
    for n in (2, 3, 4):
        ops = ops.replace(f"def f{n}():\n    return 0", f"def f{n}():\n    return {n}")
        repo.commit(
            f"Fix f{n} returning zero (#{n})",
            files={
                "tally/ops.py": ops,
                f"tests/test_f{n}.py": f"from tally.ops import f{n}\n\n\n"
                f"def test_f{n}():\n    assert f{n}() == {n}\n",
            },
        )
    issues = {n: (f"f{n} returns 0", f"f{n}() should return {n}.") for n in (2, 3, 4)}
    write_issues(root, {1: ("tally does not install", "No matching distribution"), **issues})
    extra = env_settings(
        index,
        ["bug", "env"],
        [
            *(contestant(style, agent(style)) for style in ("right", "loosen")),
        ],
    )
    config = write_config(root, "tally")
    text = config.read_text().replace('source = "src/tally"', 'source = "tally"')
    text = text.replace("\n[run]\n", "\n" + extra + "\n\n[run]\n", 1)
    config.write_text(text + "stop-when-decided = true\ndecided-at = 0.5\n")
    return root


def test_environment_tasks_still_start_once_the_bugs_are_decided(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    root = build(tmp_path / "tally", index)
    bout = Bout.load(root)
    events: list[BaseEvent] = []
    bout.subscribe(events.append)

    report = bout.run()

    assert report is not None
    assert [t.id for t in bout.scored_tasks()] == [*RACED, WITHHELD, ENV]
    (decided,) = [e for e in events if isinstance(e, BoutDecided)]
    assert (decided.after, decided.tasks_done, decided.tasks) == ("tally-3", 2, 3)
    assert decided.withdrawn == [f"{WITHHELD}/right", f"{WITHHELD}/loosen"]
    queued = {e.attempt for e in events if isinstance(e, AttemptQueued)}
    assert {f"{ENV}/right", f"{ENV}/loosen"} <= queued
    started = [e.attempt for e in events if isinstance(e, AttemptStarted)]
    assert started == [f"{task}/{name}" for task in (*RACED, ENV) for name in ("right", "loosen")]
    after = events[events.index(decided) :]
    assert {e.attempt for e in after if isinstance(e, AttemptStarted)} == {
        f"{ENV}/right",
        f"{ENV}/loosen",
    }

    store = Project.load(root).store
    assert not (store.attempts_dir / WITHHELD).exists()
    repairs = store.read(store.repairs_path, RepairSet)
    assert repairs is not None
    scored = repairs.repairs[ENV]
    assert (scored["right"].status, scored["loosen"].status) == ("resolved", "resolved")
    assert bout.env_verdicts[ENV].pick == "right"

    # The report's stopping section is about bugs too: the environment task is neither
    # one of its tasks nor among those it did not start.
    assert report.stopping is not None
    assert report.stopping.tasks == 3
    assert report.stopping.not_started_tasks == [WITHHELD]
