"""ONNX Runtime: run machine-learning models in the ONNX format."""

from __future__ import annotations

__all__ = ["get_available_providers", "get_device"]


def get_device() -> str:
    """The device this build runs models on."""
    return "CPU"


def get_available_providers() -> list[str]:
    """The execution providers this build was compiled with, in order of preference."""
    return ["CPUExecutionProvider"]
