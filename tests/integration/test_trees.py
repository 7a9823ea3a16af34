"""The trees directory of a repository, for real: trees an earlier version extracted under
a bare commit id are removed the first time this process uses the repository's trees."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from bugbout_tui.infra import trees
from bugbout_tui.infra.trees import pristine_tree, repo_key


@pytest.fixture(autouse=True)
def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no repository's trees cleared yet."""
    monkeypatch.setattr(trees, "_cleared", set())


def _tree(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "src" / "ops.py").write_text("x = 1\n")
    return path


def test_trees_of_the_earlier_layout_are_removed_and_current_ones_kept(
    tmp_path: Path, home: Path
) -> None:
    repo = GitRepo(tmp_path / "proj")
    first = repo.commit("Initial version", files={"src/ops.py": "x = 1\n"})
    second = repo.commit("Second", files={"src/ops.py": "x = 2\n"})
    root = home / "trees" / repo_key(repo.root)
    outside = _tree(tmp_path / "outside")
    old = _tree(root / first)
    (old / "link-out").symlink_to(outside)
    old_long = _tree(root / ("ab" * 32))
    cut_short = _tree(root / f".{'cd' * 20}.0a1b2c3d.removing")
    current = _tree(root / f"{first}.tree")
    partial = _tree(root / f"{'ef' * 20}.partial")
    (root / f"{'ef' * 20}.partial.json").write_text('{"missing": []}')
    staging = _tree(root / f".{second[:12]}.k2j3h4")
    (root / ("12" * 20)).symlink_to(outside)
    stray = root / ("34" * 20)
    stray.write_text("a file, not a tree\n")

    tree = pristine_tree(repo.root, second)

    assert tree == root / f"{second}.tree"
    assert (tree / "src" / "ops.py").read_text() == "x = 2\n"
    assert not old.exists() and not old_long.exists() and not cut_short.exists()
    assert (outside / "src" / "ops.py").read_text() == "x = 1\n"  # the link inside not followed
    assert (current / "src" / "ops.py").is_file()
    assert (partial / "src" / "ops.py").is_file()
    assert (root / f"{'ef' * 20}.partial.json").is_file()
    assert (staging / "src" / "ops.py").is_file()  # another process may be extracting there
    assert (root / ("12" * 20)).is_symlink()
    assert stray.is_file()
    assert sorted(p.name for p in root.iterdir() if p.name.endswith(".removing")) == []
    assert pristine_tree(repo.root, first) == current  # a current tree is used as it is


def test_the_earlier_layout_is_looked_for_once_per_process(tmp_path: Path, home: Path) -> None:
    repo = GitRepo(tmp_path / "proj")
    first = repo.commit("Initial version", files={"src/ops.py": "x = 1\n"})
    root = home / "trees" / repo_key(repo.root)
    _tree(root / ("ab" * 20))
    pristine_tree(repo.root, first)
    assert not (root / ("ab" * 20)).exists()
    again = _tree(root / ("cd" * 20))
    pristine_tree(repo.root, first)
    assert again.is_dir()  # not listed again: the directory is read once
    trees._cleared.clear()  # as a new process
    pristine_tree(repo.root, first)
    assert not again.exists()


def test_a_trees_directory_that_is_a_link_is_not_cleared(tmp_path: Path, home: Path) -> None:
    repo = GitRepo(tmp_path / "proj")
    first = repo.commit("Initial version", files={"src/ops.py": "x = 1\n"})
    elsewhere = tmp_path / "elsewhere"
    kept = _tree(elsewhere / ("ab" * 20))
    root = home / "trees" / repo_key(repo.root)
    root.parent.mkdir(parents=True)
    root.symlink_to(elsewhere)
    pristine_tree(repo.root, first)
    assert kept.is_dir()
