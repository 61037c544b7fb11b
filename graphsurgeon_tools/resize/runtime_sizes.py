"""Run-time sizes that are a constant factor of data shapes: what recompute_scale_factor exports write.

::

    sizes = Concat(Shape(A)[:s], round(float(Shape(B)[i]) * c_i), ...)   ->  RuntimeSizes(lead, axes)
    round: Floor | Ceil | Cast to an integer (trunc); c_i a constant (initializer / Constant), one or per entry

The ops between are followed, whatever order the exporter wrote them in: Shape (start/end),
Gather and Slice with constant indices, Cast, Unsqueeze, Squeeze, Reshape, Flatten, Identity,
Concat. What each exporter writes for ``F.interpolate(x, scale_factor=f,
recompute_scale_factor=True)`` with dynamic axes:

* TorchScript: Shape -> Gather -> Cast(float) -> Mul(f) -> Cast -> Floor -> Unsqueeze -> Concat ->
  Cast(int64) -> Concat(Slice(Shape(X), 0, 2), .);
* dynamo: Shape(start, end) -> Squeeze -> Cast(float) -> Mul(f) -> Cast(int64) -> Reshape -> Concat ->
  Concat(Shape(X, 0, 2), .), reading the MODEL input's shape where the exporter proved it equal;
* kornia-style rescale / ``size=`` from another tensor's shape times a constant: the same, B != X.

``recognise`` describes such sizes axis by axis (which tensor's dim, which Mul and constant, which
rounding), so a pass can make each constant an input: fed the constant, the graph computes exactly
what it computed before, at every input size. A constant shared by several Muls (the dynamo exporter
shares one initializer) is not changed: each Mul gets its own replacement.

Requires: a ModelProto whose main graph is topologically sorted, a main-graph site. Ensures:
read-only; visits at most :data:`MAX_NODES` producers. Does NOT follow Div (1/c is not c),
integer arithmetic on the dims, or anything in a body or function.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from graphsurgeon_tools.core.dtypes import is_float, is_known, np_dtype
from graphsurgeon_tools.core.graph import producers
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.resize.shape_flow import ShapeFlow
from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["MAX_NODES", "RuntimeSizes", "ScaledAxis", "recognise"]

MAX_NODES = 256
_INTS = {TensorProto.INT32, TensorProto.INT64}  # the Casts whose truncation the pattern knows
_PASS = ("Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity")


@dataclass(frozen=True)
class _Term:
    """One element of a 1-D shape vector, as far as it is understood."""

    kind: str  # "dim" (int) | "fdim" (float of a dim) | "fscaled" (float dim * c) | "scaled" (int) | "const"
    source: str = ""  # the tensor whose shape is read
    axis: int = -1
    factor: float = 0.0  # c (or the constant's value for "const")
    mul: int = -1  # index of the Mul node in graph.node
    element: int = 0  # this element's position in the Mul's output
    width: int = 1  # elements the Mul's output holds
    const: str = ""  # the constant tensor the Mul reads
    slot: int = -1  # its input slot
    const_shape: tuple[int, ...] = ()
    const_dtype: str = "float32"
    dtype: int = 1  # the float type the dim is cast to
    rounding: str = ""  # "" | "floor" | "ceil" | "trunc"


@dataclass(frozen=True)
class ScaledAxis:
    """One resized axis of a recognised sizes vector: ``round(float(Shape(source)[axis]) * factor)``."""

    position: int  # index in the sizes vector
    source: str
    axis: int
    factor: float
    rounding: str  # floor | ceil | trunc
    mul: int  # the Mul node's index in graph.node
    element: int
    width: int
    const: str
    slot: int
    const_shape: tuple[int, ...]
    const_dtype: str  # numpy dtype name of the constant: the replacement is cast to it
    dtype: int


@dataclass(frozen=True)
class RuntimeSizes:
    """A sizes tensor recognised as ``Concat(<lead dims>, round(dim * c) per resized axis)``."""

    tensor: str
    lead: tuple[str, ...]  # each entry kept as it is: "Shape(x)[0]", or the static dim it equals
    axes: tuple[ScaledAxis, ...]
    value: Optional[tuple[int, ...]] = None  # the sizes when every shape read is static

    @property
    def start(self) -> int:
        return len(self.lead)

    @property
    def factors(self) -> tuple[float, ...]:
        return tuple(a.factor for a in self.axes)

    @property
    def constants(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.const for a in self.axes))

    def describe(self) -> str:
        lead = ", ".join(self.lead)
        scaled = ", ".join(f"{a.rounding}(Shape({a.source})[{a.axis}] * {a.factor:g})" for a in self.axes)
        return f"run-time sizes [{lead}{', ' if lead else ''}{scaled}]: a constant factor of data shapes"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tensor": self.tensor,
            "pattern": self.describe(),
            "factors": list(self.factors),
            "roundings": [a.rounding for a in self.axes],
            "reads": sorted({a.source for a in self.axes}),
        }


class _Walker:
    def __init__(self, model: "ModelProto", ranks: dict[str, int]) -> None:
        self.graph = model.graph
        self.producers = producers(self.graph)
        self.inits = {i.name: i for i in self.graph.initializer}
        self.ranks = ranks
        self.memo: dict[str, Optional[list[_Term]]] = {}
        self.visits = 0

    def constant(self, name: str) -> Optional[np.ndarray]:
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        index = self.producers.get(name)
        if index is None:
            return None
        node = self.graph.node[index]
        if node.op_type in ("Identity", "Cast", "Gather", "Slice", "Reshape", "Squeeze", "Unsqueeze"):
            return self._folded(node)
        if node.op_type != "Constant":
            return None
        for attr in node.attribute:
            if attr.name == "value":
                return numpy_helper.to_array(attr.t)
            if attr.name in ("value_int", "value_float"):
                return np.asarray(attr.i if attr.name == "value_int" else attr.f)
            if attr.name in ("value_ints", "value_floats"):
                return np.asarray(list(attr.ints) if attr.name == "value_ints" else list(attr.floats))
        return None

    def _folded(self, node: "NodeProto") -> Optional[np.ndarray]:
        """A small constant behind Identity/Cast/Gather/Slice/Reshape/(Un)Squeeze of constants: the form
        a factor input put back as a constant takes (make-dynamic-scale's relayout)."""
        data = self.constant(node.input[0]) if node.input else None
        rest = [self.constant(i) if i else None for i in node.input[1:]]
        if data is None or data.size > 16 or any(r is None for r, i in zip(rest, node.input[1:]) if i):
            return None
        op = node.op_type
        if op == "Identity":
            return data
        if op == "Cast":
            to = _attr(node, "to", 1)
            return data.astype(np_dtype(to)) if is_known(to) else None
        if op == "Gather" and _attr(node, "axis", 0) == 0:
            return np.take(data, rest[0].astype(np.int64), axis=0)
        if (
            op == "Slice"
            and data.ndim == 1
            and len(rest) >= 2
            and rest[0].size == 1
            and rest[1].size == 1
            and (len(rest) < 3 or rest[2] is None or int(rest[2].reshape(-1)[0]) in (0, -1))
            and (len(rest) < 4 or rest[3] is None or int(rest[3].reshape(-1)[0]) == 1)
        ):
            return data[int(rest[0].reshape(-1)[0]) : int(rest[1].reshape(-1)[0])]
        if op in ("Reshape", "Squeeze", "Unsqueeze"):
            return data.reshape(-1) if data.size == 1 or op == "Reshape" else None
        return None

    def terms(self, name: str) -> Optional[list[_Term]]:
        if name not in self.memo:
            self.visits += 1
            self.memo[name] = None if self.visits > MAX_NODES else self._terms(name)
        return self.memo[name]

    def _terms(self, name: str) -> Optional[list[_Term]]:
        value = self.constant(name)
        if value is not None:
            return [_Term("const", factor=float(v)) for v in value.reshape(-1)] if value.size <= 16 else None
        index = self.producers.get(name)
        if index is None:
            return None
        node = self.graph.node[index]
        if node.domain not in DEFAULT_DOMAINS:
            return None
        op = node.op_type
        if op == "Shape":
            rank = self.ranks.get(node.input[0])
            if rank is None:
                return None
            start, end = _attr(node, "start", 0), _attr(node, "end", rank)
            return [_Term("dim", node.input[0], a) for a in list(range(rank))[slice(start, end)]]
        if op in _PASS:
            return self.terms(node.input[0])
        if op == "Concat":
            parts = [self.terms(i) for i in node.input]
            return None if any(p is None for p in parts) else [t for p in parts for t in p]  # type: ignore[union-attr]
        if op == "Gather":
            data, indices = self.terms(node.input[0]), self.constant(node.input[1])
            if data is None or indices is None or _attr(node, "axis", 0) != 0:
                return None
            picked = [int(i) + (len(data) if int(i) < 0 else 0) for i in indices.reshape(-1)]
            return [data[i] for i in picked] if all(0 <= i < len(data) for i in picked) else None
        if op == "Slice":
            return self._slice(node)
        if op == "Cast":
            return self._cast(node)
        if op in ("Floor", "Ceil"):
            data = self.terms(node.input[0])
            if data is None or any(t.kind not in ("fdim", "fscaled") or t.rounding for t in data):
                return None
            return [t if t.kind == "fdim" else _replace(t, rounding=op.lower()) for t in data]
        if op == "Mul":
            return self._mul(node, index)
        return None

    def _slice(self, node: "NodeProto") -> Optional[list[_Term]]:
        data = self.terms(node.input[0])
        if data is None:
            return None
        if len(node.input) >= 3:
            parts = [self.constant(i) if i else None for i in list(node.input[1:5])]
            starts, ends = parts[0], parts[1]
            axes = parts[2] if len(parts) > 2 else None
            steps = parts[3] if len(parts) > 3 else None
            if (
                starts is None
                or ends is None
                or (len(node.input) > 3 and node.input[3] and axes is None)
                or (len(node.input) > 4 and node.input[4] and steps is None)
            ):
                return None
        else:  # Slice-1: attributes
            starts, ends = np.asarray(_attr(node, "starts", [])), np.asarray(_attr(node, "ends", []))
            axes, steps = (np.asarray(_attr(node, "axes", [0])), None)
        if starts.size != 1 or (axes is not None and int(np.asarray(axes).reshape(-1)[0]) not in (0, -1)):
            return None
        step = 1 if steps is None else int(np.asarray(steps).reshape(-1)[0])
        big = len(data)
        lo, hi = int(starts.reshape(-1)[0]), int(ends.reshape(-1)[0])
        lo, hi = max(min(lo, big), -big - 1), max(min(hi, big), -big - 1)
        return data[slice(lo, hi, step)] if step != 0 else None

    def _cast(self, node: "NodeProto") -> Optional[list[_Term]]:
        data = self.terms(node.input[0])
        to = _attr(node, "to", 0)
        if data is None:
            return None
        out = []
        for term in data:
            if is_float(to) and term.kind == "dim":
                out.append(_replace(term, kind="fdim", dtype=to))
            elif is_float(to) and term.kind == "fscaled":
                out.append(term)  # float32 -> float32/64: the product's value is kept
            elif to in _INTS and term.kind == "fscaled":
                out.append(_replace(term, kind="scaled", rounding=term.rounding or "trunc"))
            elif to in _INTS and term.kind in ("dim", "scaled"):
                out.append(term)
            elif to in _INTS and term.kind == "fdim":
                out.append(_replace(term, kind="dim"))
            else:
                return None
        return out

    def _mul(self, node: "NodeProto", index: int) -> Optional[list[_Term]]:
        for slot in (1, 0):
            value = self.constant(node.input[slot])
            if value is None:
                continue
            data = self.terms(node.input[1 - slot])
            if data is None or not data or any(t.kind != "fdim" for t in data):
                return None
            flat = value.reshape(-1).astype(np.float64)
            if (
                flat.size not in (1, len(data))
                or value.ndim > 1
                or not np.all(np.isfinite(flat))
                or not np.all(flat > 0)
                or value.dtype.kind != "f"
            ):
                return None
            if np.any(flat.astype(np.float32).astype(np.float64) != flat):
                return None  # a float32 input could not hold the constant exactly
            return [
                _replace(
                    t,
                    kind="fscaled",
                    factor=float(flat[e if flat.size > 1 else 0]),
                    mul=index,
                    element=e,
                    width=len(data),
                    const=node.input[slot],
                    slot=slot,
                    const_shape=tuple(value.shape),
                    const_dtype=str(value.dtype),
                )
                for e, t in enumerate(data)
            ]
        return None


def _attr(node: "NodeProto", name: str, default: Any) -> Any:
    for attr in node.attribute:
        if attr.name == name:
            return helper.get_attribute_value(attr)
    return default


def _replace(term: _Term, **changes: Any) -> _Term:
    return dataclasses.replace(term, **changes)


def recognise(model: "ModelProto", site: "ResizeSite", flow: "ShapeFlow") -> tuple[Optional[RuntimeSizes], str]:
    """The site's run-time sizes as a constant factor of data shapes, or (None, why not).

    ``flow``: a :class:`~graphsurgeon_tools.resize.shape_flow.ShapeFlow` of ``model`` (the ranks of
    the tensors whose shape is read; the sizes' value when every shape read is static).
    """
    if not site.sizes_tensor or not site.in_main_graph or site.axes is not None:
        return None, "no full-rank run-time sizes in the main graph"
    ranks = {name: len(t.shape) for name, t in flow.base.items() if t.shape is not None}
    walker = _Walker(model, ranks)
    terms = walker.terms(site.sizes_tensor)
    if terms is None:
        return None, "the sizes are not Concat(Shape dims, round(Shape dim * constant)) ops this reads"
    if site.input_rank is not None and len(terms) != site.input_rank:
        return None, f"the sizes hold {len(terms)} entries for a rank-{site.input_rank} input"
    scaled = [p for p, t in enumerate(terms) if t.kind == "scaled"]
    if not scaled:
        return None, "no entry of the sizes is a dim times a constant"
    start = scaled[0]
    if scaled != list(range(start, len(terms))) or start < 1:
        return None, "the scaled entries are not the trailing (spatial) axes"
    lead = terms[:start]
    shape = site.input_shape or ()
    for p, t in enumerate(lead):  # a dim at its own axis, or a constant equal to the input's static dim
        static = t.kind == "const" and p < len(shape) and shape[p] == t.factor
        if not (t.kind == "dim" and t.axis == p) and not static:
            return None, "the leading entries are not the input's own dims"
    axes = tuple(
        ScaledAxis(
            p,
            t.source,
            t.axis,
            t.factor,
            t.rounding,
            t.mul,
            t.element,
            t.width,
            t.const,
            t.slot,
            t.const_shape,
            t.const_dtype,
            t.dtype,
        )
        for p, t in enumerate(terms)
        if p >= start
    )
    uses: dict[tuple[int, int], int] = {}
    for axis in axes:
        uses[(axis.mul, axis.element)] = uses.get((axis.mul, axis.element), 0) + 1
    if any(count > 1 for count in uses.values()):
        return None, "one product feeds two axes of the sizes"
    for mul in {a.mul for a in axes}:  # a Mul's elements are consecutive axes, in order (one slice each)
        mine = sorted((a for a in axes if a.mul == mul), key=lambda a: a.element)
        if [a.element for a in mine] != list(range(mine[0].width)) or [a.position for a in mine] != list(
            range(mine[0].position, mine[0].position + mine[0].width)
        ):
            return None, "a product's elements are not consecutive axes of the sizes"
    spelled = tuple(f"Shape({t.source})[{t.axis}]" if t.kind == "dim" else f"{t.factor:g}" for t in lead)
    known = flow.base.get(site.sizes_tensor)
    value = tuple(int(v) for v in known.value.reshape(-1)) if known is not None and known.value is not None else None
    return RuntimeSizes(site.sizes_tensor, spelled, axes, value), ""
