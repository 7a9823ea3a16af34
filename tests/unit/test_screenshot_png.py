"""The README's screenshots as PNGs: a border drawn down many rows stays unbroken."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "screenshots.py"


@pytest.fixture(scope="module")
def screenshots() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshots_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_row_is_a_whole_number_of_pixels(screenshots: ModuleType) -> None:
    svg = "<style>.terminal { font-size: 20px; line-height: 24.4px; }</style>"
    scale = screenshots.whole_rows(svg)
    assert [round(row * 24.4 * scale, 6) for row in (1, 2, 3, 5)] == [24, 48, 72, 120]
    assert screenshots.whole_rows("<svg/>") == 1.0
