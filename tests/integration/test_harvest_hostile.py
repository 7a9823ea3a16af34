"""An agent that wrecks its working copy: every case is contained, and recorded in the patch.

Harvesting must not crash, must not read anything outside the working copy, and must not
read a giant file; what it leaves out is said in `Patch.notes`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy import WorkingCopy, harvest, prepare_working_copy

HOSTILE = Path(__file__).resolve().parents[1] / "agents" / "hostile.py"

FILES = {
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def answer():\n    return 41\n",
    "src/pkg/sub/deep.py": "DEEP = 1\n",
    "tests/test_core.py": "def test_answer():\n    assert True\n",
    "pyproject.toml": "[project]\nname = 'pkg'\n",
}


Prepare = Callable[[Path], WorkingCopy]
"""Makes a fresh working copy at the path given."""


@pytest.fixture
def prepare(tmp_path: Path) -> Prepare:
    """Working copies of one commit; `<tmp>/pristine` is what each starts from."""
    repo = GitRepo(tmp_path / "repo")
    sha = repo.commit("Initial layout", files=FILES)
    home = tmp_path / "home"
    shutil.copytree(pristine_tree(repo.root, sha, home=home), tmp_path / "pristine", symlinks=True)
    return lambda dest: prepare_working_copy(repo.root, sha, dest, hidden=[], home=home)


@pytest.fixture
def wc(tmp_path: Path, prepare: Prepare) -> WorkingCopy:
    """A working copy at `<tmp>/work/copy`."""
    return prepare(tmp_path / "work" / "copy")


def _hostile(mode: str, workdir: Path, *args: str) -> dict[str, Any]:
    """Run `tests/agents/hostile.py` on a working copy, as a contestant would be run."""
    proc = subprocess.run(
        [sys.executable, str(HOSTILE), mode, str(workdir), *args],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    last = proc.stdout.rstrip("\n").rsplit("\n", 1)[-1]
    found: dict[str, Any] = json.loads(last.removeprefix("REPORT "))
    return found


def _edited_in_the_copys_second(prepare: Prepare, parent: Path) -> WorkingCopy:
    """A working copy that the hostile agent edited in place, size and modification time
    kept, within the second its files were copied in: git, comparing whole seconds, sees
    the very stat data it recorded. Set up again when the clock passed into the next
    second before the agent was done (it takes a fraction of one)."""
    for attempt in range(20):
        wc = prepare(parent / f"copy{attempt}")
        report = _hostile("same-size", wc.path, "src/pkg/core.py", "return 41", "return 42")
        (ctime, mtime, size, ino), (ctime_after, *kept) = report["before"], report["after"]
        assert kept == [mtime, size, ino]  # nothing but the change time tells
        if ctime_after // 10**9 == ctime // 10**9:
            return wc
    pytest.fail("the agent never ran within the second of the copy")


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


def test_an_edit_in_place_within_the_copys_second_with_its_time_put_back_is_seen(
    prepare: Prepare, tmp_path: Path
) -> None:
    wc = _edited_in_the_copys_second(prepare, tmp_path / "work")
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status) for c in patch.files] == [("src/pkg/core.py", "modified")]
    assert "-    return 41\n+    return 42\n" in patch.source


@pytest.fixture
def coarse(tmp_path: Path) -> Iterator[Path]:
    """A directory on a filesystem that keeps whole seconds only (ext4 with 128-byte
    inodes, loop-mounted), where even the change time cannot tell two writes apart
    within one second."""
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        pytest.skip("mounting a filesystem takes root and mkfs.ext4")
    image, mount = tmp_path / "coarse.img", tmp_path / "coarse"
    with image.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)
    mount.mkdir()
    made = subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-I", "128", str(image)], capture_output=True, check=False
    )
    mounted = (
        made.returncode == 0
        and (
            subprocess.run(["mount", "-o", "loop", str(image), str(mount)], capture_output=True)
        ).returncode
        == 0
    )
    if not mounted:
        pytest.skip("no loop device to mount a filesystem on")
    try:
        probe = mount / "probe"
        probe.write_text("")
        assert probe.stat().st_ctime_ns % 10**9 == 0, "the filesystem keeps sub-second times"
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_on_a_filesystem_of_whole_seconds_an_edit_within_the_copys_second_is_seen(
    prepare: Prepare, coarse: Path
) -> None:
    untouched = prepare(coarse / "untouched")
    assert harvest(untouched, source_dir="src/pkg").files == []  # read again, found the same
    wc = _edited_in_the_copys_second(prepare, coarse / "work")
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status) for c in patch.files] == [("src/pkg/core.py", "modified")]
    assert "+    return 42\n" in patch.source


def test_special_files_are_left_out_with_a_note_without_hanging(wc: WorkingCopy) -> None:
    made = _hostile("special", wc.path, "src/pkg/sub", "src/pkg/core.py")
    root = os.geteuid() == 0
    assert made == {
        "pipe": "ok",
        "socket": "ok",
        "char-device": "ok" if root else "PermissionError",
        "block-device": "ok" if root else "PermissionError",
        "tracked": "ok",
    }
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status) for c in patch.files] == [("src/pkg/core.py", "deleted")]
    devices = [
        "left out src/pkg/sub/block-device: a special file (block device)",
        "left out src/pkg/sub/char-device: a special file (character device)",
    ]
    assert patch.notes == [
        "left out src/pkg/core.py: a special file (named pipe); the file counts as deleted",
        *(devices if root else []),
        "left out src/pkg/sub/pipe: a special file (named pipe)",
        "left out src/pkg/sub/socket: a special file (socket)",
    ]


def test_special_files_in_junk_are_left_out_silently(wc: WorkingCopy) -> None:
    (wc.path / "src/pkg/__pycache__").mkdir()
    os.mkfifo(wc.path / "src/pkg/__pycache__/pipe")
    os.mkfifo(wc.path / "src/pkg/core.pyc")
    patch = harvest(wc, source_dir="src/pkg")
    assert patch.files == [] and patch.notes == []


def test_more_files_than_the_cap_are_not_kept_and_say_so(wc: WorkingCopy) -> None:
    _hostile("swarm", wc.path, "30", "data")
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    patch = harvest(wc, source_dir="src/pkg", max_files=25)
    assert patch.oversized == "31 changed files, 6 over the cap of 25"
    assert (patch.source, patch.tests, patch.other, patch.files) == ("", "", "", [])
    assert (
        patch.notes[0] == "not kept: 31 changed files (30 new, 1 modified, 0 deleted), 258 B in all"
    )
    assert patch.notes[1] == (
        "largest: src/pkg/core.py (28 B), data/file_000010.txt (8 B), "
        "data/file_000011.txt (8 B), data/file_000012.txt (8 B), data/file_000013.txt (8 B)"
    )
    assert len(patch.notes) == 2
    within = harvest(wc, source_dir="src/pkg", max_files=31)
    assert within.oversized is None and len(within.files) == 31


def test_more_bytes_than_the_cap_are_not_kept_and_hashed_not_at_all(wc: WorkingCopy) -> None:
    _hostile("hoard", wc.path, "9", "data")
    objects_before = _objects_size(wc)
    patch = harvest(wc, source_dir="src/pkg", max_bytes=8 * 1024 * 1024)
    assert patch.oversized == "9.0 MB of changed files, 1.0 MB over the cap of 8.0 MB"
    assert patch.files == [] and patch.source == patch.other == ""
    assert patch.notes == [
        "not kept: 9 changed files (9 new, 0 modified, 0 deleted), 9.0 MB in all",
        "largest: data/blob_0.bin (1.0 MB), data/blob_1.bin (1.0 MB), data/blob_2.bin (1.0 MB), "
        "data/blob_3.bin (1.0 MB), data/blob_4.bin (1.0 MB)",
    ]
    assert _objects_size(wc) == objects_before  # decided before git hashed a byte
    assert len(patch.model_dump_json()) < 1000


def test_one_file_over_the_byte_cap_is_left_out_and_the_rest_kept(wc: WorkingCopy) -> None:
    (wc.path / "src/pkg/data.bin").write_bytes(b"x" * 3000)
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    patch = harvest(wc, source_dir="src/pkg", max_bytes=2048)
    assert patch.oversized is None
    assert [c.path for c in patch.files] == ["src/pkg/core.py"]
    assert patch.notes == [
        "left out src/pkg/data.bin: 2.9 KB is over the 2.0 KB limit for harvested files"
    ]


def test_a_deletion_weighs_what_the_deleted_file_held(wc: WorkingCopy) -> None:
    shutil.rmtree(wc.path)
    patch = harvest(wc, source_dir="src/pkg", max_bytes=64)
    assert patch.oversized == "95 B of changed files, 31 B over the cap of 64 B"
    assert patch.notes[0].startswith("the working copy was deleted or replaced")
    assert patch.notes[1] == "not kept: 5 changed files (0 new, 0 modified, 5 deleted), 95 B in all"


def test_a_flood_of_left_out_files_is_counted_not_listed(wc: WorkingCopy) -> None:
    (wc.path / ".gitignore").write_text("*.log\n")
    for index in range(50):
        (wc.path / f"src/pkg/run{index:02d}.log").write_text("noise\n")
    patch = harvest(wc, source_dir="src/pkg")
    assert [c.path for c in patch.files] == [".gitignore"]
    assert len(patch.notes) == 21
    assert patch.notes[0] == "left out src/pkg/run00.log: the project's .gitignore ignores it"
    assert patch.notes[19].startswith("left out src/pkg/run19.log")
    assert patch.notes[20] == "left out 30 more, not listed one by one"


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
