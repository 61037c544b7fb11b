"""The check feeds an input an earlier rewrite added the value it held (onnxtool.original_values).

Random values for a dynamic ``scales`` input are nonsense scales ONNX Runtime refuses, so before
this the check on an already-dynamic model was always skipped ("Scale value should be greater than 0").
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from graphsurgeon_tools.check.equivalence import compare_models
from graphsurgeon_tools.passes.make_dynamic_scale import make_dynamic_scale
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.resize.original_values import original_feeds


def _static_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 24, 24])
    scales = helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 3, 3])
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="linear")
    graph = helper.make_graph([node], "g", [x], [y], [scales])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_recorded_values_become_typed_feeds():
    dynamic = make_dynamic_scale(_static_model(), check=False).model
    feeds = original_feeds(dynamic)
    (name,) = feeds
    assert feeds[name].dtype == np.float32 and feeds[name].tolist() == [1, 1, 3, 3]


def test_the_check_on_an_already_dynamic_model_runs_and_compares():
    dynamic = make_dynamic_scale(_static_model(), check=False).model
    result = swap_plugin(dynamic)
    assert result.check is not None and result.check.skipped is None, result.check.skipped
    assert result.check.passed is True


def test_a_record_that_does_not_fit_its_input_is_not_fed():
    dynamic = make_dynamic_scale(_static_model(), check=False).model
    for prop in dynamic.metadata_props:
        if prop.key == "onnxtool.original_values":
            prop.value = prop.value.replace("[1, 1, 3, 3]", "[1, 3, 3]").replace(
                "[1.0, 1.0, 3.0, 3.0]", "[1.0, 3.0, 3.0]"
            )
    assert original_feeds(dynamic) == {}
    # the caller's own feed (here: none, so random values) stands; the comparison itself still runs
    result = compare_models(dynamic, dynamic, reference_feeds={"scales": np.array([1, 1, 2, 2], np.float32)})
    assert result.passed is True
