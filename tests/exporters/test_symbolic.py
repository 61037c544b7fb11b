"""exporters.symbolic: the custom ops' mappings in both torch exporters, and the asinh-at-opset-9 lesson.

Each test exports a tiny module, then checks the op types that result, the
numerics in ONNX Runtime against eager PyTorch, and onnx.checker (export() runs
the last two itself; the tests repeat the numerics on inputs export() never saw).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
from exporters import ops  # noqa: E402 - after the torch check: exporters imports torch

ops.load()  # the C++ library (built by `make setup`, else now): the symbolics cover the loaded ops

from exporters import ExportFailedError, export  # noqa: E402
from exporters.symbolic import (  # noqa: E402
    PLUGIN_DOMAIN,
    PLUGIN_OP_TYPE,
    PLUGIN_VERSION,
    dynamo_translation_table,
    register_asinh_symbolic,
    register_torchscript_symbolics,
    unregister_asinh_symbolic,
)


def _session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _op_types(path: Path) -> Counter:
    return Counter(node.op_type for node in onnx.load(path).graph.node)


# --- asinh at opset 9 (TorchScript exporter) ---------------------------------------------------


class Asinh(torch.nn.Module):
    def forward(self, x):
        return torch.asinh(x)


@pytest.fixture
def asinh_symbolic():
    register_asinh_symbolic()
    yield
    unregister_asinh_symbolic()


def test_asinh_exports_at_opset_9_and_matches_torch(asinh_symbolic, tmp_path: Path) -> None:
    path = tmp_path / "asinh.onnx"
    x = torch.linspace(-5, 5, 21)
    result = export(
        Asinh(), (x,), path, opset=9, dynamic_axes={"input": {0: "n"}, "output": {0: "n"}}, rtol=1e-5, atol=1e-6
    )
    model = onnx.load(path)
    assert result.opset == 9 and [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [9]
    types = _op_types(path)
    assert "Asinh" not in types and {"Log", "Sqrt", "Sign", "Abs"} <= set(types)
    # Far outside the traced range too, where the textbook log(x + sqrt(x^2+1)) loses every
    # digit for large negative x (at x = -1e4 it cancels to log(0) = -inf in float32).
    wide = np.concatenate([np.geomspace(1e-6, 1e6, 49), -np.geomspace(1e-6, 1e6, 49), [0.0]]).astype(np.float32)
    got = _session(path).run(None, {"input": wide})[0]
    np.testing.assert_allclose(got, torch.asinh(torch.from_numpy(wide)).numpy(), rtol=2e-6, atol=2e-7)
    np.testing.assert_array_equal(np.sign(got), np.sign(wide))


@pytest.mark.parametrize("registered_before", [False, True])
def test_asinh_without_the_symbolic_cannot_export(tmp_path: Path, registered_before: bool) -> None:
    if registered_before:  # unregistering must restore torch's own "not supported" error
        register_asinh_symbolic()
        unregister_asinh_symbolic()
    with pytest.raises(ExportFailedError, match="'aten::asinh' to ONNX opset version 9 is not supported"):
        export(Asinh(), (torch.rand(3),), tmp_path / "asinh.onnx", opset=9, dynamic=False)
    assert not (tmp_path / "asinh.onnx").exists()


# --- my_add: 2*a + b as Mul and Add ----------------------------------------------------------


class MyAdd(torch.nn.Module):
    def forward(self, a, b):
        return ops.my_add(a, b)


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_my_add_decomposes_into_mul_and_add(exporter: str, tmp_path: Path) -> None:
    path = tmp_path / "my_add.onnx"
    a, b = torch.randn(2, 3), torch.randn(3)  # broadcasting, as ATen does
    export(MyAdd(), (a, b), path, exporter=exporter, input_names=["a", "b"], dynamic=False)
    types = _op_types(path)
    assert types["Mul"] == 1 and types["Add"] == 1
    assert set(types) <= {"Mul", "Add", "Constant"}
    a2, b2 = torch.randn(2, 3), torch.randn(3)
    got = _session(path).run(None, {"a": a2.numpy(), "b": b2.numpy()})[0]
    np.testing.assert_allclose(got, (2 * a2 + b2).numpy(), rtol=1e-6, atol=1e-6)


# --- onnxtool::resize -> Resize with a scales input, attributes carried over -------------------


class RuntimeResize(torch.nn.Module):
    def __init__(self, **attributes) -> None:
        super().__init__()
        self.attributes = attributes

    def forward(self, x, scales):
        return ops.resize(x, scales, **self.attributes)


RESIZE_CASES = {
    "nearest-asymmetric-floor": dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    "linear-align-corners": dict(mode="linear", coordinate_transformation_mode="align_corners"),
    "cubic-a-0.5-exclude": dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=True),
}


@pytest.mark.slow
@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
@pytest.mark.parametrize("case", list(RESIZE_CASES))
def test_resize_op_exports_to_resize_with_its_attributes(exporter: str, case: str, tmp_path: Path) -> None:
    attributes = RESIZE_CASES[case]
    path = tmp_path / "resize.onnx"
    x = torch.rand(1, 2, 4, 5)
    export(
        RuntimeResize(**attributes),
        (x, torch.tensor([1.0, 1.0, 2.0, 3.0])),
        path,
        exporter=exporter,
        input_names=["x", "scales"],
    )
    (node,) = (
        onnx.load(path).graph.node
        if exporter == "dynamo"
        else [n for n in onnx.load(path).graph.node if n.op_type == "Resize"]
    )
    assert node.op_type == "Resize" and node.input[2] == "scales"
    written = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    for name, value in attributes.items():
        want = value.encode() if isinstance(value, str) else int(value) if isinstance(value, bool) else value
        assert written[name] == pytest.approx(want), name
    session = _session(path)
    for scales in ([1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 1.5, 4.0], [1.0, 1.0, 0.5, 0.6]):
        s = torch.tensor(scales)
        x2 = torch.rand(2, 2, 6, 5)
        got = session.run(None, {"x": x2.numpy(), "scales": s.numpy()})[0]
        np.testing.assert_allclose(got, ops.resize(x2, s, **attributes).numpy(), rtol=1e-5, atol=1e-5)


# --- registration ------------------------------------------------------------------------------


def test_registration_is_idempotent_and_covers_every_loaded_op() -> None:
    first = register_torchscript_symbolics()
    assert register_torchscript_symbolics() == first
    assert set(first) == {
        "onnxtool::resize",
        "onnxtool::my_add",
        "onnxtool_plugin::dynamic_trt_resize",
        "onnxtool_plugin::dynamic_trt_resize_size",
    }
    table = dynamo_translation_table()
    assert torch.ops.onnxtool.resize.default in table and torch.ops.onnxtool.my_add.default in table
    assert torch.ops.onnxtool_plugin.dynamic_trt_resize_size.default in table


def test_plugin_node_agrees_with_the_builtin_swap_plugin_spec() -> None:
    """The exported plugin node and swap-plugin's must be the same plugin to TensorRT and to onnxtool."""
    from graphsurgeon_tools import plugins

    spec = plugins.builtin_spec("DynamicTRTResize")
    assert (spec.op_type, spec.domain, spec.plugin_version, spec.plugin_namespace) == (
        PLUGIN_OP_TYPE,
        PLUGIN_DOMAIN,
        PLUGIN_VERSION,
        "",
    )


def test_plugin_domain_is_configurable(tmp_path: Path) -> None:
    from exporters import srcnn

    model = srcnn("plugin", pretrained=False)
    path = tmp_path / "p.onnx"
    export(model, model.example_inputs(2), path, plugin_domain="my.plugins")
    (node,) = [n for n in onnx.load(path).graph.node if n.op_type == PLUGIN_OP_TYPE]
    assert node.domain == "my.plugins"
