"""What Resize, Upsample and DynamicTRTResize mean, per op version: the one home of their
defaults, input slots, modes and coordinate modes.

Op versions (the schema's ``since_version`` at the model's opset): Upsample 7 (scales
attribute), Upsample 9 (scales input), Resize 10 (scales input, asymmetric + floor by
definition), Resize 11/13/18/19 (X, roi, scales, sizes). DynamicTRTResize (the TensorRT
plugin this tool writes) takes (X, scales) or (X, size tensor) and carries the five
:data:`PLUGIN_SEMANTICS` attributes.

:func:`attribute_problems` is the one judge of a node's attributes (type and value range)
for Resize, Upsample and DynamicTRTResize: what swap-plugin (both ways) refuses before it
writes a node ONNX Runtime could not load. :func:`input_type_problems` is its twin for the
element types of the scales/sizes inputs per op version (:data:`INPUT_TYPES`).

Requires: nothing beyond onnx (for :func:`op_version`). Ensures: pure functions and
constants. Does NOT read graphs (sites.py does) or judge scales (sanity.py does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import onnx
from onnx import AttributeProto

from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

__all__ = [
    "ATTRIBUTE_TYPES",
    "COORDINATE_TRANSFORMATION_MODES",
    "InputSlots",
    "KEEP_ASPECT_RATIO_POLICIES",
    "MODES",
    "NEAREST_MODES",
    "PLUGIN_CTMS",
    "PLUGIN_OP_TYPE",
    "PLUGIN_SEMANTICS",
    "RESIZE_DEFAULTS",
    "RESIZE_OPS",
    "INPUT_TYPES",
    "attribute_problems",
    "defaults",
    "input_type_problems",
    "input_slots",
    "is_legacy",
    "is_resize_node",
    "normalize_mode",
    "op_version",
    "scale_slots",
]

RESIZE_OPS = ("Resize", "Upsample")
PLUGIN_OP_TYPE = "DynamicTRTResize"
MODES = ("nearest", "linear", "cubic")
COORDINATE_TRANSFORMATION_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
#: Coordinate modes a DynamicTRTResize kernel implements (tf_half_pixel_for_nn left ONNX at 13;
#: tf_crop_and_resize needs roi and extrapolation_value, which the plugin does not take).
PLUGIN_CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
KEEP_ASPECT_RATIO_POLICIES = ("stretch", "not_larger", "not_smaller")
#: The Resize attributes a DynamicTRTResize node carries, in the order they are written.
PLUGIN_SEMANTICS = ("mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "nearest_mode")
#: Resize-11+ attribute defaults (the spec's).
RESIZE_DEFAULTS: dict[str, Any] = {
    "mode": "nearest",
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "nearest_mode": "round_prefer_floor",
    "antialias": 0,
    "extrapolation_value": 0.0,
    "keep_aspect_ratio_policy": "stretch",
}
#: Attribute -> the AttributeProto type name it must have (Resize/Upsample schemas; the plugin's
#: own fields as forward writes them and TensorRT's plugin field lookup reads them).
ATTRIBUTE_TYPES: dict[str, str] = {
    "mode": "STRING",
    "coordinate_transformation_mode": "STRING",
    "nearest_mode": "STRING",
    "keep_aspect_ratio_policy": "STRING",
    "cubic_coeff_a": "FLOAT",
    "extrapolation_value": "FLOAT",
    "exclude_outside": "INT",
    "antialias": "INT",
    "axes": "INTS",
    "scales": "FLOATS",
    "align_corners": "INT",
    "plugin_version": "STRING",
    "plugin_namespace": "STRING",
    "tensorrt_plugin_shape_input_indices": "INTS",
}
_FLAGS = ("exclude_outside", "antialias", "align_corners")
#: Slot -> the one element type the op schemas allow there: Upsample-9, Resize-10 and Resize-11..19
#: take scales as tensor(float) (not double, not an integer), Resize-11+ take sizes as tensor(int64).
INPUT_TYPES: dict[str, str] = {"scales": "float32", "sizes": "int64"}


@dataclass(frozen=True)
class InputSlots:
    """Input positions of a resize op version (None: the op version has no such input)."""

    x: int = 0
    roi: Optional[int] = None
    scales: Optional[int] = None
    sizes: Optional[int] = None
    scales_attribute: bool = False  # Upsample-7: scales is an attribute


def op_version(op_type: str, opset: int) -> int:
    """The schema version of ``op_type`` (default domain) at ``opset``; 0 when onnx has none
    (an opset below the op's first version, or one this onnx does not know)."""
    try:
        return int(onnx.defs.get_schema(op_type, opset, "").since_version)
    except onnx.defs.SchemaError:
        return 0


def is_legacy(op_type: str, version: int) -> bool:
    """Upsample and Resize-10: asymmetric coordinates and floor rounding by definition, no
    coordinate_transformation_mode/nearest_mode attributes."""
    return op_type == "Upsample" or (op_type == "Resize" and version == 10)


def defaults(op_type: str, version: int) -> dict[str, Any]:
    """The attribute values an op version has when a node does not set them; legacy ops get
    the behaviour the spec gives them (asymmetric, floor)."""
    values = dict(RESIZE_DEFAULTS)
    if is_legacy(op_type, version):
        values["coordinate_transformation_mode"] = "asymmetric"
        values["nearest_mode"] = "floor"
    return values


def input_slots(op_type: str, version: int) -> InputSlots:
    """Where X, roi, scales and sizes sit for an op version (``version`` 0: unknown, read as
    the newest layout for Resize and as Upsample-9 for Upsample)."""
    if op_type == "Upsample":
        return InputSlots(scales_attribute=True) if 0 < version < 9 else InputSlots(scales=1)
    if op_type == PLUGIN_OP_TYPE:
        return InputSlots(scales=1)
    if op_type == "Resize":
        return InputSlots(scales=1) if version == 10 else InputSlots(roi=1, scales=2, sizes=3)
    raise ValueError(f"{op_type} is not a resize op")


def scale_slots(op_type: str, version: int) -> list[tuple[int, str]]:
    """(input index, "scales" | "sizes") of the inputs that decide a resize node's output size."""
    if op_type not in RESIZE_OPS + (PLUGIN_OP_TYPE,):
        return []
    slots = input_slots(op_type, version)
    found = [(slots.scales, "scales")] if slots.scales is not None else []
    if slots.sizes is not None:
        found.append((slots.sizes, "sizes"))
    return found


def normalize_mode(mode: str) -> str:
    """Upsample's "bilinear" (and "bicubic") in Resize's words ("linear", "cubic")."""
    return mode[2:] if mode in ("bilinear", "bicubic") else mode


def is_resize_node(node: Any) -> bool:
    """A Resize or Upsample node of the default domain."""
    return node.op_type in RESIZE_OPS and node.domain in DEFAULT_DOMAINS


def attribute_problems(node: Any, version: int = 0, rename: Optional[dict[str, str]] = None) -> list[str]:
    """What is wrong with the attributes of a Resize, Upsample or DynamicTRTResize ``node``
    (empty: nothing): an attribute without a value, of the wrong type, or out of range
    (a mode, coordinate mode, nearest mode or policy outside the spec's words, a 0/1 flag
    that is neither, a non-finite cubic_coeff_a, repeated axes). ``version``: the op's
    schema version (half_pixel_symmetric exists from Resize-19; 0: not checked).
    ``rename``: a plugin spec's Resize-name -> node-name map (read back to Resize names).
    Attributes it does not know are left alone.
    """
    inverse = {new: old for old, new in (rename or {}).items()}
    problems: list[str] = []
    for attr in node.attribute:
        name = inverse.get(attr.name, attr.name)
        wanted = ATTRIBUTE_TYPES.get(name)
        if wanted is None:
            continue
        shown = attr.name if attr.name == name else f"{attr.name} ({name})"
        if attr.type == AttributeProto.UNDEFINED:
            problems.append(f"attribute {shown!r} has no value")
            continue
        got = AttributeProto.AttributeType.Name(attr.type)
        if got != wanted:
            problems.append(f"attribute {shown!r} must be {wanted}, got {got}")
            continue
        value: Any = {
            "STRING": lambda: attr.s.decode("utf-8", "replace"),
            "FLOAT": lambda: attr.f,
            "INT": lambda: attr.i,
            "INTS": lambda: list(attr.ints),
            "FLOATS": lambda: list(attr.floats),
        }[wanted]()
        allowed: tuple = ()
        if name == "mode":
            allowed = MODES + (("bilinear",) if node.op_type == "Upsample" else ())
        elif name == "coordinate_transformation_mode":
            allowed = COORDINATE_TRANSFORMATION_MODES
            if node.op_type == "Resize" and 0 < version < 19 and value == "half_pixel_symmetric":
                problems.append(
                    f"attribute {shown!r}: half_pixel_symmetric exists from Resize-19, this node is Resize-{version}"
                )
                continue
        elif name == "nearest_mode":
            allowed = NEAREST_MODES
        elif name == "keep_aspect_ratio_policy":
            allowed = KEEP_ASPECT_RATIO_POLICIES
        elif name in _FLAGS:
            allowed = (0, 1)
        if allowed and value not in allowed:
            problems.append(f"attribute {shown!r} is {value!r}, not one of {', '.join(map(str, allowed))}")
        elif name == "cubic_coeff_a" and not math.isfinite(value):
            problems.append(f"attribute {shown!r} is {value}, not a finite number")
        elif name == "axes" and len(set(value)) != len(value):
            problems.append(f"attribute {shown!r} repeats an axis: {value}")
    return problems


def input_type_problems(op_type: str, version: int, slot: str, dtype: str) -> list[str]:
    """What is wrong with the element type ``dtype`` (a numpy name: "float64", "int32") of a Resize or
    Upsample ``slot`` ("scales" | "sizes") at op ``version`` (empty: nothing; also for the plugin,
    whose own kernel decides, and for an unknown type ""). ONNX Runtime refuses to load a node
    whose input has another type, so no command may describe such a node as fine or write it.
    """
    wanted = INPUT_TYPES.get(slot)
    if op_type not in RESIZE_OPS or wanted is None or not dtype or dtype == wanted:
        return []
    onnx_names = {"float32": "tensor(float)", "int64": "tensor(int64)"}
    return [f"{op_type}-{version or '?'} takes {slot} as {wanted} ({onnx_names[wanted]} in its schema), got {dtype}"]
