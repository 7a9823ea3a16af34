"""A well-behaved contestant: notes that it started, waits, edits the source, exits 0.

Usage: edit.py --count FILE [--sleep SECONDS] [--hold FILE] [--token TEXT] WORKDIR

Each start appends the working copy's path (it names the task and the agent) to the
count file, which lives in a state directory outside the working copy so it outlasts
the attempt. `--hold` waits until FILE exists before editing, so a test can keep the
attempt in flight as long as it needs; `--token` only marks the command line, for
tests that look for survivors in /proc.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--count", type=Path, required=True)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--hold", type=Path)
parser.add_argument("--token")
parser.add_argument("workdir", type=Path)
args = parser.parse_args()

with args.count.open("a", encoding="utf-8") as handle:
    handle.write(f"{args.workdir}\n")
print("started", flush=True)
time.sleep(args.sleep)
while args.hold is not None and not args.hold.exists():
    time.sleep(0.05)
target = args.workdir / "src" / "calc" / "ops.py"
target.write_text(target.read_text() + "\n# looked at this\n")
print("edited ops.py", flush=True)
