"""A uv that never finishes costs its task the rung, not the bout: it is stopped, with
the builds it started, and the resolution fails with that said."""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bugbout_tui.infra import env
from bugbout_tui.infra.dated_env import Failed, Inputs, resolve
from bugbout_tui.infra.pythons import Python


def test_a_resolution_uv_never_finishes_is_stopped_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "build.pid"
    stalled = tmp_path / "uv"
    stalled.write_text(
        "#!/bin/sh\n"
        f"sleep 600 & echo $! > {started}\n"  # a build uv started, waiting with it
        "wait\n"
    )
    stalled.chmod(0o755)
    monkeypatch.setattr(env, "UV_TIMEOUT_SECONDS", 1.0)
    inputs = Inputs(
        requirements=["pytest"],
        python=Python(tuple(sys.version_info[:3]), Path(sys.executable)),
        date=datetime(2021, 1, 1, tzinfo=UTC),
        build=None,
    )
    found = asyncio.run(resolve(stalled, inputs, envs=tmp_path / "envs"))
    assert isinstance(found, Failed)
    assert "uv did not finish in 1 s, and was stopped" in found.quoted()
    assert not alive(int(started.read_text()))


def alive(pid: int) -> bool:
    """Whether `pid` still runs: gone, or dead and waiting to be reaped, is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
