"""What an agent that floods its working copy with files costs the harvest.

Prepares a working copy of a small repository, writes `--files` new files in it (as an
agent that unpacks an archive or generates data would), then harvests it in a child
process and prints what matters when that happens in the middle of a race:

- the harvest's wall time and peak memory (the harvesting process, and the largest git
  process it ran);
- the size of the attempt record the patch would go into, and its longest note.

With the default caps (`[run] max-patch-files`, `max-patch-bytes`) a flood is refused as
oversized before git hashes a file; `--max-files` raises the cap to see the whole patch.

    python benchmarks/flood.py [--files 100000] [--max-files N] [--workdir DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchkit.gitrepo import commit, init
from benchkit.options import parse_args

from bugbout_tui.core.models import Attempt
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy

_FILES = {
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "def answer():\n    return 41\n",
    "tests/test_core.py": "def test_answer():\n    assert True\n",
    "pyproject.toml": "[project]\nname = 'pkg'\n",
}


def _repository(root: Path) -> tuple[Path, str]:
    repo = root / "repo"
    init(repo)
    return repo, commit(repo, "Tree", _FILES)


def _harvest_in_this_process(copy: Path, git_dir: Path, max_files: int | None) -> None:
    """The child's side: harvest, then print one JSON line of figures."""
    from bugbout_tui.infra.workcopy import WorkingCopy

    wc = WorkingCopy.model_validate_json((git_dir.parent / "wc.json").read_text())
    started = time.perf_counter()
    if max_files is None:
        patch = harvest(wc, source_dir="src/pkg")
    else:
        patch = harvest(wc, source_dir="src/pkg", max_files=max_files)
    seconds = time.perf_counter() - started
    now = datetime.now(UTC)
    record = Attempt(
        task="t",
        contestant="flood",
        status="finished",
        started_at=now,
        ended_at=now,
        seconds=0.0,
        patch=patch,
        logdir=str(copy),
    ).model_dump_json(indent=2)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "peak_git_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                "record_bytes": len(record.encode()),
                "files": len(patch.files),
                "notes": len(patch.notes),
                "longest_note": max((len(n) for n in patch.notes), default=0),
                "oversized": patch.oversized,
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--max-files", type=int, default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    options = parse_args(parser, has_target=False, files=200)
    if options.child:
        copy, git_dir = options.child
        _harvest_in_this_process(copy, git_dir, options.max_files)
        return 0
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bugbout-flood-"))
    shutil.rmtree(workdir / "scratch", ignore_errors=True)
    shutil.rmtree(workdir / "repo", ignore_errors=True)
    repo, commit = _repository(workdir)
    wc = prepare_working_copy(
        repo, commit, workdir / "scratch" / "copy", hidden=[], home=workdir / "home"
    )
    (wc.git_dir.parent / "wc.json").write_text(wc.model_dump_json())
    data = wc.path / "data"
    data.mkdir()
    for index in range(options.files):
        (data / f"file_{index:06d}.txt").write_text(f"x {index}\n")
    argv = [sys.executable, __file__, "--child", str(wc.path), str(wc.git_dir)]
    if options.max_files is not None:
        argv += ["--max-files", str(options.max_files)]
    child = subprocess.run(argv, capture_output=True, text=True, check=True)
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"{options.files:,} new files in the working copy")
    print(f"harvest: {figures['seconds']:.2f} s")
    print(f"peak memory: harvesting process {figures['peak_self_kb'] / 1024:.0f} MB, ", end="")
    print(f"largest git process {figures['peak_git_kb'] / 1024:.0f} MB")
    print(f"attempt record: {figures['record_bytes'] / 1e6:.3f} MB, {figures['files']:,} files")
    print(f"notes: {figures['notes']}, the longest {figures['longest_note']:,} characters")
    if figures["oversized"]:
        print(f"oversized: {figures['oversized']}")
    if options.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
