"""What one site computes per axis, and how the candidate feeds it.

:class:`SiteSemantics` is the part of a Resize (or DynamicTRTResize) node that shapes its
per-axis matrix: mode, coordinate transformation, nearest rounding, cubic coefficient,
exclude_outside, antialias. :func:`site_form` says what the rewritten node receives:
``"scales"`` (a float scales vector), ``"sizes"`` (integer output sizes, which the graph
computes as floor(in * factor)) or ``"size-tensor"`` (MMDeploy's plugin form: only the
tensor's shape is read).

Requires: a :class:`~graphsurgeon_tools.resize.ResizeSite` or a DynamicTRTResize node.
Ensures: pure; defaults filled as the op version gives them. Does NOT run anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from graphsurgeon_tools.core.attributes import attributes
from graphsurgeon_tools.core.checker import static_shape, value_info_map
from graphsurgeon_tools.resize.plugin_node import decode_plugin_semantics
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE

__all__ = ["SiteSemantics", "site_form"]


@dataclass(frozen=True)
class SiteSemantics:
    mode: str
    coordinate_transformation_mode: str
    nearest_mode: str = "round_prefer_floor"
    cubic_coeff_a: float = -0.75
    exclude_outside: int = 0
    antialias: int = 0

    @classmethod
    def from_site(cls, site: Any) -> "SiteSemantics":
        return cls(
            site.mode,
            site.coordinate_transformation_mode,
            site.nearest_mode,
            float(site.cubic_coeff_a),
            int(site.exclude_outside),
            int(site.antialias),
        )

    @classmethod
    def from_plugin(cls, node: Any) -> "SiteSemantics":
        values = decode_plugin_semantics(node)
        ctm = values["coordinate_transformation_mode"]
        if "coordinate_transformation_mode" not in attributes(node) and attributes(node).get("align_corners"):
            ctm = "align_corners"  # MMDeploy's attribute, as the kernel reads it
        return cls(
            str(values["mode"]),
            str(ctm),
            str(values["nearest_mode"]),
            float(values["cubic_coeff_a"]),
            int(values["exclude_outside"]),
            0,
        )

    def with_mode(self, **changes: Any) -> "SiteSemantics":
        values = asdict(self)
        values.update(changes)
        return SiteSemantics(**values)

    def resize_attributes(self) -> dict[str, Any]:
        """Attributes of a Resize-19 node with these semantics."""
        return {
            "mode": self.mode,
            "coordinate_transformation_mode": self.coordinate_transformation_mode,
            "nearest_mode": self.nearest_mode,
            "cubic_coeff_a": float(self.cubic_coeff_a),
            "exclude_outside": int(self.exclude_outside),
            "antialias": int(self.antialias),
        }

    def describe(self) -> str:
        text = f"{self.mode}, {self.coordinate_transformation_mode}"
        if self.mode == "nearest":
            text += f", {self.nearest_mode}"
        if self.mode == "cubic":
            text += f", a={self.cubic_coeff_a:g}"
        if self.exclude_outside:
            text += ", exclude_outside"
        if self.antialias:
            text += ", antialias"
        return text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def site_form(model: Any, node: Any) -> str:
    """ "scales", "sizes" or "size-tensor": what ``node`` (a Resize or a plugin node of ``model``) is fed."""
    if node.op_type == PLUGIN_OP_TYPE:
        second = node.input[1] if len(node.input) > 1 else ""
        infos = value_info_map(model.graph)
        infos.update({i.name: i for i in model.graph.input})
        info = infos.get(second)
        elem = info.type.tensor_type.elem_type if info is not None else 1
        shape = static_shape(info) if info is not None else None
        if shape is not None and len(shape) >= 2:
            return "size-tensor"
        return "sizes" if elem in (6, 7) else "scales"
    inputs = list(node.input) + [""] * 4
    if node.op_type == "Resize" and inputs[3] and not inputs[2]:
        return "sizes"
    if node.op_type == "Resize" and inputs[3] and inputs[2]:
        # both slots named: ONNX takes sizes when scales is an empty tensor
        init = {t.name: t for t in model.graph.initializer}
        scales = init.get(inputs[2])
        if scales is not None and not list(scales.dims) or (scales is not None and scales.dims[0] == 0):
            return "sizes"
    return "scales"
