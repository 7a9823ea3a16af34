"""An attempt's logs on their way back from a worker: capped, plain, kept inside."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from bugbout_tui.engine import cluster_attempts
from bugbout_tui.engine.cluster_attempts import _pack, unpack_logs


def test_logs_come_back_as_plain_files_cut_to_their_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_attempts, "LOGS_LIMIT", 10)
    logs = tmp_path / "logs"
    (logs / "agent").mkdir(parents=True)
    (logs / "stdout.log").write_text("0123456789-the end")
    (logs / "agent" / "session.json").write_text("{}")
    os.symlink("/etc/passwd", logs / "stolen")
    os.mkfifo(logs / "pipe")
    back = tmp_path / "back"
    unpack_logs(_pack(logs), back)
    assert (back / "stdout.log").read_text() == "89-the end"
    assert (back / "agent" / "session.json").read_text() == "{}"
    assert not (back / "stolen").exists() and not (back / "pipe").exists()


def test_the_whole_is_capped_and_the_agents_streams_come_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_attempts, "LOGS_TOTAL", 40)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "aaa-flood.txt").write_text("x" * 100)
    (logs / "stdout.log").write_text("out " * 4)
    (logs / "stderr.log").write_text("err " * 4)
    back = tmp_path / "back"
    unpack_logs(_pack(logs), back)
    assert (back / "stdout.log").read_text() == "out " * 4
    assert (back / "stderr.log").read_text() == "err " * 4
    assert (back / "aaa-flood.txt").read_text() == "x" * 8


def test_a_log_that_climbs_out_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack_logs(buffer.getvalue(), tmp_path / "logs")
    assert not (tmp_path / "outside.txt").exists()
