"""`python tools/screenshots.py [DIR]`: every screen of the demo, as SVG and PNG.

Builds the demo project in a scratch directory, runs its whole bout (about two minutes,
with the demo's scripted agents, offline), then opens the app on the result and saves
each screen. The Race screen is shown as the demo's journal had it mid-race: one lane
parked on its quota, the other running with output, attempts already finished. PNGs
need `cairosvg`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptStarted,
    QuotaParked,
    parse_event,
)
from bugbout_tui.core.store import Store
from bugbout_tui.demo.project import check_pytest, prepare_demo
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project
from bugbout_tui.tui.main import make_app

SIZE = (120, 40)

SHOTS: dict[str, tuple[str, ...]] = {
    "tasks": ("2", "down"),
    "config": ("1", "down", "down"),
    "matrix": ("4",),
    "cell": ("4", "down", "right", "right", "enter"),
    "verdicts": ("5", "down"),
    "report": ("6",),
}
"""Screen name → the keys that reach it from the start."""

MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"


def race_moment(lines: Sequence[str]) -> list[str]:
    """The journal up to the first moment that shows the race at its most telling: a
    lane parked on its quota, every other lane running an attempt that has printed, and
    attempts already finished. Without a parked lane, the first moment every lane runs
    an attempt that has printed."""
    lanes: dict[str, str] = {}
    running: dict[str, str] = {}
    talked: set[str] = set()
    parked: set[str] = set()
    finished = 0
    busy: list[str] | None = None
    for index, line in enumerate(lines):
        event = parse_event(line)
        if event.type == "attempt-queued":
            lanes[event.attempt] = event.quota
        elif isinstance(event, AttemptStarted):
            running[lanes[event.attempt]] = event.attempt
        elif isinstance(event, AttemptFinished):
            running.pop(lanes.get(event.attempt, ""), None)
            finished += 1
        elif isinstance(event, AttemptOutput):
            talked.add(event.attempt)
        elif isinstance(event, QuotaParked):
            parked.add(event.quota)
        working = set(lanes.values()) - parked
        if not working or set(running) != working or not set(running.values()) <= talked:
            continue
        if parked and finished:
            return list(lines[: index + 1])
        if busy is None:
            busy = list(lines[: index + 1])
    return busy if busy is not None else list(lines)


async def capture(project: Path, keys: Sequence[str], svg: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.4)
        await app.workers.wait_for_complete()
        app.tick()
        await pilot.pause(0.5)
        svg.write_text(app.export_screenshot(title="bugbout-tui"), encoding="utf-8")


def to_png(svg: Path) -> Path | None:
    """The SVG as a PNG, drawn with a monospace font every machine has; None without
    cairosvg."""
    try:
        import cairosvg  # type: ignore[import-untyped]
    except ImportError:
        return None
    text = re.sub(r"font-family: [^;\"]*", f"font-family: {MONO}", svg.read_text())
    png = svg.with_suffix(".png")
    cairosvg.svg2png(bytestring=text.encode(), write_to=str(png))
    return png


def take_all(project: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    journal = Store(project).events_path
    full = journal.read_text(encoding="utf-8").splitlines()
    journal.write_text("\n".join(race_moment(full)) + "\n", encoding="utf-8")
    try:
        asyncio.run(capture(project, ("3",), out / "race.svg"))
        made.append(out / "race.svg")
        asyncio.run(capture(project, ("3", "tab", "enter", "right"), out / "attempt.svg"))
        made.append(out / "attempt.svg")
    finally:
        journal.write_text("\n".join(full) + "\n", encoding="utf-8")
    for name, keys in SHOTS.items():
        asyncio.run(capture(project, keys, out / f"{name}.svg"))
        made.append(out / f"{name}.svg")
    pngs = [png for svg in made if (png := to_png(svg)) is not None]
    return made + pngs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/screenshots.py",
        description="Run the demo bout and save every screen as SVG and PNG.",
    )
    parser.add_argument("out", nargs="?", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    check_pytest()
    with tempfile.TemporaryDirectory(prefix="bugbout-shots-") as scratch:
        os.environ["BUGBOUT_HOME"] = str(Path(scratch) / "home")
        demo, _ = prepare_demo(Path(scratch) / "demo", fresh=True)
        print("running the demo bout (about two minutes)…", file=sys.stderr)
        Bout(Project.load(demo.root)).run()
        made = take_all(demo.root, args.out)
    for path in made:
        print(path)
    if not any(path.suffix == ".png" for path in made):
        print("PNGs need cairosvg: pip install cairosvg", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
