"""An environment repair is an agent's, and scoring it installs it and runs it: for real,
with uv, bubblewrap and a package index on 127.0.0.1, what a hostile repair can and
cannot do.

Installing a tree runs its build backend; `.pth` files of the packages it declares run
at every start of its interpreter. Both may only ever run in the sandbox, and a repair
may not change where its packages come from.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from envkit import BACKEND, when, write_project
from fakes.harness import bubblewrap

from bugbout_tui.core.env_models import EnvInstall
from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.env_install import clean_install
from bugbout_tui.infra.env_trace import traced_run
from bugbout_tui.infra.package_index import PackageIndex, build_wheel
from bugbout_tui.infra.programs import venv_paths
from bugbout_tui.infra.sandbox import NoSandbox, Sandbox

KINDS = ["bubblewrap", "none"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    """`shapes` 1.0 (2020) and 2.0 (2023); `startup` 1.0, whose `.pth` is written by
    each test (see `hostile_pth`)."""
    wheels = tmp_path_factory.mktemp("wheels")
    with PackageIndex() as served, pytest.MonkeyPatch.context() as patch:
        for version, year in (("1.0", 2020), ("2.0", 2023)):
            wheel = build_wheel(wheels, "shapes", version, {"shapes/__init__.py": ""})
            served.publish(wheel, uploaded=when(year))
        patch.setenv("UV_PYTHON_DOWNLOADS", "never")
        yield served


def _sandbox(kind: str) -> Sandbox:
    return NoSandbox() if kind == "none" else bubblewrap()


def install(
    tree: Path, index: str, sandbox: Sandbox, *, timeout: float = 120, venv: Path | None = None
) -> EnvInstall:
    return asyncio.run(
        clean_install(
            tree,
            python="3.11",
            date=when(2021),
            index=index,
            venv=venv or tree.parent / "venv",
            log=tree.parent / "logs" / "install.log",
            timeout=timeout,
            sandbox=sandbox,
        )
    )


SNOOP = """\
import json as _json, os as _os
from pathlib import Path as _Path

_seen = {{"token": _os.environ.get("SHAPES_API_TOKEN"), "home": _os.environ.get("HOME")}}
try:
    _Path({outside!r}, "written-by-the-build").write_text("escaped")
    _seen["wrote"] = "yes"
except OSError as error:
    _seen["wrote"] = type(error).__name__
try:
    _seen["secret"] = _Path({secret!r}).read_text()
except OSError as error:
    _seen["secret"] = type(error).__name__
_Path(__file__).with_name("seen.json").write_text(_json.dumps(_seen))
"""


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_writes_only_in_the_tree_and_sees_no_secret(
    kind: str, tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree's own build backend snoops when uv imports it to build the project."""
    outside = tmp_path / "outside"
    outside.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("s3cret")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHAPES_API_TOKEN", "tok-123")
    snoop = SNOOP.format(outside=str(outside), secret=str(home / "secret.txt"))
    tree = write_project(
        tmp_path / "tree",
        "geom",
        dependencies=["shapes"],
        files={"envkit_backend.py": snoop + BACKEND},
    )

    result = install(tree, index.url, _sandbox(kind))

    assert result.ok, result.detail
    assert result.installed == ["shapes==1.0"]  # it still installs, from the index, dated
    seen = json.loads((tree / "seen.json").read_text())
    assert seen["token"] is None and seen["home"] != str(home)
    log = (tmp_path / "logs" / "install.log").read_text()
    if kind == "none":  # the control: unconfined, as the user chose, and the log says so
        assert seen["wrote"] == "yes" and seen["secret"] == "s3cret"
        assert log.startswith('[unconfined: sandbox = "none"')
    else:
        assert seen["wrote"] != "yes" and seen["secret"] == "FileNotFoundError"
        assert not (outside / "written-by-the-build").exists()
        assert log.startswith("$ uv venv")


def test_a_build_that_changes_the_interpreter_fails_the_install(
    tmp_path: Path, index: PackageIndex
) -> None:
    """The traced run's view is read off `pyvenv.cfg`: an install may not rewrite it."""
    venv = tmp_path / "venv"
    rewrite = (
        "from pathlib import Path as _Path\n"
        f"_cfg = _Path({str(venv / 'pyvenv.cfg')!r})\n"
        "_cfg.write_text(_cfg.read_text() + 'home = /\\n')\n"
    )
    tree = write_project(tmp_path / "tree", "geom", files={"envkit_backend.py": rewrite + BACKEND})

    result = install(tree, index.url, bubblewrap(), venv=venv)

    assert not result.ok and result.exit_code == 0
    assert result.detail is not None and "changed what names the environment's interpreter" in (
        result.detail
    )


@pytest.mark.parametrize(
    ("files", "detail"),
    [
        (
            {"requirements-dev.txt": "shapes\n--extra-index-url http://127.0.0.1:9/simple\n"},
            "requirements-dev.txt, line 2: --extra-index-url changes where packages come from",
        ),
        (
            {"requirements.txt": "-r more/base.txt\n", "more/base.txt": "--find-links=wheels\n"},
            "more/base.txt (included from requirements.txt, line 1), line 1: --find-links",
        ),
        (
            {"requirements.txt": "-e git+https://127.0.0.1:9/shapes.git#egg=shapes\n"},
            "requirements.txt, line 1: -e with a URL changes where packages come from",
        ),
        (
            {"requirements.txt": "-c ../pins.txt\nshapes\n"},
            "../pins.txt (included from requirements.txt, line 1) lies outside the tree",
        ),
    ],
    ids=["extra-index", "included-find-links", "editable-url", "include-outside"],
)
def test_a_repair_that_changes_where_packages_come_from_is_refused_before_uv_runs(
    tmp_path: Path, index: PackageIndex, files: dict[str, str], detail: str
) -> None:
    (tmp_path / "pins.txt").write_text("shapes==2.0\n")
    tree = tmp_path / "tree"
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    asked = len(index.requests)

    result = install(tree, index.url, NoSandbox())

    assert not result.ok and result.exit_code is None and result.installed == []
    assert result.detail is not None and result.detail.startswith(detail)
    assert len(index.requests) == asked  # uv never ran
    assert not (tmp_path / "venv").exists()
    log = (tmp_path / "logs" / "install.log").read_text()
    assert log.endswith(f"[not installed: {result.detail}]\n")


def test_the_projects_own_uv_sources_are_ignored(tmp_path: Path, index: PackageIndex) -> None:
    """`[tool.uv.sources]` naming another index: the install asks the task's index alone."""
    with PackageIndex() as other:
        other.publish(build_wheel(tmp_path / "w", "shapes", "9.0", {"shapes/__init__.py": ""}),
                      uploaded=when(2019))  # fmt: skip
        tree = write_project(tmp_path / "tree", "geom", dependencies=["shapes"])
        with (tree / "pyproject.toml").open("a") as pyproject:
            pyproject.write(
                '\n[tool.uv.sources]\nshapes = { index = "other" }\n\n'
                f'[[tool.uv.index]]\nname = "other"\nurl = "{other.url}"\nexplicit = true\n'
            )

        result = install(tree, index.url, NoSandbox())

    assert result.ok, result.detail
    assert result.installed == ["shapes==1.0"]
    assert other.requests == []


SPAWNS = """\
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import subprocess, sys, time
    from pathlib import Path
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", {marker!r}],
                     start_new_session=True)
    Path(__file__).with_name("spawned").write_text("yes")
    time.sleep(600)
"""


def _running(marker: str) -> list[int]:
    """Live processes on this machine whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_past_the_deadline_is_ended_with_what_it_started(
    kind: str, tmp_path: Path, index: PackageIndex
) -> None:
    """A backend that starts a detached process (its own session) and sleeps."""
    marker = f"bugbout-build-child-{uuid.uuid4().hex}"
    tree = write_project(
        tmp_path / "tree", "geom", files={"envkit_backend.py": SPAWNS.format(marker=marker)}
    )

    result = install(tree, index.url, _sandbox(kind), timeout=8)
    left = _running(marker)
    for pid in left:  # never leave one behind, even when the test fails
        os.kill(pid, 9)

    assert (tree / "spawned").exists()  # the child was started before the deadline
    assert not result.ok and result.detail == "the install did not finish within 8 seconds"
    assert left == []


def test_the_traced_run_runs_no_pth_file_outside_the_sandbox(
    tmp_path: Path, index: PackageIndex
) -> None:
    """A declared package's `.pth` that writes a marker wherever it can: it runs in the
    traced run, where only the tree takes it, and nowhere else."""
    outside = tmp_path / "outside"
    outside.mkdir()
    tree = tmp_path / "tree"
    tree.mkdir()
    line = (
        "import os; [open(os.path.join(d, 'pth-ran'), 'w').close() for d in "
        f"({str(outside)!r}, {str(tree)!r}) if os.path.isdir(d) and os.access(d, os.W_OK)]\n"
    )
    name = f"startup{uuid.uuid4().hex[:8]}"
    index.publish(
        build_wheel(tmp_path / "w", name, "1.0", {f"{name}.pth": line, f"{name}_mod.py": ""}),
        uploaded=when(2020),
    )
    (tree / "requirements.txt").write_text(f"{name}\n")
    sandbox = bubblewrap()
    installed = install(tree, index.url, sandbox)
    assert installed.ok, installed.detail
    (tree / "pth-ran").unlink(missing_ok=True)  # the install's own runs, confined too

    result = asyncio.run(
        traced_run(
            tree,
            ["python", "-c", "pass"],
            venv=tmp_path / "venv",
            sandbox=sandbox,
            log=tmp_path / "logs" / "trace.log",
            timeout=60,
        )
    )

    assert result.ok, result.detail
    assert (tree / "pth-ran").exists()  # it ran, in the sandbox
    assert not (outside / "pth-ran").exists()


def test_a_venvs_paths_are_read_off_its_files(tmp_path: Path) -> None:
    base = tmp_path / "python-3.11"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "python3.11").write_text("")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\nversion_info = 3.11.7\n")
    (venv / "bin" / "python").symlink_to(base / "bin" / "python3.11")

    assert venv_paths(venv) == (venv, base)
    assert venv_paths(venv, hidden=[tmp_path / "python-3.11"]) == (venv,)
    (venv / "pyvenv.cfg").write_text("version_info = 3.11.7\n")
    with pytest.raises(BugboutError, match=r"no pyvenv\.cfg names the Python"):
        venv_paths(venv)
