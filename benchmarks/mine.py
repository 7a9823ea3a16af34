"""How much mining costs on top of the `git log` it reads.

Builds (once, cached under `benchmarks/.cache/` or `--cache`) a repository whose branch has 5,000
first-parent changes in a realistic mix: squashed fixes with a new test and an issue
reference, merged pull requests with their title in the merge message, features,
refactors touching dozens of files, documentation and test-only changes. Then it times
`mine()` against the very `git log` command mining runs, with its output thrown away,
and prints the ratio. The target is at most 1.5: mining should cost little more than
reading the history does.

    python benchmarks/mine.py [--commits 5000] [--repeat 5] [--rebuild] [--cache DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.options import parse_args

from bugbout_tui.infra.git import default_branch, git_argv, git_env, head_commit
from bugbout_tui.rules.mine import Layout, history_log, mine

CACHE = Path(__file__).resolve().parent / ".cache"
GENERATOR_VERSION = "4"
SOURCE = "src/benchpkg"
TESTS = "tests"
MODULES = 120
TEST_MODULES = 60
START = 1_420_070_400  # 2015-01-01
WORDS = [
    "parser",
    "cache",
    "config",
    "loader",
    "writer",
    "reader",
    "session",
    "token",
    "queue",
    "pool",
    "index",
    "schema",
    "plugin",
    "router",
    "handler",
    "encoder",
    "decoder",
    "buffer",
    "stream",
    "client",
    "server",
    "timeout",
    "retry",
]


@dataclass
class History:
    """The repository's files as lists of lines, and the fast-import stream being written."""

    rng: random.Random
    files: dict[str, list[str]] = field(default_factory=dict)
    out: list[bytes] = field(default_factory=list)
    mark: int = 0
    clock: int = START
    issue: int = 1
    test_number: int = 0

    def data(self, text: str) -> None:
        raw = text.encode()
        self.out.append(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(
        self,
        branch: str,
        message: str,
        changed: list[str],
        parent: int | None,
        merge: int | None = None,
    ) -> int:
        self.mark += 1
        self.clock += self.rng.randint(600, 7200)
        who = f"Dev <dev@example.invalid> {self.clock} +0000"
        self.out.append(f"commit refs/heads/{branch}\nmark :{self.mark}\n".encode())
        self.out.append(f"author {who}\ncommitter {who}\n".encode())
        self.data(message)
        if parent is not None:
            self.out.append(f"from :{parent}\n".encode())
        if merge is not None:
            self.out.append(f"merge :{merge}\n".encode())
        for path in dict.fromkeys(changed):
            self.out.append(f"M 100644 inline {path}\n".encode())
            self.data("".join(self.files[path]))
        return self.mark

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def source_module(self) -> str:
        return f"{SOURCE}/{self.word()}_{self.rng.randrange(MODULES)}.py"

    def test_module(self) -> str:
        return f"{TESTS}/test_{self.rng.randrange(TEST_MODULES)}.py"

    def edit(self, path: str, lines: int) -> str:
        body = self.files[path]
        for _ in range(lines):
            at = self.rng.randrange(len(body))
            body[at] = f"    value = {self.rng.randrange(10**6)}  # {self.word()}\n"
        return path

    def add_test(self, path: str) -> str:
        self.test_number += 1
        body = self.files[path]
        classes = [i for i, line in enumerate(body) if line.startswith("class ")]
        if classes and self.rng.random() < 0.5:
            at = self.rng.choice(classes) + 1
            method = f"    def test_fix_{self.test_number}(self):\n        assert True\n\n"
            body.insert(at, method)
        else:
            body.append(f"\n\ndef test_fix_{self.test_number}():\n    assert True\n")
        if len(body) > 400:
            del body[1:40]
        return path

    def reference(self) -> str:
        self.issue += self.rng.randint(1, 4)
        return f"#{self.issue}"


def _initial(history: History) -> list[str]:
    rng = history.rng
    for word in WORDS:
        for n in range(MODULES):
            if rng.random() < 1 / len(WORDS) * 1.5:
                functions = [
                    f"def {word}_{n}_{i}(value):\n    value = value + {i}\n    return value\n\n"
                    for i in range(rng.randint(20, 60))
                ]
                history.files[f"{SOURCE}/{word}_{n}.py"] = functions
    for n in range(MODULES):  # every module name used by source_module() exists
        for word in WORDS:
            history.files.setdefault(f"{SOURCE}/{word}_{n}.py", [f"X_{n} = 1\n"] * 30)
    for n in range(TEST_MODULES):
        lines = ["import pytest\n", "\n"]
        for c in range(rng.randint(2, 5)):
            lines.append(f"class TestGroup{c}:\n")
            lines += [
                f"    def test_case_{c}_{i}(self):\n        assert {i}\n\n" for i in range(15)
            ]
        history.files[f"{TESTS}/test_{n}.py"] = lines
    for page in range(20):
        history.files[f"docs/page_{page}.md"] = [f"# Page {page}\n"] + ["Text.\n"] * 50
    return list(history.files)


def _change(history: History) -> tuple[str, list[str]]:
    """One change of a random kind: its message and the files it touched."""
    rng, kind = history.rng, history.rng.random()
    if kind < 0.25:  # squashed fix, mostly with a new test and an issue
        files = [history.edit(history.source_module(), 3) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.8:
            files.append(history.add_test(history.test_module()))
        else:
            files.append(history.edit(history.test_module(), 2))
        body = f"\n\nThe {history.word()} failed on empty input.\n\nFixes {history.reference()}"
        title = f"Fix {history.word()} crash on empty input"
        if rng.random() < 0.85:
            title += f" ({history.reference()})"
        return title + (body if rng.random() < 0.3 else ""), files
    if kind < 0.55:  # feature
        files = [history.edit(history.source_module(), 8) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.6:
            files.append(history.add_test(history.test_module()))
        return f"Add {history.word()} support for {history.word()} ({history.reference()})", files
    if kind < 0.65:  # refactor across many files
        files = [history.edit(history.source_module(), 2) for _ in range(rng.randint(10, 40))]
        return f"Refactor the {history.word()} layer", files
    if kind < 0.85:  # documentation
        page = f"docs/page_{rng.randrange(20)}.md"
        history.files[page].append(f"More about the {history.word()}.\n")
        return f"Document the {history.word()}", [page]
    test = history.test_module()  # tests only
    return f"Improve tests for the {history.word()}", [history.edit(test, 4)]


def build(repo: Path, commits: int) -> None:
    """Write the history with one `git fast-import`: seconds, not minutes."""
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", str(repo)], check=True)
    history = History(random.Random(20240101))
    tip = history.commit("main", "Initial import", _initial(history), None)
    for number in range(1, commits):
        if history.rng.random() < 0.12:  # a pull request merged with a merge commit
            side = f"pr-{number}"
            side_tip = tip
            touched: list[str] = []
            for step in range(history.rng.randint(1, 3)):
                message, files = _change(history)
                touched += files
                side_tip = history.commit(side, f"{message} (step {step})", files, side_tip)
            title, _ = _change(history) if history.rng.random() < 0.3 else (message, [])
            subject = f"Merge pull request {history.reference()} from dev/{side}"
            tip = history.commit("main", f"{subject}\n\n{title}\n", touched, tip, side_tip)
            history.out.append(f"reset refs/heads/{side}\nfrom 0{'0' * 39}\n\n".encode())
        else:
            message, files = _change(history)
            tip = history.commit("main", message, files, tip)
    stream = b"".join(history.out)
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=stream, check=True)
    subprocess.run(["git", "-C", str(repo), "gc", "--quiet"], check=True)


def cached_repository(cache: Path, commits: int, rebuild: bool) -> Path:
    repo = cache / f"mine-{commits}"
    stamp = repo / ".git" / "bugbout-benchmark"
    if rebuild or not stamp.exists() or stamp.read_text() != GENERATOR_VERSION:
        print(f"building {commits} changes in {repo} ...", flush=True)
        started = time.perf_counter()
        build(repo, commits)
        stamp.write_text(GENERATOR_VERSION)
        print(f"built in {time.perf_counter() - started:.1f}s", flush=True)
    return repo


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the history is kept")
    options = parse_args(parser, has_target=True, commits=200, repeat=1)

    repo = cached_repository(options.cache, options.commits, options.rebuild)
    ref = default_branch(repo)
    head = head_commit(repo, ref)
    layout = Layout.from_settings(SOURCE, TESTS)

    def git_only() -> None:
        with history_log(layout, head) as (args, config):
            argv = git_argv(repo, *args, config=config)
            subprocess.run(argv, stdout=subprocess.DEVNULL, env=git_env(), check=True)

    def every_patch() -> None:
        with history_log(layout, head) as (args, config):
            del config["core.attributesFile"]
            argv = git_argv(repo, *args, config=config)
            subprocess.run(argv, stdout=subprocess.DEVNULL, env=git_env(), check=True)

    def mining() -> None:
        mine(repo, ref=ref, source=SOURCE, tests=TESTS, since=None, max_source_files=2)

    result = mine(repo, ref=ref, source=SOURCE, tests=TESTS, since=None, max_source_files=2)
    funnel: dict[str, int] = {}
    for item in result.excluded:
        funnel[item.reason.value] = funnel.get(item.reason.value, 0) + 1
    print(f"examined {result.examined} changes: {len(result.candidates)} candidates, {funnel}")

    git_times = timed(git_only, options.repeat)
    mine_times = timed(mining, options.repeat)
    full_times = timed(every_patch, max(1, options.repeat // 2))
    git_best, mine_best = min(git_times), min(mine_times)
    git_median, mine_median = statistics.median(git_times), statistics.median(mine_times)
    print(f"git log alone     best {git_best:.3f}s  median {git_median:.3f}s")
    print(f"mine()            best {mine_best:.3f}s  median {mine_median:.3f}s")
    print(f"(git log with every file's patch: best {min(full_times):.3f}s)")
    ratio = mine_median / git_median
    print(f"ratio mine / git log: {ratio:.2f} (median), {mine_best / git_best:.2f} (best)")
    return 0 if ratio <= 1.5 or options.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
