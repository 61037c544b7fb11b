"""The TensorRT-facing contract of the emitted plugin nodes, checked without TensorRT.

``parse_like_tensorrt`` reads a node the way TensorRT's ONNX parser imports an op it has no
built-in importer for (onnx-tensorrt's fallback plugin importer; NVIDIA's TensorRT python
plugin sample states the same rule: "the op property of the node is exactly the same as
your plugin name" and a string attribute "plugin_namespace" names its namespace):

* the plugin creator is looked up by (op_type, ``plugin_version`` attribute, default "1",
  ``plugin_namespace`` attribute, default ""); the node's domain is never consulted;
* for every field the creator declares (``getFieldNames()``), the node attribute of that
  name becomes a PluginField: INT -> kINT32, FLOAT -> kFLOAT32, STRING -> kCHAR,
  INTS -> kINT32 array, FLOATS -> kFLOAT32 array; attributes the creator does not declare
  are ignored; a declared field with no attribute is left to the creator's default.

The creators modelled here are MMDeploy's, as found in its sources:

* DynamicTRTResize (open-mmlab/mmdeploy docs/zh_cn/tutorial/07_write_a_plugin.md,
  trt_dynamic_resize.cpp): PLUGIN_NAME "DynamicTRTResize", PLUGIN_VERSION "1"; the creator
  declares one field, ``PluginField("align_corners")``, read in createPlugin as
  ``static_cast<const int *>(field.data)[0]``; getOutputDimensions returns
  (in0.d[0], in0.d[1], in1.d[2], in1.d[3]); supportsFormatCombination wants input 0
  float/linear and every other tensor of input 0's type and format.
* grid_sampler (mmdeploy csrc/mmdeploy/backend_ops/tensorrt/grid_sampler/
  trt_grid_sampler.cpp): fields interpolation_mode, padding_mode, align_corners.

What is NOT tested here (no GPU, no TensorRT): that an engine builds and that the CUDA
kernels agree numerically. The README says what a TensorRT user runs to check that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import golden
import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import AttributeProto, TensorProto, helper

from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.runtime import make_session

SPECS = Path(__file__).resolve().parents[3] / "graphsurgeon_tools" / "plugins" / "specs"  # package data

# TensorRT's nvinfer1::PluginFieldType values (NvInferRuntimePlugin.h).
kFLOAT32, kINT32, kCHAR = 1, 5, 6
_FIELD_TYPES = {
    AttributeProto.INT: kINT32,
    AttributeProto.INTS: kINT32,
    AttributeProto.FLOAT: kFLOAT32,
    AttributeProto.FLOATS: kFLOAT32,
    AttributeProto.STRING: kCHAR,
}


@dataclass(frozen=True)
class Creator:
    name: str
    version: str
    namespace: str
    fields: tuple[str, ...]


MMDEPLOY_DYNAMIC_TRT_RESIZE = Creator("DynamicTRTResize", "1", "", ("align_corners",))
MMDEPLOY_GRID_SAMPLER = Creator("grid_sampler", "1", "", ("interpolation_mode", "padding_mode", "align_corners"))
REGISTRY = {(c.name, c.version, c.namespace): c for c in (MMDEPLOY_DYNAMIC_TRT_RESIZE, MMDEPLOY_GRID_SAMPLER)}


@dataclass
class ParsedPlugin:
    creator: Creator
    fields: dict[str, tuple[int, Any]]  # name -> (PluginFieldType, value)
    inputs: list[str]
    outputs: list[str]


def parse_like_tensorrt(node: onnx.NodeProto) -> ParsedPlugin:
    attrs = {a.name: a for a in node.attribute}
    for reserved in ("plugin_version", "plugin_namespace"):
        if reserved in attrs:
            assert attrs[reserved].type == AttributeProto.STRING, f"{reserved} must be a string attribute"
    version = attrs["plugin_version"].s.decode() if "plugin_version" in attrs else "1"
    namespace = attrs["plugin_namespace"].s.decode() if "plugin_namespace" in attrs else ""
    key = (node.op_type, version, namespace)  # node.domain is deliberately not part of the key
    assert key in REGISTRY, f"TensorRT would find no plugin creator for {key}"
    creator = REGISTRY[key]
    fields = {}
    for name in creator.fields:
        if name not in attrs:
            continue
        attr = attrs[name]
        assert attr.type in _FIELD_TYPES, f"attribute {name} of type {attr.type} cannot become a PluginField"
        value = helper.get_attribute_value(attr)
        if attr.type == AttributeProto.INT:
            assert -(2**31) <= value < 2**31, f"{name}={value} does not fit the kINT32 field"
        fields[name] = (_FIELD_TYPES[attr.type], value)
    return ParsedPlugin(creator, fields, list(node.input), list(node.output))


def _the_plugin_node(model: onnx.ModelProto, op_type: str = "DynamicTRTResize") -> onnx.NodeProto:
    (node,) = [n for n in model.graph.node if n.op_type == op_type]
    return node


def _tensor_shapes(model: onnx.ModelProto, names: list[str], feeds: dict[str, np.ndarray]) -> dict[str, tuple]:
    """Run the model with ``names`` exposed as outputs; their run-time shapes (and dtypes)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    declared = {o.name for o in probe.graph.output}
    for name in names:
        if name not in declared and name not in {i.name for i in probe.graph.input}:
            probe.graph.output.append(helper.make_empty_tensor_value_info(name))
    session = make_session(probe)
    wanted = [o.name for o in session.get_outputs() if o.name in names]
    values = dict(
        zip(
            wanted, session.run(wanted, {k: v for k, v in feeds.items() if k in {i.name for i in session.get_inputs()}})
        )
    )
    values.update({k: v for k, v in feeds.items() if k in names})
    return {name: (tuple(values[name].shape), values[name].dtype) for name in names}


@pytest.mark.parametrize("ctm, align", [("half_pixel", 0), ("align_corners", 1), ("pytorch_half_pixel", 0)])
def test_size_tensor_node_is_what_mmdeploy_dynamic_trt_resize_reads(ctm, align):
    model = golden.resize_model(
        13, mode="cubic", coordinate_transformation_mode=ctm, scales=(1, 1, 3, 2), shape=(1, 3, 8, 8)
    )
    result = swap_plugin(model, signature="size-tensor")
    node = _the_plugin_node(result.model)
    parsed = parse_like_tensorrt(node)

    assert parsed.creator is MMDEPLOY_DYNAMIC_TRT_RESIZE
    assert parsed.fields == {"align_corners": (kINT32, align)}
    assert len(parsed.inputs) == 2 and len(parsed.outputs) == 1  # nbInputs 2, getNbOutputs 1

    # input order and types: (X, size_tensor), both float32 (supportsFormatCombination),
    # and getOutputDimensions' rule reproduces the output shape the original Resize has.
    x_name, size_name = parsed.inputs
    original_resize = next(n for n in model.graph.node if n.op_type == "Resize")
    assert x_name == original_resize.input[0] and parsed.outputs == [original_resize.output[0]]
    feeds = {model.graph.input[0].name: np.random.default_rng(0).random((1, 3, 8, 8), dtype=np.float32)}
    for item in result.new_inputs:
        feeds[item["name"]] = np.asarray(item["value"], dtype=np.float32)
    shapes = _tensor_shapes(result.model, [x_name, size_name, parsed.outputs[0]], feeds)
    (x_shape, x_dtype), (size_shape, size_dtype), (out_shape, out_dtype) = (
        shapes[x_name],
        shapes[size_name],
        shapes[parsed.outputs[0]],
    )
    assert len(x_shape) == 4 and len(size_shape) == 4
    assert x_dtype == size_dtype == out_dtype == np.float32
    plugin_out_dims = (x_shape[0], x_shape[1], size_shape[2], size_shape[3])
    assert plugin_out_dims == out_shape == (1, 3, 24, 16)


def test_domain_is_not_part_of_the_lookup():
    model = golden.resize_model(13, mode="cubic")
    a = parse_like_tensorrt(_the_plugin_node(swap_plugin(model, signature="size-tensor").model))
    b = parse_like_tensorrt(_the_plugin_node(swap_plugin(model, signature="size-tensor", domain="anything.else").model))
    assert a == b


def test_scales_signature_contract():
    """(X, scales): onnxtool's own signature. Same lookup keys; scales is 1-D float, one entry per axis of X."""
    model = golden.resize_model(13, mode="linear", coordinate_transformation_mode="align_corners")
    node = _the_plugin_node(swap_plugin(model).model)
    parsed = parse_like_tensorrt(node)
    assert parsed.fields == {"align_corners": (kINT32, 1)}
    attrs = {a.name: a for a in node.attribute}
    # every Resize semantic travels as a field a plugin can declare, with a TensorRT-convertible type
    expected_types = {
        "mode": kCHAR,
        "coordinate_transformation_mode": kCHAR,
        "nearest_mode": kCHAR,
        "cubic_coeff_a": kFLOAT32,
        "exclude_outside": kINT32,
        "align_corners": kINT32,
        "plugin_version": kCHAR,
        "plugin_namespace": kCHAR,
    }
    assert {name: _FIELD_TYPES[a.type] for name, a in attrs.items()} == expected_types
    scales_input = next(i for i in swap_plugin(model).model.graph.input if i.name == node.input[1])
    tensor_type = scales_input.type.tensor_type
    assert tensor_type.elem_type == TensorProto.FLOAT
    assert [d.dim_value for d in tensor_type.shape.dim] == [4]


def test_grid_sample_spec_fields_match_mmdeploy_grid_sampler():
    model = onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1,3,8,8] x, float[1,4,4,2] grid) => (float[1,3,4,4] y) {
      y = GridSample <mode="nearest", padding_mode="reflection"> (x, grid)
    }""")
    node = _the_plugin_node(swap_plugin(model, spec=SPECS / "gridsample.toml").model, "grid_sampler")
    parsed = parse_like_tensorrt(node)
    assert parsed.creator is MMDEPLOY_GRID_SAMPLER
    # PyTorch's enums, which the plugin's kernels switch on: nearest 1, reflection 2
    assert parsed.fields == {
        "interpolation_mode": (kINT32, 1),
        "padding_mode": (kINT32, 2),
        "align_corners": (kINT32, 0),
    }
    assert parsed.inputs == ["x", "grid"]


def test_parser_emulation_rejects_what_tensorrt_would_reject():
    """The checks above can fail: a node TensorRT could not map is refused by the emulation."""
    good = _the_plugin_node(swap_plugin(golden.resize_model(13, mode="cubic"), signature="size-tensor").model)
    wrong_version = onnx.NodeProto()
    wrong_version.CopyFrom(good)
    for attr in wrong_version.attribute:
        if attr.name == "plugin_version":
            attr.s = b"2"
    with pytest.raises(AssertionError, match="no plugin creator"):
        parse_like_tensorrt(wrong_version)
    int_namespace = onnx.NodeProto()
    int_namespace.CopyFrom(good)
    kept = [a for a in int_namespace.attribute if a.name != "plugin_namespace"]
    del int_namespace.attribute[:]
    int_namespace.attribute.extend(kept + [helper.make_attribute("plugin_namespace", 0)])
    with pytest.raises(AssertionError, match="must be a string attribute"):
        parse_like_tensorrt(int_namespace)


def test_size_input_layout_gives_tensorrt_only_execution_tensor_inputs():
    """With --size-input the model is MMDeploy's tutorial layout: every network input is float
    data or a tensor whose dims alone matter; no float value feeds shape arithmetic (TensorRT
    accepts only Int32/Int64 shape tensors as network inputs)."""
    model = golden.resize_model(13, mode="cubic", scales=(1, 1, 3, 3), shape=(1, 3, 8, 8))
    swapped = swap_plugin(model, signature="size-tensor", size_input="size_tensor").model
    node = _the_plugin_node(swapped)
    parsed = parse_like_tensorrt(node)
    assert parsed.fields == {"align_corners": (kINT32, 0)}
    inputs = {i.name: i for i in swapped.graph.input}
    assert parsed.inputs == ["x", "size_tensor"] and set(inputs) == {"x", "size_tensor"}
    assert inputs["size_tensor"].type.tensor_type.elem_type == inputs["x"].type.tensor_type.elem_type
    assert len(inputs["size_tensor"].type.tensor_type.shape.dim) == 4
    shape_ops = {"Shape", "ConstantOfShape", "Floor", "Cast", "Mul", "Slice", "Concat"}
    assert not shape_ops & {n.op_type for n in swapped.graph.node}


def test_default_size_tensor_layout_feeds_float_scales_into_shape_arithmetic():
    """Documented, not hidden: without --size-input the size tensor is computed from a float
    ``scales`` input (Shape -> Mul -> Floor -> ConstantOfShape), i.e. a float network input
    on the shape path. Whether TensorRT builds that is untested here (see the README)."""
    model = golden.resize_model(13, mode="cubic")
    swapped = swap_plugin(model, signature="size-tensor").model
    size = _the_plugin_node(swapped).input[1]
    producer = next(n for n in swapped.graph.node if size in n.output)
    assert producer.op_type == "ConstantOfShape"
    mul = next(n for n in swapped.graph.node if n.op_type == "Mul")
    scales = next(i for i in swapped.graph.input if i.name in mul.input)
    assert scales.type.tensor_type.elem_type == TensorProto.FLOAT
