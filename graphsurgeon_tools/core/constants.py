"""Constant values in the main graph: read a tensor, and the one constant tracer/folder.

``ConstantTracer(model).trace(name) -> ValueTrace`` says where tensor ``name`` gets its
value (graph input, initializer, Constant node, Identity chain, a small constant subgraph
folded with ONNX's reference evaluator, or run-time data) and, when constant, the value.

Requires: a ModelProto whose main graph is topologically sorted. Ensures: iterative (an
Identity chain of any length needs no recursion), memoised across calls on one tracer,
and bounded: a folded subgraph has at most ``max_nodes`` nodes, reads at most
``max_bytes`` of constants, and an op that can expand (ConstantOfShape, Expand, Tile,
Range) or broadcasts (Mul of a column and a row) is folded only when its output fits
``max_bytes``, checked BEFORE it runs (see :mod:`graphsurgeon_tools.core.folding`).
Anything over a bound, or that the evaluator refuses, is reported as
``ValueSource.RUNTIME`` with a reason.

Scopes: ``ConstantTracer(model, graph=body, outer=parent_tracer)`` traces inside an
If/Loop/Scan body (or a model-local function, ``graph=function``): the body's own inputs
are run-time values, and a name the body does not define is asked of ``outer`` (the
enclosing scope; constants and graph inputs of the main graph are visible in every body).

Does NOT change the model, and does NOT descend into subgraphs on its own (a value
computed by control flow is run time).
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto

from graphsurgeon_tools.core.checker import check_tensor_data, tensor_nbytes_from_dims
from graphsurgeon_tools.core.folding import EVALUATOR_REFUSALS, UNBOUNDED_OPS, FoldTooBig, evaluate_subgraph, fold
from graphsurgeon_tools.core.graph import NONDETERMINISTIC_OPS, producers, subgraphs
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS, default_opset
from graphsurgeon_tools.errors import InvalidModelError
from graphsurgeon_tools.io import read_tensor_bytes

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
    """The byte bound of folding: ``max_bytes`` when given (0: no bound), else the smaller of
    :data:`DEFAULT_FOLD_BYTES` and the user's ``ONNXTOOL_MAX_OUTPUT_BYTES`` (the output-size
    family of ``graphsurgeon_tools.check.limits``, read here without importing check, which
    sits above core; a malformed or ``0`` value leaves the default: check.limits reports a
    malformed one, and folding is never unbounded by accident)."""
    if max_bytes is not None:
        return max_bytes or None
    return min(DEFAULT_FOLD_BYTES, _user_output_limit() or DEFAULT_FOLD_BYTES)


def _user_output_limit() -> Optional[int]:
    """``ONNXTOOL_MAX_OUTPUT_BYTES`` in bytes (same syntax as check.limits: ``512K``, ``2G``,
    ``2GiB``), or None when unset, ``0`` or malformed."""
    match = re.match(r"^\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*$", os.environ.get("ONNXTOOL_MAX_OUTPUT_BYTES", ""), re.I)
    if match is None:
        return None
    value = int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[match.group(2).upper()]
    return value or None


#: Element types whose numpy dtype is also their storage dtype (what to_array reads them as), on a
#: little-endian machine (to_array byte-swaps raw data on a big-endian one: left to it there).
_PLAIN_DTYPES = (
    {}
    if sys.byteorder != "little"
    else {
        TensorProto.FLOAT: np.dtype(np.float32),
        TensorProto.DOUBLE: np.dtype(np.float64),
        TensorProto.INT64: np.dtype(np.int64),
        TensorProto.INT32: np.dtype(np.int32),
    }
)
_PLAIN_FIELDS = {
    TensorProto.FLOAT: "float_data",
    TensorProto.DOUBLE: "double_data",
    TensorProto.INT64: "int64_data",
    TensorProto.INT32: "int32_data",
}


def _plain_array(tensor: "TensorProto", plain: "np.dtype") -> Optional["np.ndarray"]:
    """onnx.numpy_helper.to_array's own expressions for a plain type held inline, without its per-call
    dtype lookups; None where the data does not match the dims (the caller's check says why)."""
    dims = tensor.dims[:]
    count = math.prod(dims)
    if tensor.HasField("raw_data"):
        raw = tensor.raw_data
        return np.frombuffer(raw, dtype=plain).reshape(dims) if len(raw) == count * plain.itemsize else None
    values = getattr(tensor, _PLAIN_FIELDS[tensor.data_type])[:]
    if len(values) != count:
        return None
    array = np.array(values, dtype=plain)
    return array if len(dims) == 1 else array.reshape(dims)


def tensor_to_array(tensor: "TensorProto", model: Optional["ModelProto"] = None) -> "np.ndarray":
    """A TensorProto as numpy, reading external data through graphsurgeon_tools.io when needed.

    Meant for small tensors (scales, sizes, shapes); it reads the whole tensor. Raises
    InvalidModelError for data that does not match the tensor's shape or type.
    """
    plain = _PLAIN_DTYPES.get(tensor.data_type)
    direct = plain is not None and not tensor.HasField("segment")
    if direct and tensor.data_location != TensorProto.EXTERNAL:
        # the commonest case (a pass reads every site's scales: 2,000 sites, 4,000 calls), without the
        # check's calls; data that does not match its dims goes on below, where the check says why
        array = _plain_array(tensor, plain)
        if array is not None:
            return array
    if tensor.data_location == TensorProto.EXTERNAL:
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
    if direct:  # external data, read in above (checked: it matches its dims)
        array = _plain_array(tensor, plain)
        if array is not None:
            return array
    try:
        return onnx.numpy_helper.to_array(tensor)
    except (TypeError, ValueError) as exc:  # e.g. element type UNDEFINED or one numpy has no dtype for
        raise InvalidModelError(f"tensor {tensor.name!r} cannot be read: {' '.join(str(exc).split())}") from None


def constant_node_value(node: "NodeProto", model: Optional["ModelProto"] = None) -> Optional["np.ndarray"]:
    """The value of a Constant node, or None for sparse/string values (never a scales vector)."""
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


class ConstantTracer:
    """Resolves tensor values in the main graph, memoising across calls.

    Args:
        model: the model to read (never changed).
        max_nodes: most nodes one folded subgraph may have.
        max_bytes: most bytes a folded subgraph may read or make (None: :data:`DEFAULT_FOLD_BYTES`;
            0: no bound; see :func:`fold_byte_budget`).
        graph: the scope to trace in: None for the main graph, else an If/Loop/Scan body
            (GraphProto) or a model-local function (FunctionProto) of ``model``.
        outer: the tracer of the enclosing scope (bodies only): names the body does not
            define are traced there. ``nodes`` of such a trace are empty (they index the
            outer graph).
    """

    def __init__(
        self,
        model: "ModelProto",
        *,
        max_nodes: int = MAX_FOLD_NODES,
        max_bytes: Optional[int] = None,
        graph: Any = None,
        outer: Optional["ConstantTracer"] = None,
    ) -> None:
        self.model = model
        self.graph = model.graph if graph is None else graph
        self.nested = graph is not None
        self.outer = outer
        self._producers: Optional[dict[str, int]] = None
        self.initializers = {init.name: init for init in getattr(self.graph, "initializer", ())}
        # GraphProto inputs are ValueInfoProtos, FunctionProto inputs plain names.
        self.inputs = {getattr(inp, "name", inp) for inp in self.graph.input}
        self.opset = default_opset(model)
        self.opset_imports = list(model.opset_import)
        if hasattr(self.graph, "opset_import") and len(self.graph.opset_import):  # a function's own imports
            self.opset_imports = list(self.graph.opset_import)
            self.opset = next((o.version for o in self.graph.opset_import if o.domain in DEFAULT_DOMAINS), self.opset)
        self.max_nodes = max_nodes
        # A body folds under its enclosing scope's budget unless told otherwise.
        self.max_bytes = outer.max_bytes if outer is not None and max_bytes is None else fold_byte_budget(max_bytes)
        self.memo: dict[str, ValueTrace] = {}

    @property
    def producers(self) -> dict[str, int]:
        """Tensor name -> index of its node in this scope, built on first use: scales held by
        initializers or graph inputs never need the walk over every node."""
        if self._producers is None:
            self._producers = producers(self.graph)
        return self._producers

    def _outer_trace(self, name: str) -> Optional[ValueTrace]:
        """``name`` traced in the enclosing scope (its node indices dropped), or None at the top."""
        if self.outer is None:
            return None
        found = self.outer.trace(name)
        return ValueTrace(found.source, found.value, (), found.reason)

    def trace(self, name: str) -> ValueTrace:
        """Where tensor ``name`` gets its value."""
        chain: list[tuple[str, int]] = []  # Identity nodes from ``name`` upstream
        seen: set[str] = set()
        current = name
        while current not in self.memo:
            index = self._identity_producer(current, DEFAULT_DOMAINS)
            if index is None or current in seen:
                result = (
                    ValueTrace(ValueSource.RUNTIME, reason="Identity chain forms a cycle")
                    if current in seen
                    else self._trace_leaf(current)
                )
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
        if not name:
            return ValueTrace(ValueSource.ABSENT)
        if name in self.inputs and self.nested:
            return ValueTrace(ValueSource.RUNTIME, reason=f"{name!r} is an input of the body or function")
        if name in self.inputs:
            default = self.initializers.get(name)
            value = tensor_to_array(default, self.model) if default is not None else None
            return ValueTrace(ValueSource.GRAPH_INPUT, value)
        if name in self.initializers:
            return ValueTrace(ValueSource.INITIALIZER, tensor_to_array(self.initializers[name], self.model))
        index = self.producers.get(name)
        if index is None:
            outer = self._outer_trace(name)
            if outer is not None:
                return outer
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
        subgraph: set[int] = set()
        constant_names: list[str] = []
        captured: dict[str, Any] = {}  # constants of an enclosing scope the fold reads
        read_bytes = 0
        stack, seen = [name], set()
        while stack:
            tensor = stack.pop()
            if tensor in seen or not tensor:
                continue
            seen.add(tensor)
            if tensor in self.inputs:
                where = "an input of the body or function" if self.nested else "graph input"
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed from {where} {tensor!r}")
            if tensor in self.initializers:
                constant_names.append(tensor)
                read_bytes += tensor_nbytes_from_dims(self.initializers[tensor])
                if self.max_bytes is not None and read_bytes > self.max_bytes:
                    return ValueTrace(
                        ValueSource.RUNTIME, reason=f"constant subgraph reads over {self.max_bytes} bytes"
                    )
                continue
            producer = self.producers.get(tensor)
            if producer is None:
                outer = self._outer_trace(tensor)
                if outer is None or outer.value is None or outer.source not in _CONSTANT_SOURCES:
                    return ValueTrace(ValueSource.RUNTIME, reason=f"{tensor!r} comes from an outer scope")
                captured[tensor] = outer.value
                read_bytes += int(outer.value.nbytes)
                if self.max_bytes is not None and read_bytes > self.max_bytes:
                    return ValueTrace(
                        ValueSource.RUNTIME, reason=f"constant subgraph reads over {self.max_bytes} bytes"
                    )
                continue
            if producer in subgraph:
                continue
            node = self.graph.node[producer]
            if node.domain not in DEFAULT_DOMAINS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by custom op {node.op_type}")
            if node.op_type in NONDETERMINISTIC_OPS:
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by random op {node.op_type}")
            if any(True for _ in subgraphs(node)):
                return ValueTrace(ValueSource.RUNTIME, reason=f"computed by control flow ({node.op_type})")
            if node.op_type in UNBOUNDED_OPS:
                return ValueTrace(
                    ValueSource.RUNTIME,
                    reason=f"computed by {node.op_type}, whose output size is not bounded before it runs",
                )
            subgraph.add(producer)
            if len(subgraph) > self.max_nodes:
                return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph over {self.max_nodes} nodes")
            stack.extend(node.input)
        order = sorted(subgraph)
        constants = {t: tensor_to_array(self.initializers[t], self.model) for t in constant_names}
        constants.update(captured)
        nodes = [self.graph.node[i] for i in order]
        try:
            value = fold(nodes, constants, name, self.opset, self.opset_imports, self.max_bytes)
        except FoldTooBig as exc:
            return ValueTrace(ValueSource.RUNTIME, reason=str(exc))
        except EVALUATOR_REFUSALS as exc:  # the reference evaluator refused: report, do not guess
            return ValueTrace(ValueSource.RUNTIME, reason=f"constant subgraph did not fold: {type(exc).__name__}")
        if self.max_bytes is not None and value.nbytes > self.max_bytes:
            return ValueTrace(ValueSource.RUNTIME, reason=f"folded value is over {self.max_bytes} bytes")
        return ValueTrace(ValueSource.FOLDED, value, tuple(order))


_CONSTANT_SOURCES = (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY, ValueSource.FOLDED)


def _through_identity(upstream: ValueTrace, index: int) -> ValueTrace:
    if upstream.source in (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY):
        return ValueTrace(ValueSource.IDENTITY, upstream.value, upstream.nodes + (index,))
    if upstream.source == ValueSource.FOLDED:
        return ValueTrace(ValueSource.FOLDED, upstream.value, upstream.nodes + (index,))
    return ValueTrace(
        upstream.source, upstream.value if upstream.source != ValueSource.RUNTIME else None, (), upstream.reason
    )


def trace_value(model: "ModelProto", name: str) -> ValueTrace:
    """Where tensor ``name`` of the main graph gets its value. Reads the model, never changes it."""
    return ConstantTracer(model).trace(name)
