"""The `--smoke` option every benchmark has, and what it does to the others.

`tests/integration/test_benchmarks.py` runs each script with `--smoke` alone, so that a
change to the stages a benchmark reaches into cannot break it unnoticed.
"""

from __future__ import annotations

import argparse

_SMOKE_HELP = (
    "a small size that runs in seconds, to check the benchmark still works; its figures "
    "mean nothing"
)


def parse_args(
    parser: argparse.ArgumentParser, *, has_target: bool, **smoke_sizes: object
) -> argparse.Namespace:
    """Add `--smoke` to `parser` and parse the command line.

    With `--smoke`, `smoke_sizes` become the defaults and the line is parsed again, so an
    option given by hand still wins. `has_target`: whether the benchmark checks a target,
    which its help then says a smoke run does not.
    """
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=_SMOKE_HELP + (" and no target is checked" if has_target else ""),
    )
    options = parser.parse_args()
    if options.smoke:
        parser.set_defaults(**smoke_sizes)
        options = parser.parse_args()
    return options
