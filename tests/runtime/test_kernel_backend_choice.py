"""The plugin kernel's backend is chosen again when the settings it depends on change.

A choice cached for the whole process once leaked between tests (a forced fallback in one test
left every later plugin run in that worker on onnx.reference) and would do the same in a
long-lived process that changes ONNXTOOL_RUNTIME_FALLBACK.
"""

from __future__ import annotations

import pytest

from graphsurgeon_tools.runtime import kernels

pytest.importorskip("torch")  # the fast backend is the PyTorch side's C++ op


def test_a_forced_fallback_does_not_outlive_its_setting(monkeypatch):
    monkeypatch.delenv("ONNXTOOL_RUNTIME_FALLBACK", raising=False)
    fast = kernels.kernel_backend()
    assert fast != "reference", kernels._fallback_reason
    monkeypatch.setenv("ONNXTOOL_RUNTIME_FALLBACK", "1")
    assert kernels.kernel_backend() == "reference"
    monkeypatch.delenv("ONNXTOOL_RUNTIME_FALLBACK")
    assert kernels.kernel_backend() == fast
