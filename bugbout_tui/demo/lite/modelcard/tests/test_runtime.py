import onnxruntime

from modelcard import can_use_gpu, runtime_summary


def test_the_summary_names_the_device_and_every_provider():
    summary = runtime_summary()
    assert summary.startswith(f"runs on {onnxruntime.get_device()} (")
    for provider in onnxruntime.get_available_providers():
        assert provider in summary


def test_the_cpu_build_has_no_gpu(monkeypatch):
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert not can_use_gpu()
