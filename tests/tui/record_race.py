"""Record `events/race.jsonl`: a real run of the calc project's race, for replaying.

Run it by hand when the events change shape: `python tests/tui/record_race.py`. It
builds the calc project in a temporary directory, gives it scripted agents that really
run (in the sandbox, like any agent), runs the bout up to the race, and keeps the
journal with the temporary paths replaced by fixed ones. `race.jsonl` is the whole run;
`race-midway.jsonl` stops while both lanes are busy, which is what the board looks like
live.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from tuiapp import FIXED_NOW  # noqa: E402
from tuiproject import EVENTS, build_project  # noqa: E402

from bugbout_tui.engine.bout import Bout  # noqa: E402
from bugbout_tui.engine.project import Project  # noqa: E402

AGENT = HERE / "agents" / "scripted.py"


def contestant(name: str, quota: str, *, examiner: bool = False) -> str:
    command = [sys.executable, str(AGENT), name, "{workdir}"]
    table = "examiners" if examiner else "contestants"
    return (
        f'\n[[{table}]]\nagent = "command"\nname = "{name}"\nquota = "{quota}"\n'
        f"command = {json.dumps(command)}\n"
    )


def record() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "calc"
        build_project(root, records=False, events=None)
        config = (root / "bugbout.toml").read_text()
        head = config[: config.index("# Two lanes")]
        head = head.replace(
            'issues-file = "issues.json"',
            f'issues-file = "issues.json"\ninterpreter = "{sys.executable}"\n'
            'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }',
        )
        agents = [("careful", "alpha"), ("hasty", "alpha"), ("slow", "beta"),
                  ("rationed", "beta")]  # fmt: skip
        text = head + "".join(contestant(n, q) for n, q in agents)
        text += contestant("examiner", "alpha", examiner=True)
        (root / "bugbout.toml").write_text(text)
        os.environ["BUGBOUT_HOME"] = str(Path(scratch) / "home")
        Bout(Project.load(root)).run(until="race")
        lines = (root / ".bugbout" / "events.jsonl").read_text().splitlines()
        fixed = [line.replace(scratch, "/tmp/bugbout-recording") for line in lines]
        ended = dated(fixed, FIXED_NOW - timedelta(minutes=5))
        live = dated(midway(fixed), FIXED_NOW - timedelta(seconds=1))
        (EVENTS / "race.jsonl").write_text("\n".join(ended) + "\n")
        (EVENTS / "race-midway.jsonl").write_text("\n".join(live) + "\n")
        print(f"recorded {len(fixed)} events")


def dated(lines: list[str], last: datetime) -> list[str]:
    """The journal moved in time so its last event is at `last`: the replaying tests
    read the clock as `FIXED_NOW`, and a run recorded after that moment would show a
    limit that resets months away and attempts running for less than nothing."""
    events = [json.loads(line) for line in lines]
    shift = last - datetime.fromisoformat(events[-1]["at"])
    for event in events:
        event["at"] = (datetime.fromisoformat(event["at"]) + shift).isoformat()
    return [json.dumps(event, separators=(",", ":"), ensure_ascii=False) for event in events]


def midway(lines: list[str]) -> list[str]:
    """The journal up to the first moment both lanes run an attempt that has talked."""
    running: dict[str, str] = {}
    talked: set[str] = set()
    lanes: dict[str, str] = {}
    for index, line in enumerate(lines):
        event = json.loads(line)
        kind = event["type"]
        if kind == "attempt-queued":
            lanes[event["attempt"]] = event["quota"]
        elif kind == "attempt-started":
            running[lanes[event["attempt"]]] = event["attempt"]
        elif kind == "attempt-finished":
            lane = lanes[event["attempt"]]
            if running.get(lane) == event["attempt"]:
                del running[lane]
        elif kind == "attempt-output":
            talked.add(event["attempt"])
        done = sum(1 for line in lines[:index] if '"attempt-finished"' in line)
        if len(running) == 2 and set(running.values()) <= talked and done >= 3:
            return lines[: index + 1]
    raise SystemExit("no moment with both lanes busy was found")


if __name__ == "__main__":
    record()
