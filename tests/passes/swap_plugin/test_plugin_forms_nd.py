"""swap-plugin's forms on 1-D (N, C, L) and 3-D (N, C, D, H, W) sites, run by the compiled op in ONNX Runtime.

* scales: DynamicTRTResize(X, scales[r]) swaps any rank; the built-in check passes;
* sizes (TensorRT V3): a 1-D site hands the plugin the full-rank sizes (the op reads 2 entries as
  (h, w), rank(X) entries as every axis); a 3-D site that resizes D is swapped too (the op's ONNX
  Runtime shape inference keeps no dim of X for rank(X) sizes);
* size-tensor (MMDeploy's plugin is 4-D only): refused up front, never through the check;
* ``--reverse`` of every written form gives back the original outputs exactly.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools.errors import RefusedRequestError as UnsupportedModelError
from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import make_session

SHAPES = {1: [1, 3, 7], 3: [1, 2, 3, 5, 7]}


def _model(spatial: int, mode: str = "linear", scales: str = "") -> onnx.ModelProto:
    rank = spatial + 2
    scales = scales or ", ".join(["1.0", "1.0"] + ["2.0"] * spatial)
    shape = ",".join(map(str, SHAPES[spatial]))
    return onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : 17]>
g (float[{shape}] X) => (float[{",".join("?" * rank)}] Y) <float[{rank}] s = {{{scales}}}> {{
  T = Relu (X)
  Y = Resize <mode="{mode}"> (T, , s)
}}""")


def _ort(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _x(spatial: int) -> np.ndarray:
    return np.random.default_rng(spatial).standard_normal(SHAPES[spatial]).astype(np.float32)


@pytest.mark.parametrize("spatial", [1, 3])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_the_scales_form_swaps_any_rank_and_reverses_exactly(spatial: int, mode: str) -> None:
    original = _model(spatial, mode)
    result = swap_plugin(original, signature="scales")
    assert [n.op_type_after for n in result.rewritten] == ["DynamicTRTResize"] and result.check.passed is True
    feeds = {"X": _x(spatial), "scales": np.array([1.0, 1.0] + [2.0] * spatial, dtype=np.float32)}
    want = _ort(original, {"X": feeds["X"]})
    (got,) = make_session(result.model).run(None, feeds)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    back = swap_plugin(result.model, reverse=True)
    np.testing.assert_array_equal(_ort(back.model, feeds), want)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_the_v3_form_on_a_1d_site_reads_the_full_rank_sizes(mode: str) -> None:
    original = _model(1, mode)
    result = swap_plugin(original, signature="sizes")
    (swapped,) = result.rewritten
    assert result.check.passed is True and any("full-rank sizes" in n for n in swapped.notes)
    assert result.new_inputs[0]["shape"] == [1] and result.new_inputs[0]["value"] == [14]
    assert not lint_model(result.model, "tensorrt").failed
    x = _x(1)
    want = _ort(original, {"X": x})
    (got,) = make_session(result.model).run(None, {"X": x, "sizes": np.array([14], dtype=np.int64)})
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    back = swap_plugin(result.model, reverse=True)  # Resize(X, sizes = Concat(Shape(X)[:-1], s))
    np.testing.assert_array_equal(_ort(back.model, {"X": x, "sizes": np.array([14], dtype=np.int64)}), want)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_the_v3_form_swaps_a_3d_site_that_resizes_d(mode: str) -> None:
    """The op's ONNX Runtime shape inference keeps no dim of X for rank(X) sizes (csrc/ort/shape_inference.h),
    so a plugin node that resizes D declares the right output shape, loads, and matches ORT's Resize."""
    original = _model(3, mode)
    result = swap_plugin(original, signature="sizes")
    assert result.check.passed is True and result.new_inputs[0]["value"] == [6, 10, 14]
    x = _x(3)
    sizes = np.array([6, 10, 14], dtype=np.int64)
    (got,) = make_session(result.model).run(None, {"X": x, "sizes": sizes})
    want = _ort(original, {"X": x})
    assert got.shape == want.shape == (1, 2, 6, 10, 14)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    # a consumer whose shape must agree with the resized D: loads only if the op's inferred shape is not X's D
    bias = np.linspace(-1, 1, 6 * 10 * 14, dtype=np.float32).reshape(1, 1, 6, 10, 14)
    model = onnx.ModelProto()
    model.CopyFrom(result.model)
    model.graph.initializer.append(onnx.numpy_helper.from_array(bias, "bias"))
    model.graph.node.append(onnx.helper.make_node("Add", ["Y", "bias"], ["Z"]))
    model.graph.output.append(onnx.helper.make_tensor_value_info("Z", onnx.TensorProto.FLOAT, None))
    (_, z) = make_session(model).run(None, {"X": x, "sizes": sizes})
    np.testing.assert_allclose(z, want + bias, atol=1e-5, rtol=1e-5)
    back = swap_plugin(result.model, reverse=True)
    np.testing.assert_array_equal(_ort(back.model, {"X": x, "sizes": sizes}), want)


def test_the_v3_form_takes_a_5d_site_that_resizes_only_h_and_w() -> None:
    original = _model(3, "nearest", "1.0, 1.0, 1.0, 2.0, 2.0")
    result = swap_plugin(original, signature="sizes")
    assert result.check.passed is True and result.new_inputs[0]["value"] == [3, 10, 14]
    x = _x(3)
    (got,) = make_session(result.model).run(None, {"X": x, "sizes": np.array([3, 10, 14], dtype=np.int64)})
    np.testing.assert_array_equal(got, _ort(original, {"X": x}))


@pytest.mark.parametrize("spatial", [1, 3])
def test_the_size_tensor_form_refuses_n_d_sites_up_front(spatial: int) -> None:
    with pytest.raises(UnsupportedModelError, match="4-D only") as raised:
        swap_plugin(_model(spatial), signature="size-tensor")
    assert raised.value.exit_code == 3
