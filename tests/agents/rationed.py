"""A contestant on a plan that can run out: while SPENT exists it stops on a usage limit.

Usage: rationed.py COUNT_FILE SPENT WORKDIR

Out of quota it prints the message its vendor's CLI would, changes nothing and exits
1; otherwise it edits the source like `edit.py`. Every start is noted in COUNT_FILE.
"""

from __future__ import annotations

import sys
from pathlib import Path

count_file, spent, workdir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
with count_file.open("a", encoding="utf-8") as handle:
    handle.write(f"{workdir}\n")
print("Working on it...", flush=True)
if spent.exists():
    print("You've hit your usage limit. Try again in 3 hours.", file=sys.stderr)
    sys.exit(1)
target = workdir / "src" / "calc" / "ops.py"
target.write_text(target.read_text() + "\n# rationed, but fine today\n")
