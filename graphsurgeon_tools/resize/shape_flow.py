"""Static shapes through a main graph, node by node, with some tensors' shapes overridden.

``ShapeFlow(model)`` runs ONE forward pass (the base: every tensor's type and, for small
integer/float tensors such as shape vectors, its value) and can then re-run only the
nodes downstream of a changed tensor: ``flow.downstream({name: new_shape})`` walks that
cone in graph order and stops at the first node whose inputs no longer fit together,
returned as a :class:`Clash` ("Concat /neck/Concat_1 joins [1,64,60,60] with [1,64,40,40]").

Each node: a small value (Shape, Gather, Concat, Cast, arithmetic... of known values) is
computed with numpy, so a Reshape whose shape is computed from ``Shape`` follows the
change; the clash rules (Concat, broadcasting ops, MatMul, Reshape to a constant shape)
are checked on static shapes; everything else goes through ONNX's own per-node shape
inference (:func:`onnx.shape_inference.infer_node_outputs`), whose refusal is a clash too.

Requires: a ModelProto whose main graph is topologically sorted. Graph inputs whose dims
are not positive integers are probed at ``probe_dims`` (batch 1, other axes 128) unless
``input_shapes`` says otherwise. Ensures: never changes or runs the model; reads only
small initializers (at most :data:`MAX_VALUE_ELEMENTS` elements); one base pass; a
downstream pass visits each node of the cone at most once. Does NOT look into If/Loop
bodies (their outputs are unknown) and does NOT know custom-domain ops (unknown outputs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import onnx
from onnx import helper

from graphsurgeon_tools.core.attributes import get_attr
from graphsurgeon_tools.core.dtypes import elem_type
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS
from graphsurgeon_tools.resize.shape_values import MAX_VALUE_ELEMENTS, compute_value

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from onnx import ModelProto, NodeProto

__all__ = ["BudgetSpent", "Clash", "MAX_VALUE_ELEMENTS", "ShapeFlow", "Tensor", "format_shape"]


#: Ops whose inputs broadcast against each other (numpy rules).
BROADCASTING = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where",
                          "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
                          "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})


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
        return self.value is None or (self.value.shape == other.value.shape
                                      and bool(np.array_equal(self.value, other.value)))


#: The unknown tensor, shared (Tensor is frozen): a default built per lookup costs a third of a visit.
_UNKNOWN = Tensor()

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
        return {"node": self.node, "op_type": self.op_type, "shapes": [list(s) for s in self.shapes],
                "message": self.describe()}


def format_shape(shape: Optional[Sequence[Optional[int]]]) -> str:
    if shape is None:
        return "[?]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _label(node: "NodeProto") -> str:
    return node.name or (node.output[0] if node.output else node.op_type)


class ShapeFlow:
    """Static shapes of a main graph; see the module docstring.

    Args:
        model: the model (read, never changed).
        input_shapes: shapes for graph inputs (by name) instead of the probe.
        input_values: values for small graph inputs (e.g. the scales a dynamic model is fed).
        probe_dims: (batch, other) sizes given to graph-input dims that are not positive integers;
            None leaves them unknown (then only what holds for every input size is computed).
    """

    def __init__(self, model: "ModelProto", *, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 input_values: Optional[Mapping[str, Any]] = None,
                 probe_dims: Optional[tuple[int, int]] = (1, 128)) -> None:
        from graphsurgeon_tools.core.graph import consumers
        from graphsurgeon_tools.core.opsets import default_opset

        self.model = model
        self.graph = model.graph
        self.opset = default_opset(model)
        self.imports = {imp.domain or "": imp.version for imp in model.opset_import}
        self.consumers = consumers(self.graph)
        self._schemas: dict[tuple[str, str], Any] = {}
        self.base: dict[str, Tensor] = {}
        self.base_clash: Optional[Clash] = None
        self._seed(input_shapes or {}, probe_dims)
        for name, value in (input_values or {}).items():
            import numpy as np

            array = np.asarray(value)
            self.base[name] = Tensor(self.base.get(name, Tensor()).elem, tuple(array.shape), array)
        self._run_base()

    # -- the base pass -------------------------------------------------------------------
    def _seed(self, input_shapes: Mapping[str, Sequence[int]], probe: Optional[tuple[int, int]]) -> None:
        from graphsurgeon_tools.core.constants import tensor_to_array
        from graphsurgeon_tools.errors import InvalidModelError

        for init in self.graph.initializer:
            value = None
            count = 1
            for d in init.dims:
                count *= int(d)
            if count <= MAX_VALUE_ELEMENTS:
                try:
                    value = tensor_to_array(init, self.model)
                except InvalidModelError:
                    value = None
            self.base[init.name] = Tensor(init.data_type, tuple(int(d) for d in init.dims), value)
        for info in self.graph.input:
            if info.name in self.base:
                continue  # an initializer's default stays (ONNX: initializers override)
            tensor_type = info.type.tensor_type
            if info.name in input_shapes:
                shape: Optional[tuple] = tuple(int(d) for d in input_shapes[info.name])
            elif tensor_type.HasField("shape"):
                shape = tuple(int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0
                              else None if probe is None else (probe[0] if axis == 0 else probe[1])
                              for axis, d in enumerate(tensor_type.shape.dim))
            else:
                shape = None
            self.base[info.name] = Tensor(tensor_type.elem_type, shape)

    # -- passes ---------------------------------------------------------------------------
    def downstream(self, overrides: Mapping[int, Callable[[list[Tensor]], Tensor]], *,
                   budget: Optional[list[int]] = None) -> tuple[Optional[Clash], Optional[str]]:
        """Re-run the nodes downstream of the nodes in ``overrides`` (node index -> function of
        that node's input Tensors giving its first output), the base everywhere else.

        Returns (clash or None, lost): ``lost`` names the first node after which a changed shape
        became unknown (then finding no clash proves nothing). ``budget``: a one-element list of
        node visits left, shared across calls and spent in place; raises BudgetSpent at zero."""
        import heapq

        heap = sorted(set(overrides))
        seen = set(heap)
        state: dict[str, Tensor] = {}
        lost: list[str] = []
        while heap:
            index = heapq.heappop(heap)
            if budget is not None:
                if budget[0] <= 0:
                    raise BudgetSpent()
                budget[0] -= 1
            node = self.graph.node[index]
            inputs = [(state[n] if n in state else self.base.get(n, _UNKNOWN)) if n else _UNKNOWN for n in node.input]
            if index in overrides:
                outputs: Any = {node.output[0]: overrides[index](inputs)}
            else:
                clash = _clash(node, inputs, [n for n in node.input if n in state])
                if clash is not None:
                    return clash, None
                outputs = self._node(node, inputs)
                if isinstance(outputs, Clash):
                    if all(self.base.get(o, _UNKNOWN).shape is not None for o in node.output if o):
                        return outputs, None
                    outputs = {}
            for name in node.output:
                new = outputs.get(name, _UNKNOWN) if name else None
                if new is None:
                    continue
                if not new.static and not lost:  # a changed input went where shapes are not followed
                    lost.append(f"{node.op_type} {_label(node)}")
                if new.same_as(self.base.get(name, _UNKNOWN)):
                    continue
                state[name] = new
                for nxt in self.consumers.get(name, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        heapq.heappush(heap, nxt)
        return None, (lost[0] if lost else None)

    def _run_base(self) -> None:
        for node in self.graph.node:
            inputs = [self.base.get(n, _UNKNOWN) if n else _UNKNOWN for n in node.input]
            clash = _clash(node, inputs, [])
            if clash is not None and self.base_clash is None:
                self.base_clash = clash
            outputs = self._node(node, inputs)
            if isinstance(outputs, Clash):
                outputs = {}  # ONNX cannot say: unknown from here (not a clash of ours)
            for name in node.output:
                if name:
                    self.base[name] = outputs.get(name, _UNKNOWN)

    # -- one node -------------------------------------------------------------------------
    def _schema(self, node: "NodeProto") -> Any:
        import onnx

        domain = node.domain or ""
        key = (node.op_type, domain)
        if key not in self._schemas:
            version = self.imports.get(domain, self.imports.get("ai.onnx", 0) if domain == "" else 0)
            try:
                self._schemas[key] = onnx.defs.get_schema(node.op_type, version, domain)
            except onnx.defs.SchemaError:
                self._schemas[key] = None
        return self._schemas[key]

    def _node(self, node: "NodeProto", inputs: list[Tensor]) -> Any:
        """Output tensors by name, or a Clash when ONNX's shape inference refuses the node."""
        value = compute_value(node, inputs, self.model)
        if value is not None:
            try:
                elem = elem_type(value.dtype)
            except KeyError:
                elem = 0
            return {node.output[0]: Tensor(elem, tuple(int(d) for d in value.shape), value)}
        quick = _quick(node, inputs) or _plugin(node, inputs)
        if quick is not None:
            return {node.output[0]: quick}
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            return {}
        schema = self._schema(node)
        if schema is None:
            return {}
        types: dict[str, Any] = {}
        data: dict[str, Any] = {}
        for name, tensor in zip(node.input, inputs):
            if not name:
                continue
            if not tensor.elem:
                return {}  # ONNX's per-node inference needs every input's type
            types[name] = helper.make_tensor_type_proto(tensor.elem, tensor.shape)
            if tensor.value is not None:
                data[name] = onnx.numpy_helper.from_array(tensor.value, name)
        try:
            result = onnx.shape_inference.infer_node_outputs(schema, node, types, data)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError,
                TypeError, KeyError) as exc:  # ONNX refuses the node as it stands (a broken model: its checker says why)
            detail = " ".join(str(exc).split())
            detail = detail.replace("[ShapeInferenceError] ", "").replace("[TypeInferenceError] ", "")
            shapes = tuple(t.shape for t in inputs if t.shape is not None)
            return Clash(_label(node), node.op_type, shapes, detail[:200])
        outputs = {}
        for name, type_proto in result.items():
            outputs[name] = _from_type(type_proto)
        return outputs


class BudgetSpent(Exception):
    """The shared node-visit budget of :meth:`ShapeFlow.downstream` is spent."""


#: Ops whose one output has their first input's shape and type (Cast: the type it casts to).
_SAME_SHAPE = frozenset({"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish",
                         "Gelu", "Erf", "Exp", "Log", "Abs", "Neg", "Sqrt", "Softplus", "Softsign", "Identity",
                         "Clip", "Mish", "Softmax", "LogSoftmax", "Floor", "Ceil", "Round", "Sign", "Reciprocal",
                         "Sin", "Cos", "Not", "Cast", "BatchNormalization", "InstanceNormalization"})
_BOOL = 9  # onnx.TensorProto.BOOL
_CLASH_OPS = BROADCASTING | {"Concat", "MatMul", "Reshape"}
_COMPARISONS = frozenset({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})


def _quick(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """The output of the commonest ops without a call into ONNX (most of a cone's visits)."""
    if node.domain not in DEFAULT_DOMAINS or len(node.output) != 1 or not inputs:
        return None
    op = node.op_type
    if op in _SAME_SHAPE and inputs[0].static and inputs[0].elem:
        elem = inputs[0].elem
        if op == "Cast":
            to = get_attr(node, "to", 0)
            elem = to if isinstance(to, int) else 0
        return Tensor(elem, inputs[0].shape) if elem else None
    if op == "Resize":
        return _quick_resize(node, inputs)
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


def _plugin(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """DynamicTRTResize's output (resize.plugin_node's forms): X's shape resized by float scales
    (floor(float32(in) * s), ONNX Runtime's rule), by integer sizes (2 entries: the last two axes;
    rank(X) entries: every axis) or to a size tensor's last two dims. None when a value is unknown."""
    import numpy as np

    from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE

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
        out = x.shape[:rank - values.size] + tuple(int(v) for v in values)
    else:
        return None
    return Tensor(x.elem, out) if all(d > 0 for d in out) else None


def _quick_resize(node: "NodeProto", inputs: list[Tensor]) -> Optional[Tensor]:
    """A Resize with known float scales, no sizes and no ``axes``: ONNX's own rule, each dim
    ``floor(float32(dim) * scale)`` (a chain of Resize sites is what the freedom analysis re-runs
    most). Anything else (sizes, axes, a scales length that is wrong) is left to ONNX."""
    if len(inputs) not in (3, 4) or (len(inputs) == 4 and node.input[3]) or not inputs[0].static \
            or not inputs[0].elem or get_attr(node, "axes", None) is not None:
        return None
    scales = inputs[2].value
    if scales is None or scales.dtype.char != "f" or scales.ndim != 1 or scales.size != len(inputs[0].shape):
        return None
    dims = []
    for dim, scale in zip(inputs[0].shape, scales.tolist()):
        product = dim * scale  # exact in double for dims below 2**24: two float32 significands
        if dim >= 1 << 24 or not math.isfinite(product) or product < 0:
            return None  # ONNX's inference says what it makes of nonsense scales
        whole = math.floor(product)
        if whole + 1 - product <= (whole + 1) * 2.0**-24:
            return None  # float32 may round the product up to the next integer: ONNX decides
        dims.append(whole)
    return Tensor(inputs[0].elem, tuple(dims))


def _from_type(type_proto: Any) -> Tensor:
    if not type_proto.HasField("tensor_type"):
        return Tensor()
    tensor_type = type_proto.tensor_type
    if not tensor_type.HasField("shape"):
        return Tensor(tensor_type.elem_type)
    dims = tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tensor_type.shape.dim)
    return Tensor(tensor_type.elem_type, dims)


def _clash(node: "NodeProto", inputs: list[Tensor], touched: list[str]) -> Optional[Clash]:
    """The clash rules on static shapes (the changed input named first when there is one)."""
    if node.op_type not in _CLASH_OPS or node.domain not in DEFAULT_DOMAINS:
        return None
    try:
        return _clash_rules(node, inputs, touched)
    except (TypeError, ValueError, IndexError):  # a mistyped attribute (axis="x"): the checker's to refuse
        return None


def _clash_rules(node: "NodeProto", inputs: list[Tensor], touched: list[str]) -> Optional[Clash]:
    op = node.op_type
    shaped = [(name, t) for name, t in zip(node.input, inputs) if name and t.static]
    first = next((i for i, (name, _) in enumerate(shaped) if name in touched), 0)
    ordered = [shaped[first]] + shaped[:first] + shaped[first + 1:] if shaped else []
    if op == "Concat" and len(ordered) > 1:
        rank = len(ordered[0][1].shape)
        axis = int(get_attr(node, "axis", 0))
        axis = axis + rank if axis < 0 else axis
        for _, other in ordered[1:]:
            a, b = ordered[0][1].shape, other.shape
            if len(b) != rank or any(x != y for i, (x, y) in enumerate(zip(a, b)) if i != axis):
                return Clash(_label(node), op, (a, b))
    elif op in BROADCASTING and len(ordered) > 1:
        for _, other in ordered[1:]:
            a, b = ordered[0][1].shape, other.shape
            if any(x != y and x != 1 and y != 1 for x, y in zip(reversed(a), reversed(b))):
                return Clash(_label(node), op, (a, b))
    elif op == "MatMul" and len(inputs) == 2 and inputs[0].static and inputs[1].static:
        a, b = inputs[0].shape, inputs[1].shape
        if a and b and a[-1] != (b[-2] if len(b) > 1 else b[0]):
            return Clash(_label(node), op, (a, b))
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
    return Clash(_label(node), "Reshape", (tuple(shape), tuple(dims)), text)
