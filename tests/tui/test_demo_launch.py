"""`bugbout-tui --demo` opens the demo as `bugbout demo` does: the demo directory is
reused with everything the user did in it, and only `--fresh` starts it over."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tuiapp import fixed_clock, settle, until

from bugbout_tui.tui.main import main, make_app, open_demo


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


def no_bwrap_path(bin_dir: Path) -> str:
    """A PATH with every program of the system's, git among them, but bwrap."""
    bin_dir.mkdir()
    for directory in (Path("/usr/bin"), Path("/bin")):
        for program in directory.iterdir():
            target = bin_dir / program.name
            if program.name != "bwrap" and not target.exists():
                target.symlink_to(program)
    return str(bin_dir)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fallback from bubblewrap")
async def test_the_demo_runs_unconfined_in_the_app_without_bwrap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = open_demo(tmp_path / "demo")
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path / "bin"))
    app = make_app(root, demo=True, clock=fixed_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        app.start_bout(until="ground-truth")
        await until(pilot, lambda: app.session.engine is None, "the bout to end", 300)
        said = [n.message for n in app._notifications]
    assert [m for m in said if "run unconfined" in m and "apt-get install bubblewrap" in m]
    assert (root / ".bugbout" / "oracles.json").is_file()
