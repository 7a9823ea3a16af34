"""`python tools/screenshots.py [DIR]`: every screen of the demo, as SVG and PNG.

Builds the demo project in a scratch directory and runs its bout in the app (about a
minute, with the demo's scripted agents, offline). The Race screen and an attempt are
taken live, at the race's most telling moment: one lane parked on its quota, the other
running with output, attempts already finished. The other screens are taken on the
finished bout, each at the moment that shows it best: a matrix with a reproduction and a
breakage, a cell with its patch, a verdict whose pick was decided by a tie-break. The
demo's agents are scripted, so the same keys reach the same moments every time.

Then it builds the Lite demo beside it, as `bugbout env-lite` does, runs that bout to its
end headless (about a minute more, offline against the Lite index the bout serves), and
takes the environment-repair screens on it: an attempt's Repair tab, an env verdict's
trail and the Report screen at its env boards. PNGs need `cairosvg`.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.demo.lite_demo import prepare_lite_demo
from bugbout_tui.demo.project import check_pytest, prepare_demo
from bugbout_tui.demo.sandbox import demo_sandbox
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.lite import lite_repository
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.state import BoutState
from bugbout_tui.tui.main import make_app

SIZE = (140, 42)

SHOTS: dict[str, tuple[str, ...]] = {
    "tasks": ("2", "down"),
    "config": ("1", *("down",) * 29),
    "matrix": ("4", "]"),
    "cell": ("4", "]", "down", "down", "right", "right", "right", "right", "enter"),
    "verdicts": ("5", "down", "down", "down"),
    "report": ("6",),
}
"""Screen name → the keys that reach it from the start: the Config screen scrolled past
the paths of this machine, invoicekit-5's matrix (hasty's patch breaks a suite test), the
suite's tests on hasty's patch, and invoicekit-11's verdict (the smaller patch wins)."""

LITE_SHOTS: dict[str, tuple[str, ...]] = {
    "env-repair": ("3", "down", "down", "enter", *("right",) * 4),
    "env-verdict": ("5", *("down",) * 8),
    "env-report": ("6", "b"),
}
"""The same, on the finished Lite bout: hasty's repair of lite-weathercli on its Repair
tab (it keeps the typo `reqeusts`, which the audit flags as one edit from requests and
built from an sdist, and adds `requests` with no pin, which counts as unsafe: safe install
67%), lite-weathercli's env verdict trail (hasty's repair ranks last on safe install,
careful is picked and the merge gate approves), and the Report screen scrolled by `b` to
the env boards (All, Lite, Secure with what the audit flagged)."""

SHORTER = {"config": (SIZE[0], 26)}
"""Shots taken in a shorter window: the Config screen between the interpreter's path and
the agents' commands, which name this machine's directories."""

RACE_TIMEOUT = 300.0
"""Seconds the live race may take to reach its moment before the tool gives up."""

MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"


def busy(state: BoutState) -> bool:
    """Whether every lane not parked runs an attempt that has printed, after attempts
    have already finished."""
    working = [lane for lane in state.lanes.values() if not lane.parked]
    finished = sum(len(lane.finished) for lane in state.lanes.values())
    return bool(working and finished >= 3) and all(
        lane.running and all(state.attempts[a].lines for a in lane.running) for lane in working
    )


def telling(state: BoutState) -> bool:
    """Whether the race shows what sells it: a lane parked on its quota beside a busy
    one."""
    return busy(state) and any(lane.parked for lane in state.lanes.values())


ONE_AT_A_TIME = ('"lane-a" = 2', '"lane-a" = 1')
"""The edit that makes lane-a, shared by careful and hasty, run one attempt at a time."""


def pace(project: Path) -> None:
    """Slow the fast lane to one attempt at a time and give the rationed agent one task's
    allowance, so the demo's lanes overlap long enough for one to park beside the other."""
    edit_config(project, ONE_AT_A_TIME, ('"--allowance", "2"', '"--allowance", "1"'))


def edit_config(project: Path, *edits: tuple[str, str]) -> None:
    """Replace each `(old, new)` in the project's bugbout.toml. A text that is not there
    stops the tool: a demo whose config changed would otherwise be shot at other moments
    than the docstrings say."""
    config = project / "bugbout.toml"
    text = config.read_text(encoding="utf-8")
    for old, new in edits:
        if old not in text:
            raise SystemExit(f"{config} no longer says {old}: update tools/screenshots.py")
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8")


def run_lite(scratch: Path) -> Path:
    """The Lite demo built in `scratch` and its bout run to the end, headless, through
    the engine and the sandbox `bugbout env-lite` uses; its root.

    Its shared lane runs one attempt at a time: the race board lists finished attempts in
    the order they ended, and two at once would let careful's and hasty's attempts on a
    task swap places from run to run, so the same keys would open another attempt.
    """
    demo, _ = prepare_lite_demo(scratch, repository=lite_repository().path, fresh=True)
    edit_config(demo.root, ONE_AT_A_TIME)
    project = Project.load(demo.root)
    sandbox, unconfined = demo_sandbox(project.config.run.sandbox)
    if unconfined is not None:
        print(unconfined, file=sys.stderr)
    Bout(project, sandbox=sandbox).run()
    return demo.root


async def capture_race(project: Path, out: Path) -> list[Path]:
    """The Race screen and one running attempt, live, then the rest of the bout run to
    its end. The race is taken at its most telling moment, or at its first busy one when
    no lane parks while another runs."""
    pace(project)
    race, attempt = out / "race.svg", out / "attempt.svg"
    app = make_app(project, start=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RACE_TIMEOUT
        while app.engine is None and loop.time() < deadline:
            await pilot.pause(0.1)
        shot: str | None = None
        while app.engine is not None and loop.time() < deadline:
            if telling(app.state) or (shot is None and busy(app.state)):
                app.tick()
                await pilot.pause(0.3)
                shot = app.export_screenshot(title="bugbout-tui")
                if telling(app.state):
                    break
                await pilot.press("enter", "right", "right")  # its Log tab
                await pilot.pause(1.0)
                attempt.write_text(app.export_screenshot(title="bugbout-tui"), encoding="utf-8")
                await pilot.press("escape")
            await pilot.pause(0.1)
        if shot is None or not attempt.exists():
            raise SystemExit("the demo's race never had every lane busy at once")
        race.write_text(shot, encoding="utf-8")
        await app.workers.wait_for_complete()
    return [race, attempt]


async def capture(
    project: Path, keys: Sequence[str], svg: Path, size: tuple[int, int] = SIZE
) -> None:
    app = make_app(project)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(1.0)
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.4)
            await app.workers.wait_for_complete()  # a screen's records read before the next key
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
    cairosvg.svg2png(bytestring=text.encode(), write_to=str(png), scale=whole_rows(text))
    return png


def whole_rows(svg: str) -> float:
    """The scale that makes a terminal row a whole number of pixels.

    The export's rows are 24.4 pixels apart, and each row's text is clipped to its row:
    at that pitch a border drawn down many rows shows hairline gaps wherever a row edge
    falls mid-pixel, which a terminal never shows.
    """
    found = re.search(r"line-height: ([\d.]+)px", svg)
    pitch = float(found.group(1)) if found else 0.0
    return math.floor(pitch) / pitch if pitch >= 1 else 1.0


def take_all(project: Path, lite: Path, out: Path) -> list[Path]:
    """Every shot: the demo's, then the finished Lite bout's."""
    out = out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(project)  # paths shown relative to the demo, not this machine's directories
    made = asyncio.run(capture_race(project, out))
    for name, keys in SHOTS.items():
        asyncio.run(capture(project, keys, out / f"{name}.svg", SHORTER.get(name, SIZE)))
        made.append(out / f"{name}.svg")
    os.chdir(lite)
    for name, keys in LITE_SHOTS.items():
        asyncio.run(capture(lite, keys, out / f"{name}.svg"))
        made.append(out / f"{name}.svg")
    pngs = [png for svg in made if (png := to_png(svg)) is not None]
    return made + pngs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/screenshots.py",
        description="Run the demo bout in the app and the Lite bout headless, and save "
        "every screen as SVG and PNG.",
    )
    parser.add_argument("out", nargs="?", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    check_pytest()
    with tempfile.TemporaryDirectory(prefix="bugbout-shots-") as scratch:
        os.environ["BUGBOUT_HOME"] = str(Path(scratch) / "home")
        demo, _ = prepare_demo(Path(scratch) / "demo", fresh=True)
        print("running the Lite bout headless (about a minute)…", file=sys.stderr)
        lite = run_lite(Path(scratch) / "lite")
        print("running the demo bout in the app (about a minute)…", file=sys.stderr)
        made = take_all(demo.root, lite, args.out)
    for path in made:
        print(path)
    if not any(path.suffix == ".png" for path in made):
        print("PNGs need cairosvg: pip install cairosvg", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
