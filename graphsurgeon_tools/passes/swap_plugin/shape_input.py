"""swap-plugin's V3 form: ``DynamicTRTResize(X, sizes:int64[2 | rank])`` with a TensorRT shape input.

::

    Resize(X, roi, "", Concat(Shape(X)[:-2], hw))            -> DynamicTRTResize(X, hw)   signature "sizes"
        tensorrt_plugin_shape_input_indices = [1]             (hw: int64 (out_h, out_w) VALUES)
    Resize(X, roi, "", S = Concat(Shape(X)[:-k], s)), k != 2  -> DynamicTRTResize(X, S)    (1-D, 3-D: full rank)
    DynamicTRTResize(X, s:int[k] 1-D)                         -> Resize(X, "", "", Concat(Shape(X)[:-k], s))

The compiled op (csrc/ort) reads a 1-D integer second input of 2 entries as the last two
axes and of rank(X) entries as every axis: a 2-D site keeps the (h, w) form MMDeploy-style
plugins know, a 1-D (N, C, L) or 3-D (N, C, D, H, W) site hands the plugin the full-rank
sizes (still a shape tensor: Shape(X) and the int64 input are both integer).

IPluginV2DynamicExt (MMDeploy's DynamicTRTResize) is deprecated since TensorRT 10.0; an
IPluginV3 plugin can take real shape inputs, which onnx-tensorrt's ``addPluginWithCreator``
(onnxOpImporters.cpp) routes by the INTS attribute ``tensorrt_plugin_shape_input_indices``.
``hw`` comes from make-dynamic-scale's integer layouts: the ``sizes`` input itself, or
``Shape(X)[-2:] * factor`` for ``layout="factor"``; a Resize whose sizes already have that
form (a model written with an integer layout) is recognised as it is.

Requires: the pass's working copy (changed in place). Ensures: the Concat/Shape/Slice chain
the plugin no longer reads goes in the pass's one cleanup step. Does NOT run a checker.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.refusal import Fix, Refusal
from graphsurgeon_tools.resize.sites import ResizeSite, ValueSource

SIGNATURE = "sizes"
_SIZES_LAYOUT_FIRST = Fix(
    "make_dynamic_scale", (("layout", "sizes"),), then=Fix("swap_plugin", (("signature", "sizes"),))
)
SHAPE_INPUT_INDICES = "tensorrt_plugin_shape_input_indices"
_INTEGER = (TensorProto.INT32, TensorProto.INT64)

__all__ = [
    "SHAPE_INPUT_INDICES",
    "SIGNATURE",
    "hw_behind_sizes",
    "integer_vector",
    "sizes_from_hw",
    "vector_length",
    "with_hw",
]


def hw_behind_sizes(model: ModelProto, sizes: str, producers: dict[str, int]) -> Optional[str]:
    """``hw`` in ``sizes = Concat(<lead>, hw)`` where ``hw`` is a 2-element integer vector, else None."""
    index = producers.get(sizes)
    if index is None:
        return None
    node = model.graph.node[index]
    if node.op_type != "Concat" or len(node.input) != 2:
        return None
    return node.input[1] or None


def vector_length(type_proto) -> Optional[int]:  # noqa: ANN001 - an onnx.TypeProto or None
    """The static length of a 1-D tensor type, None when unknown."""
    if type_proto is None or not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    dims = type_proto.tensor_type.shape.dim
    return int(dims[0].dim_value) if len(dims) == 1 and dims[0].HasField("dim_value") else None


def with_hw(model: ModelProto, sites: list[ResizeSite], types: dict[str, Any], skipped: list[Skip]) -> list[ResizeSite]:
    """The sites whose sizes are ``Concat(<X dims>, hw)`` with an integer ``hw``, as sites reading what
    the plugin takes: ``hw`` itself when it holds two entries, the full-rank sizes otherwise.

    The others get a skip with the reason (one producer map for all sites).
    """
    producers = core_graph.producers(model.graph)
    declared = {i.name: i.type for i in model.graph.input}
    kept = []
    for site in sites:
        hw = (
            site.sizes_tensor
            if site.sizes_source == ValueSource.GRAPH_INPUT and site.sizes_tensor in declared
            else hw_behind_sizes(model, site.sizes_tensor, producers)
            if site.sizes_tensor
            else None
        )
        if not hw or not integer_vector(declared.get(hw) or types.get(hw)):
            skipped.append(
                Skip(
                    site.node_name or site.output_name,
                    site.op_type,
                    Refusal(
                        "sizes-not-hw",
                        "the sizes are not Concat(<X dims>, s) with an integer s (one entry per spatial "
                        'axis): rewrite the model with make_dynamic_scale(layout="sizes") first',
                        _SIZES_LAYOUT_FIRST,
                    ),
                )
            )
            continue
        if vector_length(declared.get(hw) or types.get(hw)) == 2:
            kept.append(dataclasses.replace(site, sizes_tensor=hw))
        else:  # 1-D or 3-D: the op takes 2 or rank(X) entries, so it reads the full-rank sizes
            node = model.graph.node[producers[site.output_name]]
            full = node.input[3] if len(node.input) > 3 else ""
            if not full or full == hw:
                length = vector_length(declared.get(hw) or types.get(hw))
                skipped.append(
                    Skip(
                        site.node_name or site.output_name,
                        site.op_type,
                        Refusal(
                            "sizes-form-not-full-rank",
                            f"the sizes {hw!r} have {length} entries and are not "
                            "Concat(Shape(X)[:-k], s): the compiled op reads 2 entries as (h, w) or rank(X) entries",
                        ),
                    )
                )
                continue
            kept.append(
                dataclasses.replace(
                    site,
                    sizes_tensor=full,
                    notes=site.notes
                    + (
                        f"{site.input_rank or '?'}-D input: the plugin's shape input is the full-rank sizes "
                        f"Concat(Shape(X)[:-k], {hw}) (the compiled op reads 2 entries as (h, w), rank(X) entries as "
                        "every axis)",
                    ),
                )
            )
    return kept


def integer_vector(type_proto) -> bool:  # noqa: ANN001 - an onnx.TypeProto or None
    """A 1-D int32/int64 tensor type (a shape input, not MMDeploy's size tensor or float scales)."""
    if type_proto is None or not type_proto.HasField("tensor_type"):
        return False
    tensor = type_proto.tensor_type
    return tensor.elem_type in _INTEGER and tensor.HasField("shape") and len(tensor.shape.dim) == 1


def sizes_from_hw(
    builder,
    extra: list[NodeProto],
    base: str,
    x: str,
    hw: str,
    opset: int,  # noqa: ANN001
    hw_type: int = TensorProto.INT64,
    count: Optional[int] = None,
) -> str:
    """``Concat(Shape(X)[:-k], s)``: full-rank Resize sizes from the plugin's k spatial values
    (``count`` = k when the input's length is static; else k is read at run time as Size of ``s``,
    which also covers a full-rank ``s``: the lead is then empty)."""
    if count is not None:
        end = -count
        if opset >= 15:
            lead = builder.node(extra, "Shape", [x], f"{base}/sizes/lead", end=end)
        else:  # Shape has no start/end before opset 15
            full = builder.node(extra, "Shape", [x], f"{base}/sizes/x_shape")
            zero = builder.initializer(f"{base}/sizes/zero", np.array([0], dtype=np.int64))
            stop = builder.initializer(f"{base}/sizes/minus{count}", np.array([end], dtype=np.int64))
            lead = builder.node(extra, "Slice", [full, zero, stop], f"{base}/sizes/lead")
    else:
        full = builder.node(extra, "Shape", [x], f"{base}/sizes/x_shape")
        zero = builder.initializer(f"{base}/sizes/zero", np.array([0], dtype=np.int64))
        length = builder.node(extra, "Shape", [hw], f"{base}/sizes/length")
        stop = builder.node(extra, "Neg", [length], f"{base}/sizes/end")
        lead = builder.node(extra, "Slice", [full, zero, stop], f"{base}/sizes/lead")
    if hw_type != TensorProto.INT64:  # Resize's sizes are int64
        hw = builder.node(extra, "Cast", [hw], f"{base}/sizes/hw", to=TensorProto.INT64)
    return builder.node(extra, "Concat", [lead, hw], f"{base}/sizes", axis=0)
