"""What the minimal view costs a test run, against the host view.

Every test run gets the minimal view: an empty root with the system directories, the
interpreter's paths and the tree bound in, rather than the host's root bound whole.
This times `--runs` sandboxed `python -m pytest` runs of a tiny module, one after
another, in each view, with the same confinement otherwise (the one `confinement_for_tests`
builds), and the one-off cost of asking the interpreter for its paths.

    python benchmarks/sandbox_views.py [--runs 20] [--rounds 3] [--smoke]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit.options import parse_args

from bugbout_tui.infra import programs
from bugbout_tui.infra.pytest_run import PytestCommand, confinement_for_tests
from bugbout_tui.infra.sandbox import BubblewrapSandbox, View

TEST = "def test_it():\n    assert sum([1, 2]) == 3\n"


def time_runs(tree: Path, work: Path, view: View, runs: int) -> float:
    """Seconds for `runs` sandboxed pytest runs in `view`, one after another."""
    cmd = PytestCommand(
        python=Path(sys.executable),
        tree=tree,
        paths=(),
        pythonpath=[tree],
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # the plugins beside bugbout's own tests
    )
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    confinement = confinement_for_tests(cmd, writable=(tree, work), home=home)
    confinement = dataclasses.replace(confinement, view=view)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    wrapped = BubblewrapSandbox().wrap(argv, confinement, cwd=tree)
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(
            wrapped, cwd=tree, env=dict(confinement.env), capture_output=True, check=True
        )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse_args(parser, has_target=False, runs=2, rounds=1)
    with tempfile.TemporaryDirectory() as scratch:
        tree, work = Path(scratch) / "tree", Path(scratch) / "work"
        (tree / "tests").mkdir(parents=True)
        (tree / "tests" / "test_tiny.py").write_text(TEST)
        started = time.perf_counter()
        programs.interpreter_paths(Path(sys.executable))
        probe = time.perf_counter() - started
        results: dict[View, list[float]] = {"host": [], "minimal": []}
        for _ in range(args.rounds):
            for view in results:  # alternate, so drift in the machine's load hits both
                results[view].append(time_runs(tree, work, view, args.runs))
    print(f"asking the interpreter for its paths (once per run): {probe * 1000:.0f} ms")
    for view, seconds in results.items():
        best, median = min(seconds), statistics.median(seconds)
        print(
            f"{view:>8}: {args.runs} runs in {median:.2f} s median, {best:.2f} s best "
            f"({median / args.runs * 1000:.0f} ms a run)"
        )
    host, minimal = (statistics.median(results[v]) for v in ("host", "minimal"))
    print(f"minimal vs host: {(minimal - host) / args.runs * 1000:+.0f} ms a run")


if __name__ == "__main__":
    main()
