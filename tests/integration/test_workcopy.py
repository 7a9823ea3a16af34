"""Working copies, harvesting what an agent changed, and applying a patch part to a tree.

Everything here is real: repositories built with git, copies made with `cp`, patches
found by git and applied by `git apply`.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.patch import Patch
from bugbout_tui.infra.apply import apply_patch
from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy import WorkingCopy, harvest, prepare_working_copy

HIDDEN = ["tests/test_bug.py", "tests/regress/test_only.py"]
UTIL = "".join(f"def helper_{n}(value):\n    return value + {n}\n\n" for n in range(12))
LOGO = bytes(range(256)) * 8


class Project:
    """A small repository with one commit, and working copies made from it."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.repo = GitRepo(tmp_path / "repo")
        self.repo.write(".gitignore", "*.cfg\nbuild/\n")
        self.repo.write("settings.cfg", "level = 1\n")
        self.repo.git("add", "--force", "settings.cfg")
        os.chmod(self.repo.write("src/pkg/run.sh", "#!/bin/sh\necho run\n"), 0o755)
        os.symlink("core.py", self.repo.root / "src/pkg/alias.py")
        self.commit = self.repo.commit(
            "Initial layout",
            files={
                "src/pkg/__init__.py": "",
                "src/pkg/core.py": "def answer():\n    return 41\n",
                "src/pkg/util.py": UTIL,
                "src/pkg/logo.png": LOGO,
                "src/pkg/left.py": "SIDE = 'left'\n",
                "src/pkg/right.py": "SIDE = 'rite'\n",
                "tests/test_core.py": "def test_answer():\n    assert True\n",
                "tests/helpers.py": "SHARED = 1\n" * 20,
                "tests/test_bug.py": "def test_bug():\n    assert False\n",
                "tests/regress/test_only.py": "def test_only():\n    pass\n",
                "pyproject.toml": "[project]\nname = 'pkg'\n",
                "README.md": "# pkg\n",
            },
        )
        self.home = tmp_path / "home"
        self.count = 0

    def working_copy(self, hidden: list[str] | None = None) -> WorkingCopy:
        self.count += 1
        return prepare_working_copy(
            self.repo.root,
            self.commit,
            self.tmp / "work" / f"attempt{self.count}",
            hidden=HIDDEN if hidden is None else hidden,
            home=self.home,
        )

    def tracked(self) -> list[str]:
        return self.repo.git("ls-tree", "-r", "--name-only", self.commit).splitlines()

    def pristine(self) -> Path:
        return pristine_tree(self.repo.root, self.commit, home=self.home)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _files(root: Path) -> dict[str, bytes | str]:
    """Every file under `root`: bytes for files, `-> target` for links, `+x` marked."""
    found: dict[str, bytes | str] = {}
    for folder, directories, names in os.walk(root):
        for name in names + [d for d in directories if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if os.path.islink(path):
                found[relative] = "-> " + os.readlink(path)
            elif os.stat(path).st_mode & stat.S_IXUSR:
                found[relative] = b"+x " + Path(path).read_bytes()
            else:
                found[relative] = Path(path).read_bytes()
    return found


def _fresh_base(project: Project, name: str) -> Path:
    """The base as scoring sees it: the pristine tree without the hidden files."""
    tree = project.tmp / name
    shutil.copytree(project.pristine(), tree, symlinks=True)
    for hidden in HIDDEN:
        (tree / hidden).unlink()
    return tree


# --- preparing -----------------------------------------------------------------------------


def test_copy_has_no_git_and_no_hidden_files_and_the_rest_is_identical(project: Project) -> None:
    wc = project.working_copy()
    files = _files(wc.path)
    expected = sorted(set(project.tracked()) - set(HIDDEN))
    assert sorted(files) == expected
    for path in expected:
        if path == "src/pkg/alias.py":
            assert files[path] == "-> core.py"
        elif path == "src/pkg/run.sh":
            assert files[path] == b"+x #!/bin/sh\necho run\n"
        else:
            shown = subprocess.run(
                ["git", "-C", str(project.repo.root), "show", f"{project.commit}:{path}"],
                capture_output=True,
                check=True,
            ).stdout
            assert files[path] == shown, path
    assert not any(part == ".git" for path in files for part in path.split("/"))
    assert not (wc.path / ".git").exists()
    assert not (wc.path / "tests" / "regress").exists()  # emptied by hiding: gone too
    assert wc.git_dir.is_dir() and wc.path not in wc.git_dir.parents
    assert wc.files == len(expected)
    assert wc.base_commit == project.commit
    assert wc.hidden == tuple(sorted(HIDDEN))


def test_copy_shares_nothing_with_the_pristine_tree(project: Project) -> None:
    wc = project.working_copy()
    pristine = project.pristine()
    before = _files(pristine)
    for path in _files(wc.path):
        copy, original = os.lstat(wc.path / path), os.lstat(pristine / path)
        assert copy.st_ino != original.st_ino
        if not stat.S_ISLNK(copy.st_mode):
            assert copy.st_nlink == 1, path
    with open(wc.path / "src/pkg/core.py", "r+b") as handle:  # in place, same inode
        handle.write(b"#")
    (wc.path / "src/pkg/util.py").write_text("changed\n")
    (wc.path / "README.md").unlink()
    os.chmod(wc.path / "src/pkg/__init__.py", 0o755)
    assert _files(pristine) == before


def test_a_full_id_a_short_id_and_a_branch_give_the_same_copy(project: Project) -> None:
    full = project.working_copy()
    short = prepare_working_copy(
        project.repo.root,
        project.commit[:10],
        project.tmp / "short",
        hidden=HIDDEN,
        home=project.home,
    )
    branch = prepare_working_copy(
        project.repo.root, "main", project.tmp / "branch", hidden=HIDDEN, home=project.home
    )
    assert full.base_commit == short.base_commit == branch.base_commit == project.commit
    assert full.baseline_tree == short.baseline_tree == branch.baseline_tree
    assert _files(full.path) == _files(short.path) == _files(branch.path)


def test_an_existing_destination_is_refused(project: Project, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(BugboutError, match="already exists"):
        prepare_working_copy(
            project.repo.root, project.commit, tmp_path / "taken", hidden=[], home=project.home
        )
    (tmp_path / "free.git").mkdir()
    with pytest.raises(BugboutError, match=r"free\.git already exists"):
        prepare_working_copy(
            project.repo.root, project.commit, tmp_path / "free", hidden=[], home=project.home
        )
    assert not (tmp_path / "free").exists()


def test_the_git_dir_may_not_live_inside_the_copy(project: Project, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="outside the working copy"):
        prepare_working_copy(
            project.repo.root,
            project.commit,
            tmp_path / "wc",
            hidden=[],
            scratch=tmp_path / "wc" / ".meta",
            home=project.home,
        )


def test_an_unknown_commit_is_a_clear_error_and_leaves_nothing(
    project: Project, tmp_path: Path
) -> None:
    with pytest.raises(BugboutError, match="Cannot check out nosuchbranch"):
        prepare_working_copy(
            project.repo.root, "nosuchbranch", tmp_path / "wc", hidden=[], home=project.home
        )
    with pytest.raises(UsageError, match="not a commit"):
        prepare_working_copy(
            project.repo.root, "--help", tmp_path / "wc", hidden=[], home=project.home
        )
    assert not (tmp_path / "wc").exists() and not (tmp_path / "wc.git").exists()


def test_a_copy_inside_a_git_repository_is_refused(project: Project) -> None:
    """An agent could walk up to the enclosing `.git` and read the fix from its history."""
    with pytest.raises(UsageError, match="inside the git repository") as caught:
        prepare_working_copy(
            project.repo.root,
            project.commit,
            project.repo.root / "attempts" / "one",
            hidden=[],
            home=project.home,
        )
    assert "BUGBOUT_HOME" in str(caught.value)
    assert not (project.repo.root / "attempts").exists()


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.py", "tests/../../x", "."])
def test_hidden_paths_must_stay_inside(project: Project, tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError, match="relative to the repository root"):
        prepare_working_copy(
            project.repo.root, project.commit, tmp_path / "wc", hidden=[bad], home=project.home
        )


# --- harvesting ----------------------------------------------------------------------------


def test_an_untouched_copy_gives_an_empty_patch(project: Project) -> None:
    wc = project.working_copy()
    patch = harvest(wc, source_dir="src/pkg")
    assert patch == Patch()
    assert patch.is_empty and not patch.has_source_change


def test_every_kind_of_change_is_recorded(project: Project) -> None:
    wc = project.working_copy()
    root = wc.path
    (root / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    (root / "src/pkg/new.py").write_text("NEW = True\n")
    (root / "README.md").unlink()
    os.rename(root / "src/pkg/util.py", root / "src/pkg/helpers.py")
    (root / "src/pkg/logo.png").write_bytes(LOGO[::-1])
    (root / "src/pkg/icon.bin").write_bytes(b"\x00\x01\x02\xff" * 100)
    os.symlink("new.py", root / "src/pkg/link.py")
    os.chmod(root / "src/pkg/__init__.py", 0o755)
    (root / "src/pkg/alias.py").unlink()
    os.symlink("helpers.py", root / "src/pkg/alias.py")
    (root / "tests/test_core.py").write_text("def test_answer():\n    assert 42\n")

    patch = harvest(wc, source_dir="src/pkg")

    seen = {
        change.path: (change.status, change.part, change.binary, change.symlink)
        for change in patch.files
    }
    assert seen == {
        "README.md": ("deleted", "other", False, False),
        "src/pkg/__init__.py": ("modified", "source", False, False),
        "src/pkg/alias.py": ("modified", "source", False, True),
        "src/pkg/core.py": ("modified", "source", False, False),
        "src/pkg/helpers.py": ("renamed", "source", False, False),
        "src/pkg/icon.bin": ("added", "source", True, False),
        "src/pkg/link.py": ("added", "source", False, True),
        "src/pkg/logo.png": ("modified", "source", True, False),
        "src/pkg/new.py": ("added", "source", False, False),
        "tests/test_core.py": ("modified", "tests", False, False),
    }
    by_path = {change.path: change for change in patch.files}
    assert by_path["src/pkg/helpers.py"].old_path == "src/pkg/util.py"
    assert (by_path["src/pkg/core.py"].added_lines, by_path["src/pkg/core.py"].removed_lines) == (
        1,
        1,
    )
    assert patch.source_size == 1 + 1 + 1 + 1 + 1 + 1  # core ±1, new +1, link +1, alias ±1
    assert "old mode 100644\nnew mode 100755" in patch.source
    assert "rename from src/pkg/util.py\nrename to src/pkg/helpers.py" in patch.source
    assert "GIT binary patch" in patch.source
    assert "a/src/pkg/core.py" in patch.source and "tests/" not in patch.source
    assert patch.tests.startswith("diff --git a/tests/test_core.py b/tests/test_core.py")
    assert patch.other.startswith("diff --git a/README.md b/README.md\ndeleted file")
    assert patch.notes == []

    tree = _fresh_base(project, "scored")
    apply_patch(tree, patch.source)
    agent, applied = _files(root), _files(tree)
    for change in patch.files:
        if change.part == "source":
            assert applied.get(change.path) == agent.get(change.path), change.path
    assert "src/pkg/util.py" not in applied
    assert applied["tests/test_core.py"] != agent["tests/test_core.py"]  # tests never applied
    assert "README.md" in applied  # neither is `other`


def test_edits_that_keep_size_are_still_seen(project: Project) -> None:
    """Same size, right after the copy (same second), or a swap that keeps sizes and times."""
    wc = project.working_copy()
    with open(wc.path / "src/pkg/core.py", "r+b") as handle:
        handle.write(b"DEF")
    left, right, spare = (wc.path / f"src/pkg/{n}" for n in ("left.py", "right.py", "x"))
    os.rename(left, spare)
    os.rename(right, left)
    os.rename(spare, right)
    patch = harvest(wc, source_dir="src/pkg")
    assert [c.path for c in patch.files] == [
        "src/pkg/core.py",
        "src/pkg/left.py",
        "src/pkg/right.py",
    ]
    assert "+DEF answer():" in patch.source


def test_an_edit_that_puts_the_old_time_back_is_still_seen(project: Project) -> None:
    """The change time cannot be set back: once the clock has moved on, it gives it away."""
    wc = project.working_copy()
    time.sleep(1.05 - time.time() % 1)  # into the next second: git compares whole seconds
    core = wc.path / "src/pkg/core.py"
    before = os.stat(core)
    core.write_text("def answer():\n    return 24\n")
    os.utime(core, ns=(before.st_atime_ns, before.st_mtime_ns))
    patch = harvest(wc, source_dir="src/pkg")
    assert [c.path for c in patch.files] == ["src/pkg/core.py"]


def test_junk_is_left_out(project: Project) -> None:
    wc = project.working_copy()
    root = wc.path
    junk = [
        "src/pkg/__pycache__/core.cpython-311.pyc",
        "tests/__pycache__/test_core.cpython-311-pytest-8.3.pyc",
        "src/pkg/stale.pyc",
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.11/pkg.json",
        ".ruff_cache/0.8.0/1234",
        ".tox/py311/log.txt",
        ".nox/lint/x",
        ".venv/bin/python",
        "venv/lib/python3.11/site-packages/x.py",
        "myenv/pyvenv.cfg",
        "myenv/lib/python3.11/site-packages/requests/__init__.py",
        "tools/env2/pyvenv.cfg",
        "tools/env2/bin/activate",
        "src/pkg.egg-info/PKG-INFO",
        "web/node_modules/left-pad/index.js",
        "src/pkg/.core.py.swp",
        "src/pkg/.core.py.swo",
        "src/pkg/core.py~",
        ".DS_Store",
        "src/pkg/.DS_Store",
        ".codex/history.jsonl",
        ".claude/settings.local.json",
        ".gemini/tmp/state",
        ".aider.chat.history.md",
        ".aider.tags.cache.v3/cache.db",
        ".coverage",
        ".hypothesis/examples/abc",
    ]
    for path in junk:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"junk\n")
    os.symlink("/nonexistent/owner.1234", root / "src/pkg/.#core.py")
    assert harvest(wc, source_dir="src/pkg") == Patch()

    (root / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    patch = harvest(wc, source_dir="src/pkg")
    assert [change.path for change in patch.files] == ["src/pkg/core.py"]


def test_a_tracked_file_the_gitignore_ignores_is_still_seen(project: Project) -> None:
    wc = project.working_copy()
    (wc.path / "settings.cfg").write_text("level = 2\n")
    (wc.path / "local.cfg").write_text("new and ignored\n")
    (wc.path / "build").mkdir()
    (wc.path / "build/lib.py").write_text("built\n")
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status, c.part) for c in patch.files] == [
        ("settings.cfg", "modified", "other")
    ]
    assert "+level = 2" in patch.other
    assert patch.notes == []  # ignored new files outside the package are not worth a word


def test_a_new_package_file_the_gitignore_ignores_is_named_in_a_note(project: Project) -> None:
    wc = project.working_copy()
    (wc.path / "src/pkg/build").mkdir()
    (wc.path / "src/pkg/build/fast.py").write_text("FAST = 1\n")
    (wc.path / "src/pkg/local.cfg").write_text("x\n")
    (wc.path / "src/pkg/__pycache__").mkdir()
    (wc.path / "src/pkg/__pycache__/x.pyc").write_bytes(b"\0")
    patch = harvest(wc, source_dir="src/pkg")
    assert patch.files == []
    assert patch.notes == [
        "left out src/pkg/build/: the project's .gitignore ignores it",
        "left out src/pkg/local.cfg: the project's .gitignore ignores it",
    ]


def test_the_three_parts(project: Project) -> None:
    wc = project.working_copy()
    writes = {
        "src/pkg/core.py": "def answer():\n    return 42\n",
        "src/pkg/test_inline.py": "def test_inline():\n    pass\n",
        "tests/test_new.py": "def test_new():\n    pass\n",
        "tests/data/input.txt": "data\n",
        "conftest.py": "collect_ignore = []\n",
        "pyproject.toml": "[project]\nname = 'pkg2'\n",
        "docs/index.md": "# docs\n",
    }
    for path, text in writes.items():
        (wc.path / path).parent.mkdir(parents=True, exist_ok=True)
        (wc.path / path).write_text(text)
    patch = harvest(wc, source_dir="src/pkg", tests_dir="tests")
    parts = {change.path: change.part for change in patch.files}
    assert parts == {
        "src/pkg/core.py": "source",
        "src/pkg/test_inline.py": "tests",
        "tests/test_new.py": "tests",
        "tests/data/input.txt": "tests",
        "conftest.py": "other",
        "pyproject.toml": "other",
        "docs/index.md": "other",
    }
    for part in ("source", "tests", "other"):
        text = getattr(patch, part)
        headers = [line for line in text.splitlines() if line.startswith("diff --git ")]
        assert len(headers) == sum(1 for p in parts.values() if p == part)
    tree = _fresh_base(project, "each-part")
    for part in ("source", "tests", "other"):
        apply_patch(tree, getattr(patch, part))  # each part applies on its own
    for path, text in writes.items():
        assert (tree / path).read_text() == text


def test_a_rename_across_parts_is_split_so_each_part_applies_alone(project: Project) -> None:
    wc = project.working_copy()
    os.rename(wc.path / "tests/helpers.py", wc.path / "src/pkg/shared.py")
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status, c.part, c.old_path) for c in patch.files] == [
        ("src/pkg/shared.py", "added", "source", None),
        ("tests/helpers.py", "deleted", "tests", None),
    ]
    tree = _fresh_base(project, "moved")
    apply_patch(tree, patch.source)
    assert (tree / "src/pkg/shared.py").read_text() == "SHARED = 1\n" * 20
    assert (tree / "tests/helpers.py").exists()


def test_text_that_is_not_utf8_is_kept_exactly_as_a_binary_patch(project: Project) -> None:
    wc = project.working_copy()
    latin = "# -*- coding: latin-1 -*-\nNAME = 'café'\n".encode("latin-1")
    (wc.path / "src/pkg/legacy.py").write_bytes(latin)
    (wc.path / "src/pkg/core.py").write_bytes(b"def answer():\n    return '\xe9'\n")
    (wc.path / "src/pkg/clean.py").write_text("CLEAN = 'é'\n")
    patch = harvest(wc, source_dir="src/pkg")
    binary = {change.path: change.binary for change in patch.files}
    assert binary == {"src/pkg/clean.py": False, "src/pkg/core.py": True, "src/pkg/legacy.py": True}
    restored = Patch.model_validate_json(patch.model_dump_json())
    tree = _fresh_base(project, "latin")
    apply_patch(tree, restored.source)
    assert (tree / "src/pkg/legacy.py").read_bytes() == latin
    assert (tree / "src/pkg/core.py").read_bytes() == b"def answer():\n    return '\xe9'\n"
    assert (tree / "src/pkg/clean.py").read_text() == "CLEAN = 'é'\n"


def test_unusual_file_names_round_trip(project: Project) -> None:
    wc = project.working_copy()
    names = ["src/pkg/with space.py", "src/pkg/ünïcode.py", 'src/pkg/qu"ote.py', "src/pkg/a*b?.py"]
    for name in names:
        (wc.path / name).write_text(f"NAME = {name!r}\n")
    patch = harvest(wc, source_dir="src/pkg")
    assert sorted(change.path for change in patch.files) == sorted(names)
    tree = _fresh_base(project, "names")
    apply_patch(tree, patch.source)
    for name in names:
        assert (tree / name).read_text() == f"NAME = {name!r}\n"


def test_content_git_archive_rewrote_is_the_baseline(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    sha = repo.commit(
        "Layout",
        files={
            ".gitattributes": "src/pkg/_version.py export-subst\nnotes.txt export-ignore\n",
            "src/pkg/_version.py": "COMMIT = '$Format:%H$'\n",
            "src/pkg/core.py": "X = 1\n",
            "notes.txt": "internal\n",
        },
    )
    wc = prepare_working_copy(repo.root, sha, tmp_path / "wc", hidden=[], home=tmp_path / "h")
    assert (wc.path / "src/pkg/_version.py").read_text() == f"COMMIT = '{sha}'\n"
    assert not (wc.path / "notes.txt").exists()
    assert harvest(wc, source_dir="src/pkg") == Patch()

    (wc.path / "src/pkg/_version.py").write_text(f"COMMIT = '{sha}'\nEXTRA = 1\n")
    patch = harvest(wc, source_dir="src/pkg")
    tree = tmp_path / "tree"
    shutil.copytree(pristine_tree(repo.root, sha, home=tmp_path / "h"), tree, symlinks=True)
    apply_patch(tree, patch.source)
    assert (tree / "src/pkg/_version.py").read_text() == f"COMMIT = '{sha}'\nEXTRA = 1\n"


def test_line_endings_and_filters_of_the_project_do_not_rewrite_bytes(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    sha = repo.commit(
        "Layout",
        files={
            ".gitattributes": "* text=auto\n*.py filter=secret\n",
            "src/pkg/core.py": "X = 1\n",
        },
    )
    wc = prepare_working_copy(repo.root, sha, tmp_path / "wc", hidden=[], home=tmp_path / "h")
    (wc.path / "src/pkg/core.py").write_bytes(b"X = 2\r\n")
    patch = harvest(wc, source_dir="src/pkg")
    tree = tmp_path / "tree"
    shutil.copytree(pristine_tree(repo.root, sha, home=tmp_path / "h"), tree, symlinks=True)
    apply_patch(tree, patch.source)
    assert (tree / "src/pkg/core.py").read_bytes() == b"X = 2\r\n"


def test_the_users_git_configuration_changes_nothing(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.working_copy()  # extracts the pristine tree before the hostile settings
    home = tmp_path / "userhome"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(
        "[diff]\n\tnoprefix = true\n\tmnemonicPrefix = true\n\trenames = false\n"
        "[core]\n\tautocrlf = true\n\tquotepath = on\n\tfileMode = false\n"
        f"\texcludesFile = {home / 'ignore'}\n"
    )
    (home / "ignore").write_text("*.py\n")
    (home / ".config" / "git" / "ignore").write_text("*.py\n")
    (home / ".config" / "git" / "attributes").write_text("* text eol=crlf\n*.py -diff\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "nowhere-index"))

    wc = project.working_copy()
    (wc.path / "src/pkg/new.py").write_text("NEW = 'ñ'\n")
    os.rename(wc.path / "src/pkg/util.py", wc.path / "src/pkg/tools.py")
    os.chmod(wc.path / "src/pkg/core.py", 0o755)
    patch = harvest(wc, source_dir="src/pkg")
    assert [(c.path, c.status, c.binary) for c in patch.files] == [
        ("src/pkg/core.py", "modified", False),
        ("src/pkg/new.py", "added", False),
        ("src/pkg/tools.py", "renamed", False),
    ]
    assert "diff --git a/src/pkg/new.py b/src/pkg/new.py" in patch.source
    assert "+NEW = 'ñ'\n" in patch.source and "\r" not in patch.source
    tree = _fresh_base(project, "configured")
    apply_patch(tree, patch.source)
    assert (tree / "src/pkg/new.py").read_bytes() == "NEW = 'ñ'\n".encode()
    assert os.stat(tree / "src/pkg/core.py").st_mode & stat.S_IXUSR


def test_harvest_can_run_again_after_more_work(project: Project) -> None:
    wc = project.working_copy()
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    first = harvest(wc, source_dir="src/pkg")
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 41\n")
    second = harvest(wc, source_dir="src/pkg")
    assert len(first.files) == 1 and second == Patch()


# --- applying ------------------------------------------------------------------------------


def test_a_patch_that_does_not_apply_names_the_files_and_changes_nothing(
    project: Project,
) -> None:
    wc = project.working_copy()
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    (wc.path / "src/pkg/fresh.py").write_text("FRESH = 1\n")
    (wc.path / "src/pkg/logo.png").write_bytes(b"\x89PNG" + bytes(300))
    patch = harvest(wc, source_dir="src/pkg")

    tree = _fresh_base(project, "conflict")
    (tree / "src/pkg/core.py").write_text("def answer():\n    return 0  # elsewhere\n")
    (tree / "src/pkg/fresh.py").write_text("already here\n")
    (tree / "src/pkg/logo.png").write_bytes(b"other bytes")
    before = _files(tree)
    with pytest.raises(BugboutError) as caught:
        apply_patch(tree, patch.source)
    message = str(caught.value)
    assert "src/pkg/core.py" in message
    assert "src/pkg/fresh.py" in message
    assert "src/pkg/logo.png" in message
    assert _files(tree) == before


def test_applying_inside_another_repository_still_applies_every_file(
    project: Project, tmp_path: Path
) -> None:
    wc = project.working_copy()
    (wc.path / "src/pkg/core.py").write_text("def answer():\n    return 42\n")
    (wc.path / "src/pkg/extra.py").write_text("E = 1\n")
    patch = harvest(wc, source_dir="src/pkg")
    outer = GitRepo(tmp_path / "outer")
    outer.commit("Outer", files={"README": "outer\n"})
    tree = outer.root / "scratch" / "tree"
    shutil.copytree(_fresh_base(project, "nested"), tree, symlinks=True)
    apply_patch(tree, patch.source)
    assert (tree / "src/pkg/core.py").read_text() == "def answer():\n    return 42\n"
    assert (tree / "src/pkg/extra.py").read_text() == "E = 1\n"


def test_empty_and_malformed_patches(project: Project, tmp_path: Path) -> None:
    tree = _fresh_base(project, "plain")
    apply_patch(tree, "")
    with pytest.raises(BugboutError, match="malformed"):
        apply_patch(tree, "diff --git a/x b/x\n@@ nonsense\n")
    with pytest.raises(BugboutError, match="not a directory"):
        apply_patch(tmp_path / "missing", "diff --git a/x b/x\n")
