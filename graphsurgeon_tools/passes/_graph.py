"""Graph helpers shared by the passes: lookups, unique names, folding, shape cleanup, checking.

Everything here works on ``onnx`` protos directly, never through an onnx-graphsurgeon
import/export round trip: that round trip rewrites every weight (2x the memory and time
of a bare load+save on a big model). The rule in this module is "touch the graph, never
the weights": :func:`weightless_copy` gives checkers and shape inference a copy of the
model without its large tensors.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Optional

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto

from graphsurgeon_tools.errors import InvalidModelError

__all__ = [
    "DEFAULT_DOMAINS",
    "NONDETERMINISTIC_OPS",
    "all_tensor_names",
    "check_model_full",
    "consumers",
    "default_opset",
    "downstream_tensors",
    "evaluate_subgraph",
    "infer_shapes",
    "producers",
    "remove_unused",
    "tensor_to_array",
    "unique_name",
    "weightless_copy",
]

#: Domains onnxruntime and the ONNX checker know without extra registration.
DEFAULT_DOMAINS = ("", "ai.onnx")
#: Ops whose output is not a function of their inputs: never folded.
NONDETERMINISTIC_OPS = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
)
#: Initializers at least this big are left out of :func:`weightless_copy` (and so out of the
#: checker's data-size check: reading a big raw_data copies it, which would double the cost
#: of a pass on a large model). Smaller ones stay and are checked by the ONNX checker.
WEIGHTLESS_THRESHOLD = 1024 * 1024


def default_opset(model: ModelProto) -> int:
    """The version of the default ONNX domain the model imports. Raises InvalidModelError if none."""
    for opset in model.opset_import:
        if opset.domain in DEFAULT_DOMAINS:
            return int(opset.version)
    raise InvalidModelError("the model imports no version of the default ONNX domain (opset_import)")


def set_default_opset(model: ModelProto, version: int) -> None:
    """Set the default-domain opset version in place. Does NOT convert any node."""
    for opset in model.opset_import:
        if opset.domain in DEFAULT_DOMAINS:
            opset.version = version
            return
    model.opset_import.add(domain="", version=version)


def producers(graph: GraphProto) -> dict[str, int]:
    """Tensor name -> index of the node that produces it (main graph only)."""
    return {out: index for index, node in enumerate(graph.node) for out in node.output if out}


def consumers(graph: GraphProto) -> dict[str, list[int]]:
    """Tensor name -> indices of the nodes that read it, including reads from inside subgraphs
    (an If/Loop body that refers to an outer tensor counts as its parent node reading it)."""
    result: dict[str, list[int]] = defaultdict(list)
    for index, node in enumerate(graph.node):
        names = set(name for name in node.input if name)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names.update(_outer_reads(sub))
        for name in names:
            result[name].append(index)
    return result


def _outer_reads(graph: GraphProto) -> set[str]:
    """Names a subgraph reads that it does not define itself (captured from outer scopes)."""
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    reads: set[str] = set()
    for node in graph.node:
        reads.update(name for name in node.input if name)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                reads.update(_outer_reads(sub))
        defined.update(node.output)
    reads.update(o.name for o in graph.output)
    return reads - defined


def all_tensor_names(graph: GraphProto) -> set[str]:
    """Every name used in the graph (inputs, outputs, initializers, value_info, node I/O, node names)."""
    names = {i.name for i in graph.input} | {o.name for o in graph.output}
    names |= {i.name for i in graph.initializer} | {v.name for v in graph.value_info}
    names |= {s.values.name for s in graph.sparse_initializer}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        if node.name:
            names.add(node.name)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names |= all_tensor_names(sub)
    names.discard("")
    return names


def unique_name(taken: set[str], base: str) -> str:
    """``base`` if unused, else ``base__1``, ``base__2``...; the result is added to ``taken``."""
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}__{counter}"
    taken.add(name)
    return name


def tensor_to_array(tensor: TensorProto, model: Optional[ModelProto] = None) -> np.ndarray:
    """A TensorProto as numpy, reading external data through graphsurgeon_tools.io when needed.

    Meant for small tensors (scales, sizes, shapes); it reads the whole tensor.
    """
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


def evaluate_subgraph(
    nodes: Iterable[NodeProto],
    constants: dict[str, np.ndarray],
    output: str,
    opset: int,
    opset_imports: Iterable[onnx.OperatorSetIdProto] = (),
) -> np.ndarray:
    """Run a small constant subgraph with ONNX's reference evaluator and return ``output``.

    ``constants`` feeds every tensor the nodes read that they do not produce. Meant for a
    handful of nodes computing a scales/sizes vector; it does NOT guard against big
    tensors. Raises whatever the evaluator raises for an op it cannot run.
    """
    from onnx.reference import ReferenceEvaluator

    nodes = list(nodes)
    inits = [onnx.numpy_helper.from_array(np.asarray(value), name) for name, value in constants.items()]
    graph = onnx.helper.make_graph(
        nodes, "fold", [], [onnx.helper.make_empty_tensor_value_info(output)], inits
    )
    imports = [op for op in opset_imports if op.domain not in DEFAULT_DOMAINS]
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", opset), *imports]
    )
    (value,) = ReferenceEvaluator(model).run([output], {})
    return np.asarray(value)


def downstream_tensors(graph: GraphProto, start: Iterable[str]) -> set[str]:
    """Every tensor computed (directly or transitively) from ``start`` in the main graph,
    ``start`` included. Assumes the graph is topologically sorted."""
    tainted = set(start)
    for node in graph.node:
        reads = set(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                reads |= _outer_reads(sub)
        if reads & tainted:
            tainted.update(out for out in node.output if out)
    return tainted


def remove_unused(graph: GraphProto, candidates: Iterable[str]) -> list[str]:
    """Remove the producers and initializers of ``candidates`` that nothing reads any more,
    walking upstream from them; returns the removed tensor names.

    Only the chains that lead to ``candidates`` are considered: unrelated dead nodes the
    model already had are left alone (removing them is not this helper's business).
    Graph outputs are never removed.
    """
    outputs = {o.name for o in graph.output}
    removed: list[str] = []
    pending = [name for name in candidates if name]
    while pending:
        name = pending.pop()
        if name in outputs or consumers(graph).get(name):
            continue
        prod = producers(graph).get(name)
        if prod is not None:
            node = graph.node[prod]
            if any(out in outputs or consumers(graph).get(out) for out in node.output if out and out != name):
                continue
            del graph.node[prod]
            removed.extend(out for out in node.output if out)
            pending.extend(i for i in node.input if i)
            continue
        for index, init in enumerate(graph.initializer):
            if init.name == name:
                if name not in {i.name for i in graph.input}:
                    del graph.initializer[index]
                    removed.append(name)
                break
    if removed:
        gone = set(removed)
        kept = [v for v in graph.value_info if v.name not in gone]
        if len(kept) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(kept)
    return removed


def weightless_copy(model: ModelProto, threshold: int = WEIGHTLESS_THRESHOLD) -> ModelProto:
    """A copy of ``model`` for checkers and shape inference, without its big initializers.

    Initializers holding ``threshold`` bytes or more (or stored externally) are replaced by
    graph inputs of the same type and shape, so type/shape checks still see them while
    nothing copies the weights. Small initializers (shape vectors, scales) stay, because
    shape inference reads their values. The copy is NOT runnable as the original model.
    """
    copy = ModelProto()
    copy.ir_version = model.ir_version
    copy.producer_name = model.producer_name
    copy.producer_version = model.producer_version
    copy.domain = model.domain
    copy.model_version = model.model_version
    copy.doc_string = model.doc_string
    del copy.opset_import[:]
    copy.opset_import.extend(model.opset_import)
    copy.functions.extend(model.functions)
    copy.metadata_props.extend(model.metadata_props)
    graph = model.graph
    target = copy.graph
    target.name = graph.name
    target.doc_string = graph.doc_string
    target.node.extend(graph.node)
    target.input.extend(graph.input)
    target.output.extend(graph.output)
    target.value_info.extend(graph.value_info)
    target.quantization_annotation.extend(graph.quantization_annotation)
    target.sparse_initializer.extend(graph.sparse_initializer)
    declared = {i.name for i in graph.input}
    for init in graph.initializer:
        # Size from dims: len(raw_data) copies the bytes and upb's ByteSize() serializes them.
        big = init.data_location == TensorProto.EXTERNAL or _nbytes_from_dims(init) >= threshold
        if not big:
            target.initializer.append(init)
        elif init.name not in declared:
            target.input.append(
                onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims))
            )
    return copy


def _nbytes_from_dims(tensor: TensorProto) -> int:
    count = 1
    for dim in tensor.dims:
        count *= int(dim)
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, ValueError, TypeError):
        itemsize = 8
    return count * max(int(itemsize), 1)


_TYPED_FIELDS = {
    TensorProto.FLOAT: "float_data", TensorProto.DOUBLE: "double_data", TensorProto.INT64: "int64_data",
    TensorProto.UINT64: "uint64_data", TensorProto.UINT32: "uint64_data", TensorProto.STRING: "string_data",
    TensorProto.COMPLEX64: "float_data", TensorProto.COMPLEX128: "double_data",
}


def check_tensor_data(tensor: TensorProto) -> Optional[str]:
    """Why an inline tensor's data does not match its dims and type, or None if it does.

    The ONNX checker does this for the tensors it sees; :func:`weightless_copy` hides the
    big ones from it, so :func:`check_model_full` checks those here. Reads ``raw_data``
    (one copy of one tensor at a time). External tensors are io's business.
    """
    if tensor.data_location == TensorProto.EXTERNAL:
        return None
    count = 1
    for dim in tensor.dims:
        count *= int(dim)
    if tensor.HasField("raw_data"):
        expected = _nbytes_from_dims(tensor) if tensor.data_type in _ITEMSIZED else None
        held = len(tensor.raw_data)
        if expected is not None and held != expected:
            return (f"tensor {tensor.name!r} holds {held} bytes but its shape {list(tensor.dims)} needs {expected}")
        return None
    field_name = _TYPED_FIELDS.get(tensor.data_type, "int32_data")
    held = len(getattr(tensor, field_name))
    wanted = count * (2 if tensor.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128) else 1)
    if tensor.data_type in (TensorProto.INT4, TensorProto.UINT4):
        wanted = (count + 1) // 2
    if held != wanted:
        return f"tensor {tensor.name!r} holds {held} values but its shape {list(tensor.dims)} needs {wanted}"
    return None


_ITEMSIZED = frozenset(
    t for t in TensorProto.DataType.values()
    if t not in (TensorProto.UNDEFINED, TensorProto.STRING, TensorProto.INT4, TensorProto.UINT4)
    and not (hasattr(TensorProto, "FLOAT4E2M1") and t == TensorProto.FLOAT4E2M1)
    and t < 64
)


def check_model_full(model: ModelProto, *, check_data: bool = True) -> None:
    """``onnx.checker.check_model(full_check=True)`` on a weightless copy of ``model``, plus
    (``check_data``) the data-size check the checker would have made on the big typed-field
    initializers the copy leaves out. Big raw_data initializers are not read: their size is
    NOT checked here (the ORT check or the runtime refuses a short one).

    Raises onnx's ValidationError / InferenceError unchanged, and InvalidModelError for a
    tensor whose data does not match its shape: the caller decides whether a failure is the
    user's (precondition) or ours (postcondition).
    """
    opset = default_opset(model)
    if opset > onnx.defs.onnx_opset_version():
        from graphsurgeon_tools.errors import UnsupportedModelError

        raise UnsupportedModelError(
            f"default-domain opset {opset} is newer than this onnx ({onnx.defs.onnx_opset_version()}) knows"
        )
    if check_data:
        for init in model.graph.initializer:
            # Typed-field tensors cost nothing to count; big raw_data is NOT read (see
            # WEIGHTLESS_THRESHOLD): a short one is left for ORT (the check) to refuse.
            if (init.data_location != TensorProto.EXTERNAL and not init.HasField("raw_data")
                    and _nbytes_from_dims(init) >= WEIGHTLESS_THRESHOLD):
                problem = check_tensor_data(init)
                if problem:
                    raise InvalidModelError(problem)
    onnx.checker.check_model(weightless_copy(model), full_check=True)


def infer_shapes(model: ModelProto) -> None:
    """Run ONNX shape inference and store the result in ``model.graph.value_info`` in place.

    Works on a weightless copy, so the weights are never serialized. Only ``value_info``
    changes: graph inputs/outputs keep what the caller put there.
    """
    skeleton = weightless_copy(model)
    inferred = onnx.shape_inference.infer_shapes(skeleton, check_type=False, strict_mode=False, data_prop=True)
    declared = {i.name for i in model.graph.input} | {o.name for o in model.graph.output}
    declared |= {i.name for i in model.graph.initializer}
    kept = [v for v in inferred.graph.value_info if v.name not in declared]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)


def inferred_output_types(model: ModelProto) -> dict[str, onnx.TypeProto]:
    """Graph-output types that shape inference derives from the inputs (ignoring the declared ones)."""
    skeleton = weightless_copy(model)
    for output in skeleton.graph.output:
        output.type.tensor_type.ClearField("shape")
    inferred = onnx.shape_inference.infer_shapes(skeleton, check_type=False, strict_mode=False, data_prop=True)
    return {o.name: o.type for o in inferred.graph.output}


def value_info_map(graph: GraphProto) -> dict[str, ValueInfoProto]:
    """Name -> ValueInfoProto over inputs, outputs and value_info."""
    result = {v.name: v for v in graph.value_info}
    result.update({v.name: v for v in graph.output})
    result.update({v.name: v for v in graph.input})
    return result


def static_shape(info: Optional[ValueInfoProto]) -> Optional[tuple]:
    """A value's shape as a tuple: ints for static dims, strings for named ones, None for unknown ones.
    None when the value has no shape (or is not a tensor)."""
    if info is None or not info.type.HasField("tensor_type"):
        return None
    tensor_type = info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    dims = []
    for dim in tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return tuple(dims)
