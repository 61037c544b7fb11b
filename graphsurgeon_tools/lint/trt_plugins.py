"""TensorRT: the attributes its ONNX parser looks a plugin up by, and plugin shape inputs.

    Plugin(…, plugin_version: STRING, plugin_namespace: STRING)                      looked up
    Plugin(…, plugin_version=1 (INT))                                                misread
    Plugin(X, sizes:int64, tensorrt_plugin_shape_input_indices=[1] (INTS))           V3 shape input
    tensorrt_plugin_shape_input_indices: not INTS / out of [-n, n-1]                  refused
    a shape input that is not int32/int64, or that a float graph input feeds          refused

Source: onnx/onnx-tensorrt onnxOpImporters.cpp, ``DEFINE_BUILTIN_OP_IMPORTER(
FallbackPluginImporter)``: any op without a built-in importer is looked up as
``importPluginCreator(op_type, attrs.get<std::string>("plugin_version", "1"),
attrs.get<std::string>("plugin_namespace", ""))`` — the node's domain is not read;
``addPluginWithCreator``: for a V3 creator, ``tensorrt_plugin_shape_input_indices`` must
be ``AttributeProto::INTS`` ("Only AttributeProto::INTS is supported"), every index in
[-n, n-1] ("Out-of-range shape input index"), duplicates are warned about; for a V2
creator the attribute is ignored with a warning. Shape inputs are shape tensors, so a
network input feeding one must be an integer (NVIDIA/TensorRT#2301).

Subjects: every node outside the ONNX domains (TensorRT treats all of them as plugins).
Does NOT: know which creators a deployment registers, or their fields (see
tests/passes/swap_plugin/test_tensorrt_contract.py for the MMDeploy creator model).
"""

from __future__ import annotations

from typing import Optional

from onnx import AttributeProto, NodeProto

from graphsurgeon_tools.lint.base import SWAP_PLUGIN, SWAP_SIZES, Fix, LintContext, Reason, Rule, reswap
from graphsurgeon_tools.lint.trt_shape_inputs import float_shape_inputs

_FALLBACK = "onnx/onnx-tensorrt onnxOpImporters.cpp (FallbackPluginImporter)"
_ADD_PLUGIN = "onnx/onnx-tensorrt onnxOpImporters.cpp (addPluginWithCreator)"
SHAPE_INDICES = "tensorrt_plugin_shape_input_indices"
_INTEGER = {6, 7}  # TensorProto.INT32, INT64
# A DynamicTRTResize node this tool can read, written again (reverse, then forward) in each form.
_RESWAP = reswap(SWAP_PLUGIN)
_RESWAP_FORMS = (reswap(Fix("swap_plugin", (("signature", "size-tensor"),))), reswap(SWAP_SIZES))
_RESWAP_SIZES = reswap(SWAP_SIZES)


def check_lookup_attributes(ctx: LintContext, node: "NodeProto") -> Optional[Reason]:
    attrs = {a.name: a for a in node.attribute}
    mistyped = [
        f"{name} is {AttributeProto.AttributeType.Name(attrs[name].type)}"
        for name in ("plugin_version", "plugin_namespace")
        if name in attrs and attrs[name].type != AttributeProto.STRING
    ]
    if mistyped:
        return Reason(
            f"{'; '.join(mistyped)}: the parser reads both as strings to find the plugin creator",
            fix=_RESWAP,
            alternatives=_RESWAP_FORMS,
        )
    missing = [name for name in ("plugin_version", "plugin_namespace") if name not in attrs]
    if missing:
        return Reason(
            f"no {' or '.join(missing)} attribute: the parser looks up {node.op_type!r} with "
            "version '1' and namespace '' (say which plugin is meant)",
            severity="warning",
            fix=_RESWAP,
            alternatives=_RESWAP_FORMS,
        )
    return None


def _integer_like(ctx: LintContext, node: "NodeProto", index: int) -> bool:
    return ctx.elem_types.get(node.input[index], 0) in _INTEGER


def check_shape_inputs(ctx: LintContext, node: "NodeProto") -> Optional[Reason]:
    attrs = {a.name: a for a in node.attribute}
    count = len(node.input)
    attr = attrs.get(SHAPE_INDICES)
    if attr is None:
        ints = [i for i in range(1, count) if node.input[i] and _integer_like(ctx, node, i)]
        if ints:
            return Reason(
                f"input(s) {ints} are integer tensors but {SHAPE_INDICES} is absent: an IPluginV3 "
                "plugin receives them as device tensors, not as shape inputs",
                severity="info",
                fix=_RESWAP_SIZES,
            )
        return None
    if attr.type != AttributeProto.INTS:
        return Reason(
            f"{SHAPE_INDICES} is {AttributeProto.AttributeType.Name(attr.type)}; the parser accepts only INTS",
            fix=_RESWAP_SIZES,
        )
    indices = list(attr.ints)
    bad = [i for i in indices if not -count <= i < count]
    if bad:
        return Reason(f"{SHAPE_INDICES}={indices} has index {bad[0]} outside [-{count}, {count - 1}]")
    resolved = [i % count for i in indices]
    if len(set(resolved)) != len(resolved):
        return Reason(f"{SHAPE_INDICES}={indices} repeats an input", severity="warning")
    for index in resolved:
        tensor = node.input[index]
        code = ctx.elem_types.get(tensor, 0)
        if code and code not in _INTEGER:
            return Reason(
                f"shape input {index} ({tensor!r}) is {ctx.elem_type_name(tensor)}; shape inputs are int32/int64",
                fix=_RESWAP_SIZES,
            )
        floats = float_shape_inputs(ctx, tensor)
        if floats:
            return Reason(
                f"shape input {index} ({tensor!r}) is fed by float graph input(s) {floats}; a network "
                "input that is a shape tensor must be int32/int64",
                fix=reswap(Fix("make_dynamic_scale", (("layout", "sizes"),), then=SWAP_SIZES)),
            )
    return Reason(
        f"{SHAPE_INDICES}={indices} is honoured by an IPluginV3 creator only; a V2 creator found under "
        "the same name, plugin_version and plugin_namespace (MMDeploy's DynamicTRTResize is one, version "
        "'1') ignores it with a warning and reads the input as a device tensor",
        severity="info",
    )


RULES = (
    Rule(
        "trt-plugin-lookup-attributes",
        "tensorrt",
        "plugin",
        _FALLBACK,
        "plugin_version and plugin_namespace are present STRING attributes",
        check_lookup_attributes,
    ),
    Rule(
        "trt-plugin-shape-inputs",
        "tensorrt",
        "plugin",
        _ADD_PLUGIN + "; NVIDIA/TensorRT#2301",
        "tensorrt_plugin_shape_input_indices is INTS, in range, and names integer inputs",
        check_shape_inputs,
    ),
)
