"""Git submodules in bugbout's trees: the files of each one at the commit its project
records, from a cache of the submodules' repositories.

`git archive` leaves a submodule out (an empty directory where it belongs), yet tests
often read it: a conformance suite or shared fixtures kept in another repository. Each
tree therefore gets every submodule its commit records (the gitlinks of its tree, their
URLs from that commit's `.gitmodules`), nested ones too, as plain files: no `.git`, no
history, only the content of that one commit.

The repositories live in a bare cache under `BUGBOUT_HOME/submodules/`, one per URL,
fetched when a commit is missing and never otherwise, under a lock so concurrent bouts
take turns. The fetch runs hermetically, because the URL comes from the repository, which
is untrusted: of the user's git configuration only the `url.<base>.insteadOf` rewrites
are read (a user behind a mirror needs them), a short list of transports is allowed, and
a fetch that cannot finish is ended after `FETCH_TIMEOUT` seconds with no prompt. A
submodule that cannot be had is recorded, with why, and the tree is made without it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from bugbout_tui.infra.git import (
    GitError,
    git_env,
    hermetic_argv,
    hermetic_env,
    redacted,
    run_hermetic_git,
)
from bugbout_tui.infra.proc import run_bounded

log = logging.getLogger(__name__)

FETCH_TIMEOUT = 300.0
"""Seconds a fetch of one submodule's repository may take before it is ended."""
_SLOW_BYTES_PER_SECOND = 1000
_SLOW_SECONDS = 60
"""An HTTP transfer slower than this many bytes a second for this long is given up."""
_FORGET_FAILURE = 600.0
"""Seconds a failed fetch is remembered in one process, so that a hundred trees needing an
unreachable repository cost one attempt, while a long session still tries again."""
_MAX_DEPTH = 8
"""Submodules of submodules are followed this deep."""
_ALLOWED_PROTOCOLS = ("https", "http", "ssh", "git", "file")
"""Transports a fetch may use; `ext::` (which runs a command) and any other are refused."""
_GITLINK = re.compile(rb"160000 commit ([0-9a-f]{40,64})\t(.+)", re.DOTALL)
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class MissingSubmodule(BaseModel):
    """A submodule a tree should hold and does not."""

    path: str
    """Where it belongs in the tree, from the tree's root."""
    url: str
    """The URL its `.gitmodules` gives (a relative one resolved), before any rewrite."""
    commit: str
    problem: str
    """Why it is missing, in words that lead to a fix."""
    retry: bool = True
    """Whether fetching again could help (not for a URL that is absent or refused)."""


class MissingSubmodules(BaseModel):
    """What a tree lacks, kept beside it."""

    missing: list[MissingSubmodule]


@dataclass(frozen=True)
class _Link:
    path: str
    commit: str


@dataclass
class _Memory:
    """Fetches tried in this process: by cache directory, when refs were fetched or
    failed, and by (cache directory, commit) when a commit alone was asked for."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    refs: dict[str, tuple[float, str | None]] = field(default_factory=dict)
    commits: dict[tuple[str, str], float] = field(default_factory=dict)

    def refs_result(self, key: str) -> tuple[bool, str | None]:
        """Whether refs were fetched lately, and the failure if they could not be."""
        with self.lock:
            entry = self.refs.get(key)
        if entry is None or time.monotonic() - entry[0] > _FORGET_FAILURE:
            return False, None
        return True, entry[1]

    def remember_refs(self, key: str, problem: str | None) -> None:
        with self.lock:
            self.refs[key] = (time.monotonic(), problem)

    def commit_tried(self, key: str, commit: str) -> bool:
        with self.lock:
            when = self.commits.get((key, commit))
        return when is not None and time.monotonic() - when <= _FORGET_FAILURE

    def remember_commit(self, key: str, commit: str) -> None:
        with self.lock:
            self.commits[(key, commit)] = time.monotonic()


_MEMORY = _Memory()


def worth_retrying(missing: Sequence[MissingSubmodule], home: Path, repo: Path) -> bool:
    """Whether a tree that lacks `missing` could be made whole now: some submodule was
    not fetched by this process lately, or one whose URL was refused is now rewritten by
    the user's git configuration (as `bugbout doctor` advises)."""
    cache = SubmoduleCache(home)
    refused = [gap.url for gap in missing if not gap.retry and gap.url]
    if refused:
        rules = insteadof_rules(repo)
        if any(rewrite_url(url, rules) != url for url in refused):
            return True
    for gap in missing:
        if not gap.retry:
            continue
        key = str(cache.git_dir(gap.url))
        fetched, problem = _MEMORY.refs_result(key)
        if not fetched or (problem is None and not _MEMORY.commit_tried(key, gap.commit)):
            return True
    return False


def fill_submodules(repo: Path, commit: str, tree: Path, *, home: Path) -> list[MissingSubmodule]:
    """Put into `tree` (the `git archive` of `commit` from `repo`) every submodule the
    commit records, recursively; return those that could not be had."""
    links = _gitlinks(repo, commit)
    if not links:
        return []
    filler = _Filler(SubmoduleCache(home), repo)
    filler.fill(repo, commit, links, tree, prefix="", parent_url=None, depth=0)
    return filler.missing


def recorded_submodules(repo: Path, commit: str) -> list[str]:
    """The paths of the submodules `commit` records itself (not those of a submodule)."""
    return [link.path for link in _gitlinks(repo, commit)]


class _Filler:
    def __init__(self, cache: SubmoduleCache, repo: Path) -> None:
        self.cache = cache
        self.repo = repo
        self.missing: list[MissingSubmodule] = []
        self._rewrites: list[tuple[str, str]] | None = None

    def rewrites(self) -> list[tuple[str, str]]:
        if self._rewrites is None:
            self._rewrites = insteadof_rules(self.repo)
        return self._rewrites

    def fill(
        self,
        source: Path,
        commit: str,
        links: Sequence[_Link],
        tree: Path,
        *,
        prefix: str,
        parent_url: str | None,
        depth: int,
    ) -> None:
        declared = _declared_urls(source, commit)
        wanted: dict[str, list[_Link]] = {}
        resolved: dict[str, str] = {}
        for link in links:
            where = f"{prefix}{link.path}"
            url = declared.get(link.path)
            if url is None:
                self._gap(where, "", link.commit, "its .gitmodules names no URL for it", False)
                continue
            try:
                absolute = self._resolve(url, parent_url)
            except ValueError as exc:
                self._gap(where, url, link.commit, str(exc), False)
                continue
            if depth >= _MAX_DEPTH:
                self._gap(where, absolute, link.commit, "submodules nest too deep", False)
                continue
            resolved[link.path] = absolute
            wanted.setdefault(absolute, []).append(link)
        for url, group in wanted.items():
            refused = _refused(url, declared_relative=_is_relative(declared[group[0].path]))
            if refused and rewrite_url(url, self.rewrites()) == url:
                for link in group:
                    self._gap(f"{prefix}{link.path}", url, link.commit, refused, False)
                continue
            problems = self.cache.ensure(url, [link.commit for link in group], self.rewrites)
            for link in group:
                where = f"{prefix}{link.path}"
                if link.commit in problems:
                    self._gap(where, url, link.commit, problems[link.commit], True)
                    continue
                git_dir = self.cache.git_dir(url)
                try:
                    _extract(git_dir, link.commit, tree, link.path)
                except (GitError, OSError, tarfile.TarError, ValueError) as exc:
                    self._gap(where, url, link.commit, f"it could not be extracted: {exc}", False)
                    continue
                nested = _gitlinks(git_dir, link.commit)
                if nested:
                    self.fill(
                        git_dir,
                        link.commit,
                        nested,
                        tree / link.path,
                        prefix=f"{where}/",
                        parent_url=url,
                        depth=depth + 1,
                    )

    def _resolve(self, url: str, parent_url: str | None) -> str:
        if not _is_relative(url):
            return url
        base = parent_url if parent_url is not None else origin_url(self.repo)
        return resolve_relative_url(url, base)

    def _gap(self, path: str, url: str, commit: str, problem: str, retry: bool) -> None:
        self.missing.append(
            MissingSubmodule(path=path, url=url, commit=commit, problem=problem, retry=retry)
        )


# --- reading a commit ----------------------------------------------------------------------


def _gitlinks(source: Path, commit: str) -> list[_Link]:
    """The submodules `commit`'s tree records: one `git ls-tree`."""
    out = run_hermetic_git("ls-tree", "-r", "-z", commit, env=hermetic_env(), cwd=source)
    links = []
    for entry in out.split(b"\0"):
        found = _GITLINK.fullmatch(entry)
        if found is not None:
            links.append(_Link(path=os.fsdecode(found[2]), commit=found[1].decode()))
    return links


def _declared_urls(source: Path, commit: str) -> dict[str, str]:
    """Path → URL from `commit`'s `.gitmodules`, read by git's own parser (no includes)."""
    try:
        out = run_hermetic_git(
            "config",
            "-z",
            "--blob",
            f"{commit}:.gitmodules",
            "--get-regexp",
            r"^submodule\..*\.(path|url)$",
            env=hermetic_env(),
            cwd=source,
        )
    except GitError:
        return {}  # no .gitmodules, or nothing in it
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for item in out.decode("utf-8", "replace").split("\0"):
        key, _, value = item.partition("\n")
        name, _, variable = key.removeprefix("submodule.").rpartition(".")
        if variable == "path":
            paths[name] = value.strip("/")
        elif variable == "url":
            urls[name] = value
    return {path: urls[name] for name, path in paths.items() if name in urls}


def _extract(git_dir: Path, commit: str, tree: Path, path: str) -> None:
    """The files of `commit` into `tree/path`, which `git archive` left empty."""
    parts = PurePosixPath(path).parts
    if not parts or any(part in ("", ".", "..", ".git") for part in parts):
        raise ValueError(f"{path!r} is not a path inside the tree")
    target = tree
    for part in parts:
        target = target / part
        if target.is_symlink():
            raise ValueError(f"{path!r} passes through a symbolic link")
    if not target.is_dir() or any(target.iterdir()):
        raise ValueError(f"{path!r} is not the empty directory git leaves for a submodule")
    archive = subprocess.Popen(
        hermetic_argv("archive", "--format=tar", commit),
        cwd=git_dir,
        env=hermetic_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert archive.stdout is not None
    try:
        try:
            with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
                tar.extractall(target, filter="tar")
        finally:
            archive.stdout.close()
            stderr = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
            code = archive.wait()
        if code != 0:
            raise GitError(f"git archive {commit[:12]} failed: {stderr.strip()}", stderr=stderr)
    except BaseException:
        shutil.rmtree(target)  # as git archive left it: empty, so no half submodule stays
        target.mkdir()
        raise


# --- URLs ------------------------------------------------------------------------------------


def _is_relative(url: str) -> bool:
    return url.startswith(("./", "../"))


def _is_local(url: str) -> bool:
    """Whether git would reach `url` through the file system, as git itself decides."""
    if url.startswith("file:"):
        return True
    if "://" in url:
        return False
    colon = url.find(":")
    slash = url.find("/")
    return colon < 0 or (0 <= slash < colon)


def _refused(url: str, *, declared_relative: bool) -> str | None:
    """Why a URL the repository names is not fetched, unless the user's rewrites say so."""
    if url.startswith("-") or any(ord(ch) < 32 for ch in url):
        return "its URL is not one git may be given"
    if _is_local(url) and not declared_relative:
        return (
            "its URL is a path on this machine, which bugbout does not read for a "
            "repository's submodule unless your git configuration maps the URL there "
            "(url.<path>.insteadOf)"
        )
    return None


def resolve_relative_url(url: str, base: str) -> str:
    """A relative submodule URL (`../other.git`) against the URL it is relative to, as
    git resolves it: each `../` drops the last part of `base`, `./` drops nothing."""
    base = base.rstrip("/")
    separator = "/"
    rest = url
    while True:
        if rest.startswith("../"):
            rest = rest[3:]
            slash = base.rfind("/")
            colon = base.rfind(":")
            if slash > colon and slash > 0 and not base.endswith("://"):
                base = base[:slash]
            elif colon > 0:
                base, separator = base[:colon], ":"
            else:
                raise ValueError(f"cannot resolve the relative URL {url!r} against {base!r}")
        elif rest.startswith("./"):
            rest = rest[2:]
        else:
            break
    return f"{base}{separator}{rest}" if rest else base


def origin_url(repo: Path) -> str:
    """What the project's relative submodule URLs are relative to: its `origin`, or its
    own path when it has none (as git does)."""
    try:
        url = _user_git_text(repo, "config", "--get", "remote.origin.url")
    except GitError:
        url = ""
    if not url:
        return str(repo.resolve())
    if _is_local(url) and not url.startswith("file:") and not url.startswith("/"):
        return str((repo / url).resolve())
    return url


def insteadof_rules(repo: Path) -> list[tuple[str, str]]:
    """The user's `url.<base>.insteadOf` rewrites, as (prefix, base) pairs.

    Read with the user's own configuration, and nothing else of it is used: a fetch of a
    URL a repository names runs hermetically.
    """
    try:
        out = _user_git_text(repo, "config", "-z", "--get-regexp", r"^url\..*\.insteadof$")
    except GitError:
        return []
    rules = []
    for item in out.split("\0"):
        key, _, prefix = item.partition("\n")
        if key.startswith("url.") and key.endswith(".insteadof") and prefix:
            rules.append((prefix, key[len("url.") : -len(".insteadof")]))
    return rules


def rewrite_url(url: str, rules: Sequence[tuple[str, str]]) -> str:
    """`url` after the rewrites, as git applies them: the longest matching prefix wins."""
    best: tuple[str, str] | None = None
    for prefix, base in rules:
        if url.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, base)
    return url if best is None else best[1] + url[len(best[0]) :]


def _user_git_text(repo: Path, *args: str) -> str:
    """git with the user's configuration, for reading it; exit 1 means "not set"."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args],
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} did not answer within 60 seconds", stderr="") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {args[0]} failed: {message}", stderr=message)
    return proc.stdout.decode("utf-8", "replace").strip("\n")


# --- the cache -----------------------------------------------------------------------------


class SubmoduleCache:
    """Bare repositories of submodules under `home/submodules`, one per URL."""

    def __init__(self, home: Path) -> None:
        self.root = home / "submodules"

    def git_dir(self, url: str) -> Path:
        normalized = url.strip().rstrip("/").removesuffix(".git")
        name = re.split(r"[/:]", normalized)[-1]
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip("._") or "repository"
        digest = hashlib.sha256(normalized.encode()).hexdigest()[:10]
        return self.root / f"{name}-{digest}.git"

    def ensure(
        self,
        url: str,
        commits: Sequence[str],
        rewrites: Callable[[], Sequence[tuple[str, str]]],
    ) -> dict[str, str]:
        """Have every commit of `commits` in the cache of `url`, fetching what is
        missing; return why, for each commit that could not be had. `rewrites` gives
        the user's URL rewrites, asked for only when something is to be fetched."""
        git_dir = self.git_dir(url)
        key = str(git_dir)
        problems: dict[str, str] = {}
        for commit in commits:
            if not _SHA.fullmatch(commit):
                problems[commit] = f"{commit!r} is not a commit id"
        wanted = [c for c in dict.fromkeys(commits) if c not in problems]
        with self._locked(git_dir):
            missing = self._absent(git_dir, wanted)
            if not missing:
                return problems
            source = rewrite_url(url, rewrites())
            shown = redacted(url if source == url else f"{url}, read from {source}")
            fetched, failure = _MEMORY.refs_result(key)
            if not fetched:
                failure = _fetch(git_dir, source, _REFS)
                _MEMORY.remember_refs(key, failure)
                missing = self._absent(git_dir, missing)
            if failure is not None:
                for commit in missing:
                    problems[commit] = f"{shown} could not be fetched: {failure}"
                return problems
            for commit in missing:
                if _MEMORY.commit_tried(key, commit):
                    continue
                _MEMORY.remember_commit(key, commit)
                _fetch(git_dir, source, (f"+{commit}:refs/bugbout/{commit}",))
            for commit in self._absent(git_dir, missing):
                problems[commit] = f"commit {commit[:12]} is not in {shown}"
        return problems

    @contextlib.contextmanager
    def _locked(self, git_dir: Path) -> Iterator[None]:
        """The cache of one URL, to this caller alone; made (atomically) if new."""
        locks = self.root / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        fd = os.open(locks / f"{git_dir.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not git_dir.is_dir():
                staging = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{git_dir.name}."))
                try:
                    run_hermetic_git(
                        "init",
                        "--quiet",
                        "--bare",
                        "--template=",
                        str(staging),
                        env=hermetic_env(),
                        cwd=self.root,
                    )
                    os.rename(staging, git_dir)
                except BaseException:
                    shutil.rmtree(staging, ignore_errors=True)
                    raise
            yield
        finally:
            os.close(fd)

    @staticmethod
    def _absent(git_dir: Path, commits: Sequence[str]) -> list[str]:
        if not commits:
            return []
        request = "".join(f"{c}^{{commit}}\n" for c in commits).encode()
        out = run_hermetic_git(
            "cat-file", "--batch-check", env=hermetic_env(), cwd=git_dir, input=request
        )
        answers = out.decode().splitlines()
        return [c for c, answer in zip(commits, answers, strict=True) if " commit " not in answer]


_REFS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")


def _fetch(git_dir: Path, url: str, refspecs: Sequence[str]) -> str | None:
    """Fetch into the cache; None when git succeeded, else its last words."""
    settings = [f"protocol.{name}.allow=always" for name in _ALLOWED_PROTOCOLS]
    settings += [
        "protocol.allow=never",
        f"http.lowSpeedLimit={_SLOW_BYTES_PER_SECOND}",
        f"http.lowSpeedTime={_SLOW_SECONDS}",
        "fetch.recurseSubmodules=false",
    ]
    argv = hermetic_argv(*(word for s in settings for word in ("-c", s)))
    argv += ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", url, *refspecs]
    env = hermetic_env(git_dir)
    env.update(_ssh_env())
    started = time.monotonic()
    try:
        done = run_bounded(argv, timeout=FETCH_TIMEOUT, cwd=git_dir, env=env, keep_stdout=False)
    except OSError as exc:
        return str(exc)
    if done.returncode is None:
        return f"the fetch did not finish within {FETCH_TIMEOUT:.0f} seconds"
    if done.returncode == 0:
        log.info("Fetched %s in %.1fs", redacted(url), time.monotonic() - started)
        return None
    err = done.stderr.decode("utf-8", "replace")
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    if not lines:
        return f"git fetch ended with status {done.returncode}"
    # git says what failed in its first `fatal:` line; advice ("Please make sure you have
    # the correct access rights / and the repository exists.") follows it
    fatal = [line for line in lines if line.startswith("fatal:")]
    return redacted(fatal[0] if fatal else lines[-1])


def _ssh_env() -> Mapping[str, str]:
    """SSH as the user runs it, never waiting for a password or a slow host."""
    for name in ("GIT_SSH_COMMAND", "GIT_SSH"):
        if os.environ.get(name):
            return {name: os.environ[name]}
    return {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=30"}
