"""A contestant that does what the prompt tells it first: run the project's tests.

Usage: runtests.py PROMPT_FILE WORKDIR

It takes the test command from the prompt (the indented line after "Run the project's
tests"), runs it through the shell in the working copy, and prints `REPORT <json>` with
the exit status and the end of the output.
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
tail = (proc.stdout + proc.stderr)[-2000:]
print("REPORT " + json.dumps({"command": command, "returncode": proc.returncode, "tail": tail}))
