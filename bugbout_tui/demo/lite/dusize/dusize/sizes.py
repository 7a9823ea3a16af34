"""Directory sizes, summed over every file below, symbolic links not followed."""

from __future__ import annotations

import os
from pathlib import Path

import humanize


def directory_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            file = Path(root) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def describe(path: Path, binary: bool = False) -> str:
    """`'photos: 1.5 MB'`."""
    return f"{path.name}: {humanize.naturalsize(directory_size(path), binary=binary)}"
