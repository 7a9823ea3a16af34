"""A bout mixing a bug and an environment task, end to end: real git, real uv, the real
sandbox, a package index on 127.0.0.1, scripted `command` agents.

`geom` pins `shapes==9.9`, a release that never existed, so its clean install fails; the
maintainers' next change pins `shapes==1.0` (issue #1): mined as the environment task
`geom-1`. Then they fix `half()`, which rounded down (issue #2), with a new test:
the bug `geom-2`. The index serves `shapes` 1.0 ("uploaded" in 2020) and 2.0 (2023), and
pytest repacked from this interpreter.

Three contestants (`tests/agents/envrepair.py`):

| agent | geom-1 | geom-2 |
|---|---|---|
| right | `shapes==1.0`: resolved, every package pinned and safe | fixes `half` |
| loosen | `shapes` unpinned: installs 2.0 and runs, but loses the pin's safe point | nothing |
| source | `shapes==1.0` and a comment in `geom/__init__.py`: rejected, never installed | nothing |

and one examiner, who takes the bug and never the environment task.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from envkit import env_settings, offline_index, when
from gitrepo import GitRepo
from projects import write_config, write_issues
from racekit import AGENTS, contestant, toml_list
from terminals import bugbout

from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.core.events import BaseEvent, EnvRunStarted
from bugbout_tui.core.models import ResolutionSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.package_index import PackageIndex, build_wheel

pytestmark = pytest.mark.slow

ENV, BUG = "geom-1", "geom-2"
PYTEST = importlib.metadata.version("pytest")
UV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "UV_PYTHON_DOWNLOADS": "never"}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    with offline_index(tmp_path_factory) as (served, wheels):
        for version, year in (("1.0", 2020), ("2.0", 2023)):
            files = {"shapes/__init__.py": f'NAME = "shapes"\nYEAR = {year}\n'}
            served.publish(build_wheel(wheels, "shapes", version, files), uploaded=when(year))
        yield served


def agent(style: str) -> list[str]:
    command = [sys.executable, str(AGENTS / "envrepair.py"), "--style", style]
    command += ["--pin", "shapes==1.0"]
    if style == "right":
        command += ["--fix", "geom/ops.py", "x // 2", "x / 2"]
    return [*command, "{prompt_file}", "{workdir}"]


def build(root: Path, index: PackageIndex) -> Path:
    repo = GitRepo(root)
    repo.commit(
        "Initial version",
        files={
            "geom/__init__.py": "",
            "geom/ops.py": "def half(x):\n    return x // 2\n",
            "geom/draw.py": "import shapes\n\n\ndef name():\n    return shapes.NAME\n",
            "tests/test_basic.py": "from geom.ops import half\n\n\n"
            "def test_half_of_an_even_number():\n    assert half(4) == 2\n",
            "tests/test_draw.py": "from geom.draw import name\n\n\n"
            "def test_name():\n    assert name() == 'shapes'\n",
            "requirements.txt": f"pytest=={PYTEST}\nshapes==9.9\n",
        },
    )
    repo.commit(
        "Pin shapes to a release that exists (#1)",
        files={"requirements.txt": f"pytest=={PYTEST}\nshapes==1.0\n"},
    )
    repo.commit(
        "Fix half rounding down (#2)",
        files={
            "geom/ops.py": "def half(x):\n    return x / 2\n",
            "tests/test_half.py": "from geom.ops import half\n\n\n"
            "def test_half_of_an_odd_number():\n    assert half(3) == 1.5\n",
        },
    )
    write_issues(
        root,
        {
            1: ("geom does not install", "pip says: No matching distribution for shapes==9.9"),
            2: ("half() rounds down", "half(3) gives 1; it should give 1.5."),
        },
    )
    extra = env_settings(
        index,
        ["bug", "env"],
        [
            *(contestant(style, agent(style)) for style in ("right", "loosen", "source")),
            "[[examiners]]",
            'agent = "command"',
            'name = "examiner"',
            f"command = {toml_list([*agent('loosen')])}",
        ],
    )
    config = write_config(root, "geom", extra="")
    text = config.read_text().replace('source = "src/geom"', 'source = "geom"')
    config.write_text(text.replace("\n[run]\n", "\n" + extra + "\n\n[run]\n", 1))
    return root


def test_a_bout_of_a_bug_and_an_environment_task(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    root = build(tmp_path / "geom", index)
    bout = Bout.load(root)
    started: list[str] = []

    def seen(event: BaseEvent) -> None:
        if isinstance(event, EnvRunStarted):
            started.append(f"{event.task}/{event.label}")

    bout.subscribe(seen)
    report = bout.run()

    assert report is not None
    assert [t.id for t in bout.scored_tasks()] == [BUG, ENV]
    store = Project.load(root).store
    repairs = store.read(store.repairs_path, RepairSet)
    assert repairs is not None
    controls = repairs.controls[ENV]
    assert controls["base"].status == "install-failed"
    assert "shapes" in (controls["base"].detail or "")
    assert controls["gold"].status == "resolved"
    assert controls["gold"].changed == ["requirements.txt"]
    for control in controls.values():
        assert control.install is not None and control.install.log is not None
        assert (store.root / control.install.log).is_file()

    scored = repairs.repairs[ENV]
    assert set(scored) == {"right", "loosen", "source"}
    right, loose, source = scored["right"], scored["loosen"], scored["source"]
    assert right.status == "resolved", right
    assert right.safe_install == 1.0
    assert {d.name for d in right.declared} == {"pytest", "shapes"}
    assert "shapes==1.0" in (right.install.installed if right.install else [])
    assert "shapes" in (right.trace.used if right.trace else [])
    assert right.network is not None and "not known" in right.network
    assert loose.status == "resolved"
    assert loose.safe_install == 0.5  # shapes has lost its pin
    assert "shapes==2.0" in (loose.install.installed if loose.install else [])
    assert source.status == "rejected"
    assert source.rejected_files == ["geom/__init__.py"]
    assert source.install is None and source.trace is None
    assert f"{ENV}/source" not in started
    assert not (store.logs_dir / "env" / ENV / "repairs" / "source").exists()

    assert not (store.attempts_dir / ENV / "examiner.json").exists()
    assert (store.attempts_dir / BUG / "examiner.json").is_file()
    prompt = json.loads((store.attempts_dir / ENV / "right.json").read_text())["prompt_file"]
    told = Path(prompt).read_text()
    assert "shapes==9.9" in told and "<failure>" in told
    assert "No matching distribution" in told  # the issue's text, where there is one
    resolutions = store.read(store.resolutions_path, ResolutionSet)
    assert resolutions is not None
    assert resolutions.patches[BUG]["right"].status == "resolved"
    assert ENV not in resolutions.patches and ENV not in store.matrices()

    shown = json.loads(bugbout("tasks", ENV, "--json", cwd=root, home=home).stdout)
    assert shown["kind"] == "env" and shown["scored"] is True and shown["reason"] is None
    assert shown["controls"]["base"]["install"]["log"].startswith(str(store.root))
    prompt = bugbout("tasks", ENV, "--show-prompt", cwd=root, home=home, **UV).stdout
    assert "<failure>" in prompt and "shapes==9.9" in prompt

    again = Bout.load(root)
    started.clear()
    again.subscribe(seen)
    again.run()
    assert started == []  # controls and repairs made under the same conditions are kept
    assert store.read(store.repairs_path, RepairSet) == repairs

    config = root / "bugbout.toml"
    config.write_text(config.read_text().replace("test-timeout = 60", "test-timeout = 90"))
    other = Bout.load(root)
    other.subscribe(seen)
    other.run()
    made = {f"{ENV}/base", f"{ENV}/gold", f"{ENV}/right", f"{ENV}/loosen"}
    assert set(started) == made  # under other conditions, each is made again

    # Those made before bugbout brought its runner and build tools are made again.
    data = json.loads(store.repairs_path.read_text())
    for kept in (*data["controls"][ENV].values(), *data["repairs"][ENV].values()):
        if kept["conditions"] is not None:
            assert kept["conditions"].pop("tools")[0] == "pytest"
    store.repairs_path.write_text(json.dumps(data))
    started.clear()
    older = Bout.load(root)
    older.subscribe(seen)
    older.run()
    assert set(started) == made
