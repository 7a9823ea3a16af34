"""A contestant that prints a burst of lines in one write, then is silent before it ends.

Usage: burst.py SECONDS — the burst's last line says when it was printed (seconds since
the epoch), so a test can tell how late it was shown; the agent then sleeps SECONDS.
"""

from __future__ import annotations

import sys
import time

lines = [f"working {n}" for n in range(200)]
lines.append(f"burst over at {time.time()}")
sys.stdout.write("\n".join(lines) + "\n")
sys.stdout.flush()
time.sleep(float(sys.argv[1]))
