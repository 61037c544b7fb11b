"""Small values through shape computations, with numpy: what an exporter's Shape -> Gather ->
Concat -> Reshape chain holds, so :mod:`.shape_flow` follows a changed shape into it.

``compute_value(node, inputs, model) -> np.ndarray | None``: the node's first output when the
node is one of :data:`VALUE_OPS`, its inputs' values are known (Shape and Size need only a
static shape) and the result has at most ``MAX_VALUE_ELEMENTS`` elements; None otherwise.

Requires: ``inputs`` are shape_flow Tensors (anything with ``.value`` and ``.static``/``.shape``)
in node-input order. Ensures: pure; never
allocates more than the element bound (sizes are checked before expanding ops run).
Does NOT evaluate float math beyond the four operations, nor anything with a subgraph.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import onnx
from onnx import ModelProto, NodeProto

from graphsurgeon_tools.core.attributes import get_attr
from graphsurgeon_tools.core.constants import constant_node_value
from graphsurgeon_tools.core.dtypes import np_dtype
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.errors import InvalidModelError

__all__ = ["MAX_VALUE_ELEMENTS", "VALUE_OPS", "compute_value"]

#: Values (shape vectors, scales, small constants) are tracked up to this many elements.
MAX_VALUE_ELEMENTS = 1024

VALUE_OPS = frozenset(
    {
        "Constant",
        "Shape",
        "Size",
        "Identity",
        "Cast",
        "Gather",
        "Unsqueeze",
        "Squeeze",
        "Concat",
        "Slice",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Floor",
        "Ceil",
        "Neg",
        "Abs",
        "Max",
        "Min",
        "Reshape",
        "Equal",
        "Where",
        "ConstantOfShape",
        "Range",
        "ReduceProd",
        "Expand",
        "Mod",
        "Transpose",
        "Less",
        "Greater",
        "Not",
        "Sqrt",
        "Pow",
    }
)


def compute_value(node: "NodeProto", inputs: list[Any], model: "ModelProto") -> Optional["np.ndarray"]:
    op = node.op_type
    if op not in VALUE_OPS or node.domain not in DEFAULT_DOMAINS or len(node.output) != 1:
        return None
    if op == "Constant":
        try:
            value = constant_node_value(node, model)
        except InvalidModelError:
            return None
        return value if value is not None and value.size <= MAX_VALUE_ELEMENTS else None
    if op in ("Shape", "Size"):
        if not inputs or not inputs[0].static:
            return None
        shape = np.array(inputs[0].shape, dtype=np.int64)
        if op == "Size":
            return np.array(int(np.prod(shape)), dtype=np.int64)
        start, end = _attr(node, "start", 0), _attr(node, "end", None)
        return shape[start:end]
    values = [t.value if name else None for name, t in zip(node.input, inputs)]
    if not values or any(v is None for name, v in zip(node.input, values) if name):
        return None
    try:
        with np.errstate(all="ignore"):
            result = _evaluate(node, op, values)
    except (ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, OverflowError):
        return None
    if result is None:
        return None
    result = np.asarray(result)
    return result if result.size <= MAX_VALUE_ELEMENTS else None


def _attr(node: "NodeProto", name: str, default: Any) -> Any:
    return get_attr(node, name, default)


def _axes(node: "NodeProto", values: list[Any], index: int) -> Optional[list[int]]:
    axes = _attr(node, "axes", None)
    if axes is None and len(values) > index and values[index] is not None:
        axes = [int(a) for a in values[index].reshape(-1)]
    return None if axes is None else [int(a) for a in axes]


def _evaluate(node: "NodeProto", op: str, values: list[Any]) -> Any:
    x = values[0]
    if op == "Identity":
        return x
    if op == "Cast":
        return x.astype(np_dtype(int(_attr(node, "to", 1))))
    if op == "Gather":
        return np.take(x, values[1].astype(np.int64), axis=int(_attr(node, "axis", 0)))
    if op == "Unsqueeze":
        axes = _axes(node, values, 1)
        if axes is None:
            return None
        rank = x.ndim + len(axes)
        return np.expand_dims(x, tuple(sorted(a + rank if a < 0 else a for a in axes)))
    if op == "Squeeze":
        axes = _axes(node, values, 1)
        return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(a + x.ndim if a < 0 else a for a in axes))
    if op == "Concat":
        return np.concatenate([v for v in values if v is not None], axis=int(_attr(node, "axis", 0)))
    if op == "Slice":
        return _slice(node, values)
    if op == "Transpose":
        perm = _attr(node, "perm", None)
        return np.transpose(x, None if perm is None else [int(p) for p in perm])
    if op == "Not":
        return np.logical_not(x)
    if op == "Sqrt":
        return np.sqrt(x)
    if op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Mod", "Less", "Greater", "Pow"):
        a, b = values[0], values[1]
        if (
            np.broadcast_shapes(a.shape, b.shape)
            and int(np.prod(np.broadcast_shapes(a.shape, b.shape))) > MAX_VALUE_ELEMENTS
        ):
            return None
        if op == "Div" and a.dtype.kind in "iu":
            return (np.trunc(a / b)).astype(a.dtype)  # ONNX integer division truncates
        if op == "Mod" and _attr(node, "fmod", 0):
            return np.fmod(a, b)
        fn = {
            "Add": np.add,
            "Sub": np.subtract,
            "Mul": np.multiply,
            "Div": np.divide,
            "Max": np.maximum,
            "Min": np.minimum,
            "Equal": np.equal,
            "Mod": np.mod,
            "Less": np.less,
            "Greater": np.greater,
            "Pow": np.power,
        }[op]
        result = fn(a, b)
        return result if op in ("Equal", "Less", "Greater") else result.astype(a.dtype)
    if op in ("Floor", "Ceil", "Neg", "Abs"):
        return {"Floor": np.floor, "Ceil": np.ceil, "Neg": np.negative, "Abs": np.abs}[op](x)
    if op == "Reshape":
        target = [int(d) for d in values[1].reshape(-1)]
        if not _attr(node, "allowzero", 0):
            target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
        return x.reshape(target)
    if op == "Where":
        return np.where(values[0], values[1], values[2])
    if op == "ConstantOfShape":
        shape = [int(d) for d in x.reshape(-1)]
        if any(d < 0 for d in shape) or int(np.prod(shape)) > MAX_VALUE_ELEMENTS:
            return None
        fill = _attr(node, "value", None)

        fill_value = onnx.numpy_helper.to_array(fill).reshape(-1)[0] if fill is not None else np.float32(0)
        return np.full(shape, fill_value, dtype=np.asarray(fill_value).dtype)
    if op == "Range":
        start, limit, delta = (float(v) for v in values[:3])
        if delta == 0 or (limit - start) / delta > MAX_VALUE_ELEMENTS:
            return None
        return np.arange(values[0], values[1], values[2]).astype(values[0].dtype)
    if op == "ReduceProd":
        axes = _axes(node, values, 1)
        keep = bool(_attr(node, "keepdims", 1))
        return np.prod(x, axis=None if not axes else tuple(axes), keepdims=keep)
    if op == "Expand":
        shape = np.broadcast_shapes(x.shape, tuple(int(d) for d in values[1].reshape(-1)))
        if int(np.prod(shape)) > MAX_VALUE_ELEMENTS:
            return None
        return np.broadcast_to(x, shape).copy()
    return None


def _slice(node: "NodeProto", values: list[Any]) -> Any:
    x = values[0]
    starts = _attr(node, "starts", None)
    if starts is not None:  # Slice-1: attributes
        ends, axes, steps = _attr(node, "ends", None), _attr(node, "axes", None), None
    else:

        def vec(i: int) -> Optional[list[int]]:
            return [int(v) for v in values[i].reshape(-1)] if len(values) > i and values[i] is not None else None

        starts, ends, axes, steps = vec(1), vec(2), vec(3), vec(4)
    if starts is None or ends is None:
        return None
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[axis if axis >= 0 else axis + x.ndim] = slice(int(start), int(end), int(step))
    return x[tuple(index)]
