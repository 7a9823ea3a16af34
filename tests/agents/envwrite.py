"""A contestant for environment tasks whose repair is written for it: it copies files in.

Usage: envwrite.py FILES PROMPT_FILE WORKDIR

On an environment task (its prompt quotes the base's failure in `<failure>` tags),
every file under the folder FILES is copied into the working copy at the same relative
path, over what is there; a test writes that folder, in a state directory the sandbox
lets the agent read. On a bug it changes nothing. It exits 0 either way.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

files, prompt, workdir = (Path(arg) for arg in sys.argv[1:4])
if "<failure>" not in prompt.read_text(encoding="utf-8"):
    raise SystemExit(0)
for source in sorted(path for path in files.rglob("*") if path.is_file()):
    relative = source.relative_to(files)
    target = workdir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    print(f"wrote {relative.as_posix()}", flush=True)
