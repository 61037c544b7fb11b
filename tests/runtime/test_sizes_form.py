"""DynamicTRTResize's TensorRT V3 form: a 1-D int64 second input holding the output sizes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from graphsurgeon_tools.runtime import make_session, resize_kernel


def _plugin(mode: str) -> object:
    node = helper.make_node(
        "DynamicTRTResize",
        ["X", "S"],
        ["Y"],
        domain="trt.plugins",
        mode=mode,
        coordinate_transformation_mode="align_corners",
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("S", TensorProto.INT64, [None]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("trt.plugins", 1)])


def _ort_resize(x: np.ndarray, sizes: list[int], mode: str) -> np.ndarray:
    node = helper.make_node(
        "Resize", ["X", "", "", "S"], ["Y"], mode=mode, coordinate_transformation_mode="align_corners"
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("S", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x, "S": np.array(sizes, np.int64)})[0]


@pytest.mark.parametrize("sizes", [[7, 5], [1, 2, 7, 5]])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_sizes_values_resize_like_onnx_sizes(sizes: list[int], mode: str) -> None:
    x = np.random.default_rng(0).random((1, 2, 3, 4), dtype=np.float32)
    got = make_session(_plugin(mode)).run(None, {"X": x, "S": np.array(sizes, np.int64)})[0]
    np.testing.assert_allclose(got, _ort_resize(x, [1, 2, 7, 5], mode), rtol=1e-5, atol=1e-5)


def test_sizes_of_a_wrong_length_are_refused() -> None:
    with pytest.raises(ValueError, match="sizes must have 2 or rank"):
        resize_kernel(np.zeros((1, 1, 2, 2), np.float32), np.array([4, 4, 4], np.int64))


def test_validate_feeds_the_sizes_form_and_matches_the_onnx_reference() -> None:
    from graphsurgeon_tools.validation import validate
    from graphsurgeon_tools.validation.ports import model_ports

    model = _plugin("linear")
    model.graph.input[0].type.tensor_type.shape.dim.extend(
        [helper.make_tensor_value_info("a", 1, [1, 2, 8, 8]).type.tensor_type.shape.dim[i] for i in range(4)]
    )
    scale = model_ports(model).scale_inputs[0]
    assert scale.layout == "sizes"
    assert scale.feed(2.0, (1, 2, 8, 8)).tolist() == [1, 2, 16, 16]
    report = validate(model, "onnx-reference", factors=[2, 3], input_size=8)
    assert report.passed, report.summary_line()
