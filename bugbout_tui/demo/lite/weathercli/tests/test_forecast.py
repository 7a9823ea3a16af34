import pytest
import requests

from weathercli import API, describe


class Answer:
    def __init__(self, status, payload):
        self.status_code = status
        self.payload = payload

    def raise_for_status(self):
        if self.status_code >= 400:
            raise requests.HTTPError(f"{self.status_code} Error")

    def json(self):
        return self.payload


def test_the_current_temperature_is_read(monkeypatch):
    asked = []

    def get(url, params, timeout):
        asked.append((url, params["latitude"], params["longitude"]))
        return Answer(200, {"current_weather": {"temperature": 21.37}})

    monkeypatch.setattr(requests, "get", get)
    assert describe(52.52, 13.41) == "21.4 °C"
    assert asked == [(API, 52.52, 13.41)]


def test_an_error_from_the_api_is_raised(monkeypatch):
    monkeypatch.setattr(requests, "get", lambda url, params, timeout: Answer(503, {}))
    with pytest.raises(requests.HTTPError):
        describe(0.0, 0.0)
