"""Python's garbage collector, kept off the app's redraws.

A chatty race allocates fast, and a collection that lands on a redraw makes the screen
stutter. So everything alive once the app is up is frozen out of the collector's sight,
the young and middle generations are kept small so that their passes stay short, and the
old generation is collected by the app on a tick of its own.
"""

from __future__ import annotations

import gc
from time import monotonic

GC_THRESHOLDS = (1_000, 5, 1_000_000)
"""Allocations before a young collection, and young (then middle) collections before an
old one; the last is out of reach, so the app collects the old generation itself (Python's
defaults are 700, 10, 10). Small young and middle generations keep every pass short:
in a chatty race, young passes took 1-2 ms and middle ones 3-5 ms, against 5-13 and
12-28 ms with 5,000 allocations per young pass, and less time in all."""
FULL_COLLECTION_EVERY = 30.0
"""Seconds between two full collections, each taking a tick of its own so that it never
adds to a redraw: a full pass can take most of a hundred milliseconds on a busy machine."""


class Collector:
    """When the app's full collections are due."""

    def __init__(self) -> None:
        self._collected = monotonic()

    def take_over(self) -> None:
        """Freeze what is alive now (modules, widgets, styles: it lives as long as the app)
        and set the thresholds; from here on, `collect_if_due` collects the old generation."""
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)

    def collect_if_due(self) -> bool:
        """Run a full collection if one is due; True when it ran, so that the tick it ran
        in draws nothing more."""
        if monotonic() - self._collected <= FULL_COLLECTION_EVERY:
            return False
        self._collected = monotonic()
        gc.collect()
        return True
