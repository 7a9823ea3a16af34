"""What the installed ONNX runtime offers, in the words the model card uses."""

from __future__ import annotations

import onnxruntime

GPU_PROVIDERS = ("CUDAExecutionProvider", "ROCMExecutionProvider", "CoreMLExecutionProvider")


def runtime_summary() -> str:
    providers = ", ".join(onnxruntime.get_available_providers())
    return f"runs on {onnxruntime.get_device()} ({providers})"


def can_use_gpu() -> bool:
    return any(p in GPU_PROVIDERS for p in onnxruntime.get_available_providers())
