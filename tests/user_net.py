"""A user's own, unmodified PyTorch model file, exported, for validate's python: references.

``user_model`` (module fixture): ``net.py`` (imports ``helper_blocks.py`` beside it, resizes at two sites
written in its code, returns nested outputs: a tuple holding a dict, as real projects do), its TorchScript
export (``static.onnx``) and make-dynamic-scale's rewrite (``dynamic.onnx``) in one folder; a dict with
folder, net (the module object), spec (``python:FOLDER/net.py:build``), static and dynamic (ModelProtos).
The fixture skips without torch (importing this module does not import it).
"""

from __future__ import annotations

import io
import textwrap
import warnings

import onnx
import pytest

from graphsurgeon_tools import make_dynamic_scale

HELPER = """
import torch.nn as nn

def block():
    return nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU())
"""


MODEL = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from helper_blocks import block

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = block()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.tail = nn.Conv2d(2, 1, 3, padding=1)

    def forward(self, x, labels=None):
        y = self.up(self.body(x))
        z = self.tail(F.interpolate(y, scale_factor=2, mode="nearest"))
        return z, {"features": y, "loss": None}

def build():
    torch.manual_seed(0)
    return Net().eval()
"""


@pytest.fixture(scope="module")
def user_model(tmp_path_factory: pytest.TempPathFactory) -> dict:
    torch = pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("user")
    (folder / "helper_blocks.py").write_text(textwrap.dedent(HELPER))
    (folder / "net.py").write_text(textwrap.dedent(MODEL))
    import importlib.util
    import sys

    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location("net_for_export", folder / "net.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    net = module.build()
    x = torch.rand(1, 1, 8, 10)
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net, (x,), buffer, dynamo=False, opset_version=17, input_names=["input"], output_names=["z", "features"]
        )
    static = onnx.load_from_string(buffer.getvalue())
    onnx.save(static, folder / "static.onnx")
    dynamic = make_dynamic_scale(static).model
    onnx.save(dynamic, folder / "dynamic.onnx")
    return {
        "folder": folder,
        "net": net,
        "spec": f"python:{folder / 'net.py'}:build",
        "static": static,
        "dynamic": dynamic,
    }
