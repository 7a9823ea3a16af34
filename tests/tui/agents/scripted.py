"""A scripted contestant for recording the race board's events: it talks, then edits.

Usage: scripted.py STYLE WORKDIR
  careful   a few steps, then a change to the source
  hasty     a burst of chatter, then a change
  slow      one line every few tenths of a second for a while, then a change
  rationed  says its plan is spent and exits 1 without touching a file
  examiner  writes a test file
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

style, workdir = sys.argv[1], Path(sys.argv[2])


def say(line: str, pause: float = 0.0) -> None:
    print(line, flush=True)
    time.sleep(pause)


if style == "rationed":
    say("Working on it...")
    print("You've hit your usage limit. Try again in 3 hours.", file=sys.stderr)
    sys.exit(1)
if style == "hasty":
    for n in range(60):
        say(f"\x1b[32mthinking\x1b[0m step {n}: looking at ops.py [{n * 7 % 13}/13]", 0.02)
elif style == "slow":
    for n in range(12):
        say(f"reading the code, part {n + 1} of 12", 0.3)
else:
    say("reading the issue", 0.3)
    say("reading src/calc/ops.py", 0.3)
    say("running the tests before changing anything", 0.3)
if style == "examiner":
    target = workdir / "tests" / "test_examiner.py"
    target.write_text("def test_reported_case():\n    assert True\n")
    say("wrote tests/test_examiner.py")
else:
    ops = workdir / "src" / "calc" / "ops.py"
    ops.write_text(ops.read_text() + f"\n# reviewed by {style}\n")
    say("edited src/calc/ops.py")
