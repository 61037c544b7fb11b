"""TensorRT: a graph input whose values set a Resize's output shape must be an integer.

    graph input (float) -> ... -> Resize.scales   refused   (network input shape tensor, not int)
    graph input (int64) -> ... -> Resize.sizes    accepted  (needs shape VALUES in the profile)

Why: onnx-tensorrt imports non-constant scales through ``resizeShapeTensor``
(importerUtils.cpp: Cast(Shape(X)) * scales -> Floor -> Cast int32) and sets the result
as the resize layer's shape input (onnxOpImporters.cpp, Resize and Upsample importers).
Everything feeding it is then a shape tensor, and TensorRT refuses a network input that
is a shape tensor unless it is an integer: "network input that is shape tensor must have
type Int32" (NVIDIA/TensorRT#2301, a float ``downsample_ratio`` input feeding Resize).
TensorRT 10 also accepts int64 shape inputs (onnx-tensorrt ShapeTensor.cpp asserts
kINT32 or kINT64).

The walk from the Resize parameter back to the graph inputs stops at Shape/Size: a
float data tensor whose *shape* is read is not a shape input.

Does NOT: decide whether TensorRT keeps the computation on the host (it may fold it);
the rule is only about the input's type, which TensorRT checks at build time.
"""

from __future__ import annotations

from typing import Optional

from graphsurgeon_tools.lint import _geometry as geo
from graphsurgeon_tools.lint.base import LAYOUT_FACTOR, LAYOUT_SIZES, LintContext, Reason, Rule
from graphsurgeon_tools.resize import ResizeSite

_INTEGER = {6, 7}  # TensorProto.INT32, INT64


def float_shape_inputs(ctx: LintContext, tensor: str) -> list[str]:
    """Graph inputs feeding ``tensor``'s values that are not int32/int64."""
    return [name for name in ctx.graph_inputs_feeding(tensor) if ctx.graph_inputs[name] not in _INTEGER]


def check_integer_shape_inputs(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    tensor = geo.parameter_tensor(site)
    if not tensor or not (geo.uses_sizes(site) or geo.scales_are_tensor(site)):
        return None
    bad = float_shape_inputs(ctx, tensor)
    if not bad:
        return None
    slot = "sizes" if geo.uses_sizes(site) else "scales"
    named = ", ".join(f"{name!r} ({ctx.elem_type_name(name)})" for name in bad)
    return Reason(
        f"graph input {named} reaches the {slot} of this {site.op_type}; TensorRT makes it a shape "
        "tensor, and a network input that is a shape tensor must be int32/int64",
        fix=LAYOUT_SIZES,
        alternatives=(LAYOUT_FACTOR,),
    )


RULES = (
    Rule(
        id="trt-shape-input-integer",
        target="tensorrt",
        subject="resize",
        source="onnx/onnx-tensorrt importerUtils.cpp (resizeShapeTensor), onnxOpImporters.cpp (Resize, Upsample "
        "importers); NVIDIA/TensorRT#2301",
        summary="graph inputs that set a Resize's output shape are integers",
        check=check_integer_shape_inputs,
    ),
)
