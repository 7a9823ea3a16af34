"""A contestant for the `calc` project of `racekit`, right every time or every other time.

Usage: trialfix.py STYLE STATE_DIR PROMPT_FILE WORKDIR

It reads which function the issue is about ("fN() should return N.") from the prompt,
as an agent would, and writes a regression test for it. Styles:

    right       makes fN return N, and tests that it does
    sometimes   on its 1st, 3rd, 5th... start on a task makes fN return N; on the
                others N + 1 (a wrong fix); tests only that fN no longer returns 0,
                which both fixes pass

Starts are counted per task in STATE_DIR, outside the working copy, so a repeated trial
knows which one it is; the race runs a task's trials in order in one lane.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

style, state, prompt, workdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
match = re.search(r"f(\d)\(\) should return (\d)", prompt.read_text())
assert match is not None, "the issue names no function"
number = int(match.group(1))
task = workdir.parent.parent.name  # .../<task>/<agent>/workdir
counter = state / f"{style}-{task}"
starts = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(starts))
right = style == "right" or starts % 2 == 1
ops = workdir / "src" / "calc" / "ops.py"
buggy = f"def f{number}():\n    return 0"
text = ops.read_text()
assert buggy in text, "the code is not as expected"
returned = number if right else number + 1
ops.write_text(text.replace(buggy, f"def f{number}():\n    return {returned}"))
check = f"== {number}" if style == "right" else "!= 0"
(workdir / "tests" / f"test_f{number}_{style}.py").write_text(
    f"from calc.ops import f{number}\n\n\ndef test_f{number}_is_fixed():\n"
    f"    assert f{number}() {check}\n"
)
print(f"made f{number} return {returned}")
