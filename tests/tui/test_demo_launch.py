"""`bugbout-tui --demo` opens the demo as `bugbout demo` does: the demo directory is
reused with everything the user did in it, and only `--fresh` starts it over."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout_tui.tui.main import main, open_demo


def test_the_demo_is_reused_with_the_users_changes_and_fresh_starts_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = open_demo(tmp_path / "demo")
    assert "Built the demo" in capsys.readouterr().err
    config = root / "bugbout.toml"
    edited = config.read_text().replace('policy = "majority"', 'policy = "unanimous"')
    config.write_text(edited)
    results = root / ".bugbout" / "verdicts.json"
    results.parent.mkdir()
    results.write_text("{}\n")

    assert open_demo(tmp_path / "demo") == root
    assert "Reusing the demo" in capsys.readouterr().err
    assert config.read_text() == edited
    assert results.is_file()

    assert open_demo(tmp_path / "demo", fresh=True) == root
    assert "Built the demo" in capsys.readouterr().err
    assert 'policy = "majority"' in config.read_text()
    assert not results.exists()


def test_fresh_without_the_demo_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--fresh"])
    assert exited.value.code == 2
    assert "--fresh" in capsys.readouterr().err
