"""Git plumbing: every call to git goes through here, in one of two regimes.

**The user's repository** (`run_git`, `stream_git`): opening, cloning, fetching and
reading it run with the user's own git settings, because those are what make git work
for them: credential helpers, proxies, `url.<base>.insteadOf` rewrites, SSH options,
`safe.directory`. Only what would make a call misbehave is fixed: English messages
(`LC_ALL=C`) so that failures can be recognised, no pager, and no prompt
(`GIT_TERMINAL_PROMPT=0`, SSH in batch mode), so a clone that needs a password fails with
a message instead of hanging a bout. Variables that would point git at another
repository (`GIT_DIR`, set when bugbout runs inside a git hook) are dropped, so
`-C <repo>` always means what it says.

**Scratch trees** (`run_hermetic_git`): the working copies, their git directories and
the trees patches are applied to are bugbout's own, and nobody's settings may change
what an agent is handed or what a patch holds. git runs there hermetic: no global or
system configuration or attributes, no inherited `GIT_*` variable, literal pathspecs, no
optional locks, no replace objects, and fixed settings for quoting, line endings, modes,
links and stat checks.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Generator, Iterable, Mapping, Sequence
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.core.git_urls import is_git_url
from bugbout_tui.core.paths import bugbout_home

log = logging.getLogger(__name__)

_INSTALL_HINT = (
    "Install git with your package manager, e.g. `apt-get install git` or `brew install git`."
)

_REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)

_HERMETIC_SETTINGS = (
    "core.quotepath=off",
    "core.autocrlf=false",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.trustctime=true",
    "core.checkStat=default",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.safecrlf=false",
    f"core.excludesFile={os.devnull}",
    f"core.attributesFile={os.devnull}",
    "gc.auto=0",
)

_OBJECT_HEADER = re.compile(rb"^[0-9a-f]{40,64} ([a-z]+) ([0-9]+)$")
_URL_CREDENTIALS = re.compile(r"(https?://)[^/@\s]+@")


class GitError(BugboutError):
    """git itself failed; the message carries git's own explanation."""

    def __init__(self, message: str, *, stderr: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.stderr = stderr


class EmptyRepositoryError(BugboutError):
    """The repository has no commit yet, so there is no history to read.

    A separate type so that a caller who prefers to show "nothing mined" can catch it.
    """


def git_env(*, user_config: bool = True) -> dict[str, str]:
    """The environment of git on the user's repository (see the module docstring for why).

    Without `user_config`, the global and system configuration are left out too: an
    export of the repository's trees (`git archive`) must give every agent and test the
    same bytes, whatever `core.autocrlf` or filters the user set.
    """
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_VARIABLES}
    env.update(LC_ALL="C", LANGUAGE="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    if not user_config:
        env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def hermetic_env(
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index: Path | None = None,
    *,
    objects: Path | None = None,
) -> dict[str, str]:
    """The environment of git on a scratch tree, which no user setting can reach: every
    inherited `GIT_*` variable dropped, and the repository given here, if any."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        LC_ALL="C",
        LANGUAGE="C",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    if objects is not None:
        env["GIT_OBJECT_DIRECTORY"] = str(objects)
    return env


def hermetic_argv(*args: str) -> list[str]:
    """The command line of `git <args>` on a scratch tree, with the fixed settings."""
    argv = ["git"]
    for setting in _HERMETIC_SETTINGS:
        argv += ["-c", setting]
    return [*argv, *args]


def git_argv(repo: Path | None, *args: str, config: Mapping[str, str] | None = None) -> list[str]:
    """The full command line for `git <args>` in `repo`, with one-off `-c` settings."""
    argv = ["git", "--no-pager"]
    if repo is not None:
        argv += ["-C", str(repo)]
    for key, value in (config or {}).items():
        argv += ["-c", f"{key}={value}"]
    argv += args
    return argv


def _describe(argv: Sequence[str]) -> str:
    words = [a for a in argv[1:] if a != "--no-pager"]
    while words and words[0] in ("-C", "-c"):
        words = words[2:]
    return "git " + (words[0] if words else "")


def _failure(argv: Sequence[str], stderr: bytes, repo: Path | None) -> GitError:
    text = stderr.decode("utf-8", "replace").strip()
    where = f" in {repo}" if repo is not None else ""
    hint = None
    if "diff-merges" in text:
        hint = "bugbout needs git 2.31 or newer."
    return GitError(
        f"{_describe(argv)} failed{where}: {text or 'no message'}", stderr=text, hint=hint
    )


def run_git(
    repo: Path | None,
    *args: str,
    config: Mapping[str, str] | None = None,
    input: bytes | None = None,
) -> bytes:
    """Run git on the user's repository, with the user's settings, to completion and
    return its standard output; failures raise `GitError`."""
    argv = git_argv(repo, *args, config=config)
    return _run(argv, git_env(), None, input, repo)


def run_hermetic_git(
    *args: str, env: Mapping[str, str], cwd: Path, input: bytes | None = None
) -> bytes:
    """Run git on a scratch tree, hermetic (`env` from `hermetic_env`), to completion
    and return its standard output; failures raise `GitError` carrying git's own words."""
    return _run(hermetic_argv(*args), env, cwd, input, None)


def _run(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path | None,
    input: bytes | None,
    repo: Path | None,
) -> bytes:
    try:
        proc = subprocess.run(
            argv,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            env=env,
            cwd=cwd,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ToolMissingError("git is not installed.", hint=_INSTALL_HINT) from exc
    if proc.returncode != 0:
        raise _failure(argv, proc.stderr, repo)
    return proc.stdout


def _git_text(repo: Path | None, *args: str) -> str:
    return run_git(repo, *args).decode("utf-8", "replace").strip()


def _git_ok(repo: Path, *args: str) -> str | None:
    """Output of a query whose failure only means "no" (an absent ref, say)."""
    try:
        return _git_text(repo, *args)
    except GitError:
        return None


def stream_git(
    repo: Path, *args: str, config: Mapping[str, str] | None = None
) -> Generator[bytes, None, None]:
    """Yield git's output line by line while it runs, never holding all of it.

    A consumer that stops early must `close()` the generator: the process is then
    killed, and nothing is raised. A process that ends on its own with an error raises
    `GitError` once its output is exhausted.
    """
    argv = git_argv(repo, *args, config=config)
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=git_env(),
                bufsize=1 << 16,
            )
        except FileNotFoundError as exc:
            raise ToolMissingError("git is not installed.", hint=_INSTALL_HINT) from exc
        assert proc.stdout is not None
        finished = False
        try:
            yield from proc.stdout
            finished = True
        finally:
            if not finished:
                proc.kill()
            proc.stdout.close()
            returncode = proc.wait()
        if returncode != 0:
            errors.seek(0)
            raise _failure(argv, errors.read(), repo)


def open_repository(spec: str, config_dir: Path) -> Path:
    """The local repository to read: the path given, or a cached clone of the URL given.

    A URL is cloned once into `BUGBOUT_HOME/repos` and fetched on later runs. The clone
    is full: mining reads every blob of the test files along the history, and a partial
    clone would fetch them one by one over the network.
    """
    spec = spec.strip()
    if is_git_url(spec):
        return _clone_or_fetch(spec)
    path = (config_dir / Path(spec).expanduser()).resolve()
    hint = (
        "Set project.repository in bugbout.toml to a git checkout (a path relative to "
        "bugbout.toml) or a git URL to clone."
    )
    if not path.exists():
        raise UsageError(f"The repository {spec!r} does not exist (looked at {path}).", hint=hint)
    if not path.is_dir():
        raise UsageError(f"The repository {spec!r} is not a directory ({path}).", hint=hint)
    try:
        bare = _git_text(path, "rev-parse", "--is-bare-repository")
    except GitError as exc:
        if "not a git repository" in exc.stderr:
            raise UsageError(f"{path} is not a git repository.", hint=hint) from exc
        raise
    if bare == "true":
        return Path(_git_text(path, "rev-parse", "--absolute-git-dir"))
    return Path(_git_text(path, "rev-parse", "--show-toplevel"))


def clone_dir(url: str) -> Path:
    """Where the clone of `url` lives: readable, and unique per URL."""
    normalized = url.strip().rstrip("/").removesuffix(".git")
    name = re.split(r"[/:]", normalized)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip("._") or "repository"
    digest = hashlib.sha256(normalized.encode()).hexdigest()[:10]
    return bugbout_home() / "repos" / f"{name}-{digest}"


def redacted(text: str) -> str:
    """`text` with any password or token in a URL's user part hidden."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


def _clone_or_fetch(url: str) -> Path:
    dest = clone_dir(url)
    git_dir = _git_ok(dest, "rev-parse", "--absolute-git-dir") if dest.is_dir() else None
    if git_dir is not None and Path(git_dir) == (dest / ".git").resolve():
        try:
            run_git(dest, "fetch", "--quiet", "--prune", "origin")
            run_git(dest, "remote", "set-head", "origin", "--auto")
        except GitError as exc:
            log.warning(
                "Could not update the clone of %s, using it as it is: %s",
                redacted(url),
                redacted(exc.stderr),
            )
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    try:
        try:
            run_git(None, "clone", "--quiet", "--no-checkout", "--", url, str(staging))
        except GitError as exc:
            stderr = redacted(exc.stderr)
            raise GitError(
                f"Could not clone {redacted(url)}: {stderr}",
                stderr=stderr,
                hint="Check the URL and that you can read it. bugbout never asks for a "
                "password: use a credential helper, a token in the URL, or an SSH key.",
            ) from exc
        try:
            staging.rename(dest)
        except OSError:
            if not dest.is_dir():  # not a concurrent run's finished clone: a real failure
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return dest


def repository_paths(repo: Path) -> list[Path]:
    """Everything of the repository that holds its code or its history: the work tree,
    the git directory and, for a linked worktree, the common git directory and the main
    work tree beside it (checked out at any commit, the fix's included)."""
    lines = _git_text(repo, "rev-parse", "--absolute-git-dir", "--git-common-dir").splitlines()
    found = [repo.resolve(), *((repo / line).resolve() for line in lines if line)]
    common = found[-1]
    if common.name == ".git" and common.parent != repo.resolve():
        found.append(common.parent)
    return list(dict.fromkeys(found))


def is_directory(repo: Path, commit: str, path: str) -> bool:
    """Whether `path` is a directory in `commit`'s tree."""
    return _git_ok(repo, "cat-file", "-t", f"{commit}:{path}") == "tree"


def is_bare(repo: Path) -> bool:
    """Whether `repo` is a bare repository: history and trees, no checked-out files."""
    return _git_text(repo, "rev-parse", "--is-bare-repository") == "true"


def has_commits(repo: Path) -> bool:
    """Whether any ref in the repository points at a commit."""
    return bool(_git_text(repo, "rev-list", "-n", "1", "--all"))


def _empty(repo: Path) -> EmptyRepositoryError:
    return EmptyRepositoryError(
        f"The repository {repo} has no commits yet, so there is no history to mine.",
        hint="Commit your work first, or point project.repository at another repository.",
    )


def _commit_of(repo: Path, ref: str) -> str | None:
    return _git_ok(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
    )


def default_branch(repo: Path) -> str:
    """The full name of the branch whose history is mined, found rather than assumed.

    A clone's `origin/HEAD` names the upstream default branch and follows every fetch
    (a clone's local branch does not). Without it, the branch the user has checked out
    is the one they work on; a detached HEAD falls back to `main`, then `master`.
    """
    candidates = [_git_ok(repo, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")]
    candidates.append(_git_ok(repo, "symbolic-ref", "--quiet", "HEAD"))
    candidates += ["refs/heads/main", "refs/heads/master"]
    for ref in candidates:
        if ref and _commit_of(repo, ref) is not None:
            return ref
    if not has_commits(repo):
        raise _empty(repo)
    raise BugboutError(
        f"Cannot tell which branch of {repo} to mine: HEAD is detached and there is no "
        "main or master branch.",
        hint="Check out the branch whose history should be mined.",
    )


def head_commit(repo: Path, ref: str) -> str:
    """The full sha `ref` points at now."""
    sha = _commit_of(repo, ref)
    if sha is not None:
        return sha
    if not has_commits(repo):
        raise _empty(repo)
    raise BugboutError(f"{ref!r} does not name a commit in {repo}.")


def ensure_full_history(repo: Path) -> None:
    """Refuse a shallow clone: mining on a cut history would silently miss most fixes."""
    if _git_text(repo, "rev-parse", "--is-shallow-repository") == "true":
        raise BugboutError(
            f"{repo} is a shallow clone: mining needs the whole history of the branch.",
            hint=f"Fetch it with `git -C {repo} fetch --unshallow`, or clone without --depth.",
        )


def read_objects(repo: Path, names: Iterable[str]) -> dict[str, bytes | None]:
    """The content of each blob named (an object id, or `<commit>:<path>`), None where
    there is no such blob.

    One `git cat-file --batch` answers every name, so reading the dozen files of a task,
    or every version of the packaging files along a history, costs one process.
    """
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    if any("\n" in name for name in wanted):
        raise BugboutError("A path with a newline in its name cannot be read from git history.")
    request = "".join(f"{name}\n" for name in wanted).encode()
    out = run_git(repo, "cat-file", "--batch", input=request)
    found: dict[str, bytes | None] = {}
    pos = 0
    for name in wanted:
        end = out.index(b"\n", pos)
        header = _OBJECT_HEADER.match(out[pos:end])
        pos = end + 1
        if header is None:  # "<name> missing", or ambiguous
            found[name] = None
            continue
        size = int(header[2])
        found[name] = out[pos : pos + size] if header[1] == b"blob" else None
        pos += size + 1
    return found


def read_files(repo: Path, commit: str, paths: Iterable[str]) -> dict[str, bytes | None]:
    """The content of each path at `commit`, None where the commit has no such file."""
    wanted = list(dict.fromkeys(paths))
    found = read_objects(repo, [f"{commit}:{path}" for path in wanted])
    return {path: found[f"{commit}:{path}"] for path in wanted}


def read_file(repo: Path, commit: str, path: str) -> bytes | None:
    """The content of one file at `commit`, None when the commit has no such file."""
    return read_files(repo, commit, [path])[path]
