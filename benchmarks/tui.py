"""How bugbout-tui keeps up: a 50,000-event race, and a 40 × 40 matrix.

1. A stream of 50,000 events (8 quota lanes, 25 attempts each, chatty agents) is written
   as a journal, then read back line by line (as `--watch` reads one) and pushed into the
   app (headless, Race screen showing) as fast as it takes them; the time to parse the
   lines is counted. Printed: events per second, the longest the event loop was
   blocked (a frame that could not be drawn), and whether the state holds every event.
   Targets: at least 5,000 events/s, no stall over 100 ms, nothing lost.
2. A matrix of 40 trees × 40 authors (5 tests each) is opened on the Matrix screen and
   the cursor walked across it. Printed: time to open, and time per cursor move.

Run: `python benchmarks/tui.py [--events 50000] [--side 40] [--smoke]` (`BENCH_DEBUG=1`
also lists every stall over 100 ms with the number of events applied by then). Other
processes on the machine show up as stalls. An event lost is a failure (exit status 1).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchkit.options import parse_args
from textual.worker import WorkerCancelled

from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptOutput,
    AttemptQueued,
    AttemptStarted,
    BaseEvent,
    BoutFinished,
    BoutStarted,
    StageFinished,
    StageStarted,
    parse_event,
)
from bugbout_tui.core.models import Author, Cell, Matrix, PatchFacts, TreeRun
from bugbout_tui.core.store import Store
from bugbout_tui.tui.main import make_app
from bugbout_tui.tui.widgets.grid import CellGrid

EVENTS = 50_000
LANES = 8
ATTEMPTS_PER_LANE = 25
SIDE = 40
TESTS_PER_AUTHOR = 5


def race_events(events: int) -> list[BaseEvent]:
    """8 lanes racing 25 attempts each; agents print until the stream holds `events`."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = iter(start + timedelta(milliseconds=n) for n in range(10 * events))
    attempts = [
        (f"task-{n}/agent-{lane}", f"task-{n}", f"agent-{lane}", f"lane-{lane}")
        for n in range(ATTEMPTS_PER_LANE)
        for lane in range(LANES)
    ]
    head: list[BaseEvent] = [
        BoutStarted(at=next(clock), project="/bench", stages=["race"], pid=1),
        StageStarted(at=next(clock), stage="race"),
    ]
    head += [
        AttemptQueued(at=next(clock), attempt=a, task=t, contestant=c, role="contestant", quota=q)
        for a, t, c, q in attempts
    ]
    tail_count = 2
    lines = events - len(head) - 2 * len(attempts) - tail_count
    per_attempt, spare = divmod(lines, len(attempts))
    body: list[BaseEvent] = []
    for round_ in range(ATTEMPTS_PER_LANE):
        batch = [attempt for attempt, *_ in attempts[round_ * LANES : (round_ + 1) * LANES]]
        body += [AttemptStarted(at=next(clock), attempt=a, logdir="/bench") for a in batch]
        count = per_attempt + (spare if round_ == ATTEMPTS_PER_LANE - 1 else 0)
        for line in range(count):
            for attempt in batch[: 1 if line >= per_attempt else LANES]:
                body.append(
                    AttemptOutput(
                        at=next(clock), attempt=attempt, stream="stdout",
                        line=f"\x1b[32mstep {line}\x1b[0m: reading src/pkg/module_{line % 17}.py "
                        "and thinking about what the issue says [" + "=" * (line % 30) + "]",
                    )
                )  # fmt: skip
        body += [
            AttemptFinished(at=next(clock), attempt=a, status="finished", seconds=12.5)
            for a in batch
        ]
    tail: list[BaseEvent] = [
        StageFinished(at=next(clock), stage="race", summary="200 attempts"),
        BoutFinished(at=next(clock), outcome="done"),
    ]
    stream = head + body + tail
    assert len(stream) == events, len(stream)
    return stream


def big_matrix(side: int) -> Matrix:
    tests = [f"tests/test_{n}.py::test_case" for n in range(TESTS_PER_AUTHOR)]
    authors = [
        Author(name=f"author-{n}", kind="suite" if n == 0 else "examiner", tests=tests)
        for n in range(side)
    ]
    trees = {"base": TreeRun(tree="base")}
    for author in authors:
        trees["base"].cells[author.name] = {t: Cell(outcome="failed") for t in tests}
    patches = [
        PatchFacts(contestant=f"patch-{n}", vendor="v", source_size=n) for n in range(side - 1)
    ]
    for index, patch in enumerate(patches):
        run = TreeRun(tree=patch.contestant)
        for author in authors:
            run.cells[author.name] = {
                t: Cell(outcome="passed" if (index + k) % 3 else "failed", message="assert 1 == 2")
                for k, t in enumerate(tests)
            }
        trees[patch.contestant] = run
    return Matrix(task="big-1", authors=authors, patches=patches, trees=trees)


def make_project(root: Path) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "bugbout.toml").write_text('[project]\nsource = "src/pkg"\n')
    return root


async def stream(project: Path, journal: Path, events: int, side: int) -> bool:
    """Play the journal into the app, then open the matrix; whether nothing was lost."""
    lines = journal.read_text().splitlines()
    app = make_app(project)
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        await pilot.press("3")
        await pilot.pause(0.3)
        worst_stall = worst_steady = 0.0
        stalls: list[tuple[float, int]] = []
        done = asyncio.Event()

        async def probe() -> None:
            nonlocal worst_stall, worst_steady
            while not done.is_set():
                before = time.perf_counter()
                await asyncio.sleep(0.005)
                stall = time.perf_counter() - before - 0.005
                worst_stall = max(worst_stall, stall)
                if app.state.events > events // 10:
                    worst_steady = max(worst_steady, stall)
                if stall > 0.1:
                    stalls.append((stall, app.state.events))

        watcher = asyncio.create_task(probe())
        started = time.perf_counter()
        for index in range(0, len(lines), 250):
            while len(app.feed) > 5_000:
                await asyncio.sleep(0.001)
            app.feed.extend([parse_event(line) for line in lines[index : index + 250]])
            await asyncio.sleep(0)
        while app.state.events < events:
            await asyncio.sleep(0.001)
        elapsed = time.perf_counter() - started
        done.set()
        await watcher
        await pilot.pause(0.2)
        finished = sum(len(lane.finished) for lane in app.state.lanes.values())
        print(f"race stream: {events} events in {elapsed:.2f} s = {events / elapsed:,.0f} events/s")
        print(
            f"  longest stall of the event loop: {worst_stall * 1000:.1f} ms; once the "
            f"lanes are laid out (past event {events // 10:,}): {worst_steady * 1000:.1f} ms"
        )
        if os.environ.get("BENCH_DEBUG"):
            print("  stalls over 100 ms (ms, events applied by then):",
                  [(round(s * 1000), n) for s, n in stalls])  # fmt: skip
        print(
            f"  state holds {app.state.events} events, {len(app.state.lanes)} lanes, "
            f"{finished} of {LANES * ATTEMPTS_PER_LANE} attempts finished"
        )
        ok = app.state.events == events and finished == LANES * ATTEMPTS_PER_LANE
        print(f"  nothing lost: {'yes' if ok else 'NO'}")

        store = Store(project)
        store.write(store.matrix_path("big-1"), big_matrix(side))
        app.reload_records()
        for worker in list(app.workers):  # a reload cancels the one it replaces
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        await pilot.pause(0.2)
        opened = time.perf_counter()
        await pilot.press("4")
        while not app.screen.query("CellGrid") or not app.screen.query_one(CellGrid).row_keys:
            await pilot.pause(0.01)
        print(f"matrix {side} × {side}: opened in {time.perf_counter() - opened:.2f} s")
        moves: list[float] = []
        for key in ["right"] * (side - 1) + ["down"] * (side - 1):
            before = time.perf_counter()
            await pilot.press(key)
            moves.append(time.perf_counter() - before)
        idle: list[float] = []
        for _ in range(20):
            before = time.perf_counter()
            await pilot.press("x")
            idle.append(time.perf_counter() - before)
        grid = app.screen.query_one(CellGrid)
        redraws: list[float] = []
        for step in [(0, -1)] * (side - 1) + [(-1, 0)] * (side - 1):
            before = time.perf_counter()
            grid.action_move(*step)
            grid.render_lines(grid.region.reset_offset)
            redraws.append(time.perf_counter() - before)
        print(
            f"  {len(moves)} cursor moves: mean {sum(moves) / len(moves) * 1000:.1f} ms, "
            f"worst {max(moves) * 1000:.1f} ms (cursor at {grid.cursor_row}, {grid.cursor_column});"
            f" a key press that does nothing takes {sum(idle) / len(idle) * 1000:.1f} ms here"
        )
        print(
            f"  the grid's own work per move (move + draw every visible line): "
            f"mean {sum(redraws) / len(redraws) * 1000:.2f} ms, worst {max(redraws) * 1000:.2f} ms"
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=EVENTS, help="events in the race")
    parser.add_argument("--side", type=int, default=SIDE, help="trees and authors of the matrix")
    args = parse_args(parser, has_target=False, events=2_000, side=6)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ.setdefault("BUGBOUT_HOME", str(Path(scratch) / "home"))
        project = make_project(Path(scratch) / "bench")
        journal = Path(scratch) / "events.jsonl"
        journal.write_text("".join(e.model_dump_json() + "\n" for e in race_events(args.events)))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
        whole = asyncio.run(stream(project, journal, args.events, args.side))
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())
