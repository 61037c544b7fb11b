"""core.dtypes, core.attributes, core.opsets: one table, one reader/maker, one default_opset."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.core.attributes import attributes, get_attr, make_attr, set_attr
from graphsurgeon_tools.core.opsets import (
    default_opset,
    drop_unused_opset,
    ensure_opset_import,
    set_default_opset,
)
from graphsurgeon_tools.errors import InvalidModelError


@pytest.mark.parametrize("entry", dtypes.DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips(entry: dtypes.DType) -> None:
    assert dtypes.elem_type(entry.name) == entry.elem_type
    assert dtypes.dtype_name(entry.elem_type) == entry.name
    numpy_type = dtypes.np_dtype(entry.elem_type)
    assert numpy_type.itemsize == entry.itemsize == dtypes.itemsize(entry.elem_type)
    assert dtypes.elem_type(entry.elem_type) == entry.elem_type
    if entry.name != "bfloat16":
        assert dtypes.elem_type(numpy_type) == entry.elem_type
        assert helper.tensor_dtype_to_np_dtype(entry.elem_type) == numpy_type  # agrees with onnx


def test_dtype_names_and_unknown_types() -> None:
    assert dtypes.onnx_name(TensorProto.FLOAT) == "float" and dtypes.onnx_name(TensorProto.DOUBLE) == "double"
    assert "float32" in dtypes.names() and dtypes.is_known(TensorProto.INT64)
    assert not dtypes.is_known(TensorProto.STRING)
    with pytest.raises(KeyError):
        dtypes.np_dtype(TensorProto.STRING)


VALUES = {
    "i": 3,
    "f": 1.5,
    "s": "half_pixel",
    "ints": [1, 2],
    "floats": [1.0, 2.5],
    "strings": ["a", "b"],
}


def test_attributes_round_trip_through_make_attr() -> None:
    node = helper.make_node("Op", [], [])
    node.attribute.extend(make_attr(k, v) for k, v in VALUES.items())
    assert attributes(node) == VALUES
    rebuilt = helper.make_node("Op", [], [])
    rebuilt.attribute.extend(make_attr(k, v) for k, v in attributes(node).items())
    assert rebuilt == node


def test_make_attr_normalises_numpy_bools_and_mixed_lists() -> None:
    assert make_attr("b", True).i == 1 and make_attr("n", np.int64(4)).i == 4
    assert make_attr("x", np.float32(0.5)).f == 0.5
    assert list(make_attr("l", [1, 1.5]).floats) == [1.0, 1.5]


def test_get_and_set_attr() -> None:
    node = helper.make_node("Resize", ["x"], ["y"], mode="linear")
    node.attribute[0].s = b"\xff"  # undecodable bytes: read, never an exception
    assert get_attr(node, "mode") == "\ufffd" and get_attr(node, "absent", 7) == 7
    set_attr(node, "mode", "cubic")
    set_attr(node, "cubic_coeff_a", -0.5)
    assert attributes(node) == {"mode": "cubic", "cubic_coeff_a": -0.5}


def test_default_opset_has_one_behaviour() -> None:
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("ai.onnx", 12)])
    assert default_opset(model) == 12
    set_default_opset(model, 13)
    assert default_opset(model) == 13
    del model.opset_import[:]
    with pytest.raises(InvalidModelError, match="imports no version of the default ONNX domain"):
        default_opset(model)


def test_opset_imports_are_added_once_and_dropped_only_when_unused() -> None:
    body = helper.make_graph(
        [helper.make_node("Plugin", ["c"], ["o"], domain="trt")],
        "body",
        [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)],
        "g",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    ensure_opset_import(model, "trt")
    ensure_opset_import(model, "trt", 2)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 13), ("trt", 1)]
    drop_unused_opset(model, "trt")  # used inside the If body: kept
    assert len(model.opset_import) == 2
    del model.graph.node[:]
    drop_unused_opset(model, "trt")
    drop_unused_opset(model, "")  # the default domain is never dropped
    assert [o.domain for o in model.opset_import] == [""]
