"""The one node-attribute reader and maker.

Requires: an ``onnx.NodeProto``. Ensures: strings come back as ``str`` (bytes decoded as
UTF-8, undecodable bytes replaced, never an exception), lists of strings as ``list[str]``,
numbers and lists as Python values, tensors/graphs as their protos; :func:`make_attr`
accepts what :func:`attributes` returns (and numpy scalars, bools), so
``make_attr(k, attributes(node)[k])`` rebuilds the attribute. Does NOT apply op defaults
(that is :mod:`graphsurgeon_tools.resize.semantics`'s job for Resize).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, NodeProto

__all__ = ["attributes", "get_attr", "make_attr", "set_attr"]

_MISSING = object()


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", errors="replace") for v in value]
    return value


def attributes(node: "NodeProto") -> dict[str, Any]:
    """Attribute name -> decoded value, for every attribute of ``node``."""
    return {attr.name: _decode(onnx.helper.get_attribute_value(attr)) for attr in node.attribute}


def get_attr(node: "NodeProto", name: str, default: Any = None) -> Any:
    """The decoded value of attribute ``name``, or ``default`` when the node does not set it."""
    for attr in node.attribute:
        if attr.name == name:
            return _decode(onnx.helper.get_attribute_value(attr))
    return default


def make_attr(name: str, value: Any) -> "AttributeProto":
    """An AttributeProto for ``value``: bools become ints, numpy scalars Python numbers, a list
    with any float a list of floats (so ``[1, 1.5]`` is FLOATS, not a type error)."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    elif isinstance(value, np.integer):
        value = int(value)
    elif isinstance(value, np.floating):
        value = float(value)
    elif isinstance(value, (list, tuple)):
        value = [v.item() if isinstance(v, np.generic) else v for v in value]
        if any(isinstance(v, float) for v in value):
            value = [float(v) for v in value]
    return onnx.helper.make_attribute(name, value)


def set_attr(node: "NodeProto", name: str, value: Any) -> None:
    """Set attribute ``name`` of ``node`` in place (replacing an existing one, keeping its position)."""
    new = make_attr(name, value)
    for attr in node.attribute:
        if attr.name == name:
            attr.CopyFrom(new)
            return
    node.attribute.append(new)
