"""graphsurgeon_tools.check: the one OutputComparison serves the equivalence check and validate."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from graphsurgeon_tools.check.compare import compare_arrays
from graphsurgeon_tools.check.equivalence import compare_models


def _model(op: str) -> object:
    node = helper.make_node(op, ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_equal_infinities_and_nans_agree() -> None:
    a = np.array([np.inf, -np.inf, np.nan, 1.0])
    result = compare_arrays(a, a.copy(), atol=0.0, rtol=0.0)
    assert result.passed and result.mismatched == 0 and result.max_abs_diff == 0.0


def test_check_result_keeps_its_json_keys_and_counts_mismatches() -> None:
    same = compare_models(_model("Relu"), _model("Relu"))
    assert same.passed is True
    assert set(same.to_dict()["outputs"][0]) == {"name", "shape", "max_abs_diff", "mismatched", "passed", "vacuous"}
    different = compare_models(_model("Relu"), _model("Neg"))
    assert different.passed is False
    out = different.outputs[0]
    assert out.name == "y" and out.shape == [1, 3] and out.mismatched > 0 and out.max_abs_diff > 0


def test_a_shape_difference_fails_without_figures() -> None:
    result = compare_arrays(np.zeros((2, 2)), np.zeros((2, 3)), atol=0.0, rtol=0.0)
    assert not result.passed and result.max_abs_error is None and result.mismatched == 6
