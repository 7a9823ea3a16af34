"""Running a bout from the command line so that every usual way of stopping it is clean.

Ctrl-C (SIGINT) already cancels the pipeline under `asyncio.run`. SIGTERM is what CI
runners, `timeout` and service managers send; by default it would kill bugbout on the
spot, leaving agents to the kernel and no end in the journal. Here it stops the bout the
way Ctrl-C does: agents are ended, everything finished is kept, the journal says
"stopped", and the next run carries on.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Terminated(Exception):
    """The bout was stopped by SIGTERM; the command exits with 128 + its number."""

    exit_code = 128 + signal.SIGTERM


def run_stoppable(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` to its end, or until SIGINT (KeyboardInterrupt) or SIGTERM (Terminated)."""
    terminated = False

    async def main() -> T:
        nonlocal terminated
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop() -> None:
            nonlocal terminated
            terminated = True
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, stop)
        try:
            return await work
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if terminated:
            raise Terminated from None
        raise
