"""DynamicTRTResize nodes <-> Resize semantics.

A DynamicTRTResize node carries (some of) :data:`~.semantics.PLUGIN_SEMANTICS` as
attributes, possibly renamed by a plugin spec, plus ``plugin_version`` /
``plugin_namespace`` and spec-derived fields (``align_corners``). Decoding fills what is
absent with Resize-11+ defaults, which is what the ONNX Runtime kernel and the reverse
swap both assume. Encoding gives the attributes a Resize/Upsample node at a given opset
needs to mean the same.

Requires: an ``onnx.NodeProto``. Ensures: ``decode_plugin_semantics`` returns exactly the
five semantic keys; ``resize_attributes(decode(...), opset)`` round-trips the semantics a
Resize node of that opset can hold. Does NOT check that the semantics are supported (the
swap's refusal rules do) and does NOT derive ``coordinate_transformation_mode`` from
``align_corners`` (a node without the former is read as half_pixel, as the kernel does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

from graphsurgeon_tools.core.attributes import attributes
from graphsurgeon_tools.resize.semantics import PLUGIN_SEMANTICS, RESIZE_DEFAULTS

if TYPE_CHECKING:  # pragma: no cover
    from onnx import NodeProto

__all__ = ["decode_plugin_semantics", "plugin_node_attributes", "resize_attributes"]


def decode_plugin_semantics(node: "NodeProto", rename: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """The Resize semantics a DynamicTRTResize node means, defaults filled in.

    ``rename`` is the spec's Resize-name -> plugin-name map (``spec.attributes.rename``);
    it is inverted to read the node.
    """
    inverse = {new: old for old, new in (rename or {}).items()}
    attrs = {inverse.get(k, k): v for k, v in attributes(node).items()}
    return {k: attrs.get(k, RESIZE_DEFAULTS[k]) for k in PLUGIN_SEMANTICS}


def plugin_node_attributes(node: "NodeProto") -> dict[str, Any]:
    """The semantics the ONNX Runtime kernel reads from a node (no rename: the kernel is ours)."""
    return decode_plugin_semantics(node)


def resize_attributes(semantics: Mapping[str, Any], opset: int) -> dict[str, Any]:
    """Attributes of the Resize (opset >= 10) or Upsample (opset < 10) node meaning ``semantics``.

    Below opset 11 only ``mode`` exists; cubic-only ``cubic_coeff_a`` is left off a
    non-cubic Resize (legal but noise).
    """
    keep = PLUGIN_SEMANTICS if opset >= 11 else ("mode",)
    attrs = {k: semantics.get(k, RESIZE_DEFAULTS[k]) for k in keep}
    if opset >= 11 and attrs["mode"] != "cubic":
        attrs.pop("cubic_coeff_a")
    return attrs
