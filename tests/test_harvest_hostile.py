"""An agent that wrecks its working copy: every case is contained, and recorded in the patch.

Harvesting must not crash, must not read anything outside the working copy, and must not
read a giant file; what it leaves out is said in `Patch.notes`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy import WorkingCopy, apply_patch, harvest, prepare_working_copy

FILES = {
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def answer():\n    return 41\n",
    "src/pkg/sub/deep.py": "DEEP = 1\n",
    "tests/test_core.py": "def test_answer():\n    assert True\n",
    "pyproject.toml": "[project]\nname = 'pkg'\n",
}


@pytest.fixture
def wc(tmp_path: Path) -> WorkingCopy:
    """A working copy at `<tmp>/work/copy`; `<tmp>/pristine` is what it started from."""
    repo = GitRepo(tmp_path / "repo")
    sha = repo.commit("Initial layout", files=FILES)
    home = tmp_path / "home"
    shutil.copytree(pristine_tree(repo.root, sha, home=home), tmp_path / "pristine", symlinks=True)
    return prepare_working_copy(repo.root, sha, tmp_path / "work" / "copy", hidden=[], home=home)


def _objects_size(wc: WorkingCopy) -> int:
    return sum(f.stat().st_size for f in (wc.git_dir / "objects").rglob("*") if f.is_file())


def test_deleting_the_whole_working_copy(wc: WorkingCopy) -> None:
    shutil.rmtree(wc.path)
    patch = harvest(wc, source_dir="src/pkg")
    assert sorted((c.path, c.status) for c in patch.files) == sorted(
        (path, "deleted") for path in FILES
    )
    assert patch.notes == [
        "the working copy was deleted or replaced, so every file counts as deleted"
    ]
    assert "deleted file mode 100644" in patch.source


def test_emptying_the_working_copy(wc: WorkingCopy) -> None:
    """A sandbox's mount point cannot be removed, so `rm -rf` leaves it empty."""
    for entry in wc.path.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    patch = harvest(wc, source_dir="src/pkg")
    assert {c.status for c in patch.files} == {"deleted"} and len(patch.files) == len(FILES)
    assert patch.notes == ["every file of the working copy was deleted"]


def test_replacing_the_working_copy_with_a_link_elsewhere(wc: WorkingCopy, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("SECRET-CONTENT\n")
    shutil.rmtree(wc.path)
    os.symlink(elsewhere, wc.path)
    patch = harvest(wc, source_dir="src/pkg")
    assert {c.status for c in patch.files} == {"deleted"}
    assert "secret" not in patch.model_dump_json().lower()
    assert patch.notes[0].startswith("the working copy was deleted or replaced")


def test_a_link_to_etc_passwd_is_recorded_as_a_link(wc: WorkingCopy) -> None:
    os.symlink("/etc/passwd", wc.path / "src/pkg/passwd")
    (wc.path / "src/pkg/core.py").unlink()
    os.symlink("/etc/passwd", wc.path / "src/pkg/core.py")  # a tracked file turned link
    patch = harvest(wc, source_dir="src/pkg")
    changes = {c.path: (c.status, c.symlink) for c in patch.files}
    assert changes == {
        "src/pkg/core.py": ("modified", True),
        "src/pkg/passwd": ("added", True),
    }
    assert "+/etc/passwd\n\\ No newline at end of file" in patch.source
    assert "root:" not in patch.model_dump_json()
    assert "new file mode 120000" in patch.source


def test_a_giant_sparse_file_is_left_out_quickly_without_being_read(wc: WorkingCopy) -> None:
    with open(wc.path / "src/pkg/big.bin", "wb") as handle:
        handle.truncate(1 << 30)
    with open(wc.path / "src/pkg/core.py", "r+b") as handle:  # a tracked file grown huge
        handle.truncate(1 << 30)
    (wc.path / "src/pkg/ok.py").write_text("OK = 1\n")
    objects_before = _objects_size(wc)
    started = time.monotonic()
    patch = harvest(wc, source_dir="src/pkg")
    elapsed = time.monotonic() - started
    assert [c.path for c in patch.files] == ["src/pkg/ok.py"]
    assert patch.notes == [
        "left out src/pkg/big.bin: 1.0 GB is over the 10 MB limit for harvested files",
        "left out src/pkg/core.py: 1.0 GB is over the 10 MB limit for harvested files",
    ]
    assert _objects_size(wc) - objects_before < 64 * 1024  # no blob of it was written
    assert elapsed < 5, f"harvest took {elapsed:.1f}s: it must not read the file"


def test_the_size_limit_can_be_set(wc: WorkingCopy) -> None:
    (wc.path / "src/pkg/data.txt").write_text("x" * 3000)
    patch = harvest(wc, source_dir="src/pkg", max_file_bytes=2048)
    assert patch.files == []
    assert patch.notes == [
        "left out src/pkg/data.txt: 2.9 KB is over the 2.0 KB limit for harvested files"
    ]


def test_a_link_to_a_directory_outside_is_not_followed(wc: WorkingCopy, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "nested").mkdir(parents=True)
    (outside / "secret.txt").write_text("SECRET-CONTENT\n")
    (outside / "nested" / "more.py").write_text("MORE_SECRET = 1\n")
    os.symlink(outside, wc.path / "src/pkg/escape")
    os.symlink("/etc", wc.path / "etc-link")
    patch = harvest(wc, source_dir="src/pkg")
    assert {c.path: c.symlink for c in patch.files} == {
        "etc-link": True,
        "src/pkg/escape": True,
    }
    dumped = patch.model_dump_json()
    assert "SECRET" not in dumped and "more.py" not in dumped
    assert f"+{outside}\n" in patch.source


def test_a_package_directory_replaced_by_a_link_outside(wc: WorkingCopy, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.py").write_text("STOLEN = 1\n")
    shutil.rmtree(wc.path / "src/pkg/sub")
    os.symlink(outside, wc.path / "src/pkg/sub")
    patch = harvest(wc, source_dir="src/pkg")
    assert {(c.path, c.status, c.symlink) for c in patch.files} == {
        ("src/pkg/sub", "added", True),
        ("src/pkg/sub/deep.py", "deleted", False),
    }
    assert "STOLEN" not in patch.model_dump_json()


def test_the_agents_own_git_repository_is_ignored(wc: WorkingCopy) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Agent",
        GIT_AUTHOR_EMAIL="agent@example.invalid",
        GIT_COMMITTER_NAME="Agent",
        GIT_COMMITTER_EMAIL="agent@example.invalid",
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "agent's snapshot"]):
        subprocess.run(["git", *args], cwd=wc.path, env=env, check=True, capture_output=True)
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    nested = wc.path / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "x.py").write_text("X = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=nested, env=env, check=True)
    patch = harvest(wc, source_dir="src/pkg")
    assert [c.path for c in patch.files] == ["src/pkg/core.py"]
    assert patch.notes == ["left out vendor/lib/: a nested git repository"]


def test_special_files_are_left_out_without_hanging(wc: WorkingCopy) -> None:
    os.mkfifo(wc.path / "src/pkg/pipe")
    (wc.path / "src/pkg/core.py").unlink()
    os.mkfifo(wc.path / "src/pkg/core.py")  # a tracked file turned into a pipe
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status) for c in patch.files] == [("src/pkg/core.py", "deleted")]
    assert patch.notes == ["left out src/pkg/core.py: not a regular file or a symbolic link"]


def test_a_file_replaced_by_a_directory_and_back(wc: WorkingCopy) -> None:
    (wc.path / "src/pkg/core.py").unlink()
    (wc.path / "src/pkg/core.py").mkdir()
    (wc.path / "src/pkg/core.py/inside.py").write_text("INSIDE = 1\n")
    shutil.rmtree(wc.path / "src/pkg/sub")
    (wc.path / "src/pkg/sub").write_text("now a file\n")
    patch = harvest(wc, source_dir="src/pkg")
    assert sorted((c.path, c.status) for c in patch.files) == [
        ("src/pkg/core.py", "deleted"),
        ("src/pkg/core.py/inside.py", "added"),
        ("src/pkg/sub", "added"),
        ("src/pkg/sub/deep.py", "deleted"),
    ]
    base = wc.path.parent / "base"
    shutil.copytree(wc.path.parents[1] / "pristine", base, symlinks=True)
    apply_patch(base, patch.source)
    assert (base / "src/pkg/core.py/inside.py").read_text() == "INSIDE = 1\n"
    assert (base / "src/pkg/sub").read_text() == "now a file\n"
