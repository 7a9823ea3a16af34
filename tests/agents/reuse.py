"""A contestant that leans on the project's own tests, as agents do on real projects.

Usage: reuse.py PROMPT_FILE WORKDIR

It runs the test command the prompt gives (the indented line after "Run the project's
tests"), then fixes `mean` on an empty list and adds a regression test, in the tests
directory the prompt names, that imports a helper from `test_ops.py` there, the module
the maintainers' fix edits. It prints `REPORT <json>` with the command's exit status and
output tail, and what it found of `test_ops.py` in its checkout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

prompt, workdir = Path(sys.argv[1]).read_text(), Path(sys.argv[2])
after = prompt.split("Run the project's tests", 1)[1]
command = next(line.strip() for line in after.splitlines() if line.startswith("    "))
proc = subprocess.run(
    ["/bin/sh", "-c", command], cwd=workdir, capture_output=True, text=True, check=False
)
tests = workdir / prompt.split("Add your regression test under `", 1)[1].split("/`", 1)[0]
helpers = tests / "test_ops.py"
ops = workdir / "src" / "calc" / "ops.py"
ops.write_text(
    ops.read_text().replace(
        "    return sum(xs)", "    if not xs:\n        return 0.0\n    return sum(xs)"
    )
)
(tests / "test_regress.py").write_text(
    "from calc.ops import mean\n\nfrom .test_ops import VALUES\n\n\n"
    "def test_mean_of_nothing():\n    assert mean(VALUES[:0]) == 0.0\n"
)
report = {
    "command": command,
    "returncode": proc.returncode,
    "tail": (proc.stdout + proc.stderr)[-2000:],
    "helpers": helpers.read_text() if helpers.exists() else None,
}
print("REPORT " + json.dumps(report))
