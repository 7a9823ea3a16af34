"""What confinement costs a test run: bare pytest against `run_pytest` in bubblewrap.

Every task's tests run many times in a bout (ground truth, each patch, each cell of
every cross-examination), so the sandbox, the JUnit report and the process handling
must add little to a plain `python -m pytest`. This writes a suite of small tests that
takes about two seconds bare, times both ways in alternation (so a busy machine slows
both alike), and prints the medians and their ratio.

    python benchmarks/runner.py [--rounds 7] [--tests 200] [--max-ratio 1.15] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit.options import parse_args

from bugbout_tui.infra.pytest_run import PytestCommand, run_pytest
from bugbout_tui.infra.sandbox import select_sandbox

TEST_MODULE = """
import hashlib
import json

import pytest


@pytest.mark.parametrize("seed", range({per_module}))
def test_work(seed):
    data = json.dumps({{"seed": seed, "items": list(range(200))}}).encode()
    digest = data
    for _ in range({rounds}):
        digest = hashlib.sha256(digest + data).digest()
    assert len(digest) == 32
"""


def write_suite(root: Path, tests: int, work: int) -> None:
    modules = 10
    for index in range(modules):
        path = root / "tests" / f"test_bench_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEST_MODULE.format(per_module=tests // modules, rounds=work))


def time_bare(python: Path, suite: Path) -> float:
    started = time.monotonic()
    subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=suite,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.monotonic() - started


def time_confined(python: Path, suite: Path, scratch: Path, expected: int) -> float:
    cmd = PytestCommand(python=python, tree=suite, paths=["tests"], pythonpath=[suite])
    sandbox = select_sandbox("bubblewrap")
    started = time.monotonic()
    run = asyncio.run(run_pytest(cmd, sandbox, workdir=scratch))
    elapsed = time.monotonic() - started
    passed = sum(1 for r in run.outcomes.values() if r.outcome == "passed")
    if run.error is not None or passed != expected:
        raise SystemExit(f"the confined run went wrong ({passed} passed): {run.error}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--work", type=int, default=1000, help="hash rounds per test")
    parser.add_argument("--python", type=Path, default=Path(sys.executable))
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=None,
        help="exit with status 1 when the ratio of medians is above this",
    )
    args = parse_args(parser, has_target=True, rounds=1, tests=10, work=10, max_ratio=None)

    with tempfile.TemporaryDirectory(prefix="bugbout-bench-") as tmp:
        suite = Path(tmp) / "suite"
        write_suite(suite, args.tests, args.work)
        if not args.smoke:  # warm the page cache and the interpreter's imports
            time_bare(args.python, suite)
        bare: list[float] = []
        confined: list[float] = []
        for round_number in range(1, args.rounds + 1):
            bare.append(time_bare(args.python, suite))
            scratch = Path(tmp) / f"scratch-{round_number}"
            confined.append(time_confined(args.python, suite, scratch, args.tests))
            print(
                f"round {round_number}: bare {bare[-1]:.3f} s, "
                f"run_pytest + bubblewrap {confined[-1]:.3f} s"
            )

    bare_median = statistics.median(bare)
    confined_median = statistics.median(confined)
    ratio = confined_median / bare_median
    print(f"median bare: {bare_median:.3f} s")
    print(f"median run_pytest + bubblewrap: {confined_median:.3f} s")
    print(f"ratio: {ratio:.3f}")
    if args.max_ratio is not None and ratio > args.max_ratio and not args.smoke:
        print(f"above the allowed {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
