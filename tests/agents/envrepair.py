"""A contestant for environment tasks: it repairs `requirements.txt` in one of three ways.

Usage: envrepair.py --style right|loosen|source --pin NAME==VERSION [--pin ...]
                    [--fix FILE OLD NEW ...] PROMPT_FILE WORKDIR

On an environment task (its prompt quotes the base's failure in `<failure>` tags), every
line of `requirements.txt` that names a `--pin`'s package is rewritten:

- right: to the pin given, a version that exists;
- loosen: to the bare name, no version at all (the install may pass; the pin is gone);
- source: to the pin, and a comment is added to the package's `__init__.py`, a source
  file, which rejects the whole repair.

On a bug (no `<failure>`), the right style applies every `--fix` (OLD replaced by NEW in
FILE, where OLD is there); the others change nothing. It exits 0 either way.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--style", choices=("right", "loosen", "source"), required=True)
parser.add_argument("--pin", action="append", default=[])
parser.add_argument("--fix", nargs=3, action="append", default=[], metavar=("FILE", "OLD", "NEW"))
parser.add_argument("prompt", type=Path)
parser.add_argument("workdir", type=Path)
args = parser.parse_args()

prompt = args.prompt.read_text(encoding="utf-8")
if "<failure>" not in prompt:
    for file, old, new in args.fix if args.style == "right" else ():
        target = args.workdir / file
        text = target.read_text(encoding="utf-8")
        if old in text:
            target.write_text(text.replace(old, new), encoding="utf-8")
            print(f"fixed {file}", flush=True)
    raise SystemExit(0)

pins = dict(pin.split("==", 1) for pin in args.pin)
requirements = args.workdir / "requirements.txt"
lines = []
for line in requirements.read_text(encoding="utf-8").splitlines():
    name = re.split(r"[=<>!~\[; ]", line.strip(), maxsplit=1)[0]
    if name in pins:
        line = name if args.style == "loosen" else f"{name}=={pins[name]}"
    lines.append(line)
requirements.write_text("\n".join(lines) + "\n", encoding="utf-8")
print(f"rewrote requirements.txt ({args.style})", flush=True)
if args.style == "source":
    for init in sorted(args.workdir.glob("*/__init__.py")):
        init.write_text(init.read_text(encoding="utf-8") + "# touched\n", encoding="utf-8")
        print(f"edited {init.relative_to(args.workdir)}", flush=True)
        break
