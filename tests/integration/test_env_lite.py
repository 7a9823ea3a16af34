"""`bugbout env-lite`, as a person runs it: the demo's scripted agents on the Lite set,
offline, through the real engine, uv and sandbox, ending with the report.

Offline is checked, not assumed: every connection that is not to 127.0.0.1 goes to a
proxy that does not exist, so a single request to the internet (a package, a Python)
would fail an install and show in the controls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import tomlkit
from terminals import bugbout

from bugbout_tui.core.env_models import RepairSet

pytestmark = pytest.mark.slow  # about fifty clean installs

OFFLINE = {
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "UV_PYTHON_DOWNLOADS": "never",
    "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
}


LEFT_OUT = ("lite-confsnap", "lite-mailqueue", "lite-modelcard", "lite-s3links")
"""Excluded in the demo's bugbout.toml, so the test takes half the time; the five left
hold a failing install and failing runs, a security label, a loosened pin and a rejected
repair."""


def test_env_lite_races_the_lite_set_offline_and_prints_the_report(tmp_path: Path) -> None:
    home, demo = tmp_path / "home", tmp_path / "lite-demo"
    env = {**OFFLINE, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "COLUMNS": "200"}
    built = bugbout("env-lite", str(demo), "--until", "mine", home=home, **env)
    assert built.returncode == 0, built.stderr
    assert "Built the Lite demo" in built.stderr
    config = demo / "bugbout.toml"
    document = tomlkit.parse(config.read_text())
    document["tasks"]["exclude"] = list(LEFT_OUT)  # type: ignore[index]
    config.write_text(tomlkit.dumps(document))

    first = bugbout("env-lite", str(demo), home=home, timeout=240, **env)

    assert first.returncode == 0, first.stderr
    assert "Reusing the Lite demo" in first.stderr
    assert "Lite: the built-in set" in first.stdout
    assert "Newest is not the same as safe" in first.stdout
    assert "How the tasks were found" not in first.stdout  # no history is mined
    assert str(demo / ".bugbout" / "report.md") in first.stdout
    repairs = RepairSet.model_validate_json((demo / ".bugbout" / "repairs.json").read_bytes())
    assert len(repairs.controls) == 5 and not set(LEFT_OUT) & set(repairs.controls)
    scored = [t for t, c in repairs.controls.items() if c["gold"].resolved]
    assert len(scored) == 5, {t: c["gold"].detail for t, c in repairs.controls.items()}
    for task in scored:
        assert repairs.controls[task]["base"].status in ("install-failed", "run-failed")
        assert repairs.repairs[task]["careful"].status == "resolved"
        assert repairs.repairs[task]["careful"].safe_install == 1.0
    hasty = [repairs.repairs[t]["hasty"] for t in scored]
    assert any(r.status == "rejected" and r.install is None for r in hasty)
    assert any(r.resolved and (r.safe_install or 0) < 1 for r in hasty)
    assert "[env]" in first.stderr  # the plain log names each install as it ends

    again = bugbout("env-lite", str(demo), home=home, timeout=120, **env)

    assert again.returncode == 0, again.stderr
    assert "Reusing the Lite demo" in again.stderr
    assert "[env]" not in again.stderr  # every control and repair kept, none made again
    assert "Lite: the built-in set" in again.stdout
    stored = json.loads((demo / ".bugbout" / "repairs.json").read_text())
    assert RepairSet.model_validate(stored) == repairs
