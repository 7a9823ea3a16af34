"""Python 2 commits on Python 2, for real: the machine's Python 2.7 and its own pip, a
package index on 127.0.0.1 with upload times, the dated view bugbout puts in front of it,
real git, real ground truth in the sandbox.

`geom` is Python 2 code (a `print` statement) that uses `shapes`: 1.0 ("uploaded" in
2020) has `area(width, height)`, 2.0 (2023) `area(size)`. Its 2021 fix only passes with
1.0, and only on Python 2. pytest 4.6 (the last for Python 2) is stood in for by
`tests/legacy_pytest.py`, since the tests cannot download it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gitrepo import GitRepo
from legacy_pytest import publish_legacy_pytest
from projects import write_issues
from terminals import bugbout

from bugbout_tui.core.models import OracleSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.infra.package_index import PackageIndex, build_wheel

pytestmark = pytest.mark.usefixtures("home")

BOTH = "py2.py3-none-any"
V1 = "def area(width, height):\n    return width * height\n"
V2 = "def area(size):\n    return size[0] * size[1]\n"
GEOM = (
    "from shapes import area\n\n\n"
    "def box(w, h):\n    return area(w, h)\n\n\n"
    'def show(w, h):\n    print "%d x %d" % (w, h)\n'
)


def when(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, 12, tzinfo=UTC)


def python2() -> Path | None:
    """A Python 2.7 with pip on this machine, or None."""
    candidates = [
        *sorted(Path.home().glob(".pyenv/versions/2.7*/bin/python2.7")),
        Path("/usr/bin/python2.7"),
        Path("/usr/local/bin/python2.7"),
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found = subprocess.run([candidate, "-c", "import pip"], capture_output=True)
            if found.returncode == 0:
                return candidate
    return None


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    """The local index (pytest for Python 3 and the stand-in for Python 2, `shapes` 1.0
    and 2.0 for both), a Python 2.7 on PATH, uv and pip pointed at the index alone."""
    found = python2()
    if found is None:
        pytest.skip("no Python 2.7 with pip on this machine")
    on_path = tmp_path / "python2-bin"
    on_path.mkdir()
    (on_path / "python2.7").symlink_to(found)
    monkeypatch.setenv("PATH", f"{on_path}{os.pathsep}{os.environ['PATH']}")
    wheels = tmp_path / "wheels"
    with PackageIndex() as served:
        served.publish_runner(wheels)
        # Today's runner needs six and wcwidth, each of which had a release in 2020 and
        # another in 2023.
        publish_legacy_pytest(served, wheels / "legacy", requires=["six", "wcwidth"])
        for version, code, year in (("1.0", V1, 2020), ("2.0", V2, 2023)):
            wheel = build_wheel(wheels, "shapes", version, {"shapes/__init__.py": code}, tag=BOTH)
            served.publish(wheel, uploaded=when(year))
            for name in ("six", "wcwidth"):
                module = {f"{name}.py": f"VERSION = {version!r}\n"}
                served.publish(
                    build_wheel(wheels, name, version, module, tag=BOTH), uploaded=when(year)
                )
        monkeypatch.setenv("UV_DEFAULT_INDEX", served.url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
        for name in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
            monkeypatch.delenv(name, raising=False)
        yield served


def history(
    root: Path, *, classifiers: list[str], code: str, in_setup: bool, also: str = ""
) -> GitRepo:
    """A 2021 fix of `geom`, whose setup.py names `classifiers` and declares `shapes`
    (`in_setup`), or leaves that to requirements.txt, which holds `also` too."""
    named = ", ".join(f'"Programming Language :: Python :: {v}"' for v in classifiers)
    requires = 'install_requires=["shapes"], ' if in_setup else ""
    setup = (
        "from setuptools import setup\n"
        f'setup(name="geom", version="0.1", packages=["geom"], {requires}\n'
        f"      classifiers=[{named}])\n"
    )
    repo = GitRepo(root, start=when(2021))
    repo.commit(
        "Initial version",
        files={
            "setup.py": setup,
            "requirements.txt": ("" if in_setup else "shapes\n") + also,
            "geom/__init__.py": code,
            "tests/test_geom.py": "from geom import box\n\n\ndef test_box():\n"
            "    assert box(2, 3) == 6\n",
        },
        date=when(2021),
    )
    repo.commit(
        "Fix negative sides (#1)",
        files={
            "geom/__init__.py": code.replace("area(w, h)", "area(abs(w), abs(h))"),
            "tests/test_negative.py": "from geom import box\n\n\ndef test_negative():\n"
            "    assert box(-2, 3) == 6\n",
        },
        date=when(2021, 2),
    )
    write_issues(repo.root, {1: ("negative sides", "it breaks")})
    (repo.root / "bugbout.toml").write_text(
        '[project]\nsource = "geom"\ntests = "tests"\nissues-file = "issues.json"\n'
        "[run]\ntest-timeout = 120\n"
    )
    return repo


def oracle(repo: GitRepo) -> OracleSet:
    return OracleSet.model_validate_json((repo.root / ".bugbout" / "oracles.json").read_text())


def test_a_python_2_fix_gets_python_2_with_its_dependencies_as_of_its_date(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = history(tmp_path / "geom", classifiers=["2.7"], code=GEOM, in_setup=True, also="six\n")
    Bout.load(repo.root).run(until="ground-truth")
    found = oracle(repo).oracles["geom-1"]
    assert found.scored, found.reason
    assert found.fail_to_pass == ["tests/test_negative.py::test_negative"]
    environment = found.environment
    assert environment is not None and environment.rung == "dated"
    assert environment.python is not None and environment.python.startswith("2.7.")
    # shapes as of 2021, learnt from setup.py; the runner from today; the project itself
    # not installed.
    assert "shapes==1.0" in environment.packages
    assert "pytest==4.6.11" in environment.packages and "pytest" in environment.runner_later
    # What the runner needs comes from today, but for what the commit requires itself:
    # a six of today would hide the bugs the six of its day had.
    assert "wcwidth==2.0" in environment.packages and "wcwidth" in environment.runner_later
    assert "six==1.0" in environment.packages and "six" not in environment.runner_later
    assert not any(p.startswith("geom==") for p in environment.packages)
    shown = bugbout("tasks", "geom-1", cwd=repo.root, home=home, COLUMNS="200")
    assert "python             2.7." in shown.stdout
    # A second bout finds the environment kept and builds nothing.
    (repo.root / ".bugbout" / "oracles.json").unlink()
    Bout.load(repo.root).run(until="ground-truth")
    assert oracle(repo).oracles["geom-1"].environment == environment


def test_a_commit_for_python_2_and_3_whose_python_2_cannot_be_resolved_gets_python_3(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    """`shapes` 1.0 is for Python 3 alone here: pip finds nothing for Python 2. The
    commit names Python 3.5, not installed: Python 2.7 is the one named that is."""
    index.remove("shapes")
    wheel = build_wheel(tmp_path / "py3", "shapes", "1.0", {"shapes/__init__.py": V1})
    index.publish(wheel, uploaded=when(2020))
    code = GEOM.replace('print "%d x %d" % (w, h)', 'print("%d x %d" % (w, h))')
    repo = history(tmp_path / "geom", classifiers=["2.7", "3.5"], code=code, in_setup=False)
    Bout.load(repo.root).run(until="ground-truth")
    found = oracle(repo).oracles["geom-1"]
    assert found.scored, found.reason
    environment = found.environment
    assert environment is not None and environment.python is not None
    assert environment.python.startswith("3.")
    assert "first, whose resolution failed" in (environment.note or "")
    assert "shapes" in (environment.note or "")


def test_a_bug_of_python_2_alone_is_found_on_python_2_and_kept_there(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    """The commit names 2.7 and 3.11; on 3.11 `str(name)` was never a bug, on 2.7 it
    fails for a name that is not ASCII. The ground truth moves to 2.7 and stays."""
    code = (
        "from shapes import area\n\n\n"
        "def box(w, h):\n    return area(w, h)\n\n\n"
        "def describe(name):\n    return u'box ' + str(name)\n"
    )
    repo = history(tmp_path / "geom", classifiers=["2.7", "3.11"], code=code, in_setup=False)
    repo.commit(
        "Fix names that are not ASCII (#2)",
        files={
            "geom/__init__.py": code.replace("str(name)", "name"),
            "tests/test_describe.py": "from geom import describe\n\n\n"
            "def test_describe():\n"
            "    assert describe(u'\\u00e9t\\u00e9') == u'box \\u00e9t\\u00e9'\n",
        },
        date=when(2021, 3),
    )
    write_issues(repo.root, {1: ("negative sides", "it breaks"), 2: ("accents", "it breaks")})
    Bout.load(repo.root).run(until="ground-truth")
    found = oracle(repo).oracles["geom-2"]
    assert found.scored, found.reason
    assert found.fail_to_pass == ["tests/test_describe.py::test_describe"]
    environment = found.environment
    assert environment is not None and environment.settled
    assert environment.python is not None and environment.python.startswith("2.7.")
    assert "chosen by the ground truth" in (environment.note or "")
    # The Python 3 bug of #1 stays where it was first run.
    first = oracle(repo).oracles["geom-1"].environment
    assert first is not None and not first.settled and (first.python or "").startswith("3.")
    # A later bout gives the task its Python 2 again, and so does `bugbout tasks`.
    Bout.load(repo.root).run(until="ground-truth")
    assert oracle(repo).oracles["geom-2"] == found
    shown = bugbout("tasks", "geom-2", cwd=repo.root, home=home, COLUMNS="200")
    assert "python             2.7." in shown.stdout
