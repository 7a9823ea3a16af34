"""Real git repositories for tests, built commit by commit.

Every commit gets a fixed identity and a date from a clock that advances one hour per
commit, and git runs without the machine's global or system configuration, so the same
script builds the same shas on any machine. Use it through the `git_repo` fixture, or
directly: `GitRepo(tmp_path / "name")`.

    repo = GitRepo(tmp_path / "repo")
    repo.commit("Initial layout", files={"src/pkg/core.py": "x = 1\\n"})
    sha = repo.commit("Fix crash on empty input (#12)", files={
        "src/pkg/core.py": "x = 2\\n",
        "tests/test_core.py": "def test_empty():\\n    assert True\\n",
    })
    merge = repo.merge_pr(7, "Fix the parser", files={...})
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

FileContent = str | bytes | None
"""Text, raw bytes, or None to delete the file."""

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
}
_ISOLATION = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
_SETTINGS = (
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "advice.detachedHead=false",
)


class GitRepo:
    """A working repository on disk with helpers that each make one kind of history."""

    def __init__(
        self,
        root: Path,
        *,
        branch: str = "main",
        start: datetime = datetime(2024, 1, 1, 9, 0, tzinfo=UTC),
        init: bool = True,
    ) -> None:
        self.root = root
        self.branch = branch
        self.clock = start
        """The date the next commit gets unless told otherwise."""
        if init:
            root.mkdir(parents=True, exist_ok=True)
            self.git("init", "--quiet", f"--initial-branch={branch}")

    def env(self, date: datetime | str | None = None) -> dict[str, str]:
        """The environment git runs with: isolated, fixed identity, the given date."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(_ISOLATION)
        env.update(_IDENTITY)
        when = date if isinstance(date, str) else (date or self.clock).isoformat()
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        return env

    def git(
        self,
        *args: str,
        input: bytes | None = None,
        date: datetime | str | None = None,
        cwd: Path | None = None,
        check: bool = True,
    ) -> str:
        """Run git in the repository; a failure raises with git's stderr in the message,
        unless `check` is false (then the output is empty)."""
        proc = subprocess.run(
            ["git", *_SETTINGS, *args],
            cwd=cwd or self.root,
            input=input,
            capture_output=True,
            env=self.env(date),
            check=False,
        )
        if proc.returncode != 0 and check:
            raise AssertionError(
                f"git {' '.join(args)} failed ({proc.returncode}):\n"
                + proc.stderr.decode("utf-8", "replace")
            )
        return proc.stdout.decode("utf-8", "replace").strip()

    def write(self, path: str, content: str | bytes) -> Path:
        """Write a file in the working tree (creating directories); not staged yet."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def apply(self, files: Mapping[str, FileContent]) -> None:
        """Write or delete each file and stage everything."""
        for path, content in files.items():
            if content is None:
                (self.root / path).unlink()
            else:
                self.write(path, content)
        self.git("add", "--all")

    def rename(self, old: str, new: str) -> None:
        """`git mv`, staged; commit it, possibly with other edits, with `commit()`."""
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)

    def commit(
        self,
        message: str | bytes,
        *,
        files: Mapping[str, FileContent] | None = None,
        date: datetime | str | None = None,
        encoding: str | None = None,
    ) -> str:
        """Commit `files` (and anything already staged) and return the new sha.

        A `bytes` message, or one with an `encoding`, is written into the commit object
        exactly as given, with an `encoding` header when one is named: `git commit`
        would quietly re-encode bytes that are not UTF-8, and tests need the raw ones.
        """
        self.apply(files or {})
        if isinstance(message, str) and encoding is None:
            self.git(
                "commit",
                "--quiet",
                "--allow-empty",
                "--cleanup=verbatim",
                "-F",
                "-",
                input=message.encode(),
                date=date,
            )
        else:
            raw = message if isinstance(message, bytes) else message.encode(encoding or "utf-8")
            self._commit_object(raw, encoding, date)
        self._tick(date)
        return self.head()

    def _commit_object(
        self, message: bytes, encoding: str | None, date: datetime | str | None
    ) -> None:
        when = datetime.fromisoformat(date) if isinstance(date, str) else (date or self.clock)
        offset = when.strftime("%z") or "+0000"
        stamp = f"{int(when.timestamp())} {offset}"
        lines = [f"tree {self.git('write-tree')}"]
        parent = self.git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        if parent:
            lines.append(f"parent {parent}")
        person = f"{_IDENTITY['GIT_AUTHOR_NAME']} <{_IDENTITY['GIT_AUTHOR_EMAIL']}> {stamp}"
        lines += [f"author {person}", f"committer {person}"]
        if encoding:
            lines.append(f"encoding {encoding}")
        raw = ("\n".join(lines) + "\n\n").encode() + message
        sha = self.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw)
        self.git("update-ref", "HEAD", sha)

    def merge_pr(
        self,
        number: int,
        title: str,
        *,
        files: Mapping[str, FileContent],
        body: str = "",
        branch: str | None = None,
        commits: Sequence[str] = ("work in progress",),
        date: datetime | str | None = None,
    ) -> str:
        """A pull request merged on GitHub: a side branch, then a real `--no-ff` merge.

        The side branch gets one commit per message in `commits` (the files land in the
        first); the merge message is GitHub's: "Merge pull request #N from user/branch",
        a blank line, the pull request's title, then `body`. Returns the merge's sha.
        """
        side = branch or f"pr-{number}"
        self.git("switch", "--quiet", "--create", side)
        for index, message in enumerate(commits):
            self.commit(message, files=files if index == 0 else None)
        self.git("switch", "--quiet", self.branch)
        message = f"Merge pull request #{number} from contributor/{side}\n\n{title}"
        if body:
            message += f"\n\n{body}"
        self.git("merge", "--quiet", "--no-ff", "-m", message, side, date=date)
        self._tick(date)
        return self.head()

    def head(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", "--verify", f"{ref}^{{commit}}")

    def clone_to(self, dest: Path, *options: str) -> GitRepo:
        """Clone this repository through a `file://` URL (so `--depth` is honoured)."""
        self.git("clone", "--quiet", *options, self.url, str(dest), cwd=dest.parent)
        return GitRepo(dest, branch=self.branch, start=self.clock, init=False)

    @property
    def url(self) -> str:
        return self.root.resolve().as_uri()

    def _tick(self, date: datetime | str | None) -> None:
        if date is None:
            self.clock += timedelta(hours=1)
