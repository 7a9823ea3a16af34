"""The traced run of an environment task, for real: an environment installed by uv from
a package index on 127.0.0.1, a program run in it in the sandbox, and the distributions
its processes imported or opened.

The project `geom` (a src layout, so the run imports its installed copy) imports
`direct`; the program starts a Python that imports `indirect` and leaves through
`os._exit`; it reads `datafile`'s table without importing it; `unused` is installed and
never touched, and `startup` is imported by its own `.pth` at every start-up, which is
the environment's doing, not the program's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from envkit import when, write_project

from bugbout_tui.core.env_models import EnvTrace
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.env_trace import Touched, traced_run, used_distributions
from bugbout_tui.infra.package_index import PackageIndex, build_wheel
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox

PROGRAM = """\
import json, subprocess, sys, sysconfig
from pathlib import Path

import geom

child = subprocess.run([sys.executable, "-c", "import indirect, os; os._exit(0)"])
table = Path(sysconfig.get_paths()["purelib"]) / "datafile" / "table.json"
assert json.loads(table.read_text()) == {"rows": 2}
Path("written.txt").write_text("the tree is writable")
print("ran with", geom.VALUE)
sys.exit(child.returncode)
"""
PACKAGES = {
    "direct": {"direct/__init__.py": "VALUE = 1\n"},
    "indirect": {"indirect/__init__.py": ""},
    "datafile": {
        "datafile/__init__.py": "raise RuntimeError('only its table is read')\n",
        "datafile/table.json": '{"rows": 2}',
    },
    "unused": {"unused/__init__.py": ""},
    "startup": {"startup.pth": "import startup_hook\n", "startup_hook.py": ""},
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project's tree and its environment, installed once for the whole module (the
    runs only read the environment)."""
    root = tmp_path_factory.mktemp("traced")
    wheels = root / "wheels"
    tree = write_project(
        root / "tree",
        "geom",
        dependencies=list(PACKAGES),
        files={"src/geom/__init__.py": "from direct import VALUE\n", "run.py": PROGRAM},
    )
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        for name, files in PACKAGES.items():
            served.publish(build_wheel(wheels, name, "1.0", files), uploaded=when(2020))
        patch.setenv("UV_CACHE_DIR", str(root / "uv-cache"))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        install = asyncio.run(
            clean_install(
                tree,
                python="3.11",
                date=when(2021),
                index=served.url,
                venv=root / "venv",
                log=root / "install.log",
                timeout=120,
                sandbox=select_sandbox("bubblewrap"),
            )
        )
    assert install.ok, install.detail
    return tree, root / "venv"


def trace(
    installed: tuple[Path, Path],
    command: Sequence[str],
    *,
    sandbox: Sandbox | None = None,
    timeout: float = 60,
) -> EnvTrace:
    tree, venv = installed
    return asyncio.run(
        traced_run(
            tree,
            command,
            venv=venv,
            sandbox=sandbox or select_sandbox("bubblewrap"),
            log=tree.parent / "logs" / "trace.log",
            timeout=timeout,
        )
    )


@pytest.mark.parametrize("sandbox", ["bubblewrap", "none"])
def test_the_trace_finds_what_the_run_and_its_pythons_used(
    installed: tuple[Path, Path], sandbox: str
) -> None:
    tree, _ = installed
    (tree / "written.txt").unlink(missing_ok=True)

    result = trace(installed, ["python", "run.py"], sandbox=select_sandbox(sandbox))

    assert result.ok and result.exit_code == 0 and result.detail is None
    # the project, the standard library, what was never touched and what a `.pth` imports
    # at start-up are all left out
    assert result.used == ["datafile", "direct", "indirect"]
    assert (tree / "written.txt").read_text() == "the tree is writable"
    assert (tree.parent / "logs" / "trace.log").read_text() == "ran with 1\n"


def test_a_run_that_fails_is_not_ok_and_still_traced(installed: tuple[Path, Path]) -> None:
    result = trace(installed, ["python", "-c", "import sys, direct; sys.exit('broken')"])

    assert not result.ok and result.exit_code == 1
    assert result.detail == "the command exited with status 1: broken"
    assert result.used == ["direct"]


def test_a_run_past_its_time_is_stopped(installed: tuple[Path, Path]) -> None:
    result = trace(installed, ["python", "-c", "import indirect, time; time.sleep(60)"], timeout=3)

    assert not result.ok and result.exit_code is None
    assert result.detail is not None
    assert result.detail.startswith("the command did not finish within 3 seconds")
    assert result.used == ["indirect"]
    assert result.seconds < 30


def test_a_run_without_an_environment_is_a_failed_step(tmp_path: Path) -> None:
    result = trace((tmp_path, tmp_path / "no-venv"), ["python", "run.py"])

    assert not result.ok and result.exit_code is None
    assert result.detail == f"the environment has no interpreter at {tmp_path}/no-venv/bin/python"


def test_files_map_to_the_distributions_that_installed_them(tmp_path: Path) -> None:
    """A cached `.pyc` counts for its source; a compiled module, loaded without an
    `open`, counts by its import; metadata and the tree's own distribution do not."""
    tree = tmp_path / "tree"
    tree.mkdir()
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    records = {
        "slow-1.0.dist-info": "slow/__init__.py,,\nslow-1.0.dist-info/METADATA,,\n",
        "fast-2.0.dist-info": "fast.cpython-311-x86_64-linux-gnu.so,,\n",
        "Meta_Only-1.0.dist-info": "meta_only/__init__.py,,\n",
        "geom-0.1.dist-info": "geom/__init__.py,,\n",
    }
    for info, record in records.items():
        (site / info).mkdir(parents=True)
        (site / info / "RECORD").write_text(record)
    (site / "geom-0.1.dist-info" / "direct_url.json").write_text(
        f'{{"url": "{tree.as_uri()}", "dir_info": {{}}}}'
    )
    touched = Touched(
        files=frozenset(
            {
                str(site / "slow" / "__pycache__" / "__init__.cpython-311.pyc"),
                str(site / "Meta_Only-1.0.dist-info" / "entry_points.txt"),
                str(site / "geom" / "__init__.py"),
                str(tree / "fast.py"),
            }
        ),
        modules=frozenset({"fast", "json", "meta_only"}),
    )

    assert used_distributions(touched, venv=tmp_path / "venv", tree=tree) == ["fast", "slow"]
