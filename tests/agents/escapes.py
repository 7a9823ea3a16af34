"""A contestant whose every word is aimed at the user's terminal, and at the report.

Usage: escapes.py MODE WORKDIR

Modes:
    fix     print control sequences on both streams for a while (the clipboard through
            OSC 52, the window title through OSC 0, CSI and 8-bit controls, bidi
            overrides), fix `f1` in `src/calc/ops.py`, add a test whose failure text and
            name carry them too, leave a file whose name holds an escape, and close with
            a summary made of them.
    limit   print a usage-limit message laced with them on standard error, and exit 1.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

CLIPBOARD = "\x1b]52;c;cHduZWQtY2xpcGJvYXJk\x07"
"""OSC 52: puts "pwned-clipboard" in the clipboard of a terminal that allows it."""
CLIPBOARD_ST = "\x1b]52;c;cHduZWQtY2xpcGJvYXJk\x1b\\"
CLIPBOARD_8BIT = "\x9d52;c;cHduZWQtY2xpcGJvYXJk\x9c"
TITLE = "\x1b]0;pwned-title\x07"
HOSTILE = (
    f"{CLIPBOARD}{TITLE}\x1b[2J\x1b[6n\x9b2J{CLIPBOARD_8BIT}\x1bc\u202edesrever "
    "[bold red]not markup[/] [x](http://evil.example) <img src=x onerror=alert(1)> | a | b |"
)
"""One line of everything: each part either acts on a terminal or makes Markdown."""

FAILURE = "\\x9b2J\\u202e[x](http://evil.example) <b>bold</b>"
"""A failure message spelled as Python escapes, so the test source stays printable."""

ESCAPED_FILE = "notes\x1b]0;pwned-title\x07.txt"


def fix(workdir: Path) -> None:
    for round in range(8):
        print(f"step {round} {HOSTILE}", flush=True)
        print(f"warning {round} {CLIPBOARD_ST}\x1b]0;pwned-title\x1b\\ \x9b6n", file=sys.stderr,
              flush=True)  # fmt: skip
        time.sleep(0.3)
    ops = workdir / "src" / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("def f1():\n    return 0", "def f1():\n    return 1"))
    (workdir / "tests" / "test_escapes.py").write_text(
        "import pytest\n\nfrom calc.ops import f1\n\n\n"
        "def test_f1_is_one():\n"
        f'    assert f1() == 1, "{FAILURE}"\n\n\n'
        '@pytest.mark.parametrize("shown", ["[x](http://evil.example)"])\n'
        "def test_named(shown):\n"
        f'    assert f1() == 1, "{FAILURE}"\n'
    )
    (workdir / ESCAPED_FILE).write_text("left here\n")
    print(f"Done. {HOSTILE}", flush=True)


def limit() -> None:
    print(f"You've hit your usage limit {HOSTILE}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def main() -> None:
    mode, workdir = sys.argv[1], Path(sys.argv[2])
    if mode == "fix":
        fix(workdir)
    elif mode == "limit":
        limit()
    else:
        raise SystemExit(f"unknown mode {mode!r}")


main()
