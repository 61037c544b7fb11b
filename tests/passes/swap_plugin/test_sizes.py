"""swap-plugin's V3 form: DynamicTRTResize(X, sizes:int64[2]) with a TensorRT shape input."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest

from graphsurgeon_tools.lint import lint_model
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import make_session


def _model(mode: str = "cubic", opset: int = 13, x: str = "float[1,3,5,7]") -> onnx.ModelProto:
    roi = ", float[0] roi = {}" if opset < 13 else ""
    inputs = "X, roi, s" if opset < 13 else "X, , s"
    return onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : {opset}]>
g ({x} X) => (float[?,?,?,?] Y) <float[4] s = {{1.0, 1.0, 2.0, 3.0}}{roi}> {{
  Y = Resize <mode="{mode}"> ({inputs})
}}""")


def _ort(model: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


X = np.random.default_rng(0).uniform(0, 1, size=(1, 3, 5, 7)).astype(np.float32)


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_the_v3_node_carries_a_shape_input_runs_in_make_session_and_round_trips(opset: int, mode: str) -> None:
    original = _model(mode, opset)
    result = swap_plugin(original, signature="sizes")
    (node,) = [n for n in result.model.graph.node if n.op_type == "DynamicTRTResize"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["tensorrt_plugin_shape_input_indices"] == [1]
    assert attrs["plugin_version"] == b"1" and attrs["plugin_namespace"] == b""
    assert [n.op_type for n in result.model.graph.node] == ["DynamicTRTResize"]  # the Concat chain is gone
    (new,) = result.new_inputs
    assert (new["name"], new["dtype"], new["shape"], new["value"]) == ("sizes", "int64", [2], [10, 21])
    onnx.checker.check_model(result.model, full_check=True)
    report = lint_model(result.model, "tensorrt")
    assert not report.failed and [(f.rule, f.severity) for f in report.findings] == [
        ("trt-plugin-shape-inputs", "info")
    ], report.to_dict()  # a V2 creator of the same name would ignore it
    want = _ort(original, {"X": X})
    (got,) = make_session(result.model).run(None, {"X": X, "sizes": np.array([10, 21], dtype=np.int64)})
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)  # the kernel behind the plugin
    back = swap_plugin(result.model, reverse=True)
    assert [n.op_type for n in back.model.graph.node][-1] == "Resize" and back.rewritten[0].signature == "sizes"
    onnx.checker.check_model(back.model, full_check=True)
    np.testing.assert_array_equal(_ort(back.model, {"X": X, "sizes": np.array([10, 21], dtype=np.int64)}), want)


def test_a_model_already_in_an_integer_layout_is_swapped_as_it_is() -> None:
    for layout in ("sizes", "factor"):
        written = make_dynamic_scale(_model(), layout=layout).model
        result = swap_plugin(written, signature="sizes")
        (node,) = [n for n in result.model.graph.node if n.op_type == "DynamicTRTResize"]
        assert not result.new_inputs and not lint_model(result.model, "tensorrt").failed
        feed = {"sizes": np.array([10, 21])} if layout == "sizes" else {"factor": np.array([2, 3])}
        (got,) = make_session(result.model).run(None, {"X": X, **feed})
        np.testing.assert_allclose(got, _ort(_model(), {"X": X}), atol=1e-5, rtol=1e-5)


def test_v3_refusals_say_why() -> None:
    from graphsurgeon_tools.errors import UsageError

    with pytest.raises(UsageError, match="keep_constant=True"):
        swap_plugin(_model(), signature="sizes", keep_constant=True)
    dynamic = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,5,7] X, float[4] s) => (float[?,?,?,?] Y) { Y = Resize <mode="linear"> (X, , s) }""")
    from graphsurgeon_tools.errors import UnsupportedModelError

    with pytest.raises(UnsupportedModelError, match='layout="sizes"') as raised:  # every site refused: a failure
        swap_plugin(dynamic, signature="sizes")
    assert raised.value.exit_code == 3


def test_srcnn_v3_round_trip(srcnn_exports) -> None:
    path = srcnn_exports["torchscript-17"]
    result = swap_plugin(path, signature="sizes")
    assert not lint_model(result.model, "tensorrt").failed
    back = swap_plugin(result.model, reverse=True)
    x = np.random.default_rng(4).uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    want = _ort(onnx.load(str(path)), {"input": x})
    np.testing.assert_array_equal(_ort(back.model, {"input": x, "sizes": np.array([48, 48], dtype=np.int64)}), want)
