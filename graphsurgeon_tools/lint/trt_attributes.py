"""TensorRT: Resize attributes its ONNX parser accepts, and what it computes with tensor scales.

    antialias=1                                   refused (docs/operators.md)
    keep_aspect_ratio_policy != "stretch"         refused (docs/operators.md)
    coordinate_transformation_mode in {tf_crop_and_resize, half_pixel_symmetric}   refused
    opset < 11: anything but asymmetric with scales (ctm/nearest_mode/sizes/cubic)  ignored -> differs
    opset outside 9..20                           outside the parser's documented range
    Upsample-9 with constant scales not float32   refused (Upsample importer)
    tensor scales: output = floor(in * scale), then resized by out/in   (differs from ORT
                   wherever in * scale is not whole)

Sources: onnx/onnx-tensorrt docs/operators.md (Resize row: "Supported aspect ratio
policy: stretch", "Antialiasing is not supported"; header: "TensorRT 10.0 supports
operators in the inclusive range of opset 9 to opset 20"); onnxOpImporters.cpp,
``DEFINE_BUILTIN_OP_IMPORTER(Resize)``: "Unsupported coordinate transformation mode"
(half_pixel_symmetric and tf_crop_and_resize are not mapped), and "For opset 10 resize,
the only supported mode is asymmetric resize with scales"; ``DEFINE_BUILTIN_OP_IMPORTER(
Upsample)``: "This version of TensorRT only supports FLOAT scales input"; importerUtils.cpp
``resizeShapeTensor`` (Floor, then the layer's shape input). The parser snapshot read
is onnx-tensorrt 96e78110 (2024-06-17, TensorRT 10.1).

Does NOT: know newer parsers' additions (a later TensorRT may accept more opsets).
"""

from __future__ import annotations

from typing import Optional

from onnx import ModelProto

from graphsurgeon_tools.lint import _geometry as geo
from graphsurgeon_tools.lint.base import LAYOUT_FACTOR, LAYOUT_SIZES, LintContext, Reason, Rule
from graphsurgeon_tools.resize import ResizeSite, ValueSource

_DOCS = "onnx/onnx-tensorrt docs/operators.md (Resize row)"
_IMPORTER = "onnx/onnx-tensorrt onnxOpImporters.cpp (Resize importer)"
OPSET_RANGE = (9, 20)
_UNMAPPED_MODES = ("tf_crop_and_resize", "half_pixel_symmetric")


def check_antialias(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if not site.antialias:
        return None
    return Reason("antialias=1: TensorRT's Resize has no antialiasing")


def check_aspect_ratio(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.keep_aspect_ratio_policy == "stretch":
        return None
    return Reason(f"keep_aspect_ratio_policy={site.keep_aspect_ratio_policy!r}: TensorRT supports only 'stretch'")


def check_coordinate_mode(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.coordinate_transformation_mode not in _UNMAPPED_MODES:
        return None
    return Reason(
        f"coordinate_transformation_mode={site.coordinate_transformation_mode!r}: TensorRT's parser "
        "maps only half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, asymmetric and align_corners"
    )


def check_opset10(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if ctx.opset >= 11:
        return None
    node = ctx.node_of(site)
    attrs = {a.name: a for a in node.attribute}
    found = []
    ctm = attrs.get("coordinate_transformation_mode")
    if ctm is not None and ctm.s.decode(errors="replace") != "asymmetric":
        found.append(f"coordinate_transformation_mode={ctm.s.decode(errors='replace')!r}")
    nearest = attrs.get("nearest_mode")
    if nearest is not None and nearest.s.decode(errors="replace") != "floor":
        found.append(f"nearest_mode={nearest.s.decode(errors='replace')!r}")
    if site.mode == "cubic":
        found.append("mode='cubic'")
    if site.op_type == "Resize" and len([i for i in node.input if i]) > 2:
        found.append(f"{len(node.input)} inputs (roi/sizes)")
    if not found:
        return None
    return Reason(
        f"opset {ctx.opset}: TensorRT imports this {site.op_type} as asymmetric with scales "
        f"(nearest: floor) and ignores {', '.join(found)}"
    )


def check_opset_range(ctx: LintContext, model: "ModelProto") -> Optional[Reason]:
    low, high = OPSET_RANGE
    if not ctx.sites or low <= ctx.opset <= high:
        return None
    return Reason(
        f"default-domain opset {ctx.opset} is outside {low}..{high}, the range the parser read "
        "here documents (a newer TensorRT may accept it)",
        severity="warning",
    )


def check_upsample_scales_float(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.op_type != "Upsample" or site.scales_source not in (ValueSource.INITIALIZER, ValueSource.CONSTANT):
        return None
    code = ctx.elem_types.get(site.scales_tensor, 0)
    if not code or code == 1:  # TensorProto.FLOAT
        return None
    return Reason(
        f"Upsample scales {site.scales_tensor!r} are {ctx.elem_type_name(site.scales_tensor)}; TensorRT's "
        "Upsample importer takes constant scales as float32 only"
    )


def check_scale_arithmetic(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if not geo.scales_are_tensor(site):
        return None
    ratios = geo.full_scales(site)
    if site.input_shape is not None and ratios is not None:
        uneven = [
            i
            for i, (d, s) in enumerate(zip(site.input_shape, ratios))
            if isinstance(d, int) and not geo.is_whole(d * s)
        ]
        if not uneven:
            return None
        return Reason(
            f"scales {list(ratios)} on input {list(site.input_shape)}: in*scale is not whole on axes "
            f"{uneven}; TensorRT resizes by out/in there, ONNX Runtime by the scale",
            severity="warning",
            fix=LAYOUT_SIZES,
            alternatives=(LAYOUT_FACTOR,),
        )
    return Reason(
        "tensor scales: TensorRT computes the output size as floor(in*scale) and resizes by out/in; "
        "it equals ONNX Runtime's scale arithmetic only where in*scale is whole (every integer "
        "factor)",
        severity="info",
        fix=LAYOUT_SIZES,
        alternatives=(LAYOUT_FACTOR,),
    )


RULES = (
    Rule("trt-antialias", "tensorrt", "resize", _DOCS, "antialias is off", check_antialias),
    Rule(
        "trt-keep-aspect-ratio", "tensorrt", "resize", _DOCS, "keep_aspect_ratio_policy is stretch", check_aspect_ratio
    ),
    Rule(
        "trt-coordinate-mode",
        "tensorrt",
        "resize",
        _IMPORTER + "; " + _DOCS,
        "no tf_crop_and_resize or half_pixel_symmetric",
        check_coordinate_mode,
    ),
    Rule(
        "trt-opset10-asymmetric",
        "tensorrt",
        "resize",
        _IMPORTER + " (opset < 11 branch)",
        "below opset 11 only asymmetric resizes with scales",
        check_opset10,
    ),
    Rule(
        "trt-opset-range",
        "tensorrt",
        "model",
        "onnx/onnx-tensorrt docs/operators.md (header)",
        "default-domain opset within the parser's range",
        check_opset_range,
    ),
    Rule(
        "trt-upsample-scales-float",
        "tensorrt",
        "resize",
        "onnx/onnx-tensorrt onnxOpImporters.cpp (Upsample importer)",
        "Upsample's constant scales are float32",
        check_upsample_scales_float,
    ),
    Rule(
        "trt-scale-arithmetic",
        "tensorrt",
        "resize",
        "onnx/onnx-tensorrt importerUtils.cpp (resizeShapeTensor)",
        "tensor scales: TensorRT's out/in arithmetic vs ONNX Runtime's scale",
        check_scale_arithmetic,
    ),
)
