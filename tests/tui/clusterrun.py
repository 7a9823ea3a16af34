"""The recorded race as a run on a cluster: `race-midway.jsonl` with the events a
cluster's run adds, for the screens that show where the work runs."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from tuiproject import EVENTS

from bugbout_tui.core.events import ClusterChanged

ADDRESS = "tcp://10.0.0.5:8786"

WORKERS = {
    "calc-3/careful": "gpu-1",
    "calc-3/hasty": "gpu-2",
    "calc-3/slow": "gpu-2",
    "calc-3/examiner": "gpu-1",
}
"""Where each started attempt runs; `rationed`, which no worker claims, runs on this
machine."""


def _told(at: str, workers: int, busy: int, lost: int) -> str:
    event = ClusterChanged(
        at=datetime.fromisoformat(at), address=ADDRESS, workers=workers, busy=busy, lost=lost
    )
    return event.model_dump_json()


def midway_on_a_cluster() -> str:
    """The race midway on a cluster of three workers: each attempt started on its worker
    of `WORKERS`, and one worker lost while two attempts run."""
    lines: list[str] = []
    at = ""
    for line in (EVENTS / "race-midway.jsonl").read_text().splitlines():
        event = json.loads(line)
        at = event["at"]
        if event["type"] == "attempt-started":
            event["worker"] = WORKERS.get(event["attempt"])
        lines.append(json.dumps(event))
        if event["type"] == "stage-started" and event["stage"] == "race":
            lines.append(_told(at, workers=3, busy=0, lost=0))
    lines.append(_told(at, workers=2, busy=1, lost=1))
    return "\n".join(lines) + "\n"


def write_journal(project: Path) -> None:
    """Make `midway_on_a_cluster` the project's journal, as the app follows it."""
    (project / ".bugbout" / "events.jsonl").write_text(midway_on_a_cluster())
