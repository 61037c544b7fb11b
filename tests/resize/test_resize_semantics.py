"""resize.semantics, sanity and plugin_node: the one home of Resize meanings, checked against onnx's schemas."""

from __future__ import annotations

import golden
import onnx
import pytest
from onnx import helper

from graphsurgeon_tools.errors import InvalidScalesError
from graphsurgeon_tools.resize import MAIN_GRAPH, ValueSource, find_resize_sites, scales_problems, semantics
from graphsurgeon_tools.resize.plugin_node import decode_plugin_semantics, resize_attributes
from graphsurgeon_tools.resize.sanity import raise_if_nonsense


def test_the_defaults_are_the_schemas() -> None:
    schema = onnx.defs.get_schema("Resize", 19, "")
    for name, value in semantics.RESIZE_DEFAULTS.items():
        default = helper.get_attribute_value(schema.attributes[name].default_value)
        assert (default.decode() if isinstance(default, bytes) else default) == value


@pytest.mark.parametrize(
    ("op_type", "opset", "version", "slots"),
    [
        ("Upsample", 7, 7, semantics.InputSlots(scales_attribute=True)),
        ("Upsample", 9, 9, semantics.InputSlots(scales=1)),
        ("Upsample", 13, 10, semantics.InputSlots(scales=1)),
        ("Resize", 10, 10, semantics.InputSlots(scales=1)),
        ("Resize", 11, 11, semantics.InputSlots(roi=1, scales=2, sizes=3)),
        ("Resize", 19, 19, semantics.InputSlots(roi=1, scales=2, sizes=3)),
    ],
)
def test_input_slots_per_op_version(op_type, opset, version, slots) -> None:
    assert semantics.op_version(op_type, opset) == version
    assert semantics.input_slots(op_type, version) == slots


def test_legacy_versions_are_asymmetric_floor() -> None:
    for op_type, version in (("Upsample", 9), ("Resize", 10)):
        assert semantics.is_legacy(op_type, version)
        given = semantics.defaults(op_type, version)
        assert (given["coordinate_transformation_mode"], given["nearest_mode"]) == ("asymmetric", "floor")
    assert semantics.defaults("Resize", 13)["coordinate_transformation_mode"] == "half_pixel"
    assert semantics.scale_slots("Resize", 13) == [(2, "scales"), (3, "sizes")]
    assert semantics.scale_slots(semantics.PLUGIN_OP_TYPE, 0) == [(1, "scales")]


def test_plugin_node_decodes_with_defaults_and_renames() -> None:
    node = helper.make_node("DynamicTRTResize", ["x", "s"], ["y"], domain="trt", interp="linear", plugin_version="1")
    assert decode_plugin_semantics(node, rename={"mode": "interp"}) == {
        **{k: semantics.RESIZE_DEFAULTS[k] for k in semantics.PLUGIN_SEMANTICS},
        "mode": "linear",
    }


def test_resize_attributes_round_trip_the_semantics_each_opset_holds() -> None:
    wanted = {
        "mode": "cubic",
        "coordinate_transformation_mode": "align_corners",
        "cubic_coeff_a": -0.5,
        "exclude_outside": 1,
        "nearest_mode": "floor",
    }
    node = helper.make_node("DynamicTRTResize", ["x", "s"], ["y"], **wanted)
    assert resize_attributes(decode_plugin_semantics(node), 13) == wanted
    assert resize_attributes(decode_plugin_semantics(node), 9) == {"mode": "cubic"}
    linear = dict(wanted, mode="linear")
    assert "cubic_coeff_a" not in resize_attributes(linear, 13)


def test_the_gate_and_its_refusal() -> None:
    assert scales_problems((1.0, 1.0, 2.0, 2.0), ValueSource.INITIALIZER, None, ValueSource.ABSENT, "", 4, None) == []
    (problem,) = scales_problems((1.0, 1.0, 2e5, 2.0), ValueSource.INITIALIZER, None, ValueSource.ABSENT, "", 4, None)
    assert "absurdly large" in problem
    model = golden.resize_model(13, scales=(1.0, 1.0, 0.0, 2.0))
    (site,) = find_resize_sites(model)
    assert site.scope == MAIN_GRAPH and site.to_dict()["scope"] == MAIN_GRAPH
    with pytest.raises(InvalidScalesError, match=r"^m\.onnx: node .*not a positive finite number"):
        raise_if_nonsense(site, "m.onnx")


def test_scales_of_a_non_float_type_are_nonsense() -> None:
    from onnx import numpy_helper

    model = golden.resize_model(13)
    for tensor in model.graph.initializer:
        if tensor.data_type == onnx.TensorProto.FLOAT and len(tensor.dims) == 1 and tensor.dims[0] == 4:
            tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype("int64"), tensor.name))
    (site,) = find_resize_sites(model)
    assert site.problems == ("Resize-13 takes scales as float32 (tensor(float) in its schema), got int64",)
