"""The demo on a machine without bubblewrap: it runs unconfined and says so in one line;
every other run still refuses to run without a sandbox."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from terminals import bugbout

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the demo's fallback from bubblewrap"
)


@pytest.fixture(scope="module")
def no_bwrap(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with every program of the system's, git and python among them, but bwrap."""
    bin_dir = tmp_path_factory.mktemp("bin")
    for directory in (Path("/usr/bin"), Path("/bin")):
        for program in directory.iterdir():
            target = bin_dir / program.name
            if program.name != "bwrap" and not target.exists():
                target.symlink_to(program)
    path = str(bin_dir)
    assert shutil.which("bwrap", path=path) is None
    assert shutil.which("git", path=path) is not None
    return path


def test_the_demo_runs_unconfined_without_bwrap_and_says_so_once(
    no_bwrap: str, tmp_path: Path
) -> None:
    done = bugbout("demo", "--until", "ground-truth", home=tmp_path, PATH=no_bwrap, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "sandbox" in line]
    assert len(lines) == 1, done.stderr
    assert "run unconfined" in lines[0] and "apt-get install bubblewrap" in lines[0]
    oracles = tmp_path / "demo" / ".bugbout" / "oracles.json"
    assert oracles.is_file(), "the maintainers' tests ran, unconfined"

    run = bugbout(
        "-C", str(tmp_path / "demo"), "run", "--until", "ground-truth",
        home=tmp_path, PATH=no_bwrap, timeout=600,
    )  # fmt: skip
    assert run.returncode != 0
    assert "bubblewrap" in run.stderr and "run unconfined" not in run.stderr
