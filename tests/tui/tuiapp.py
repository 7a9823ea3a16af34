"""Driving the app in tests: the calc project's app with a fixed clock, and waiting for it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import WorkerCancelled

from bugbout_tui.tui.app import BugboutApp
from bugbout_tui.tui.main import make_app

S = TypeVar("S", bound=Screen[Any])

FIXED_NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def fixed_clock() -> datetime:
    return FIXED_NOW


def calc_app(root: Path, **options: bool) -> BugboutApp:
    return make_app(root, clock=fixed_clock, **options)


async def settle(pilot: Pilot[int]) -> None:
    """Wait until every worker is done and its messages are handled, then apply the
    events waiting in the feed: what a person sees once the app has caught up."""
    app = pilot.app
    assert isinstance(app, BugboutApp)
    for _ in range(20):
        await pilot.pause()
        running = [w for w in app.workers if w.is_running and w.group != "engine"]
        if not running and not len(app.feed):
            break
        for worker in running:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        app.tick()
    app.tick()
    await pilot.pause()
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    await pilot.pause()


async def press_and_settle(pilot: Pilot[int], *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


@contextlib.asynccontextmanager
async def on_screen(
    root: Path, key: str | None, kind: type[S]
) -> AsyncIterator[tuple[BugboutApp, Pilot[int], S]]:
    """The calc app at 120×40, on the screen `key` switches to (None: the one it opens
    on), checked to be a `kind`; the app, its pilot and that screen."""
    app = calc_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        if key is None:
            await settle(pilot)
        else:
            await press_and_settle(pilot, key)
        screen = app.screen
        assert isinstance(screen, kind)
        yield app, pilot, screen


async def until(
    pilot: Pilot[int], condition: Callable[[], bool], what: str, timeout: float
) -> None:
    """Let the app run until `condition` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await pilot.pause(0.05)
