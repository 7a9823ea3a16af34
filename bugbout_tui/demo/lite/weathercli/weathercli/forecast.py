"""Ask Open-Meteo for the current weather at a place."""

from __future__ import annotations

import requests

API = "https://api.open-meteo.com/v1/forecast"


def current_temperature(latitude: float, longitude: float) -> float:
    params = {"latitude": latitude, "longitude": longitude, "current_weather": "true"}
    response = requests.get(API, params=params, timeout=10)
    response.raise_for_status()
    return float(response.json()["current_weather"]["temperature"])


def describe(latitude: float, longitude: float) -> str:
    return f"{current_temperature(latitude, longitude):.1f} °C"
