"""A tree sent as the files that differ from its commit's tree, and laid down again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bugbout_tui.infra.file_sets import FileEntry, FileSet, changes, lay_down, snapshot


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def listing(root: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_file():
            found[name] = (path.read_text(), os.access(path, os.X_OK))
        elif not any(path.iterdir()):
            found[name] = "empty"
    return found


def test_the_changes_over_the_origin_make_the_tree_again(tmp_path: Path) -> None:
    origin = tree(tmp_path / "origin", {"a.py": "one\n", "pkg/b.py": "two\n", "gone.py": "x"})
    built = tree(tmp_path / "built", {"a.py": "ONE\n", "pkg/b.py": "two\n", "new/c.py": "3"})
    (built / "run.sh").write_text("#!/bin/sh\n")
    (built / "run.sh").chmod(0o755)
    os.symlink("pkg/b.py", built / "link.py")
    (built / "empty").mkdir()
    found = changes(built, origin)
    assert {e.path for e in found.entries} == {
        "a.py", "new/c.py", "run.sh", "link.py", "empty", "gone.py",
    }  # fmt: skip
    again = tmp_path / "again"
    again.mkdir()
    lay_down(snapshot(origin), again)
    lay_down(found, again)
    assert listing(again) == listing(built)


def test_files_alike_in_size_and_time_are_told_apart_by_their_bytes(tmp_path: Path) -> None:
    # Two commits made in the same second: their trees' files carry the same time.
    origin = tree(tmp_path / "origin", {"t.py": "assert 1 == 1\n"})
    built = tree(tmp_path / "built", {"t.py": "assert 1 == 2\n"})
    stamp = os.stat(origin / "t.py").st_mtime_ns
    os.utime(built / "t.py", ns=(stamp, stamp))
    (entry,) = changes(built, origin).entries
    assert entry.path == "t.py" and entry.data == b"assert 1 == 2\n"


def test_an_unchanged_tree_sends_nothing(tmp_path: Path) -> None:
    origin = tree(tmp_path / "origin", {"a.py": "one\n", "pkg/b.py": "two\n"})
    assert changes(origin, origin) == FileSet()


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_a_path_turned_into_another_kind_is_replaced(tmp_path: Path, kind: str) -> None:
    origin = tree(tmp_path / "origin", {"x/y.py": "1"} if kind == "file" else {"x": "1"})
    built = tree(tmp_path / "built", {"x": "file now"} if kind == "file" else {"x/y.py": "1"})
    again = tmp_path / "again"
    again.mkdir()
    lay_down(snapshot(origin), again)
    lay_down(changes(built, origin), again)
    assert listing(again) == listing(built)


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", "a/../../b"])
def test_no_entry_leads_out_of_the_tree(tmp_path: Path, path: str) -> None:
    files = FileSet(entries=[FileEntry(path=path, kind="file", data=b"x")])
    with pytest.raises(ValueError, match="not a path inside a tree"):
        lay_down(files, tmp_path)
