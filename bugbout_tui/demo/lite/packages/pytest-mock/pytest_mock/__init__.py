"""The `mocker` fixture: `unittest.mock.patch` without the decorators, undone after each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest

__all__ = ["MockerFixture", "mocker"]


class _Patcher:
    def __init__(self, started: list[Any]) -> None:
        self._started = started

    def _start(self, patcher: Any) -> Any:
        mocked = patcher.start()
        self._started.append(patcher)
        return mocked

    def __call__(self, target: str, *args: Any, **kwargs: Any) -> Any:
        return self._start(mock.patch(target, *args, **kwargs))

    def object(self, target: object, attribute: str, *args: Any, **kwargs: Any) -> Any:
        return self._start(mock.patch.object(target, attribute, *args, **kwargs))

    def dict(self, in_dict: Any, values: Any = (), clear: bool = False, **kwargs: Any) -> Any:
        return self._start(mock.patch.dict(in_dict, values, clear, **kwargs))


class MockerFixture:
    """What the `mocker` fixture gives a test."""

    Mock = mock.Mock
    MagicMock = mock.MagicMock
    ANY = mock.ANY
    call = mock.call

    def __init__(self) -> None:
        self._started: list[Any] = []
        self.patch = _Patcher(self._started)

    def spy(self, obj: object, name: str) -> Any:
        return self.patch.object(obj, name, autospec=True, side_effect=getattr(obj, name))

    def stopall(self) -> None:
        for patcher in reversed(self._started):
            patcher.stop()
        self._started.clear()


@pytest.fixture
def mocker() -> Iterator[MockerFixture]:
    fixture = MockerFixture()
    yield fixture
    fixture.stopall()
