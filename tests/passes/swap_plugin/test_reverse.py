"""swap-plugin ``reverse=True`` (passes/swap_plugin/reverse.py): plugin nodes back into Resize,
its built-in check (the Resize model against the plugin model, pinned to the recorded original
values), plugin nodes inside bodies, and a size tensor that is a graph input (MMDeploy's form).
Round trips (swap, then reverse) stay beside the forward tests they extend."""

from __future__ import annotations

import engines
import golden
import numpy as np
import onnx
import pytest
from hostile import nested
from onnx import TensorProto, helper

from graphsurgeon_tools.passes.swap_plugin import check as swap_check
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime.session import make_session

SIGNATURES = ("scales", "size-tensor", "sizes")
RTOL, ATOL = 1e-4, 1e-5


def _op_types(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_reverse_check_compares_the_resize_model_with_the_plugin_model(signature) -> None:
    plugin = swap_plugin(golden.resize_model(13), signature=signature).model
    back = swap_plugin(plugin, reverse=True)
    assert back.changed and back.check is not None and back.check.passed is True
    assert [s.name for s in back.check.sites] == ["resized"]


def test_reverse_pins_the_plugin_inputs_to_a_real_factor() -> None:
    plugin = swap_plugin(golden.resize_model(13), signature="size-tensor").model
    del plugin.metadata_props[:]  # no record of the original values: factor 2
    pins, dims, recorded = swap_check._reverse_pins(plugin, "DynamicTRTResize")
    # the scales input feeds the size tensor forward built, not the plugin node directly
    assert {k: v.tolist() for k, v in pins.items()} == {"scales": [1.0, 1.0, 2.0, 2.0]}
    assert dims == {} and recorded is False
    sizes = swap_plugin(golden.resize_model(13), signature="sizes").model
    del sizes.metadata_props[:]
    assert [v.tolist() for v in swap_check._reverse_pins(sizes, "DynamicTRTResize")[0].values()] == [[64, 64]]


def test_reverse_pins_the_recorded_original_values() -> None:
    plugin = swap_plugin(golden.resize_model(13, scales=(1.0, 1.0, 3.0, 3.0)), check=False).model
    del plugin.metadata_props[:]  # whatever the forward pass recorded: this test writes its own record
    plugin.metadata_props.add(key=swap_check.ORIGINAL_VALUES_KEY, value='{"scales": [1, 1, 3, 3]}')
    pins, _, recorded = swap_check._reverse_pins(plugin, "DynamicTRTResize")
    assert pins["scales"].tolist() == [1.0, 1.0, 3.0, 3.0] and pins["scales"].dtype == np.float32 and recorded
    back = swap_plugin(plugin, reverse=True)
    assert back.check.passed is True and back.check.outputs[0].shape[-1] == 24


def test_reverse_of_a_size_input_uses_the_recorded_shape() -> None:
    plugin = swap_plugin(golden.resize_model(13), signature="size-tensor", size_input="out", check=False).model
    del plugin.metadata_props[:]
    plugin.metadata_props.add(key=swap_check.ORIGINAL_VALUES_KEY, value='{"out": {"shape": [1, 1, 16, 16]}}')
    _, dims, _ = swap_check._reverse_pins(plugin, "DynamicTRTResize")
    assert dims == {"out_height": 16, "out_width": 16}
    back = swap_plugin(plugin, reverse=True)
    assert back.check.passed is True and back.check.input_shapes["out"] == [1, 1, 16, 16]


def test_reverse_reports_plugin_nodes_inside_bodies() -> None:
    from onnx import TensorProto, helper

    def branch(name: str):
        node = helper.make_node(
            "DynamicTRTResize",
            ["x", "scales"],
            [f"{name}_y"],
            name=f"{name}_plugin",
            domain="trt.plugins",
            mode="nearest",
            coordinate_transformation_mode="asymmetric",
        )
        return helper.make_graph(
            [node], name, [], [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)]
        )

    graph = helper.make_graph(
        [
            helper.make_node(
                "If", ["cond"], ["y"], name="branch", then_branch=branch("then"), else_branch=branch("else")
            )
        ],
        "g",
        [nested.X, nested.COND, helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)],
    )
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", 13), onnx.helper.make_opsetid("trt.plugins", 1)]
    )
    model.ir_version = 8
    result = swap_plugin(model, reverse=True)
    assert not result.changed
    assert {s.node: s.reason for s in result.skipped} == {
        "else_plugin": "inside If 'branch' else_branch: reverse=True turns main-graph plugin nodes back only",
        "then_plugin": "inside If 'branch' then_branch: reverse=True turns main-graph plugin nodes back only",
    }


def test_reverse_of_an_outside_size_tensor_mmdeploy_style():
    """The MMDeploy tutorial's model: the size tensor is a graph input, not our subgraph."""
    helper = onnx.helper
    node = helper.make_node(
        "DynamicTRTResize",
        ["x", "factor"],
        ["y"],
        name="resize",
        domain="mmdeploy",
        align_corners=0,
        plugin_version="1",
        plugin_namespace="",
        mode="cubic",
        coordinate_transformation_mode="half_pixel",
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, "h", "w"]),
            helper.make_tensor_value_info("factor", onnx.TensorProto.FLOAT, [1, 1, "oh", "ow"]),
        ],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, "oh", "ow"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)])
    feeds = {
        "x": np.random.default_rng(4).random((1, 3, 4, 6), dtype=np.float32),
        "factor": np.zeros((1, 1, 9, 10), np.float32),
    }
    plugin_out = engines.plugin_run(model, feeds)[0]
    restored = swap_plugin(model, reverse=True)
    assert _op_types(restored.model) == ["Shape", "Shape", "Concat", "Resize"]
    onnx.checker.check_model(restored.model, full_check=True)
    stock = engines.ort_run(restored.model, feeds)[0]
    assert stock.shape == (1, 3, 9, 10)
    np.testing.assert_allclose(plugin_out, stock, rtol=RTOL, atol=ATOL)


def test_reverse_of_an_upsample_7_swap_writes_upsample_7_back() -> None:
    """Below opset 9 Upsample has no scales input: the constant the forward swap kept goes back
    into the scales attribute, and the round trip computes what the original computed."""
    graph = helper.make_graph(
        [helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest", scales=[1.0, 1.0, 2.0])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8])],
    )
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)], ir_version=8)
    swapped = swap_plugin(original, keep_constant=True, check=False)
    assert [n.op_type for n in swapped.model.graph.node] == ["DynamicTRTResize"]
    back = swap_plugin(swapped.model, reverse=True, check=False)
    assert not back.skipped
    (node,) = back.model.graph.node
    assert node.op_type == "Upsample" and list(node.input) == ["x"]
    assert list(helper.get_attribute_value(next(a for a in node.attribute if a.name == "scales"))) == [1.0, 1.0, 2.0]
    assert not back.model.graph.initializer  # the scales constant went back into the attribute
    onnx.checker.check_model(back.model, full_check=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 4)).astype(np.float32)
    want = make_session(original).run(None, {"x": x})[0]
    got = make_session(back.model).run(None, {"x": x})[0]
    assert want.shape == (1, 3, 8) and np.abs(want).max() > 0
    np.testing.assert_array_equal(got, want)
