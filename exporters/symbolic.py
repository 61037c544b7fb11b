"""Export support for onnxtool's custom ops, in both torch exporters.

TorchScript exporter (``torch.onnx.export(..., dynamo=False)``): symbolic
functions registered with ``torch.onnx.register_custom_op_symbolic`` by
:func:`register_torchscript_symbolics`::

    onnxtool::resize(X, scales, **attrs)                -> Resize(X, roi="", scales, **attrs)
    onnxtool::my_add(a, b)                              -> Add(Mul(a, 2), b)
    onnxtool_plugin::dynamic_trt_resize(X, scales)      -> trt.plugins::DynamicTRTResize(X, scales)
    onnxtool_plugin::dynamic_trt_resize_size(X, S, ac)  -> trt.plugins::DynamicTRTResize(X, S, align_corners=ac)
    aten::asinh(x)  (opset 9+)                          -> Sign(x) * Log(|x| + Sqrt(x*x + 1))

Dynamo exporter (``dynamo=True``): the same mappings written in onnxscript, as
a ``custom_translation_table`` returned by :func:`dynamo_translation_table`.
``aten::asinh`` needs no entry there: the dynamo exporter's minimum opset is 18,
which has ``Asinh``; the opset-9 lesson is a TorchScript-exporter one.

The plugin node carries what TensorRT's ONNX parser and onnxtool's
``swap-plugin`` write: string attributes ``plugin_version="1"`` and
``plugin_namespace=""``, the Resize semantics (mode,
coordinate_transformation_mode, cubic_coeff_a, exclude_outside, nearest_mode)
and ``align_corners`` (int), in the ``trt.plugins`` domain by default.

Nothing here loads the C++ library: the ``onnxtool::`` entries are registered or
returned only when ``torch.ops.onnxtool`` already has the op (import
``exporters.ops.load()`` first; :func:`exporters.export` does).
"""

from __future__ import annotations

import torch
from onnx.defs import OpSchema
from onnx.helper import make_attribute
from torch.onnx import symbolic_helper as sh
from torch.onnx._internal.torchscript_exporter import _type_utils, registration
from torch.onnx.errors import SymbolicValueError

from exporters.models import RESIZE_ATTRIBUTES

__all__ = [
    "ASINH_OPSET",
    "PLUGIN_DOMAIN",
    "PLUGIN_OP_TYPE",
    "dynamo_translation_table",
    "register_asinh_symbolic",
    "register_torchscript_symbolics",
    "unregister_asinh_symbolic",
]

PLUGIN_DOMAIN = "trt.plugins"  # the domain graphsurgeon_tools' built-in DynamicTRTResize spec uses
PLUGIN_OP_TYPE = "DynamicTRTResize"
PLUGIN_VERSION = "1"
PLUGIN_NAMESPACE_ATTR = ""
# Registered at the lowest opset any of these can serve; the TorchScript exporter
# dispatches to the newest registration not above the export's opset.
MIN_OPSET = 9
ASINH_OPSET = 9


def _has_op(namespace: str, name: str) -> bool:
    return hasattr(getattr(torch.ops, namespace), name)


def _plugin_attributes(align_corners: bool) -> dict:
    """The DynamicTRTResize attributes as plain values (shared by both exporters)."""
    return {
        "plugin_version": PLUGIN_VERSION,
        "plugin_namespace": PLUGIN_NAMESPACE_ATTR,
        "mode": RESIZE_ATTRIBUTES["mode"],
        "coordinate_transformation_mode": "align_corners"
        if align_corners
        else RESIZE_ATTRIBUTES["coordinate_transformation_mode"],
        "cubic_coeff_a": float(RESIZE_ATTRIBUTES["cubic_coeff_a"]),
        "exclude_outside": int(RESIZE_ATTRIBUTES["exclude_outside"]),
        "nearest_mode": RESIZE_ATTRIBUTES["nearest_mode"],
        "align_corners": int(align_corners),
    }


def _ts_suffixed(attributes: dict) -> dict:
    """Plain attribute values -> the TorchScript ``g.op`` spelling (``name_s``, ``name_f``, ``name_i``)."""
    suffix = {str: "s", float: "f", int: "i", bool: "i"}
    return {f"{key}_{suffix[type(value)]}": value for key, value in attributes.items()}


# --- TorchScript exporter ---------------------------------------------------------------


def _ts_resize(
    g,
    x,
    scales,
    mode,
    coordinate_transformation_mode,
    cubic_coeff_a,
    exclude_outside,
    nearest_mode,
    extrapolation_value,
    roi,
    antialias,
):
    def const(value, kind):
        return sh._maybe_get_const(value, kind)

    attributes = {
        "mode_s": const(mode, "s"),
        "coordinate_transformation_mode_s": const(coordinate_transformation_mode, "s"),
        "cubic_coeff_a_f": float(const(cubic_coeff_a, "f")),
        "exclude_outside_i": int(const(exclude_outside, "b")),
        "nearest_mode_s": const(nearest_mode, "s"),
        "extrapolation_value_f": float(const(extrapolation_value, "f")),
    }
    if g.opset < 11:
        raise SymbolicValueError(
            f"onnxtool::resize exports to Resize with a scales input, which needs opset 11 or later; got {g.opset}", x
        )
    if attributes["coordinate_transformation_mode_s"] == "half_pixel_symmetric" and g.opset < 19:
        raise SymbolicValueError(f"half_pixel_symmetric needs opset 19 or later; got {g.opset}", x)
    if bool(const(antialias, "b")):
        if g.opset < 18:
            raise SymbolicValueError(f"antialias needs opset 18 or later; got {g.opset}", x)
        attributes["antialias_i"] = 1
    if sh._is_none(roi):
        roi = g.op("Constant", value_t=torch.tensor([], dtype=torch.float32))
    return g.op("Resize", x, roi, scales, **attributes)


def _ts_my_add(g, a, b):
    dtype = _type_utils.JitScalarType.from_value(a, _type_utils.JitScalarType.FLOAT).dtype()
    two = g.op("Constant", value_t=torch.tensor(2, dtype=dtype))
    return g.op("Add", g.op("Mul", a, two), b)


def _ts_plugin_output(out, x, height=None, width=None):
    """Give the plugin node's output x's element type and rank, so shape inference can go on."""
    sizes = sh._get_tensor_sizes(x)
    if sizes is not None:
        out.setType(x.type().with_sizes([*sizes[:-2], height, width]))
    return out


def _make_ts_plugin(domain: str):
    def scales_symbolic(g, x, scales):
        out = g.op(f"{domain}::{PLUGIN_OP_TYPE}", x, scales, **_ts_suffixed(_plugin_attributes(False)))
        return _ts_plugin_output(out, x)

    def size_symbolic(g, x, size_tensor, align_corners):
        flag = bool(sh._maybe_get_const(align_corners, "b"))
        out = g.op(f"{domain}::{PLUGIN_OP_TYPE}", x, size_tensor, **_ts_suffixed(_plugin_attributes(flag)))
        size = sh._get_tensor_sizes(size_tensor) or [None, None]
        return _ts_plugin_output(out, x, size[-2], size[-1])

    return scales_symbolic, size_symbolic


def _ts_asinh(g, x):
    # asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1)): the odd-symmetric form, because the
    # textbook log(x + sqrt(x^2 + 1)) cancels catastrophically for large negative x.
    # Overflows (inf) for |x| > ~1.8e19 in float32, where x*x does.

    dtype = _type_utils.JitScalarType.from_value(x, _type_utils.JitScalarType.FLOAT).dtype()
    one = g.op("Constant", value_t=torch.tensor(1, dtype=dtype))
    magnitude = g.op("Abs", x)
    root = g.op("Sqrt", g.op("Add", g.op("Mul", x, x), one))
    return g.op("Mul", g.op("Sign", x), g.op("Log", g.op("Add", magnitude, root)))


def register_asinh_symbolic(opset: int = ASINH_OPSET) -> None:
    """Teach the TorchScript exporter ``aten::asinh`` (it has no symbolic for it at any opset).

    Process-wide and idempotent (a second call replaces the first). Undo with
    :func:`unregister_asinh_symbolic`.
    """
    torch.onnx.register_custom_op_symbolic("::asinh", _ts_asinh, opset)


def unregister_asinh_symbolic(opset: int = ASINH_OPSET) -> None:
    """Remove the registration :func:`register_asinh_symbolic` made."""
    torch.onnx.unregister_custom_op_symbolic("::asinh", opset)
    # torch leaves an empty function group behind, and a later export of asinh then dies with
    # "min() arg is an empty sequence" instead of "not supported"; drop the group (private API).
    try:
        group = registration.registry._registry.get("aten::asinh")
        if group is not None and not any(group.get(v) for v in range(1, 30)):
            del registration.registry._registry["aten::asinh"]
    except (ImportError, AttributeError, KeyError, ValueError):  # pragma: no cover - torch moved it
        pass


def register_torchscript_symbolics(*, domain: str = PLUGIN_DOMAIN) -> list[str]:
    """Register the TorchScript-exporter symbolics of every onnxtool op loaded in this process.

    Process-wide and idempotent; returns the op names registered. The
    ``onnxtool::`` ops are skipped (not an error) when the C++ library is not
    loaded. ``domain`` is the plugin node's domain (TensorRT ignores it). Does
    not register asinh: that one changes how every model with ``torch.asinh``
    exports, so it is opt-in via :func:`register_asinh_symbolic`.
    """
    registered = []
    scales_symbolic, size_symbolic = _make_ts_plugin(domain)
    entries = [
        ("onnxtool", "resize", _ts_resize),
        ("onnxtool", "my_add", _ts_my_add),
        ("onnxtool_plugin", "dynamic_trt_resize", scales_symbolic),
        ("onnxtool_plugin", "dynamic_trt_resize_size", size_symbolic),
    ]
    for namespace, name, fn in entries:
        if _has_op(namespace, name):
            torch.onnx.register_custom_op_symbolic(f"{namespace}::{name}", fn, MIN_OPSET)
            registered.append(f"{namespace}::{name}")
    return registered


# --- Dynamo exporter (onnxscript) -------------------------------------------------------


def _plugin_schema(domain: str):
    """An OpSchema describing DynamicTRTResize (X, scales | size_tensor) -> Y, for onnxscript only."""
    floats = ["tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)"]
    example = _plugin_attributes(False)
    return OpSchema(
        PLUGIN_OP_TYPE,
        domain,
        1,
        "TensorRT DynamicTRTResize plugin: resize X by scales, or to size_tensor's last two dims.",
        inputs=[OpSchema.FormalParameter("X", "T"), OpSchema.FormalParameter("scales_or_size", "T1")],
        outputs=[OpSchema.FormalParameter("Y", "T")],
        type_constraints=[("T", floats, "image element type"), ("T1", floats, "scales or size tensor")],
        attributes=[OpSchema.Attribute(name, make_attribute(name, value), name) for name, value in example.items()],
    )


def dynamo_translation_table(*, domain: str = PLUGIN_DOMAIN) -> dict:
    """``custom_translation_table`` entries for ``torch.onnx.export(..., dynamo=True)``.

    Keys are the ``OpOverload`` objects of the onnxtool ops loaded in this
    process (``onnxtool::`` ones only when the C++ library is loaded); values
    are onnxscript functions. Imports onnxscript; does not export anything.
    """
    import onnxscript  # deferred: onnxscript (~1.3 s), the dynamo exporter only
    from onnxscript import opset18 as op  # deferred: onnxscript

    plugin = onnxscript.values.Opset(domain, 1)
    table: dict = {}

    if _has_op("onnxtool", "resize"):

        def onnxtool_resize(
            x,
            scales,
            mode: str = "nearest",
            coordinate_transformation_mode: str = "half_pixel",
            cubic_coeff_a: float = -0.75,
            exclude_outside: bool = False,
            nearest_mode: str = "round_prefer_floor",
            extrapolation_value: float = 0.0,
            roi=None,
            antialias: bool = False,
        ):
            # roi=None becomes an empty input name, as the dynamo exporter writes for interpolate.
            attributes = {}
            if antialias:  # opset 18's attribute; left out when off so older readers are not surprised
                attributes["antialias"] = 1
            return op.Resize(
                x,
                roi,
                scales,
                mode=mode,
                coordinate_transformation_mode=coordinate_transformation_mode,
                cubic_coeff_a=float(cubic_coeff_a),
                exclude_outside=int(exclude_outside),
                nearest_mode=nearest_mode,
                extrapolation_value=float(extrapolation_value),
                **attributes,
            )

        table[torch.ops.onnxtool.resize.default] = onnxtool_resize

    if _has_op("onnxtool", "my_add"):

        def onnxtool_my_add(a, b):
            return op.Add(op.Mul(a, op.CastLike(op.Constant(value_float=2.0), a)), b)

        table[torch.ops.onnxtool.my_add.default] = onnxtool_my_add

    if _has_op("onnxtool_plugin", "dynamic_trt_resize"):
        # onnxscript looks an op's schema up in onnx's registry, which has none for a plugin;
        # an explicit, unregistered schema avoids registering one process-wide (that would
        # change what onnx.checker accepts for everybody's DynamicTRTResize nodes).
        dynamic_trt_resize = onnxscript.values.Op(plugin, PLUGIN_OP_TYPE, op_schema=_plugin_schema(domain))

        def plugin_scales(x, scales):
            return dynamic_trt_resize(x, scales, **_plugin_attributes(False))

        def plugin_size(x, size_tensor, align_corners: bool = False):
            return dynamic_trt_resize(x, size_tensor, **_plugin_attributes(bool(align_corners)))

        table[torch.ops.onnxtool_plugin.dynamic_trt_resize.default] = plugin_scales
        table[torch.ops.onnxtool_plugin.dynamic_trt_resize_size.default] = plugin_size
    return table
