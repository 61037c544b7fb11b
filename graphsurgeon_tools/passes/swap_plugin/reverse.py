"""swap-plugin reverse: DynamicTRTResize -> Resize (``reverse=True``).

::

    DynamicTRTResize(X, scales)                            -> Resize(X, "", scales)     (Upsample below opset 10)
    DynamicTRTResize(X, size_tensor built by forward)      -> Resize(X, "", scales | sizes)
    DynamicTRTResize(X, outside size tensor S)             -> Resize(X, "", "", Concat(Shape(X)[:-2], Shape(S)[-2:]))
    DynamicTRTResize(X, hw:int 1-D)  (signature "sizes")   -> Resize(X, "", "", Concat(Shape(X)[:-2], hw))

The size tensor forward built is recognised by :func:`.size_tensor.trace_size_tensor` and
its subgraph removed in the one cleanup step; the plugin domain's opset import goes when
no node uses it any more.

A selected plugin node whose attributes are missing a value, mistyped or out of range
(``resize.semantics.attribute_problems``, read through the spec's renames) is refused
(InvalidModelError) before anything changes: the Resize written from it would not load.

Plugin nodes inside If/Loop/Scan bodies or model-local functions are reported skipped
with the reason (never left silently).

Below opset 9 Upsample has no scales input: a plugin node whose scales are a constant becomes
Upsample-7 with the ``scales`` attribute (the form forward swapped); run-time scales are
refused per site (``scales-need-opset-9``), never turned into a model that does not load.

Requires: the working copy (changed in place). Does NOT run any checker.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from onnx import ModelProto, NodeProto, helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.core.attributes import make_attr
from graphsurgeon_tools.core.constants import ConstantTracer, ValueSource
from graphsurgeon_tools.passes.base import Skip, select
from graphsurgeon_tools.passes.swap_plugin import refusals, shape_input
from graphsurgeon_tools.passes.swap_plugin.edit import Builder, elem_types_and_shapes
from graphsurgeon_tools.passes.swap_plugin.result import SwappedNode, SwapPluginResult
from graphsurgeon_tools.passes.swap_plugin.size_tensor import trace_size_tensor
from graphsurgeon_tools.plugins import PluginSpec
from graphsurgeon_tools.refusal import Refusal
from graphsurgeon_tools.resize.plugin_node import decode_plugin_semantics, resize_attributes

__all__ = ["reverse"]

CONSTANT_SOURCES = frozenset({ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY, ValueSource.FOLDED})


def _label(node: NodeProto) -> str:
    return node.name or (node.output[0] if node.output else "")


def reverse(
    model: ModelProto, spec: PluginSpec, op_type: str, nodes: Optional[list[str]], result: SwapPluginResult, label: str
) -> None:
    """Turn the matching ``op_type`` plugin nodes of ``model`` (in place) back into Resize."""
    graph = model.graph
    candidates = [
        (i, n, scope.name)
        for scope in core_graph.scopes(model)
        for i, n in enumerate(scope.graph.node)
        if n.op_type == op_type and not opsets.is_default_domain(n.domain)
    ]
    selected = select(candidates, nodes, lambda c: (c[1].name, c[1].output[0] if c[1].output else ""), what=op_type)
    for _, node, where in selected:
        if where != core_graph.MAIN_GRAPH:
            result.skipped.append(
                Skip(
                    _label(node),
                    node.op_type,
                    Refusal("in-body", f"inside {where}: reverse=True turns main-graph plugin nodes back only"),
                )
            )
    selected = [(i, n) for i, n, where in selected if where == core_graph.MAIN_GRAPH]
    opset = opsets.default_opset(model)
    tracer = ConstantTracer(model) if opset < 9 else None
    for _, node in selected:
        refusals.raise_if_bad_attributes(node, 0, label, spec.attributes.rename)
    types = elem_types_and_shapes(model)
    builder = Builder(model)
    producers = core_graph.producers(graph)
    domains = set()
    dropped: list[str] = []
    for position, node in selected:
        if len(node.input) != 2 or len(node.output) != 1:
            result.skipped.append(
                Skip(
                    _label(node),
                    node.op_type,
                    Refusal(
                        "plugin-arity", f"expected 2 inputs and 1 output, got {len(node.input)} and {len(node.output)}"
                    ),
                )
            )
            continue
        plugin_domain = node.domain  # `node` is rewritten in place below
        x, second = node.input
        semantics = decode_plugin_semantics(node, spec.attributes.rename)
        second_type = types.get(second)
        second_rank = (
            len(second_type.tensor_type.shape.dim)
            if second_type is not None and second_type.tensor_type.HasField("shape")
            else None
        )
        v3 = shape_input.integer_vector(second_type)  # (h, w) values: the V3 form
        scales, sizes = (
            (None, None) if v3 else (second, None) if second_rank == 1 else trace_size_tensor(model, second, producers)
        )
        extra: list[NodeProto] = []
        base = _label(node)
        if v3:
            if opset < 11:
                result.skipped.append(Skip(base, node.op_type, _sizes_need_opset_11(opset)))
                continue
            sizes = shape_input.sizes_from_hw(
                builder,
                extra,
                base,
                x,
                second,
                opset,
                second_type.tensor_type.elem_type,
                shape_input.vector_length(second_type),
            )
        if scales is None and sizes is None:
            if second_rank is None:
                result.skipped.append(
                    Skip(
                        base,
                        node.op_type,
                        Refusal(
                            "unknown-second-input",
                            f"cannot tell whether {second!r} is scales or a size tensor (no shape information)",
                        ),
                    )
                )
                continue
            if opset < 11:
                result.skipped.append(Skip(base, node.op_type, _sizes_need_opset_11(opset)))
                continue
            sizes = _sizes_from_outside(builder, extra, base, x, second, opset)
        if sizes is not None and opset < 11:
            result.skipped.append(Skip(base, node.op_type, _sizes_need_opset_11(opset)))
            continue
        attribute_scales = None
        if opset < 9:
            attribute_scales = _constant_scales(tracer, scales)
            if attribute_scales is None:
                result.skipped.append(
                    Skip(
                        base,
                        node.op_type,
                        Refusal(
                            "scales-need-opset-9",
                            f"Upsample takes run-time scales from opset 9; the model imports {opset} "
                            f"and {second!r} is not a constant that the scales attribute could hold",
                        ),
                    )
                )
                continue
        if opset >= 13:
            inputs = [x, "", scales or "", sizes or ""]
        elif opset >= 11:
            roi = builder.initializer(f"{base}/roi", np.zeros(0, dtype=np.float32))
            empty = builder.initializer(f"{base}/empty_scales", np.zeros(0, dtype=np.float32)) if sizes else ""
            inputs = [x, roi, scales or empty, sizes or ""]
        elif opset >= 9:
            inputs = [x, scales]
        else:
            inputs = [x]
        while inputs and inputs[-1] == "":
            inputs.pop()
        resize_op = "Upsample" if opset < 10 else "Resize"
        new_attrs = resize_attributes(semantics, opset)
        if attribute_scales is not None:
            new_attrs["scales"] = attribute_scales
        new = helper.make_node(resize_op, inputs, [node.output[0]], name=node.name)
        new.attribute.extend(make_attr(k, v) for k, v in new_attrs.items())
        node_name = node.name
        graph.node[position].CopyFrom(new)
        if extra:
            builder.pending.append((position, extra))
        domains.add(plugin_domain)
        if second not in inputs:
            dropped.append(second)
        result.rewritten.append(
            SwappedNode(
                node=node_name,
                op_type_before=op_type,
                op_type_after=resize_op,
                domain_after="",
                signature="sizes" if v3 else "size-tensor" if sizes is not None else "scales",
                inputs=tuple(inputs),
                attributes=new_attrs,
            )
        )
    builder.insert_all()
    if result.rewritten:
        result.removed_nodes.extend(core_graph.remove_unused(graph, dropped))
        for domain in domains:
            opsets.drop_unused_opset(model, domain)


def _constant_scales(tracer: ConstantTracer, scales: Optional[str]) -> Optional[list[float]]:
    """The constant value of ``scales`` as Upsample-7's attribute, or None when it is not a constant."""
    if scales is None:
        return None
    trace = tracer.trace(scales)
    if trace.source not in CONSTANT_SOURCES or trace.value is None:
        return None
    return [float(v) for v in np.asarray(trace.value).reshape(-1)]


def _sizes_need_opset_11(opset: int) -> Refusal:
    return Refusal("sizes-need-opset-11", f"a sizes-driven Resize needs opset >= 11; the model imports {opset}")


def _sizes_from_outside(builder: Builder, extra: list[NodeProto], base: str, x: str, size: str, opset: int) -> str:
    """sizes = X.shape[:-2] ++ size.shape[-2:] for a size tensor from outside (e.g. a graph input)."""
    if opset >= 15:
        x_shape = builder.node(extra, "Shape", [x], f"{base}/sizes/x_shape", end=-2)
        s_shape = builder.node(extra, "Shape", [size], f"{base}/sizes/size_shape", start=-2)
    else:  # Shape has no start/end before opset 15: slice its output instead
        x_full = builder.node(extra, "Shape", [x], f"{base}/sizes/x_full_shape")
        s_full = builder.node(extra, "Shape", [size], f"{base}/sizes/size_full_shape")
        zero = builder.initializer(f"{base}/sizes/zero", np.array([0], dtype=np.int64))
        minus2 = builder.initializer(f"{base}/sizes/minus2", np.array([-2], dtype=np.int64))
        end = builder.initializer(f"{base}/sizes/end", np.array([np.iinfo(np.int64).max], dtype=np.int64))
        x_shape = builder.node(extra, "Slice", [x_full, zero, minus2], f"{base}/sizes/x_shape")
        s_shape = builder.node(extra, "Slice", [s_full, minus2, end], f"{base}/sizes/size_shape")
    return builder.node(extra, "Concat", [x_shape, s_shape], f"{base}/sizes", axis=0)
