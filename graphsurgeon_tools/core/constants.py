"""Constant values in the main graph: read a tensor, and the one constant tracer/folder.

``ConstantTracer(model).trace(name) -> ValueTrace`` says where tensor ``name`` gets its
value (graph input, initializer, Constant node, Identity chain, a small constant subgraph
folded with ONNX's reference evaluator, or run-time data) and, when constant, the value.

Requires: a ModelProto whose main graph is topologically sorted. Ensures: iterative (an
Identity chain of any length needs no recursion), memoised across calls on one tracer,
and bounded: a folded subgraph has at most ``max_nodes`` nodes, reads at most
``max_bytes`` of constants, and an op that can expand (ConstantOfShape, Expand, Tile,
Range) or broadcasts (Mul of a column and a row) is folded only when its output fits
``max_bytes``, checked BEFORE it runs: by ONNX shape inference on the folded subgraph,
or, where that leaves a shape unknown, node by node from the values computed so far.
Anything over a bound, or that the evaluator refuses, is reported as
``ValueSource.RUNTIME`` with a reason. Does NOT change the model, and does NOT look into
If/Loop bodies or model functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterable, Optional

from graphsurgeon_tools.errors import InvalidModelError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import onnx
    from onnx import ModelProto, NodeProto, TensorProto

__all__ = [
    "DEFAULT_FOLD_BYTES",
    "MAX_FOLD_NODES",
    "ConstantTracer",
    "ValueSource",
    "ValueTrace",
    "constant_node_value",
    "evaluate_subgraph",
    "fold_byte_budget",
    "tensor_to_array",
    "trace_value",
]

#: A constant subgraph bigger than this is not folded (reported as runtime).
MAX_FOLD_NODES = 64
#: Most bytes a fold may read or make by default: a scales/sizes/shape vector needs a few bytes;
#: 16 MiB leaves room for the odd constant table without letting a hostile model allocate much.
DEFAULT_FOLD_BYTES = 16 << 20
#: Ops whose output size is decided by an input's VALUE; sized before they are folded.
_EXPANDING = frozenset({"ConstantOfShape", "Expand", "Tile", "Range"})
#: Elementwise ops whose output takes the broadcast of their inputs' shapes (an outer product of
#: two small vectors is big); sized before they are folded when shape inference could not.
_BROADCASTING = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where",
                           "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
                           "BitShift", "PRelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
#: Ops whose output size cannot be bounded cheaply before running them: never folded.
_UNBOUNDED = frozenset({"Resize", "Upsample", "Pad", "OneHot", "CenterCropPad", "Col2Im", "NonZero",
                        "Compress", "Unique", "StringSplit", "Multinomial"})
# What ONNX's reference evaluator raises for an op or input it cannot run.
_EVALUATOR_REFUSALS = (RuntimeError, ValueError, TypeError, IndexError, KeyError, ArithmeticError)


class ValueSource(str, Enum):
    """Where a tensor (a Resize's scales or sizes, for instance) gets its value."""

    ABSENT = "absent"  # input not given (or the empty-string placeholder)
    ATTRIBUTE = "attribute"  # Upsample-7: the `scales` attribute
    INITIALIZER = "initializer"
    CONSTANT = "constant"  # a Constant node
    IDENTITY = "identity"  # Identity (chain) of an initializer or Constant
    FOLDED = "folded"  # a constant subgraph that folds to a value
    GRAPH_INPUT = "graph_input"  # already dynamic
    RUNTIME = "runtime"  # computed from run-time data (e.g. Shape -> ... -> Concat)


@dataclass(frozen=True)
class ValueTrace:
    """Where one tensor's value comes from, as found by :class:`ConstantTracer`."""

    source: ValueSource
    value: Optional["np.ndarray"] = None  # the constant value (graph input: its default, if any)
    nodes: tuple[int, ...] = ()  # indices of the nodes computing it (Constant, Identity chain, folded subgraph)
    reason: str = ""  # why it is RUNTIME, for reports


def fold_byte_budget(max_bytes: Optional[int] = None) -> Optional[int]:
    """The byte bound of folding: ``max_bytes`` when given (0: no bound), else
    :data:`DEFAULT_FOLD_BYTES`. Callers above core (the passes, the checks) pass the user's
    limit (``graphsurgeon_tools.check.limits.max_output_bytes()``); core cannot import check."""
    if max_bytes is None:
        return DEFAULT_FOLD_BYTES
    return max_bytes or None


def tensor_to_array(tensor: "TensorProto", model: Optional["ModelProto"] = None) -> "np.ndarray":
    """A TensorProto as numpy, reading external data through graphsurgeon_tools.io when needed.

    Meant for small tensors (scales, sizes, shapes); it reads the whole tensor. Raises
    InvalidModelError for data that does not match the tensor's shape or type.
    """
    import onnx
    from onnx import TensorProto

    from graphsurgeon_tools.core.checker import check_tensor_data

    if tensor.data_location == TensorProto.EXTERNAL:
        from graphsurgeon_tools.io import read_tensor_bytes

        if model is None:
            raise InvalidModelError(f"tensor {tensor.name!r} has external data but no model to resolve it")
        inline = TensorProto()
        inline.CopyFrom(tensor)
        del inline.external_data[:]
        inline.ClearField("data_location")
        inline.raw_data = read_tensor_bytes(model, tensor)
        tensor = inline
    problem = check_tensor_data(tensor)
    if problem:
        raise InvalidModelError(problem)
    try:
        return onnx.numpy_helper.to_array(tensor)
    except (TypeError, ValueError) as exc:  # e.g. element type UNDEFINED or one numpy has no dtype for
        raise InvalidModelError(f"tensor {tensor.name!r} cannot be read: {' '.join(str(exc).split())}") from None


def constant_node_value(node: "NodeProto", model: Optional["ModelProto"] = None) -> Optional["np.ndarray"]:
    """The value of a Constant node, or None for sparse/string values (never a scales vector)."""
    import numpy as np

    for attr in node.attribute:
        if attr.name == "value":
            return tensor_to_array(attr.t, model)
        if attr.name == "value_float":
            return np.array(attr.f, dtype=np.float32)
        if attr.name == "value_floats":
            return np.array(list(attr.floats), dtype=np.float32)
        if attr.name == "value_int":
            return np.array(attr.i, dtype=np.int64)
        if attr.name == "value_ints":
            return np.array(list(attr.ints), dtype=np.int64)
    return None


def evaluate_subgraph(
    nodes: Iterable["NodeProto"],
    constants: dict[str, "np.ndarray"],
    output: str,
    opset: int,
    opset_imports: Iterable["onnx.OperatorSetIdProto"] = (),
) -> "np.ndarray":
    """Run a small constant subgraph with ONNX's reference evaluator and return ``output``.

    ``constants`` feeds every tensor the nodes read that they do not produce. Does NOT
    guard against big tensors (:class:`ConstantTracer` does, before calling it). Raises
    whatever the evaluator raises for an op it cannot run.
    """
    return _run_nodes(nodes, constants, [output], opset, opset_imports)[output]


def _fold_model(nodes: Iterable["NodeProto"], constants: dict[str, Any], outputs: list[str], opset: int,
                opset_imports: Iterable["onnx.OperatorSetIdProto"] = ()) -> "ModelProto":
    import numpy as np
    import onnx

    from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

    inits = [onnx.numpy_helper.from_array(np.asarray(value), name) for name, value in constants.items()]
    graph = onnx.helper.make_graph(
        list(nodes), "fold", [], [onnx.helper.make_empty_tensor_value_info(o) for o in outputs], inits
    )
    imports = [op for op in opset_imports if op.domain not in DEFAULT_DOMAINS]
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset), *imports])


def _run_nodes(nodes: Iterable["NodeProto"], constants: dict[str, Any], outputs: list[str], opset: int,
               opset_imports: Iterable["onnx.OperatorSetIdProto"] = ()) -> dict[str, "np.ndarray"]:
    return _run_model(_fold_model(nodes, constants, outputs, opset, opset_imports), outputs)


def _run_model(model: "ModelProto", outputs: list[str]) -> dict[str, "np.ndarray"]:
    import numpy as np
    from onnx.reference import ReferenceEvaluator

    values = ReferenceEvaluator(model).run(outputs, {})
    return {name: np.asarray(value) for name, value in zip(outputs, values)}


def _static_sizes_fit(model: "ModelProto", max_bytes: int) -> Optional[bool]:
    """Whether every tensor the fold model makes fits ``max_bytes``, from ONNX shape inference
    (C++, no data made): True / False, or None when some output's shape is not static."""
    import onnx

    from graphsurgeon_tools.core.checker import static_shape
    from graphsurgeon_tools.core.dtypes import itemsize

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
        return None
    infos = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for node in model.graph.node:
        for out in node.output:
            if not out:
                continue
            info = infos.get(out)
            shape = static_shape(info)
            if shape is None or not all(isinstance(d, int) for d in shape):
                return None
            count = 1
            for dim in shape:
                count *= dim
            if count * itemsize(info.type.tensor_type.elem_type) > max_bytes:
                return False
    return True


class ConstantTracer:
    """Resolves tensor values in the main graph, memoising across calls.

    Args:
        model: the model to read (never changed).
        max_nodes: most nodes one folded subgraph may have.
        max_bytes: most bytes a folded subgraph may read or make (None: :data:`DEFAULT_FOLD_BYTES`;
            0: no bound; see :func:`fold_byte_budget`).
    """

    def __init__(self, model: "ModelProto", *, max_nodes: int = MAX_FOLD_NODES,
                 max_bytes: Optional[int] = None) -> None:
        from graphsurgeon_tools.core.graph import producers
        from graphsurgeon_tools.core.opsets import default_opset

        self.model = model
        self.graph = model.graph
        self.producers = producers(model.graph)
        self.initializers = {init.name: init for init in model.graph.initializer}
        self.inputs = {inp.name for inp in model.graph.input}
        self.opset = default_opset(model)
        self.max_nodes = max_nodes
        self.max_bytes = fold_byte_budget(max_bytes)
        self.memo: dict[str, ValueTrace] = {}

    def trace(self, name: str) -> ValueTrace:
        """Where tensor ``name`` gets its value."""
        from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

        chain: list[tuple[str, int]] = []  # Identity nodes from ``name`` upstream
        seen: set[str] = set()
        current = name
        while current not in self.memo:
            index = self._identity_producer(current, DEFAULT_DOMAINS)
            if index is None or current in seen:
                result = (ValueTrace(ValueSource.RUNTIME, reason="Identity chain forms a cycle")
                          if current in seen else self._trace_leaf(current))
                self.memo[current] = result
                break
            seen.add(current)
            chain.append((current, index))
            current = self.graph.node[index].input[0]
        result = self.memo[current]
        for tensor, index in reversed(chain):
            result = _through_identity(result, index)
            self.memo[tensor] = result
        return result

    def _identity_producer(self, name: str, default_domains: tuple[str, ...]) -> Optional[int]:
        if not name or name in self.inputs or name in self.initializers:
            return None
        index = self.producers.get(name)
        if index is None:
            return None
        node = self.graph.node[index]
        if node.op_type == "Identity" and node.domain in default_domains and node.input:
            return index
        return None

    def _trace_leaf(self, name: str) -> ValueTrace:
        from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

        if not name:
            return ValueTrace(ValueSource.ABSENT)
        if name in self.inputs:
            default = self.initializers.get(name)
            value = tensor_to_array(default, self.model) if default is not None else None
            return ValueTrace(ValueSource.GRAPH_INPUT, value)
        if name in self.initializers:
            return ValueTrace(ValueSource.INITIALIZER, tensor_to_array(self.initializers[name], self.model))
        index = self.producers.get(name)
        if index is None:
            return ValueTrace(ValueSource.RUNTIME, reason=f"{name!r} is produced by no node (outer scope?)")
        node = self.graph.node[index]
        if node.domain in DEFAULT_DOMAINS and node.op_type == "Constant":
            value = constant_node_value(node, self.model)
            if value is None:
                return ValueTrace(ValueSource.RUNTIME, reason="Constant node without a numeric tensor value")
            return ValueTrace(ValueSource.CONSTANT, value, (index,))
        if node.domain in DEFAULT_DOMAINS and node.op_type == "Identity":  # only without an input here
            return ValueTrace(ValueSource.RUNTIME, reason="Identity node without an input")
        return self._fold(name)

    def _fold(self, name: str) -> ValueTrace:
        """Fold the subgraph computing ``name`` if everything upstream is constant and small."""
        from graphsurgeon_tools.core.checker import tensor_nbytes_from_dims
        from graphsurgeon_tools.core.graph import NONDETERMINISTIC_OPS, subgraphs
        from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

        subgraph: set[int] = set()
        constant_names: list[str] = []
        read_bytes = 0
        stack, seen = [name], set()
        while stack:
            tensor = stack.pop()
            if tensor in seen or not tensor:
                continue
            seen.add(tensor)
            if tensor in self.inputs:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed from graph input {tensor!r}")
            if tensor in self.initializers:
                constant_names.append(tensor)
                read_bytes += tensor_nbytes_from_dims(self.initializers[tensor])
                if self.max_bytes is not None and read_bytes > self.max_bytes:
                    return ValueTrace(ValueSource.RUNTIME,
                                      reason=f"constant subgraph reads over {self.max_bytes} bytes")
                continue
            producer = self.producers.get(tensor)
            if producer is None:
                return ValueTrace(ValueSource.RUNTIME, reason=f"{tensor!r} comes from an outer scope")
            if producer in subgraph:
                continue
            node = self.graph.node[producer]
            if node.domain not in DEFAULT_DOMAINS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by custom op {node.op_type}")
            if node.op_type in NONDETERMINISTIC_OPS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by random op {node.op_type}")
            if any(True for _ in subgraphs(node)):
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by control flow ({node.op_type})")
            if node.op_type in _UNBOUNDED:
                return ValueTrace(ValueSource.RUNTIME,
                                  reason=f"computed by {node.op_type}, whose output size is not bounded before it runs")
            subgraph.add(producer)
            if len(subgraph) > self.max_nodes:
                return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph over {self.max_nodes} nodes")
            stack.extend(node.input)
        order = sorted(subgraph)
        constants = {t: tensor_to_array(self.initializers[t], self.model) for t in constant_names}
        nodes = [self.graph.node[i] for i in order]
        try:
            fold = _fold_model(nodes, constants, [name], self.opset, self.model.opset_import)
            fits = True if self.max_bytes is None else _static_sizes_fit(fold, self.max_bytes)
            if fits is False:
                raise _TooBig(f"constant subgraph would make a tensor over {self.max_bytes} bytes")
            if fits is None:  # shapes not all static: size each expanding/broadcasting op as it comes
                value = self._fold_stepwise(nodes, constants, name)
            else:
                value = _run_model(fold, [name])[name]
        except _TooBig as exc:
            return ValueTrace(ValueSource.RUNTIME, reason=str(exc))
        except _EVALUATOR_REFUSALS as exc:  # the reference evaluator refused: report, do not guess
            return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph did not fold: {type(exc).__name__}")
        if self.max_bytes is not None and value.nbytes > self.max_bytes:
            return ValueTrace(ValueSource.RUNTIME, reason=f"folded value is over {self.max_bytes} bytes")
        return ValueTrace(ValueSource.FOLDED, value, tuple(order))

    def _fold_stepwise(self, nodes: list["NodeProto"], constants: dict[str, Any], name: str) -> "np.ndarray":
        """Run node by node, sizing every expanding op from its (known) inputs before it runs."""
        values = dict(constants)
        for node in nodes:
            if self.max_bytes is not None and node.op_type in _EXPANDING | _BROADCASTING | {"MatMul", "Gemm"}:
                nbytes = _expanded_nbytes(node, values)
                if nbytes is None or nbytes > self.max_bytes:
                    raise _TooBig(f"{node.op_type} would make over {self.max_bytes} bytes while folding")
            reads = {k: values[k] for k in node.input if k in values}
            outputs = [o for o in node.output if o]
            made = _run_nodes([node], reads, outputs, self.opset, self.model.opset_import)
            if self.max_bytes is not None and any(v.nbytes > self.max_bytes for v in made.values()):
                raise _TooBig(f"{node.op_type} made over {self.max_bytes} bytes while folding")
            values.update(made)
        return values[name]


class _TooBig(Exception):
    """A fold that would allocate over the byte budget (internal; becomes a RUNTIME reason)."""


def _expanded_nbytes(node: "NodeProto", values: dict[str, Any]) -> Optional[int]:
    """Bytes an expanding op's output will take, from its input values; None when not knowable."""
    import numpy as np
    import onnx

    from graphsurgeon_tools.core.attributes import get_attr

    def value(slot: int) -> Optional[np.ndarray]:
        return values.get(node.input[slot]) if slot < len(node.input) else None

    known = [values.get(i) for i in node.input if i]
    if node.op_type in _BROADCASTING or node.op_type in ("MatMul", "Gemm"):
        if any(v is None for v in known) or not known:
            return None
        itemsize = max(v.itemsize for v in known)
        if node.op_type in _BROADCASTING:
            return int(np.prod(np.broadcast_shapes(*(v.shape for v in known)), dtype=np.float64)) * itemsize
        a, b = known[0], known[1]
        rows = a.shape[-2] if a.ndim >= 2 else 1
        cols = b.shape[-1] if b.ndim >= 2 else 1
        if node.op_type == "Gemm":
            rows = a.shape[-1] if get_attr(node, "transA", 0) else rows
            cols = b.shape[0] if get_attr(node, "transB", 0) else cols
            return int(rows) * int(cols) * itemsize
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return int(np.prod(batch, dtype=np.float64) * rows * cols) * itemsize
    if node.op_type == "ConstantOfShape":
        shape = value(0)
        fill = get_attr(node, "value")
        itemsize = 4 if fill is None else onnx.helper.tensor_dtype_to_np_dtype(fill.data_type).itemsize
        return None if shape is None else int(np.prod(shape.astype(np.int64), dtype=np.float64)) * itemsize
    if node.op_type == "Expand":
        data, shape = value(0), value(1)
        if data is None or shape is None:
            return None
        target = np.broadcast_shapes(tuple(int(d) for d in data.shape), tuple(max(int(d), 0) for d in shape)) \
            if all(int(d) >= 0 for d in shape) else None
        return None if target is None else int(np.prod(target, dtype=np.float64)) * data.itemsize
    if node.op_type == "Tile":
        data, repeats = value(0), value(1)
        if data is None or repeats is None:
            return None
        return int(data.size * np.prod(repeats.astype(np.float64))) * data.itemsize
    if node.op_type == "Range":
        start, limit, delta = value(0), value(1), value(2)
        if start is None or limit is None or delta is None or float(delta) == 0:
            return None
        count = max(float(np.ceil((float(limit) - float(start)) / float(delta))), 0.0)
        return int(count) * np.asarray(start).itemsize
    return None


def _through_identity(upstream: ValueTrace, index: int) -> ValueTrace:
    if upstream.source in (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY):
        return ValueTrace(ValueSource.IDENTITY, upstream.value, upstream.nodes + (index,))
    if upstream.source == ValueSource.FOLDED:
        return ValueTrace(ValueSource.FOLDED, upstream.value, upstream.nodes + (index,))
    return ValueTrace(upstream.source, upstream.value if upstream.source != ValueSource.RUNTIME else None,
                      (), upstream.reason)


def trace_value(model: "ModelProto", name: str) -> ValueTrace:
    """Where tensor ``name`` of the main graph gets its value. Reads the model, never changes it."""
    return ConstantTracer(model).trace(name)
