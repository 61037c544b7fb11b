"""make-dynamic-scale's layouts on any number of spatial axes: 1-D (N, C, L), 2-D, 3-D (N, C, D, H, W).

Each integer layout holds one entry per spatial axis, is bit-exact in ONNX Runtime at the original
factor and equals the original re-baked at another whole factor, passes ``lint --target tensorrt``,
and gets a TensorRT profile with one value per spatial axis. A layout that can express none of the
sites fails the request (exit 3, each site's reason); one that refuses only some rewrites the rest.
"""

from __future__ import annotations

import golden
import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools.errors import UnsupportedModelError
from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.profiles import tensorrt_profile

SHAPES = golden.SPATIAL_SHAPES


def _run(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("layout", ["factor", "sizes"])
def test_integer_layouts_take_one_entry_per_spatial_axis(spatial: int, mode: str, layout: str) -> None:
    original = golden.spatial_resize_model(spatial, mode)
    result = make_dynamic_scale(original, layout=layout)
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    (new,) = result.new_inputs
    assert (new.dtype, new.shape) == ("int64", [spatial])
    dims = SHAPES[spatial][2:]
    assert new.value == ([2] * spatial if layout == "factor" else [2 * d for d in dims])
    onnx.checker.check_model(result.model, full_check=True)
    assert not lint_model(result.model, "tensorrt").failed
    # another whole factor: the rewritten model fed 3 equals the original re-baked at 3
    x = np.random.default_rng(spatial).standard_normal(SHAPES[spatial]).astype(np.float32)
    feed = np.array([3] * spatial if layout == "factor" else [3 * d for d in dims], dtype=np.int64)
    want = _run(golden.spatial_resize_model(spatial, mode, 3.0), {"X": x})
    np.testing.assert_array_equal(_run(result.model, {"X": x, new.name: feed}), want)


@pytest.mark.parametrize("spatial", [1, 3])
def test_sizes_layout_with_symbolic_dims_feeds_every_spatial_axis(spatial: int) -> None:
    x = "float[N,C," + ",".join(f"S{i}" for i in range(spatial)) + "]"
    result = make_dynamic_scale(golden.spatial_resize_model(spatial, x=x), layout="sizes")
    assert result.check.passed is True and result.check.outputs[0].max_abs_diff == 0.0
    assert result.new_inputs[0].shape == [spatial] and result.new_inputs[0].value == []


def test_a_3d_profile_gives_every_spatial_axis_its_size_and_value() -> None:
    result = make_dynamic_scale(golden.spatial_resize_model(3, x="float[N,2,D,H,W]"), layout="sizes")
    profile = tensorrt_profile(result.model, sizes=((8, 16, 16), (16, 32, 32), (32, 64, 64)), factors=(1, 2, 2))
    entries = {i.name: i for i in profile.inputs}
    assert entries["X"].min == (1, 2, 8, 16, 16) and entries["X"].max == (1, 2, 32, 64, 64)
    assert entries["sizes"].role == "sizes" and entries["sizes"].opt == (32, 64, 64)
    factor = make_dynamic_scale(golden.spatial_resize_model(1, x="float[N,3,L]"), layout="factor")
    profile = tensorrt_profile(factor.model, sizes=(16, 64, 256), factors=(1, 2, 4))
    entries = {i.name: i for i in profile.inputs}
    assert entries["X"].opt == (1, 3, 64) and entries["factor"].max == (4,)


@pytest.mark.parametrize("layout", ["factor", "sizes"])
def test_a_layout_that_refuses_every_site_fails_the_request(layout: str) -> None:
    channel = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,7] X) => (float[?,?,?] Y) <float[3] s = {1.0, 2.0, 2.0}> { Y = Resize <mode="nearest"> (X, , s) }""")
    with pytest.raises(UnsupportedModelError, match=r"non-spatial axis.*\[layout-non-spatial\]") as raised:
        make_dynamic_scale(channel, layout=layout)
    assert raised.value.exit_code == 3


def test_a_layout_that_refuses_some_sites_rewrites_the_others_and_lists_the_rest() -> None:
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,5,7] X) => (float[?,?,?,?,?] Y, float[?,?,?,?,?] Z)
  <float[5] a = {1.0, 1.0, 2.0, 2.0, 2.0}, float[5] b = {1.0, 1.0, 1.5, 1.5, 1.5}> {
  Y = Resize <mode="nearest"> (X, , a)
  Z = Resize <mode="nearest"> (X, , b)
}""")
    result = make_dynamic_scale(model, layout="factor")
    assert [s["node"] for s in result.to_dict()["rewritten"]] == ["#0 (Y)"]
    (skip,) = result.skipped
    assert skip.code == "not-whole-factor" and result.check.passed is True
