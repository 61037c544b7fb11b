"""HalfNet (conv, relu, nearest x2, bilinear x2, conv), written once for the half-precision tests.

* ``SOURCE``: the module as a file a ``python:FILE:build`` reference loads (``build()`` seeds torch
  with 0 and returns the net in eval mode);
* ``HalfNet``: the same class, compiled from ``SOURCE``; ``seeded()`` builds it as ``build()`` does;
* ``torchscript(module, x, **kwargs) -> ModelProto``: a TorchScript export (opset 17, input "input");
* ``half_export()``: HalfNet in float16, exported.
Importing this module imports torch.
"""

from __future__ import annotations

import io
import warnings

import onnx
import torch

SOURCE = """import torch
import torch.nn.functional as F


class HalfNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        y = F.interpolate(torch.relu(self.a(x)), scale_factor=2, mode="nearest")
        return self.b(F.interpolate(y, scale_factor=2, mode="bilinear"))


def build():
    torch.manual_seed(0)
    return HalfNet().eval()
"""

_namespace: dict = {}
exec(compile(SOURCE, "halfnet.py", "exec"), _namespace)  # one definition serves the class and the file
HalfNet = _namespace["HalfNet"]
seeded = _namespace["build"]


def torchscript(module: torch.nn.Module, x: torch.Tensor, **kwargs) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buffer, dynamo=False, opset_version=17, input_names=["input"], **kwargs)
    return onnx.load_from_string(buffer.getvalue())


def half_export() -> onnx.ModelProto:
    return torchscript(seeded().half(), torch.rand(1, 3, 8, 8).half())
