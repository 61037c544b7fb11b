"""What one node makes of static shapes: the tensors a shape flow knows, the clashes it reports,
and the rules that need no call into ONNX.

``Tensor`` (element type, shape, small value), ``Clash`` (a node whose inputs no longer fit
together, with the shapes that meet there) and the per-node rules :mod:`.shape_flow` walks a
graph with: :func:`quick_output` (the commonest ops: same-shape unary ops, broadcasting, Resize
with known float scales), :func:`plugin_output` (DynamicTRTResize), :func:`clash_at` (Concat,
broadcasting, MatMul, Reshape to a constant shape) and :func:`from_type` (ONNX's per-node answer
as a Tensor).

Requires: shape_flow Tensors in node-input order. Ensures: pure functions of the node and its
input Tensors; never calls into ONNX; None where a rule does not decide (the walker then asks
ONNX's per-node inference). Does NOT walk graphs (that is :mod:`.shape_flow`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

from graphsurgeon_tools.core.attributes import get_attr
from graphsurgeon_tools.core.folding import BROADCASTING
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from onnx import NodeProto

__all__ = [
    "BROADCASTING",
    "CLASH_OPS",
    "SAME_SHAPE",
    "UNKNOWN",
    "Clash",
    "Tensor",
    "clash_at",
    "format_shape",
    "from_type",
    "label",
    "plugin_output",
    "quick_output",
    "quick_resize",
    "resize_by_scales",
    "resize_by_scales_form",
]


@dataclass(frozen=True)
class Tensor:
    """What the flow knows of one tensor: element type (0 unknown), shape (None: unknown rank;
    a dim None: unknown) and, for small tensors, the value."""

    elem: int = 0
    shape: Optional[tuple[Optional[int], ...]] = None
    value: Any = None  # np.ndarray or None
    static: bool = field(init=False, compare=False)  # every dim known (computed once: read on every visit)

    def __post_init__(self) -> None:
        object.__setattr__(self, "static", self.shape is not None and None not in self.shape)

    def same_as(self, other: "Tensor") -> bool:
        import numpy as np

        if self.shape != other.shape or (self.value is None) != (other.value is None):
            return False
        return self.value is None or (
            self.value.shape == other.value.shape and bool(np.array_equal(self.value, other.value))
        )


#: The unknown tensor, shared (Tensor is frozen): a default built per lookup costs a third of a visit.
UNKNOWN = Tensor()


@dataclass(frozen=True)
class Clash:
    """A node whose inputs no longer fit together: ``describe()`` says which shapes meet there."""

    node: str  # node name (its first output when unnamed)
    op_type: str
    shapes: tuple[tuple[Optional[int], ...], ...]  # the shapes that meet, the changed one first
    detail: str = ""  # the rule or ONNX's message

    def describe(self) -> str:
        shapes = [format_shape(s) for s in self.shapes]
        if self.op_type == "Concat":
            return f"Concat {self.node} joins {' with '.join(shapes)}"
        if self.op_type == "Reshape":
            return f"Reshape {self.node} {self.detail}"
        if self.op_type in BROADCASTING:
            return f"{self.op_type} {self.node} cannot broadcast {' with '.join(shapes)}"
        if self.op_type in ("MatMul", "Gemm"):
            return f"{self.op_type} {self.node} multiplies {' by '.join(shapes)}"
        text = f"{self.op_type} {self.node} refuses {', '.join(shapes)}"
        return f"{text}: {self.detail}" if self.detail else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type": self.op_type,
            "shapes": [list(s) for s in self.shapes],
            "message": self.describe(),
        }


def format_shape(shape: Optional[Sequence[Optional[int]]]) -> str:
    if shape is None:
        return "[?]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def label(node: "NodeProto") -> str:
    return node.name or (node.output[0] if node.output else node.op_type)


#: Ops whose one output has their first input's shape and type (Cast: the type it casts to).
SAME_SHAPE = frozenset(
    {
        "Relu",
        "LeakyRelu",
        "Sigmoid",
        "Tanh",
        "Elu",
        "Selu",
        "Celu",
        "HardSigmoid",
        "HardSwish",
        "Gelu",
        "Erf",
        "Exp",
        "Log",
        "Abs",
        "Neg",
        "Sqrt",
        "Softplus",
        "Softsign",
        "Identity",
        "Clip",
        "Mish",
        "Softmax",
        "LogSoftmax",
        "Floor",
        "Ceil",
        "Round",
        "Sign",
        "Reciprocal",
        "Sin",
        "Cos",
        "Not",
        "Cast",
        "BatchNormalization",
        "InstanceNormalization",
    }
)
_BOOL = 9  # onnx.TensorProto.BOOL
CLASH_OPS = BROADCASTING | {"Concat", "MatMul", "Reshape"}
_COMPARISONS = frozenset({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})


def quick_output(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """The output of the commonest ops without a call into ONNX (most of a cone's visits)."""
    if node.domain not in DEFAULT_DOMAINS or len(node.output) != 1 or not inputs:
        return None
    op = node.op_type
    if op in SAME_SHAPE and inputs[0].static and inputs[0].elem:
        elem = inputs[0].elem
        if op == "Cast":
            to = get_attr(node, "to", 0)
            elem = to if isinstance(to, int) else 0
        return Tensor(elem, inputs[0].shape) if elem else None
    if op == "Resize":
        return quick_resize(node, inputs)
    if op in BROADCASTING and op != "Where" and len(inputs) >= 2 and all(t.static and t.elem for t in inputs):
        rank = max(len(t.shape) for t in inputs)
        dims = [1] * rank
        for t in inputs:
            for i, d in enumerate(t.shape, rank - len(t.shape)):
                if d != 1:
                    if dims[i] not in (1, d):
                        return None  # a clash: _clash has said so already
                    dims[i] = d
        return Tensor(_BOOL if op in _COMPARISONS else inputs[0].elem, tuple(dims))
    return None


def plugin_output(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """DynamicTRTResize's output (resize.plugin_node's forms): X's shape resized by float scales
    (floor(float32(in) * s), ONNX Runtime's rule), by integer sizes (2 entries: the last two axes;
    rank(X) entries: every axis) or to a size tensor's last two dims. None when a value is unknown."""
    import numpy as np

    if node.op_type != PLUGIN_OP_TYPE or len(inputs) != 2 or not inputs[0].static or not inputs[0].elem:
        return None
    x, second = inputs
    rank = len(x.shape)
    if second.shape is not None and len(second.shape) >= 2 and second.static:  # MMDeploy's size tensor
        return Tensor(x.elem, x.shape[:-2] + second.shape[-2:]) if rank >= 2 else None
    if second.value is None:
        return None
    values = second.value.reshape(-1)
    if values.dtype.kind == "f" and values.size == rank:
        out = tuple(int(np.floor(np.float32(d) * np.float32(v))) for d, v in zip(x.shape, values))
    elif values.dtype.kind in "iu" and values.size in (rank, 2):
        out = x.shape[: rank - values.size] + tuple(int(v) for v in values)
    else:
        return None
    return Tensor(x.elem, out) if all(d > 0 for d in out) else None


def quick_resize(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """A Resize with known float scales, no sizes and no ``axes``: ONNX's own rule, each dim
    ``floor(float32(dim) * scale)`` (a chain of Resize sites is what the freedom analysis re-runs
    most). Anything else (sizes, axes, a scales length that is wrong) is left to ONNX."""
    if not resize_by_scales_form(node, node.input):
        return None
    return resize_by_scales(inputs[0], inputs[2])


def resize_by_scales_form(node: "NodeProto", names: Sequence[str]) -> bool:
    """The node's own part of :func:`quick_resize`'s condition: a scales slot, no sizes, no ``axes``
    (a walker decides it once per node)."""
    return len(names) in (3, 4) and not (len(names) == 4 and names[3]) and get_attr(node, "axes", None) is None


def resize_by_scales(x: Tensor, scales_tensor: Tensor) -> Optional[Tensor]:
    """:func:`quick_resize` on a node of :func:`resize_by_scales_form`: X resized by the scales' value."""
    if not x.static or not x.elem:
        return None
    scales = scales_tensor.value
    if scales is None or scales.dtype.char != "f" or scales.ndim != 1 or scales.size != len(x.shape):
        return None
    dims = []
    for dim, scale in zip(x.shape, scales.tolist()):
        if scale == 1.0 and 0 <= dim < 1 << 24:  # the commonest entry (N, C): floor(dim * 1) == dim, exactly
            dims.append(dim)
            continue
        product = dim * scale  # exact in double for dims below 2**24: two float32 significands
        if dim >= 1 << 24 or not math.isfinite(product) or product < 0:
            return None  # ONNX's inference says what it makes of nonsense scales
        whole = math.floor(product)
        if whole + 1 - product <= (whole + 1) * 2.0**-24:
            return None  # float32 may round the product up to the next integer: ONNX decides
        dims.append(whole)
    return Tensor(x.elem, tuple(dims))


def from_type(type_proto: Any) -> Tensor:
    if not type_proto.HasField("tensor_type"):
        return Tensor()
    tensor_type = type_proto.tensor_type
    if not tensor_type.HasField("shape"):
        return Tensor(tensor_type.elem_type)
    dims = tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tensor_type.shape.dim)
    return Tensor(tensor_type.elem_type, dims)


def clash_at(node: "NodeProto", inputs: list[Tensor], touched: list[str]) -> Optional[Clash]:
    """The clash rules on static shapes (the changed input named first when there is one)."""
    if node.op_type not in CLASH_OPS or node.domain not in DEFAULT_DOMAINS:
        return None
    try:
        return _clash_rules(node, inputs, touched)
    except (TypeError, ValueError, IndexError):  # a mistyped attribute (axis="x"): the checker's to refuse
        return None


def _clash_rules(node: "NodeProto", inputs: list[Tensor], touched: list[str]) -> Optional[Clash]:
    op = node.op_type
    shaped = [(name, t) for name, t in zip(node.input, inputs) if name and t.static]
    first = next((i for i, (name, _) in enumerate(shaped) if name in touched), 0)
    ordered = [shaped[first]] + shaped[:first] + shaped[first + 1 :] if shaped else []
    if op == "Concat" and len(ordered) > 1:
        rank = len(ordered[0][1].shape)
        axis = int(get_attr(node, "axis", 0))
        axis = axis + rank if axis < 0 else axis
        for _, other in ordered[1:]:
            a, b = ordered[0][1].shape, other.shape
            if len(b) != rank or any(x != y for i, (x, y) in enumerate(zip(a, b)) if i != axis):
                return Clash(label(node), op, (a, b))
    elif op in BROADCASTING and len(ordered) > 1:
        for _, other in ordered[1:]:
            a, b = ordered[0][1].shape, other.shape
            if any(x != y and x != 1 and y != 1 for x, y in zip(reversed(a), reversed(b))):
                return Clash(label(node), op, (a, b))
    elif op == "MatMul" and len(inputs) == 2 and inputs[0].static and inputs[1].static:
        a, b = inputs[0].shape, inputs[1].shape
        if a and b and a[-1] != (b[-2] if len(b) > 1 else b[0]):
            return Clash(label(node), op, (a, b))
    elif op == "Reshape" and len(inputs) > 1 and inputs[0].static and inputs[1].value is not None:
        return _reshape_clash(node, inputs[0].shape, inputs[1].value)
    return None


def _reshape_clash(node: "NodeProto", shape: tuple, target: "np.ndarray") -> Optional[Clash]:
    allowzero = int(get_attr(node, "allowzero", 0))
    count = 1
    for d in shape:
        count *= d
    known, free = 1, False
    dims = [int(d) for d in target.reshape(-1)]
    for i, d in enumerate(dims):
        if d == -1:
            free = True
        elif d == 0 and not allowzero:
            if i >= len(shape):
                return None  # ONNX refuses this; shape inference says why
            known *= shape[i]
        else:
            known *= d
    fits = (count % known == 0) if free and known else (count == known)
    if fits:
        return None
    text = f"reshapes {format_shape(shape)} ({count} elements) to the shape {format_shape(dims)} baked in the graph"
    return Clash(label(node), "Reshape", (tuple(shape), tuple(dims)), text)
