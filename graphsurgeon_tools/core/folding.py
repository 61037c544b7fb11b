"""Evaluate small constant subgraphs with ONNX's reference evaluator, within a byte budget.

``fold(nodes, constants, output, opset, opset_imports, max_bytes)`` runs the nodes and
returns ``output``; before anything is allocated it sizes every tensor the nodes will
make, by ONNX shape inference on the subgraph (C++, no data made) or, where that leaves
a shape unknown, node by node from the values computed so far (expanding ops such as
ConstantOfShape/Expand/Tile/Range, broadcasting ops and MatMul/Gemm are sized before they
run; every node's result is checked after).

Requires: nodes in topological order; ``constants`` feeding every tensor they read but
do not make. Ensures: :class:`FoldTooBig` before a tensor over ``max_bytes`` is made (by
the ops sized up front); the evaluator's own refusals are raised as they come (catch
:data:`EVALUATOR_REFUSALS`). Does NOT decide what to fold (core.constants does).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np
import onnx
from onnx import ModelProto, NodeProto

from graphsurgeon_tools.core.attributes import get_attr
from graphsurgeon_tools.core.checker import shape_inference, static_shape
from graphsurgeon_tools.core.dtypes import itemsize
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS

__all__ = ["BROADCASTING", "EVALUATOR_REFUSALS", "UNBOUNDED_OPS", "FoldTooBig", "evaluate_subgraph", "fold"]

#: Ops whose output size is decided by an input's VALUE; sized before they are folded.
_EXPANDING = frozenset({"ConstantOfShape", "Expand", "Tile", "Range"})
#: Elementwise ops whose output takes the broadcast of their inputs' shapes (an outer product of
#: two small vectors is big); sized before they are folded when shape inference could not.
BROADCASTING = frozenset(
    {
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Mod",
        "Max",
        "Min",
        "Sum",
        "Mean",
        "Where",
        "Equal",
        "Less",
        "Greater",
        "LessOrEqual",
        "GreaterOrEqual",
        "And",
        "Or",
        "Xor",
        "PRelu",
        "BitShift",
        "PRelu",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
    }
)
#: Ops whose output size cannot be bounded cheaply before running them: never folded.
UNBOUNDED_OPS = frozenset(
    {
        "Resize",
        "Upsample",
        "Pad",
        "OneHot",
        "CenterCropPad",
        "Col2Im",
        "NonZero",
        "Compress",
        "Unique",
        "StringSplit",
        "Multinomial",
    }
)
#: What ONNX's reference evaluator raises for an op or input it cannot run.
EVALUATOR_REFUSALS = (RuntimeError, ValueError, TypeError, IndexError, KeyError, ArithmeticError)


class FoldTooBig(Exception):
    """A fold that would make a tensor over the byte budget (the tracer reports it as RUNTIME)."""


def fold(
    nodes: list["NodeProto"],
    constants: dict[str, Any],
    output: str,
    opset: int,
    opset_imports: Iterable["onnx.OperatorSetIdProto"] = (),
    max_bytes: Optional[int] = None,
) -> "np.ndarray":
    """Evaluate ``nodes`` and return ``output``, sizing what they make first.

    Args:
        nodes: the subgraph, in topological order.
        constants: values of the tensors the nodes read but do not make.
        output: the tensor to return.
        opset: the default-domain opset to run at.
        opset_imports: the model's imports (other domains are kept).
        max_bytes: most bytes any one tensor may take; None: no bound.
    """
    model = _fold_model(nodes, constants, [output], opset, opset_imports)
    fits = True if max_bytes is None else _static_sizes_fit(model, max_bytes)
    if fits is False:
        raise FoldTooBig(f"constant subgraph would make a tensor over {max_bytes} bytes")
    if fits is None:  # shapes not all static: size each expanding/broadcasting op as it comes
        return _fold_stepwise(nodes, constants, output, opset, opset_imports, max_bytes)
    return _run_model(model, [output])[output]


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


def _fold_model(
    nodes: Iterable["NodeProto"],
    constants: dict[str, Any],
    outputs: list[str],
    opset: int,
    opset_imports: Iterable["onnx.OperatorSetIdProto"] = (),
) -> "ModelProto":
    inits = [onnx.numpy_helper.from_array(np.asarray(value), name) for name, value in constants.items()]
    graph = onnx.helper.make_graph(
        list(nodes), "fold", [], [onnx.helper.make_empty_tensor_value_info(o) for o in outputs], inits
    )
    imports = [op for op in opset_imports if op.domain not in DEFAULT_DOMAINS]
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset), *imports])


def _run_nodes(
    nodes: Iterable["NodeProto"],
    constants: dict[str, Any],
    outputs: list[str],
    opset: int,
    opset_imports: Iterable["onnx.OperatorSetIdProto"] = (),
) -> dict[str, "np.ndarray"]:
    return _run_model(_fold_model(nodes, constants, outputs, opset, opset_imports), outputs)


def _run_model(model: "ModelProto", outputs: list[str]) -> dict[str, "np.ndarray"]:
    from onnx.reference import ReferenceEvaluator  # deferred: onnx.reference, only when a fold runs

    values = ReferenceEvaluator(model).run(outputs, {})
    return {name: np.asarray(value) for name, value in zip(outputs, values)}


def _static_sizes_fit(model: "ModelProto", max_bytes: int) -> Optional[bool]:
    """Whether every tensor the fold model makes fits ``max_bytes``, from ONNX shape inference
    (C++, no data made): True / False, or None when some output's shape is not static."""
    try:
        inferred = shape_inference(model.SerializeToString())  # as it is: its constants are what it folds
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


def _fold_stepwise(
    nodes: list["NodeProto"],
    constants: dict[str, Any],
    name: str,
    opset: int,
    opset_imports: Iterable["onnx.OperatorSetIdProto"],
    max_bytes: Optional[int],
) -> "np.ndarray":
    """Run node by node, sizing every expanding op from its (known) inputs before it runs."""
    values = dict(constants)
    for node in nodes:
        if max_bytes is not None and node.op_type in _EXPANDING | BROADCASTING | {"MatMul", "Gemm"}:
            nbytes = _expanded_nbytes(node, values)
            if nbytes is None or nbytes > max_bytes:
                raise FoldTooBig(f"{node.op_type} would make over {max_bytes} bytes while folding")
        reads = {k: values[k] for k in node.input if k in values}
        outputs = [o for o in node.output if o]
        made = _run_nodes([node], reads, outputs, opset, opset_imports)
        if max_bytes is not None and any(v.nbytes > max_bytes for v in made.values()):
            raise FoldTooBig(f"{node.op_type} made over {max_bytes} bytes while folding")
        values.update(made)
    return values[name]


def _expanded_nbytes(node: "NodeProto", values: dict[str, Any]) -> Optional[int]:
    """Bytes an expanding op's output will take, from its input values; None when not knowable."""

    def value(slot: int) -> Optional[np.ndarray]:
        return values.get(node.input[slot]) if slot < len(node.input) else None

    known = [values.get(i) for i in node.input if i]
    if node.op_type in BROADCASTING or node.op_type in ("MatMul", "Gemm"):
        if any(v is None for v in known) or not known:
            return None
        itemsize = max(v.itemsize for v in known)
        if node.op_type in BROADCASTING:
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
        size = 4 if fill is None else itemsize(fill.data_type)
        return None if shape is None else int(np.prod(shape.astype(np.int64), dtype=np.float64)) * size
    if node.op_type == "Expand":
        data, shape = value(0), value(1)
        if data is None or shape is None:
            return None
        target = (
            np.broadcast_shapes(tuple(int(d) for d in data.shape), tuple(max(int(d), 0) for d in shape))
            if all(int(d) >= 0 for d in shape)
            else None
        )
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
