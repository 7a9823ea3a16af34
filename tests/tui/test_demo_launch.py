"""`bugbout-tui --demo` opens the demo as `bugbout demo` does, and `--env-lite` the Lite
demo as `bugbout env-lite` does: each directory is reused with everything the user did
in it, and only `--fresh` starts it over."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tuiapp import fixed_clock, settle, until

from bugbout_tui.core.env_models import RepairSet
from bugbout_tui.demo.lite import lite_projects
from bugbout_tui.tui.main import main, make_app, open_demo, open_lite


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


def test_the_lite_demo_is_reused_and_fresh_starts_it_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = open_lite(tmp_path / "lite")
    assert "Built the Lite demo" in capsys.readouterr().err
    config = root / "bugbout.toml"
    assert "lite = true" in config.read_text() and "kinds = []" in config.read_text()
    edited = config.read_text().replace("trials = 1", "trials = 2")
    config.write_text(edited)

    assert open_lite(tmp_path / "lite") == root
    assert "Reusing the Lite demo" in capsys.readouterr().err
    assert config.read_text() == edited

    assert open_lite(tmp_path / "lite", fresh=True) == root
    assert "trials = 1" in config.read_text()


async def test_the_lite_demo_runs_in_the_app_against_its_own_index(
    tmp_path: Path,
) -> None:
    root = open_lite(tmp_path / "lite")
    config = root / "bugbout.toml"
    kept = "lite-dusize"
    others = [p.id for p in lite_projects() if p.id != kept]
    config.write_text(config.read_text().replace("kinds = []", f"kinds = []\nexclude = {others!r}"))
    app = make_app(root, demo=True, clock=fixed_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.start_bout(until="ground-truth")
        await until(pilot, lambda: app.session.engine is None, "the bout to end", 300)
    stored = RepairSet.model_validate_json((root / ".bugbout" / "repairs.json").read_bytes())
    assert list(stored.controls) == [kept]
    assert stored.controls[kept]["base"].status == "install-failed"
    assert stored.controls[kept]["gold"].resolved


def test_env_lite_and_the_demo_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--demo", "--env-lite"])
    assert exited.value.code == 2
    assert "--env-lite" in capsys.readouterr().err
