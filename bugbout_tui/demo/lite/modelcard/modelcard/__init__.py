"""Runtime facts for model cards."""

from modelcard.runtime import can_use_gpu, runtime_summary

__all__ = ["can_use_gpu", "runtime_summary"]
