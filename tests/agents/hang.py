"""A contestant that never ends: it forks a helper that ignores SIGTERM, then sleeps.

Usage: hang.py TOKEN — the helper carries TOKEN in its command line so a test can look
for survivors in /proc.
"""

from __future__ import annotations

import subprocess
import sys
import time

token = sys.argv[1]
subprocess.Popen(
    [
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        token,
    ]
)
print("helper started", flush=True)
while True:
    time.sleep(60)
