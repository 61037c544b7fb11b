"""The ONNX checker and shape inference, run on weightless copies; value-info lookups.

The rule here is "touch the graph, never the weights": :func:`weightless_copy` gives the
checker and shape inference a copy of the model without its large tensors, so a check
on a multi-GiB model costs what the graph costs. :func:`weightless_bytes` is the same
model serialized, and the model's own bytes when nothing in it is big: the checker and
shape inference take bytes, so a model without big weights is never copied for them.

:func:`shape_inference` is the one call into ``onnx.shape_inference.infer_shapes`` in
graphsurgeon_tools: every reader of inferred shapes goes through it (or a helper here).

The full check's inference already run by a pass (:class:`~graphsurgeon_tools.core.output_types.
StrictInference`) lets :func:`check_model_full` run only the structural checker.

Requires: a ModelProto. Ensures: the checker and shape inference see every node, input,
output and small initializer; big initializers are seen as typed graph inputs.
Does NOT run the model (that is graphsurgeon_tools.check's business) and does NOT read
big raw_data (its size is left for ONNX Runtime to refuse).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Container, Mapping, Optional, Sequence, Union

import onnx
from onnx import GraphProto, ModelProto, TensorProto, ValueInfoProto

from graphsurgeon_tools.core.dtypes import itemsize
from graphsurgeon_tools.core.opsets import default_opset, raise_if_unknown_opsets
from graphsurgeon_tools.errors import InvalidModelError

if TYPE_CHECKING:  # an annotation only: output_types imports this module
    from graphsurgeon_tools.core.output_types import StrictInference

__all__ = [
    "WEIGHTLESS_THRESHOLD",
    "check_model_full",
    "check_model_inference",
    "check_model_structure",
    "check_tensor_data",
    "has_big_initializer",
    "infer_shapes",
    "inferred_copy",
    "is_big",
    "shape_inference",
    "static_shape",
    "tensor_nbytes_from_dims",
    "value_info_map",
    "weightless_bytes",
    "weightless_copy",
]

#: Initializers at least this big are left out of :func:`weightless_copy` (and so out of the
#: checker's data-size check: reading a big raw_data copies it, which would double the cost
#: of a pass on a large model). Smaller ones stay and are checked by the ONNX checker.
WEIGHTLESS_THRESHOLD = 1024 * 1024


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
        if not is_big(init, threshold):
            target.initializer.append(init)
        elif init.name not in declared:
            target.input.append(onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    return copy


def is_big(init: TensorProto, threshold: int = WEIGHTLESS_THRESHOLD) -> bool:
    """Whether :func:`weightless_copy` leaves ``init`` out: stored externally, or ``threshold`` bytes
    or more by its dims (len(raw_data) would copy the bytes, upb's ByteSize() serialize them)."""
    return init.data_location == TensorProto.EXTERNAL or tensor_nbytes_from_dims(init) >= threshold


#: The most bytes :func:`tensor_nbytes_from_dims` counts an element (complex128's 16; 8: a type numpy lacks)
_WIDEST_ELEMENT = max(8, *(itemsize(elem) for elem in TensorProto.DataType.values()))


def has_big_initializer(graph: GraphProto, threshold: int = WEIGHTLESS_THRESHOLD) -> bool:
    """Whether any initializer of ``graph`` (not its bodies) :func:`is_big`, asked several times a pass.
    A tensor of fewer than ``threshold / _WIDEST_ELEMENT`` elements is small whatever its type: only
    the others are asked :func:`is_big` (2,000 small initializers: 0.9 ms instead of 1.5)."""
    # an int bound (int-to-float comparisons cost a tenth more); no bound for a size of 0 or less
    fewest = math.ceil(threshold / _WIDEST_ELEMENT) if threshold > 0 else -math.inf
    external, prod = TensorProto.EXTERNAL, math.prod  # looked up once, not once per initializer
    for init in graph.initializer:
        if init.data_location == external or (prod(init.dims) >= fewest and is_big(init, threshold)):
            return True
    return False


def weightless_bytes(model: ModelProto, threshold: int = WEIGHTLESS_THRESHOLD) -> bytes:
    """:func:`weightless_copy` of ``model``, serialized: the model's own bytes when no initializer
    is big (one serialization, no copy of the graph). What the checker and shape inference read."""
    if has_big_initializer(model.graph, threshold):
        return weightless_copy(model, threshold).SerializeToString()
    return model.SerializeToString()


def tensor_nbytes_from_dims(tensor: TensorProto) -> int:
    """Bytes a tensor's dims and element type call for (8 per element for a type numpy lacks).
    Reads no data."""
    return math.prod(tensor.dims) * itemsize(tensor.data_type)


_TYPED_FIELDS = {
    TensorProto.FLOAT: "float_data",
    TensorProto.DOUBLE: "double_data",
    TensorProto.INT64: "int64_data",
    TensorProto.UINT64: "uint64_data",
    TensorProto.UINT32: "uint64_data",
    TensorProto.STRING: "string_data",
    TensorProto.COMPLEX64: "float_data",
    TensorProto.COMPLEX128: "double_data",
}
_COMPLEX = frozenset({TensorProto.COMPLEX64, TensorProto.COMPLEX128})  # two values an element
_NIBBLES = frozenset({TensorProto.INT4, TensorProto.UINT4})  # two elements a value
_ITEMSIZED = frozenset(
    t
    for t in TensorProto.DataType.values()
    if t not in (TensorProto.UNDEFINED, TensorProto.STRING, TensorProto.INT4, TensorProto.UINT4)
    and not (hasattr(TensorProto, "FLOAT4E2M1") and t == TensorProto.FLOAT4E2M1)
    and t < 64
)


def check_tensor_data(tensor: TensorProto) -> Optional[str]:
    """Why an inline tensor's data does not match its dims and type, or None if it does.

    The ONNX checker does this for the tensors it sees; :func:`weightless_copy` hides the
    big ones from it, so :func:`check_model_full` checks those here. Reads ``raw_data``
    (one copy of one tensor at a time). External tensors are io's business.
    """
    if tensor.data_location == TensorProto.EXTERNAL:
        return None
    count, elem = math.prod(tensor.dims), tensor.data_type  # read once: every pass checks every initializer
    if tensor.HasField("raw_data"):
        expected = tensor_nbytes_from_dims(tensor) if elem in _ITEMSIZED else None
        held = len(tensor.raw_data)
        if expected is not None and held != expected:
            return f"tensor {tensor.name!r} holds {held} bytes but its shape {list(tensor.dims)} needs {expected}"
        return None
    held = len(getattr(tensor, _TYPED_FIELDS.get(elem, "int32_data")))
    wanted = count * (2 if elem in _COMPLEX else 1)
    if elem in _NIBBLES:
        wanted = (count + 1) // 2
    if held != wanted:
        return f"tensor {tensor.name!r} holds {held} values but its shape {list(tensor.dims)} needs {wanted}"
    return None


def check_model_full(
    model: ModelProto, *, check_data: bool = True, inference: Optional[StrictInference] = None
) -> None:
    """``onnx.checker.check_model(full_check=True)`` on a weightless copy of ``model``, plus
    (``check_data``) the data-size check the checker would have made on the big typed-field
    initializers the copy leaves out. Big raw_data initializers are not read: their size is
    NOT checked here (the ORT check or the runtime refuses a short one).

    ``inference``: the full check's inference, already run and passed on this model by the pass
    (:func:`~graphsurgeon_tools.core.output_types.checked_output_types`); where
    :meth:`~graphsurgeon_tools.core.output_types.StrictInference.stands_for` ``model``, only the
    structural checker runs here (the same C++ checker call, without ``full_check``: the same
    structural errors, in the same words). Anything else: the whole full check, as without it.

    Raises onnx's ValidationError / InferenceError unchanged, UnsupportedModelError for an
    opset import (any domain onnx defines) newer than this onnx knows, and InvalidModelError for a tensor whose data does not
    match its shape: the caller decides whether a failure is the user's (precondition) or
    ours (postcondition).
    """
    default_opset(model)  # InvalidModelError when there is none
    raise_if_unknown_opsets(model)  # any domain onnx knows, not only the default one
    if check_data:
        for init in model.graph.initializer:
            if (
                init.data_location != TensorProto.EXTERNAL
                and not init.HasField("raw_data")
                and tensor_nbytes_from_dims(init) >= WEIGHTLESS_THRESHOLD
            ):
                problem = check_tensor_data(init)
                if problem:
                    raise InvalidModelError(problem)
    if inference is not None and inference.stands_for(model):
        check_model_structure(model)
        return
    onnx.checker.check_model(weightless_bytes(model), full_check=True)


def check_model_inference(data: bytes) -> None:
    """The other half of ``check_model(data, full_check=True)`` where the structural half already
    passed on these very bytes: its shape inference alone, with the checker's own options (strict,
    type-checking, no data propagation; onnx's checker.cc), so the same InferenceError in the same
    words, without checking the structure twice. Raises onnx's InferenceError / ValidationError."""
    shape_inference(data, strict=True, check_type=True, data_prop=False)


def check_model_structure(model: Union[ModelProto, bytes]) -> None:
    """The structural ONNX checker (no shape inference) on ``model`` or its weightless bytes
    (:func:`weightless_bytes`; bytes are checked as given). Raises onnx's ValidationError."""
    onnx.checker.check_model(model if isinstance(model, bytes) else weightless_bytes(model))


def shape_inference(
    model: Union[ModelProto, bytes], *, strict: bool = False, check_type: bool = False, data_prop: bool = True
) -> ModelProto:
    """ONNX shape inference (``onnx.shape_inference.infer_shapes``): the one call into it here.

    ``model``: a ModelProto (inferred on its :func:`weightless_bytes`: weights never serialized)
    or bytes (taken as they are). Returns the inferred model, a new proto (the weightless copy:
    NOT runnable when the model had big weights). ``strict``: errors raise (InferenceError)
    instead of stopping quietly; ``check_type``: inputs/outputs type-checked; ``data_prop``:
    shape values propagated through Shape/Gather/Concat... (the default here; onnx's is False).
    """
    data = model if isinstance(model, bytes) else weightless_bytes(model)
    return onnx.shape_inference.infer_shapes(data, check_type=check_type, strict_mode=strict, data_prop=data_prop)


def infer_shapes(model: ModelProto) -> None:
    """Run ONNX shape inference and store the result in ``model.graph.value_info`` in place.

    Works on a weightless copy, so the weights are never serialized. Only ``value_info``
    changes: graph inputs/outputs keep what the caller put there.
    """
    inferred = shape_inference(model)
    declared = {i.name for i in model.graph.input} | {o.name for o in model.graph.output}
    declared |= {i.name for i in model.graph.initializer}
    kept = [v for v in inferred.graph.value_info if v.name not in declared]
    del model.graph.value_info[:]
    model.graph.value_info.extend(kept)


def inferred_copy(
    model: Union[ModelProto, bytes], input_shapes: Optional[Mapping[str, Sequence[int]]] = None
) -> Optional[ModelProto]:
    """ONNX shape inference (``strict_mode=False, data_prop=True``) on a weightless copy of ``model``
    (or on ``model``'s :func:`weightless_bytes`, when the caller has them): the copy with its value_info
    filled in, or None when inference refuses the model. Run it once and hand the result to each reader
    of the same unchanged model. ``input_shapes`` (a ModelProto only) fixes the named graph inputs' dims
    first (shapes at one concrete run)."""
    if not input_shapes:  # nothing to change: inferred from the model's own bytes, no copy
        try:
            return shape_inference(model)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
            return None
    work = weightless_copy(model)
    for info in work.graph.input:
        shape = (input_shapes or {}).get(info.name)
        if shape is None:
            continue
        for dim, value in zip(info.type.tensor_type.shape.dim, shape):
            dim.ClearField("dim_param")
            dim.dim_value = int(value)
    try:
        return shape_inference(work.SerializeToString())
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
        return None


def value_info_map(graph: GraphProto, names: Optional[Container[str]] = None) -> dict[str, ValueInfoProto]:
    """Name -> ValueInfoProto over inputs, outputs and value_info (inputs win, then outputs);
    ``names``: only those (a reader that wants a few names on a big graph builds no full map)."""
    if names is None:
        result = {v.name: v for v in graph.value_info}
        result.update({v.name: v for v in graph.output})
        result.update({v.name: v for v in graph.input})
        return result
    result = {v.name: v for v in graph.value_info if v.name in names}
    result.update({v.name: v for v in graph.output if v.name in names})
    result.update({v.name: v for v in graph.input if v.name in names})
    return result


def static_shape(info: Optional[ValueInfoProto]) -> Optional[tuple]:
    """A value's shape as a tuple: ints for static dims, strings for named ones, None for unknown
    ones. None when the value has no shape (or is not a tensor)."""
    if info is None or not info.type.HasField("tensor_type"):
        return None
    tensor_type = info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    dims: list = []
    for dim in tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return tuple(dims)
