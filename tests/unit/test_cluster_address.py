"""Which scheduler a bout uses, and what a wrong one says."""

from __future__ import annotations

import pytest

from bugbout_tui.engine.cluster import ENV_VAR, cluster_address


def test_the_flag_beats_the_variable_which_beats_the_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert cluster_address(None, None) is None
    assert cluster_address(None, "tcp://c:8786") == "tcp://c:8786"
    monkeypatch.setenv(ENV_VAR, "tcp://e:8786")
    assert cluster_address(None, "tcp://c:8786") == "tcp://e:8786"
    assert cluster_address("tcp://f:8786", "tcp://c:8786") == "tcp://f:8786"


def test_an_empty_address_anywhere_means_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "tcp://e:8786")
    assert cluster_address("", "tcp://c:8786") is None
    monkeypatch.setenv(ENV_VAR, " ")
    assert cluster_address(None, "tcp://c:8786") is None
