"""The git plumbing: opening, cloning and fetching repositories, branches, blobs."""

from __future__ import annotations

import logging
import shutil
from contextlib import closing
from pathlib import Path

import pytest
from gitrepo import GitRepo

from bugbout_tui.core.config import load_config
from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.core.git_urls import is_git_url
from bugbout_tui.infra.git import (
    EmptyRepositoryError,
    GitError,
    clone_dir,
    default_branch,
    ensure_full_history,
    head_commit,
    hermetic_env,
    open_repository,
    read_file,
    read_files,
    run_git,
    run_hermetic_git,
    stream_git,
)


@pytest.fixture
def origin(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "origin")
    repo.commit("First", files={"pkg/a.py": "A = 1\n"})
    return repo


def test_missing_git_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissingError, match="git is not installed") as raised:
        run_git(tmp_path, "--version")
    assert "apt-get install git" in str(raised.value)


def test_git_failure_carries_gits_message(origin: GitRepo) -> None:
    with pytest.raises(GitError, match="git cat-file failed") as raised:
        run_git(origin.root, "cat-file", "-p", "nonexistent-object")
    assert "Not a valid object name" in raised.value.stderr


def test_an_outer_git_dir_does_not_redirect_commands(
    origin: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = GitRepo(tmp_path / "other")
    other.commit("Elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other.root / ".git"))
    assert head_commit(origin.root, "HEAD") == origin.head()


@pytest.mark.parametrize(
    "spec",
    [
        "https://github.com/psf/requests.git",
        "http://git.example.com/x",
        "ssh://git@example.com/o/r.git",
        "git+ssh://git@example.com/o/r.git",
        "git+ssh://h/x.git",
        "ssh+git://h/x.git",
        "git://example.com/o/r",
        "git@github.com:psf/requests.git",
        "file:///srv/git/project.git",
        "  https://github.com/psf/requests  ",
    ],
)
def test_urls(spec: str) -> None:
    assert is_git_url(spec)


@pytest.mark.parametrize(
    "spec", [".", "../project", "/srv/project", "project:v2", "C:/x", "https://", "no-such-dir"]
)
def test_paths(spec: str) -> None:
    assert not is_git_url(spec)


def test_the_config_and_git_agree_on_what_is_a_url(tmp_path: Path) -> None:
    """The config skips checking a URL on disk exactly when git would clone it."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    for spec in ("git+ssh://h/x.git", "git@h:x.git", "missing", "https://"):
        (tmp_path / "bugbout.toml").write_text(
            f'[project]\nsource = "src/pkg"\nrepository = "{spec}"\n'
        )
        try:
            url = load_config(tmp_path).project.repository_is_url
        except UsageError as error:
            assert f"no directory at {tmp_path / spec}" in str(error)
            url = False
        assert url == is_git_url(spec), spec
        if not url:
            with pytest.raises(UsageError, match="does not exist"):
                open_repository(spec, tmp_path)


def test_path_is_relative_to_the_config(origin: GitRepo, tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    assert open_repository("../origin", config_dir) == origin.root.resolve()


def test_subdirectory_opens_the_repository_root(origin: GitRepo) -> None:
    assert open_repository(".", origin.root / "pkg") == origin.root.resolve()


def test_bare_repository(origin: GitRepo, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    origin.git("clone", "--quiet", "--bare", str(origin.root), str(bare))
    assert open_repository(str(bare), tmp_path) == bare.resolve()
    assert head_commit(bare, default_branch(bare)) == origin.head()


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(UsageError, match="is not a git repository"):
        open_repository("plain", tmp_path)


def test_missing_repository(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        open_repository("nowhere", tmp_path)


def test_file_is_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "bugbout.toml").write_text("")
    with pytest.raises(UsageError, match="is not a directory"):
        open_repository("bugbout.toml", tmp_path)


def test_url_is_cloned_once_then_fetched(origin: GitRepo, home: Path, tmp_path: Path) -> None:
    clone = open_repository(origin.url, tmp_path)
    assert clone == clone_dir(origin.url)
    assert clone.parent == home / "repos"
    assert clone.name.startswith("origin-")
    assert not (clone / "pkg").exists()  # history only, nothing checked out
    assert run_git(clone, "rev-parse", "--is-shallow-repository").strip() == b"false"
    ref = default_branch(clone)
    assert ref == "refs/remotes/origin/main"
    assert head_commit(clone, ref) == origin.head()

    newer = origin.commit("Second", files={"pkg/a.py": "A = 2\n"})
    assert open_repository(origin.url, tmp_path) == clone
    assert head_commit(clone, default_branch(clone)) == newer


def test_clone_name_ignores_a_trailing_dot_git() -> None:
    assert clone_dir("https://h/o/proj.git") == clone_dir("https://h/o/proj/")
    assert clone_dir("https://h/o/proj").name.startswith("proj-")
    assert clone_dir("https://h/a/proj") != clone_dir("https://h/b/proj")


def test_unreachable_url(home: Path, tmp_path: Path) -> None:
    url = (tmp_path / "missing").as_uri()
    with pytest.raises(GitError, match="Could not clone") as raised:
        open_repository(url, tmp_path)
    assert "never asks for a password" in str(raised.value)
    assert not clone_dir(url).exists()
    assert list((home / "repos").iterdir()) == []


def test_offline_fetch_keeps_the_clone(
    origin: GitRepo, home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone = open_repository(origin.url, tmp_path)
    shutil.rmtree(origin.root)
    with caplog.at_level(logging.WARNING, logger="bugbout_tui.infra.git"):
        assert open_repository(origin.url, tmp_path) == clone
    assert "Could not update the clone" in caplog.text


def test_default_branch_of_a_clone_follows_the_remote(tmp_path: Path, home: Path) -> None:
    upstream = GitRepo(tmp_path / "upstream", branch="trunk")
    upstream.commit("First")
    clone = open_repository(upstream.url, tmp_path)
    assert default_branch(clone) == "refs/remotes/origin/trunk"


def test_default_branch_is_the_checked_out_branch(origin: GitRepo) -> None:
    origin.git("switch", "--quiet", "--create", "feature")
    assert default_branch(origin.root) == "refs/heads/feature"


def test_detached_head_falls_back_to_main_then_master(origin: GitRepo) -> None:
    origin.git("switch", "--quiet", "--detach", "HEAD")
    assert default_branch(origin.root) == "refs/heads/main"
    origin.git("branch", "--quiet", "--move", "main", "master")
    assert default_branch(origin.root) == "refs/heads/master"
    origin.git("branch", "--quiet", "--move", "master", "other")
    with pytest.raises(BugboutError, match="HEAD is detached"):
        default_branch(origin.root)


def test_empty_repository(git_repo: GitRepo) -> None:
    with pytest.raises(EmptyRepositoryError, match="no commits yet"):
        default_branch(git_repo.root)
    with pytest.raises(EmptyRepositoryError, match="no commits yet"):
        head_commit(git_repo.root, "refs/heads/main")


def test_unknown_ref(origin: GitRepo) -> None:
    with pytest.raises(BugboutError, match="'refs/heads/nope' does not name a commit"):
        head_commit(origin.root, "refs/heads/nope")


def test_shallow_clone(origin: GitRepo, tmp_path: Path) -> None:
    origin.commit("Second")
    ensure_full_history(origin.root)
    shallow = origin.clone_to(tmp_path / "shallow", "--depth", "1")
    with pytest.raises(BugboutError, match="shallow clone") as raised:
        ensure_full_history(shallow.root)
    assert "fetch --unshallow" in str(raised.value)


def test_read_files_at_a_commit(origin: GitRepo) -> None:
    first = origin.head()
    blob = bytes(range(256))
    origin.commit(
        "Second",
        files={"pkg/a.py": "A = 2\n", "pkg/with space.bin": blob, "pkg/empty.py": ""},
    )
    second = origin.head()
    assert read_file(origin.root, first, "pkg/a.py") == b"A = 1\n"
    assert read_files(origin.root, second, ["pkg/a.py", "pkg/with space.bin", "pkg/empty.py"]) == {
        "pkg/a.py": b"A = 2\n",
        "pkg/with space.bin": blob,
        "pkg/empty.py": b"",
    }
    assert read_files(origin.root, first, ["pkg/with space.bin", "pkg", "nope.py"]) == {
        "pkg/with space.bin": None,
        "pkg": None,
        "nope.py": None,
    }
    assert read_files(origin.root, first, []) == {}


def test_stream_stops_cleanly_when_closed_early(origin: GitRepo) -> None:
    for n in range(20):
        origin.commit(f"Commit {n}")
    with closing(stream_git(origin.root, "log", "--format=%H")) as lines:
        first = next(lines)
    assert first.strip().decode() == origin.head()


def test_stream_raises_after_a_failure(origin: GitRepo) -> None:
    with pytest.raises(GitError, match="git log failed"):
        list(stream_git(origin.root, "log", "no-such-ref"))


def test_clone_failure_hides_a_token_in_the_url(home: Path, tmp_path: Path) -> None:
    url = "https://user:s3cr3t-token@127.0.0.1:9/project.git"  # nothing listens on port 9
    with pytest.raises(GitError, match="Could not clone") as raised:
        open_repository(url, tmp_path)
    assert "s3cr3t-token" not in str(raised.value)
    assert "https://***@127.0.0.1:9/project.git" in str(raised.value)


def test_the_users_repository_is_cloned_with_the_users_settings(
    origin: GitRepo, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials, proxies and URL rewrites live in the user's git configuration."""
    config = tmp_path / "user.gitconfig"
    config.write_text(
        f'[url "{origin.root.parent}/"]\n\tinsteadOf = https://git.example.invalid/\n'
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    clone = open_repository("https://git.example.invalid/origin", tmp_path)
    assert head_commit(clone, default_branch(clone)) == origin.head()


def test_git_on_a_scratch_tree_ignores_every_setting_of_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (tmp_path / "global.gitconfig").write_text(
        f"[user]\n\tname = hostile-global\n[core]\n\thooksPath = {hooks}\n"
        "[alias]\n\tsneak = !touch sneaked\n"
    )
    (tmp_path / "system.gitconfig").write_text("[hostile]\n\tsystem = yes\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global.gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(tmp_path / "system.gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "hostile.count")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "yes")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'hostile.parameters'='yes'")
    scratch = tmp_path / "scratch"
    run_hermetic_git("init", "--quiet", str(scratch), env=hermetic_env(), cwd=tmp_path)

    hermetic = run_hermetic_git("config", "--list", env=hermetic_env(scratch / ".git"), cwd=scratch)
    assert b"hostile" not in hermetic
    assert b"core.autocrlf=false" in hermetic  # the fixed settings are what it gets instead
    with pytest.raises(GitError):
        run_hermetic_git("sneak", env=hermetic_env(scratch / ".git"), cwd=scratch)
    assert not (scratch / "sneaked").exists()

    users = run_git(scratch, "config", "--list").decode()
    for setting in ("hostile-global", "hostile.system", "hostile.count", "hostile.parameters"):
        assert setting in users
