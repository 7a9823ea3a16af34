"""Every benchmark still runs: each script in `benchmarks/` at its `--smoke` size.

The figures at that size mean nothing and no target is checked; what is checked is that
the script gets to the end. A benchmark reaches into the stages it times, so a change
there can break it without any other test noticing, and one that is never run rots.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

EXTRA_ARGS: dict[str, list[str]] = {"mine.py": ["--cache", "{tmp}/cache"]}
"""Arguments a script needs besides `--smoke`, to keep its files out of the checkout."""


SCRIPTS = (
    "checkout.py",
    "cluster.py",
    "environments.py",
    "examine.py",
    "flood.py",
    "judge.py",
    "mine.py",
    "runner.py",
    "sandbox_views.py",
    "tui.py",
)


def test_every_benchmark_is_run_here() -> None:
    assert sorted(path.name for path in BENCHMARKS.glob("*.py")) == sorted(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_benchmark_runs_at_a_small_size(script: str, tmp_path: Path) -> None:
    extra = [arg.format(tmp=tmp_path) for arg in EXTRA_ARGS.get(script, [])]
    env = {**os.environ, "BUGBOUT_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke", *extra],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, (
        f"{script} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
