"""Which dates the ladder lifts when uv names the packages that block a resolution."""

from __future__ import annotations

from bugbout_tui.infra.dated_env import lifted_with


def test_the_build_tools_are_lifted_together() -> None:
    """A lifted setuptools beside a dated wheel of 2013 needs distribute, an sdist whose
    build needs wheel: uv waited on that build for ever on a 2013 sqlparse commit."""
    assert lifted_with(["setuptools"]) == ["setuptools", "wheel"]
    assert lifted_with(["wheel", "shapes"]) == ["wheel", "shapes", "setuptools"]
    assert lifted_with(["shapes"]) == ["shapes"]
