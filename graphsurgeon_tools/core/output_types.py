"""Graph-output types re-derived by shape inference, and the full check's own inference standing for them.

:func:`inferred_output_types`: the output types inference derives from the inputs, the declared output
shapes left out (a pass that rewrote a graph re-derives what its outputs now are).

One inference for two readers (:func:`checked_output_types`, :class:`StrictInference`): a pass that
re-infers its output shapes after a rewrite may run the full check's own inference there (strict,
type-checking, no data propagation) instead of the lenient one, where it provably gives the same
shapes; the full check after the pass (:func:`~graphsurgeon_tools.core.checker.check_model_full`) then
runs only the structural checker, as long as the model is still what was inferred. Everywhere else it
is two calls.

Requires: a ModelProto. Ensures: the model handed in comes back as it was (output shapes and metadata
are cleared for a serialization only); never a copy of the weights (:func:`~graphsurgeon_tools.core.
checker.weightless_bytes`). Does NOT run the checker itself (core.checker does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import onnx
from onnx import ModelProto

from graphsurgeon_tools.core.checker import shape_inference, weightless_bytes
from graphsurgeon_tools.core.wire import countable, string_field

__all__ = ["UNSHARED_OP_TYPES", "StrictInference", "checked_output_types", "inferred_output_types"]


def _inference_bytes(model: ModelProto, *, metadata: bool = True) -> bytes:
    """:func:`weightless_bytes` of ``model`` with every graph output's shape cleared (and, unless
    ``metadata``, its metadata_props left out: shape inference never reads them). The model is
    changed for the serialization only and comes back as it was, never copied."""
    outputs = model.graph.output
    declared = [(output.HasField("type"), onnx.TypeProto()) for output in outputs]
    for (_, saved), output in zip(declared, outputs):
        saved.CopyFrom(output.type)
        output.type.tensor_type.ClearField("shape")
    kept = ModelProto()
    if not metadata:
        kept.metadata_props.extend(model.metadata_props)
        del model.metadata_props[:]
    try:
        return weightless_bytes(model)
    finally:
        if not metadata:
            model.metadata_props.extend(kept.metadata_props)
        for (had_type, saved), output in zip(declared, outputs):
            if had_type:
                output.type.CopyFrom(saved)
            else:
                output.ClearField("type")


def inferred_output_types(model: ModelProto) -> dict[str, onnx.TypeProto]:
    """Graph-output types that shape inference derives from the inputs (ignoring the declared ones).

    The declared output shapes are cleared for the serialization only (then put back): the model
    is never copied for it and comes back as it was."""
    return _output_types(shape_inference(_inference_bytes(model)))


#: Op types whose presence anywhere in a model makes the strict inference of
#: :func:`checked_output_types` NOT provably the lenient one's: ops with a data-propagation function
#: (``data_prop`` changes what follows them), ops inferred through a function body (whose nodes may
#: propagate data), ops holding subgraphs (their value_info is not looked at here). Any domain, any
#: version (a superset is only more cautious); tests/core check it against onnx.defs.
UNSHARED_OP_TYPES = frozenset(
    {
        # has_data_propagation_function
        "Add", "Cast", "Concat", "Gather", "Mul", "Shape", "Size", "Slice", "Squeeze", "Sub", "Unsqueeze",
        # a function body and no inference function (GroupNormalization: a context-dependent one)
        "GreaterOrEqual", "LessOrEqual", "MeanVarianceNormalization", "GroupNormalization",
        # GRAPH / GRAPHS attributes
        "If", "Loop", "Scan", "SequenceMap", "FlexAttention",
    }
)  # fmt: skip


@dataclass(frozen=True)
class StrictInference:
    """The full check's own shape inference (strict, type-checking, no data propagation) that
    passed on ``data``: a model's :func:`_inference_bytes` (graph-output shapes and metadata left
    out), whose graph outputs no node reads and no input, initializer or value_info shares a name.
    ``outputs``: the graph-output types it inferred.

    Why it stands for the inference half of ``check_model(full_check=True)`` on a model ``m``
    whose own such bytes are ``data`` (:meth:`stands_for`; read from onnx's
    shape_inference/implementation.cc): the options are the checker's own ({check_type, strict,
    no data propagation}, the same registry), and inference never reads metadata_props. The
    declared graph-output types are the only difference. Inference reads a declared type in
    three places: the value types a node's inputs are looked up in (no node reads an output:
    checked), an initializer of the same name (none) and the merge of the producing node's
    inferred type into it. That merge is ``checkShapesAndTypes`` + ``mergeShapesAndTypes``:
    the value case and element type are in ``data`` too (only the shape was cleared), so what
    is left is the shape check, which :meth:`stands_for` redoes on ``outputs`` with the
    checker's rule (ranks equal, and two dim values equal where both are values); the merged
    result is read by nobody. Output dim_params also enter the symbol table, which only names
    the dims inference leaves unknown (``unk__N``, never equal to an existing name either way):
    the names differ, which dims share one does not.
    """

    data: bytes
    outputs: dict[str, onnx.TypeProto]

    def stands_for(self, model: ModelProto) -> bool:
        """Whether ``model`` is what was inferred, but for its output shapes and metadata, and its
        declared output shapes agree with the inferred ones by onnx's own merge check."""
        if _inference_bytes(model, metadata=False) != self.data:
            return False
        for output in model.graph.output:
            inferred = self.outputs[output.name].tensor_type
            declared = output.type.tensor_type
            if not (inferred.HasField("shape") and declared.HasField("shape")):
                continue
            if len(inferred.shape.dim) != len(declared.shape.dim):
                return False
            for ours, theirs in zip(inferred.shape.dim, declared.shape.dim):
                if ours.HasField("dim_value") and theirs.HasField("dim_value") and ours.dim_value != theirs.dim_value:
                    return False
        return True


#: A node whose op_type is one of UNSHARED_OP_TYPES, serialized: one scan of the bytes for them all.
_UNSHARED_NODE = re.compile(b"|".join(re.escape(string_field(4, op.encode())) for op in sorted(UNSHARED_OP_TYPES)))


def _shareable(model: ModelProto, data: bytes) -> bool:
    """Whether the conditions :class:`StrictInference` and :func:`checked_output_types` rest on
    hold for ``model`` serialized as ``data``. Searched in the bytes (a millisecond where a walk
    over the nodes of every graph costs tens): a node's op_type is field 4 (tag 0x22), and a node
    input, a graph input, output or value_info name is field 1 (tag 0x0a). A chance match in
    other bytes only says "no" too often, never "yes" wrongly."""
    graph = model.graph
    # cheapest first: most real models stop at the scan (an Add, a Concat, a Shape...)
    # model-local functions: their bodies are inferred per call, with value types of their own
    if len(model.functions) or _UNSHARED_NODE.search(data) is not None:
        return False
    names = [o.name for o in graph.output]
    if len(set(names)) != len(names) or any(o.type.WhichOneof("value") != "tensor_type" for o in graph.output):
        return False
    stored = {i.name for i in graph.initializer} | {s.values.name for s in graph.sparse_initializer}
    for name in names:  # its own ValueInfoProto's name is the one occurrence allowed
        raw = name.encode()
        if not name or name in stored or not countable(raw) or data.count(string_field(1, raw)) != 1:
            return False
    # a declared type inference could complete undetected (see checked_output_types)
    return all(v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.elem_type for v in graph.value_info)


def _fully_typed(inferred: ModelProto) -> bool:
    """Every value the strict run typed has a tensor type with a shape: no type that only the
    type check completed (``OpSchema::CheckInputOutputType`` gives an untyped node output its
    constraint's element type, with no shape) changed what the lenient run would infer."""
    graph = inferred.graph
    # tensor_type of another kind of type reads as an empty one: no shape, so "no" there too
    return all(v.type.tensor_type.HasField("shape") for values in (graph.value_info, graph.output) for v in values)


def checked_output_types(model: ModelProto) -> tuple[dict[str, onnx.TypeProto], Optional[StrictInference]]:
    """:func:`inferred_output_types`, and where it can be had from the same run, the full check's
    inference of ``model`` (a :class:`StrictInference` for :func:`check_model_full`), else None.

    The types are exactly :func:`inferred_output_types`'s (lenient, data propagation on). Where
    :func:`_shareable`, the one run is the strict, type-checking one without data propagation,
    and its types are taken when they are provably the lenient run's: no op propagates data (so
    ``data_prop`` changes nothing), no error (strict mode only raises what lenient mode would
    skip, and skipping none changes nothing), and the type check completed no type
    (:func:`_fully_typed`: it only ever adds an element type, with no shape, to a value inference
    left untyped, and no declared value_info has an undefined element type for it to fill in).
    Otherwise the lenient run too (the strict one still stands for the check when it passed).
    When the strict run fails, the lenient run alone, and None: the full check will say why.
    """
    # One serialization for every run below: inference reads ir_version, opset_import, functions and
    # the graph (InferShapes), never metadata_props, so without them it infers what it did with them.
    data = _inference_bytes(model, metadata=False)
    if not _shareable(model, data):
        return _output_types(shape_inference(data)), None
    try:
        strict = shape_inference(data, strict=True, check_type=True, data_prop=False)
    except Exception:  # noqa: BLE001 - whatever the strict run raises, the lenient run decides, as before
        return _output_types(shape_inference(data)), None
    proof = StrictInference(data, _output_types(strict))
    if _fully_typed(strict):
        return proof.outputs, proof
    return _output_types(shape_inference(data)), proof


def _output_types(inferred: ModelProto) -> dict[str, onnx.TypeProto]:
    return {o.name: o.type for o in inferred.graph.output}
