"""The screenshot tool: its PNGs keep a border drawn down many rows unbroken, and the
demos' configs take the edits that make its keys reach the same moments every time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bugbout_tui.demo.lite_demo import prepare_lite_demo
from bugbout_tui.demo.project import prepare_demo

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


def test_the_lite_demo_runs_its_shared_lane_one_attempt_at_a_time(
    screenshots: ModuleType, tmp_path: Path
) -> None:
    """The race board lists attempts in the order they ended; two at once in lane-a would
    let the keys of `env-repair` open careful's attempt instead of hasty's."""
    repository = tmp_path / "repository"
    (repository / "pkg").mkdir(parents=True)
    (repository / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    demo, _ = prepare_lite_demo(tmp_path / "lite", repository=repository)
    screenshots.edit_config(demo.root, screenshots.ONE_AT_A_TIME)
    assert 'quotas = { "lane-a" = 1, "lane-b" = 1 }' in demo.config_path.read_text()


def test_the_demo_takes_its_pace(screenshots: ModuleType, tmp_path: Path) -> None:
    demo, _ = prepare_demo(tmp_path / "demo")
    screenshots.pace(demo.root)
    text = (demo.root / "bugbout.toml").read_text(encoding="utf-8")
    assert '"lane-a" = 1' in text and '"--allowance", "1"' in text


def test_a_config_that_no_longer_says_what_the_tool_edits_stops_it(
    screenshots: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "bugbout.toml").write_text('quotas = { "lane-a" = 3 }\n', encoding="utf-8")
    with pytest.raises(SystemExit, match='no longer says "lane-a" = 2'):
        screenshots.edit_config(tmp_path, screenshots.ONE_AT_A_TIME)
