"""A contestant that fixes the template project's bugs (`racekit`), as the issue asks.

Usage: calcfix.py --count FILE PROMPT_FILE WORKDIR

It reads which function the issue names ("f3() should return 3.") from the prompt and
makes it return that number, notes its start in the count file as `edit.py` does, and
exits 0. A prompt that names no such function stops it with an error, so a changed
template cannot turn its fix into a silent no-op.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--count", type=Path, required=True)
parser.add_argument("prompt", type=Path)
parser.add_argument("workdir", type=Path)
args = parser.parse_args()

with args.count.open("a", encoding="utf-8") as handle:
    handle.write(f"{args.workdir}\n")
found = re.search(r"f(\d+)\(\) should return (\d+)", args.prompt.read_text(encoding="utf-8"))
if found is None:
    sys.exit("calcfix: the prompt names no function to fix")
name, value = found.groups()
target = args.workdir / "src" / "calc" / "ops.py"
before = f"def f{name}():\n    return 0"
text = target.read_text(encoding="utf-8")
if before not in text:
    sys.exit(f"calcfix: f{name} is not the function it expected")
target.write_text(text.replace(before, f"def f{name}():\n    return {value}"), encoding="utf-8")
print(f"fixed f{name}", flush=True)
