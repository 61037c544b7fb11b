"""make-dynamic-scale on run-time sizes: each constant factor becomes an entry of the new input.

::

    Mul(Cast(Shape(B)[i]), c)           ->  Mul(Cast(Shape(B)[i]), Gather(input, j))        c scalar
    Mul(Cast(Shape(B)[i:i+m]), c[m])    ->  Mul(Cast(Shape(B)[i:i+m]), Slice(input, j, j+m))
    layout="factor": the int64 input is Cast to the constant's type first

``j`` is the resized axis the product ends up in (:class:`~graphsurgeon_tools.resize.runtime_sizes.
RuntimeSizes`). Everything else stays: the rounding (floor, ceil, trunc), the Concat with the
leading dims, the Resize reading sizes. Fed the original constants, the graph computes what it
computed before, bit for bit, at every input size; fed another factor it computes what the
exporter would have written for that factor (output round(in*f), resized by out/in: PyTorch's
``recompute_scale_factor=True``). A constant other nodes still read is left in place.

Requires: plans whose ``runtime`` is set, on the proto they were made for (changed in place).
Ensures: the new nodes go right before each Mul (topological order kept). Does NOT remove the
freed constants (the caller's one cleanup does) or declare the input.
"""

from __future__ import annotations

from onnx import ModelProto, NodeProto, TensorProto, helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.dtypes import elem_type
from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan

__all__ = ["replace_constants", "runtime_arithmetic"]


def replace_constants(
    model: ModelProto, plan: Plan, source: str, taken: set[str], integer: bool = False
) -> tuple[dict[str, list[NodeProto]], list[str]]:
    """Rewire every Mul of ``plan.runtime`` to read its factor from ``source``.

    Returns (nodes to insert before the node producing each key, the constants no longer read by
    those Muls). ``integer``: ``source`` is int64 (layout="factor") and is cast to the constant's type.
    """
    assert plan.runtime is not None
    graph = model.graph
    before: dict[str, list[NodeProto]] = {}
    freed: list[str] = []
    start = plan.runtime.start
    stem = plan.label.replace(" ", "_").replace("#", "n")

    def fresh(suffix: str) -> str:
        name = core_graph.unique_name(taken, f"{stem}_factor_{suffix}")
        taken.add(name)
        return name

    def const(values: list[int], scalar: bool = False) -> tuple[str, NodeProto]:
        name = fresh("index")
        dims = [] if scalar else [len(values)]
        return name, helper.make_node(
            "Constant", [], [name], name=name, value=helper.make_tensor(name, TensorProto.INT64, dims, values)
        )

    for mul_index in dict.fromkeys(a.mul for a in plan.runtime.axes):
        axes = sorted((a for a in plan.runtime.axes if a.mul == mul_index), key=lambda a: a.element)
        first = axes[0]
        node = graph.node[mul_index]
        j = first.position - start
        nodes: list[NodeProto] = []
        if first.const_shape == () and first.width == 1:
            index, made = const([j], scalar=True)
            picked = fresh("gather")
            nodes += [made, helper.make_node("Gather", [source, index], [picked], name=picked, axis=0)]
        else:
            (lo, lo_node), (hi, hi_node) = const([j]), const([j + first.width])
            picked = fresh("slice")
            nodes += [lo_node, hi_node, helper.make_node("Slice", [source, lo, hi], [picked], name=picked)]
        want = elem_type(first.const_dtype)
        if integer or want != TensorProto.FLOAT:
            cast = fresh("cast")
            nodes.append(helper.make_node("Cast", [picked], [cast], name=cast, to=want))
            picked = cast
        freed.append(node.input[first.slot])
        inputs = list(node.input)
        inputs[first.slot] = picked
        del node.input[:]
        node.input.extend(inputs)
        before.setdefault(node.output[0], []).extend(nodes)
    return before, freed


def runtime_arithmetic(plan: Plan, layout: str) -> tuple[str, str]:
    """(ONNX Runtime, TensorRT) for a rewritten run-time-sizes site: where it equals the original."""
    assert plan.runtime is not None
    if layout == "sizes":
        value = plan.runtime.value
        at = f" ({list(value[plan.runtime.start :])})" if value else ""
        ort = (
            f"equal at the original input size{at}: the input is the output size the constants gave there; "
            "elsewhere feed round(in*f) per axis"
        )
    else:
        ort = (
            "equal at every input size: the input replaces the constant factor in the same arithmetic "
            f"({', '.join(a.rounding for a in plan.runtime.axes)} of in*f, resized by out/in)"
        )
    trt = "equal to ONNX Runtime (a sizes-driven Resize: both resize by out/in)"
    if layout == "scales":
        trt += "; and TensorRT refuses a float32 graph input on a shape path (lint rule trt-shape-input-integer)"
    return ort, trt
