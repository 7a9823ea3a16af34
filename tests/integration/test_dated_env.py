"""Dated environments for real: a package index on 127.0.0.1 with upload times, wheels
built here, real uv, real git histories whose dependency broke its API, real ground truth.

`shapes` 1.0 ("uploaded" in 2020) has `area(width, height)`; 2.0 (2023) has `area(size)`.
The project `geom` used 1.0 until 2023, then moved to 2.0, so its old fixes only pass
with 1.0: they get it from a resolution dated at each fix, and lose it under the tip's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_issues
from terminals import bugbout

from bugbout_tui.core.models import OracleSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.report import load_report
from bugbout_tui.infra.package_index import PackageIndex, build_wheel

pytestmark = pytest.mark.usefixtures("home")

V1 = "def area(width, height):\n    return width * height\n"
V2 = "def area(size):\n    return size[0] * size[1]\n"
GEOM_V1 = "from shapes import area\n\n\ndef box(w, h):\n    return area(w, h)\n"
GEOM_V2 = "from shapes import area\n\n\ndef box(w, h):\n    return area((w, h))\n"


def when(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, 12, tzinfo=UTC)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    """The local index, with pytest, `shapes` 1.0 (2020) and 2.0 (2023), and uv pointed
    at it alone (its own cache, no Python downloads)."""
    wheels = tmp_path / "wheels"
    with PackageIndex() as served:
        served.publish_runner(wheels)
        served.publish(
            build_wheel(wheels, "shapes", "1.0", {"shapes/__init__.py": V1}), uploaded=when(2020)
        )
        served.publish(
            build_wheel(wheels, "shapes", "2.0", {"shapes/__init__.py": V2}), uploaded=when(2023)
        )
        monkeypatch.setenv("UV_DEFAULT_INDEX", served.url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
        monkeypatch.delenv("UV_INDEX_URL", raising=False)
        monkeypatch.delenv("UV_EXTRA_INDEX_URL", raising=False)
        yield served


def pyproject(dependencies: list[str]) -> str:
    listed = ", ".join(json.dumps(d) for d in dependencies)
    return f'[project]\nname = "geom"\nversion = "0.1"\ndependencies = [{listed}]\n'


def configure(repo: GitRepo, extra: str = "") -> None:
    (repo.root / "bugbout.toml").write_text(
        '[project]\nsource = "geom"\ntests = "tests"\nissues-file = "issues.json"\n'
        f"{extra}\n[run]\ntest-timeout = 120\n"
    )


def geom_history(root: Path) -> GitRepo:
    """Two fixes of 2021 (on shapes 1), the move to shapes 2 in 2023, one fix after it."""
    repo = GitRepo(root, start=when(2021))
    repo.commit(
        "Initial version",
        files={
            "pyproject.toml": pyproject(["shapes"]),
            "geom/__init__.py": GEOM_V1,
            "tests/test_geom.py": "from geom import box\n\n\ndef test_box():\n"
            "    assert box(2, 3) == 6\n",
        },
        date=when(2021),
    )
    repo.commit(
        "Fix negative sides (#1)",
        files={
            "geom/__init__.py": GEOM_V1.replace("area(w, h)", "area(abs(w), abs(h))"),
            "tests/test_negative.py": "from geom import box\n\n\ndef test_negative():\n"
            "    assert box(-2, 3) == 6\n",
        },
        date=when(2021, 2),
    )
    repo.commit(
        "Fix string sides (#2)",
        files={
            "geom/__init__.py": GEOM_V1.replace("area(w, h)", "area(abs(float(w)), abs(float(h)))"),
            "tests/test_strings.py": "from geom import box\n\n\ndef test_strings():\n"
            "    assert box('2', 3) == 6\n",
        },
        date=when(2021, 3),
    )
    repo.commit(
        "Move to shapes 2",
        files={
            "pyproject.toml": pyproject(["shapes>=2"]),
            "geom/__init__.py": GEOM_V2.replace(
                "area((w, h))", "area((abs(float(w)), abs(float(h))))"
            ),
        },
        date=when(2023, 6),
    )
    moved = GEOM_V2.replace("area((w, h))", "area((abs(float(w)), abs(float(h))))")
    repo.commit(
        "Fix missing squares (#3)",
        files={
            "geom/__init__.py": moved + "\n\ndef square(s):\n    return box(s, s)\n",
            "tests/test_square.py": "from geom import square\n\n\ndef test_square():\n"
            "    assert square(3) == 9\n",
        },
        date=when(2023, 7),
    )
    write_issues(repo.root, {n: (f"bug {n}", "it breaks") for n in (1, 2, 3)})
    return repo


def oracles(repo: GitRepo) -> OracleSet:
    return OracleSet.model_validate_json((repo.root / ".bugbout" / "oracles.json").read_text())


def dated_environments(home: Path) -> list[Path]:
    return sorted((home / "envs").glob("dated-*"))


def summary(repo: GitRepo) -> str:
    """The summary of the last ground truth the journal holds."""
    journal = (repo.root / ".bugbout" / "events.jsonl").read_text()
    return [
        event["summary"] for line in journal.splitlines()
        if (event := json.loads(line))["type"] == "stage-finished"
        and event["stage"] == "ground-truth"
    ][-1]  # fmt: skip


def rungs(repo: GitRepo) -> list[tuple[str, int]]:
    """The report funnel's count of tasks per rung."""
    funnel = load_report(Project.load(repo.root)).funnel
    return [(item.rung, item.count) for item in funnel.environments]


def test_old_fixes_get_the_old_dependency_and_share_one_environment(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = geom_history(tmp_path / "geom")
    configure(repo)
    Bout.load(repo.root).run(until="ground-truth")
    found = oracles(repo).oracles
    assert sorted(found) == ["geom-1", "geom-2", "geom-3"]
    for task in found.values():
        assert task.scored, task.reason
        assert task.environment is not None and task.environment.rung == "dated"
    old, older, new = (found[t].environment for t in ("geom-1", "geom-2", "geom-3"))
    assert old is not None and older is not None and new is not None
    assert "shapes==1.0" in old.packages and "shapes==2.0" in new.packages
    assert old.key == older.key != new.key
    assert old.date == when(2021, 2)
    assert rungs(repo) == [("dated", 3)]
    shown = bugbout("tasks", "geom-1", cwd=repo.root, home=home, COLUMNS="200")
    assert shown.returncode == 0, shown.stderr
    for words in (old.key, "dated: resolved as of the fix's date", "shapes==1.0", "2021-02-01"):
        assert words in shown.stdout
    doctor = bugbout(
        "doctor", cwd=repo.root, home=home, COLUMNS="300", UV_DEFAULT_INDEX=index.url,
        UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never",
    )  # fmt: skip
    assert "dated: 3 tasks in 2 environments (3 dated)" in doctor.stdout, doctor.stdout
    built = dated_environments(home)
    assert len(built) == 2
    markers = {path: (path / "bugbout-env.json").stat().st_mtime_ns for path in built}

    (repo.root / ".bugbout" / "oracles.json").unlink()
    Bout.load(repo.root).run(until="ground-truth")
    assert all(task.scored for task in oracles(repo).oracles.values())
    assert {path: (path / "bugbout-env.json").stat().st_mtime_ns for path in built} == markers
    assert dated_environments(home) == built
    assert summary(repo).startswith("3 of 3 tasks scored; 2 environments for them, 0 builds now")


def test_the_tip_environment_fails_the_old_fixes(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = geom_history(tmp_path / "geom")
    configure(repo, 'environments = "tip"')
    Bout.load(repo.root).run(until="ground-truth")
    found = oracles(repo).oracles
    assert found["geom-3"].scored
    for task in ("geom-1", "geom-2"):
        assert not found[task].scored
        assert found[task].environment is None  # as before dated environments
    assert dated_environments(home) == []
    assert rungs(repo) == []


def test_a_package_too_new_for_the_date_has_its_date_lifted_and_named(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = GitRepo(tmp_path / "early", start=when(2021))
    repo.commit(
        "Initial version",
        files={
            "requirements.txt": "shapes>=2\n",
            "geom/__init__.py": GEOM_V2,
            "tests/test_geom.py": "from geom import box\n\n\ndef test_box():\n"
            "    assert box(2, 3) == 6\n",
        },
        date=when(2021),
    )
    repo.commit(
        "Fix negative sides (#1)",
        files={
            "geom/__init__.py": GEOM_V2.replace("area((w, h))", "area((abs(w), abs(h)))"),
            "tests/test_negative.py": "from geom import box\n\n\ndef test_negative():\n"
            "    assert box(-2, 3) == 6\n",
        },
        date=when(2021, 2),
    )
    write_issues(repo.root, {1: ("negative sides", "it breaks")})
    configure(repo)
    Bout.load(repo.root).run(until="ground-truth")
    oracle = oracles(repo).oracles["geom-1"]
    assert oracle.scored, oracle.reason
    assert oracle.environment is not None
    assert oracle.environment.rung == "relaxed"
    assert oracle.environment.relaxed == ["shapes"]
    assert "shapes==2.0" in oracle.environment.packages
    assert rungs(repo) == [("relaxed", 1)]
    shown = bugbout("tasks", "geom-1", cwd=repo.root, home=home, COLUMNS="200")
    assert "date lifted for  shapes" in shown.stdout


def test_a_hopeless_resolution_ends_the_ladder_with_uv_quoted(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = GitRepo(tmp_path / "hopeless", start=when(2021))
    repo.commit(
        "Initial version",
        files={
            "pyproject.toml": pyproject(["no-such-package-anywhere"]),
            "geom/__init__.py": GEOM_V1,
            "tests/test_geom.py": "def test_box():\n    assert True\n",
        },
        date=when(2021),
    )
    repo.commit(
        "Fix negative sides (#1)",
        files={
            "geom/__init__.py": GEOM_V1 + "\n",
            "tests/test_negative.py": "def test_negative():\n    assert True\n",
        },
        date=when(2021, 2),
    )
    write_issues(repo.root, {1: ("negative sides", "it breaks")})
    configure(repo)
    Bout.load(repo.root).run(until="ground-truth")
    oracle = oracles(repo).oracles["geom-1"]
    assert not oracle.scored
    assert oracle.environment is not None and oracle.environment.rung == "none"
    assert oracle.reason is not None
    assert "no-such-package-anywhere" in oracle.reason
    assert "uv" in oracle.reason
    assert rungs(repo) == [("none", 1)]


DEAD_PYTEST = {"pytest/__init__.py": "raise ImportError('this pytest does not run here')\n"}
"""An old pytest that cannot even start on this Python."""
NO_ROOTDIR_PYTEST = {
    "pytest/__init__.py": "",
    "pytest/__main__.py": (
        "import sys\n"
        "if any(arg.startswith('--rootdir') for arg in sys.argv[1:]):\n"
        "    sys.exit('pytest.py: error: unrecognized arguments: ' + sys.argv[-2])\n"
    ),
}
"""An old pytest that runs a plain `pytest test_x.py` yet refuses an option every run of
bugbout's gives, as pytest 3.2 refuses `--rootdir`."""


@pytest.mark.parametrize(
    ("late", "old"),
    [
        ((), DEAD_PYTEST),
        (("packaging",), DEAD_PYTEST),
        (("pygments",), DEAD_PYTEST),
        ((), NO_ROOTDIR_PYTEST),
    ],
    ids=["pytest-late", "packaging-late-too", "pygments-late-too", "old-one-refuses-rootdir"],
)
def test_a_dated_runner_that_cannot_run_here_comes_from_a_later_date(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    late: tuple[str, ...],
    old: dict[str, str],
) -> None:
    """pytest "5.0" of 2019 cannot run on this Python, or cannot run as bugbout runs it;
    the real one is of 2022. A task of 2021 gets its dependencies as of 2021 and the
    runner of 2022, and says so.

    With `packaging` or `pygments` (which today's pytest needs) first uploaded in 2022
    too, it comes from 2022 with pytest: left dated, it would hold uv to the old pytest,
    as a 2015 sqlparse commit held it to pytest 3.2.5 on Python 3.11, and a 2013 one, by
    `six`, on Python 3.6."""
    wheels = tmp_path / "wheels"
    with PackageIndex() as served:
        served.publish_runner(wheels, pytest_uploaded=when(2022), with_pytest=late)
        served.publish(build_wheel(wheels / "old", "pytest", "5.0", old), uploaded=when(2019))
        served.publish(
            build_wheel(wheels, "shapes", "1.0", {"shapes/__init__.py": V1}), uploaded=when(2020)
        )
        monkeypatch.setenv("UV_DEFAULT_INDEX", served.url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
        repo = geom_history(tmp_path / "geom")
        configure(repo)
        Bout.load(repo.root).run(until="ground-truth")
        oracle = oracles(repo).oracles["geom-1"]
        assert oracle.scored, oracle.reason
        assert oracle.environment is not None and oracle.environment.rung == "dated"
        assert oracle.environment.runner_later == [
            "pytest", "pluggy", "iniconfig", "packaging", "pygments"
        ]  # fmt: skip
        assert "shapes==1.0" in oracle.environment.packages
        assert not any(p.startswith("pytest==5.") for p in oracle.environment.packages)
        # One build for each environment the tasks stand on: the dated runner is found
        # dead without building the environment it would have been in.
        assert summary(repo).startswith("2 of 3 tasks scored; 1 environment for them, 1 build ")
        assert len(dated_environments(home)) == 1
        (repo.root / ".bugbout" / "oracles.json").unlink()
        Bout.load(repo.root).run(until="ground-truth")
        assert summary(repo).startswith("2 of 3 tasks scored; 1 environment for them, 0 builds")
