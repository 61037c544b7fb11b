"""TensorRT: what a DynamicTRTResize plugin must take for the element type of each site.

    Resize(X: float32)                       nothing to say
    Resize(X: float16 | bfloat16 | float64)  info: the plugin must declare that type
    Resize(X: int8 | uint8 | int32)          info: the plugin must declare it (integer cubic: swap-plugin
                                             refuses it, the kernel here has no such path)
    DQ -> Resize -> Q (quantized)            info: the plugin inside the pair runs float32
    DynamicTRTResize(X: not float32)         warning: builds only with a plugin declaring that type

A TensorRT plugin states the types and formats it takes in ``supportsFormatCombination``
(IPluginV2DynamicExt / IPluginV3OneBuild); the builder refuses a network whose plugin layer
gets a type no combination accepts. The plugin of this name that the MMDeploy tutorial writes
(and the one :data:`~graphsurgeon_tools.resize.plugin_dtypes.TENSORRT_PLUGIN_DTYPES` describes)
takes float32 linear tensors only; TensorRT's own Resize layer takes float16 and int8 as well,
so an unswapped site of those types builds. What the compiled ONNX Runtime kernel here takes
comes from the one table, :mod:`graphsurgeon_tools.resize.kernel_dtypes` (per dtype and mode).

Subjects: every Resize/Upsample site and every plugin node. Does NOT: know which plugin a
deployment registers (severity info/warning, never error), or infer types the model does not state
(an undeclared X is judged only when a DequantizeLinear produces it).
"""

from __future__ import annotations

from typing import Optional

from onnx import NodeProto, TensorProto

from graphsurgeon_tools.core.dtypes import dtype_name, is_known
from graphsurgeon_tools.lint.base import LintContext, Reason, Rule
from graphsurgeon_tools.resize import ResizeSite
from graphsurgeon_tools.resize.plugin_dtypes import DTYPE_CODE, TENSORRT_PLUGIN_DTYPES, dtype_refusal

_SOURCE = (
    "TensorRT IPluginV2DynamicExt/IPluginV3OneBuild::supportsFormatCombination; "
    "onnxtool resize.kernel_dtypes (the ORT kernel's types per mode)"
)
#: TensorRT's name for each ONNX element type a plugin may declare.
_TRT_TYPES = {
    TensorProto.FLOAT: "kFLOAT",
    TensorProto.FLOAT16: "kHALF",
    TensorProto.BFLOAT16: "kBF16",
    TensorProto.INT8: "kINT8",
    TensorProto.UINT8: "kUINT8",
    TensorProto.INT32: "kINT32",
    TensorProto.DOUBLE: "(no TensorRT type: float64 tensors are cast to float32 by the parser)",
}
_QUANTIZE = ("DequantizeLinear",)


def _x_type(ctx: LintContext, tensor: str) -> int:
    known = ctx.elem_types.get(tensor, 0)
    if known:
        return known
    producer = ctx.producers.get(tensor)
    if producer is not None and producer.op_type == "Cast":  # the type it casts to, stated on the node
        return next((int(a.i) for a in producer.attribute if a.name == "to"), 0)
    return TensorProto.FLOAT if producer is not None and producer.op_type in _QUANTIZE else 0


def _name(elem: int) -> str:
    return dtype_name(elem) if is_known(elem) else f"element type {elem}"


def check_site_dtype(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    producer = ctx.producers.get(site.input_name)
    if producer is not None and producer.op_type in _QUANTIZE and site.in_main_graph:
        return Reason(
            "quantized (DequantizeLinear -> Resize): swap-plugin puts a float32 plugin inside the "
            "DequantizeLinear/QuantizeLinear pair, so TensorRT runs this Resize in float32 between the "
            "Q/DQ layers instead of fusing an INT8 Resize; an INT8 plugin would have to declare kINT8 "
            "with the tensor's scale in supportsFormatCombination",
            severity="info",
        )
    elem = _x_type(ctx, site.input_name)
    if not elem or elem in TENSORRT_PLUGIN_DTYPES:
        return None
    refused = dtype_refusal(elem, mode=site.mode)
    runs = (
        "the ONNX Runtime kernel here takes it"
        if refused is None
        else f"swap-plugin refuses this site ({DTYPE_CODE}: {refused.text})"
    )
    return Reason(
        f"X is {_name(elem)}: a DynamicTRTResize plugin for this site must declare "
        f"{_TRT_TYPES.get(elem, _name(elem))} in supportsFormatCombination (the MMDeploy tutorial's plugin "
        f"declares kFLOAT only); {runs}. Unswapped, TensorRT's own Resize layer runs it",
        severity="info",
    )


def check_plugin_dtype(ctx: LintContext, node: "NodeProto") -> Optional[Reason]:
    if node.op_type != "DynamicTRTResize" or not node.input:
        return None
    elem = _x_type(ctx, node.input[0])
    if not elem or elem in TENSORRT_PLUGIN_DTYPES:
        return None
    return Reason(
        f"X is {_name(elem)}: TensorRT builds this node only with a plugin whose supportsFormatCombination "
        f"accepts {_TRT_TYPES.get(elem, _name(elem))} (the MMDeploy tutorial's declares kFLOAT only)",
        severity="warning",
    )


RULES = (
    Rule(
        "trt-resize-dtype",
        "tensorrt",
        "resize",
        _SOURCE,
        "the element type a DynamicTRTResize plugin for the site must take",
        check_site_dtype,
    ),
    Rule(
        "trt-plugin-dtype",
        "tensorrt",
        "plugin",
        _SOURCE,
        "a DynamicTRTResize node's X type is one the usual float32 plugin takes",
        check_plugin_dtype,
    ),
)
