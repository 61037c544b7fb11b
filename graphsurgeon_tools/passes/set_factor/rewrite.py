"""set-factor's rewrite and its check feeds: constant scales into each planned site.

::

    Resize(X, roi, <dynamic>)              ->  Resize(X, roi, c)          c: float32 initializer
    Resize(X, roi, "", <dynamic sizes>)    ->  Resize(X, roi, c)
    Upsample-9 / Resize-10 (X, <dynamic>)  ->  (X, c)
    DynamicTRTResize(X, <any second input>) -> DynamicTRTResize(X, c)   (the kernel's scales form)

The chains that computed the old slot values (Concat, Shape * factor, the size-tensor
arithmetic) are removed once nothing reads them, and so is a dynamic graph input nothing
reads any more (with its ``onnxtool.original_values`` entry). :func:`check_feeds` gives the
values the *input* model is fed so it computes exactly the baked scales at the check's input
shapes (a sizes input: ``floor(in * f)`` of the site's X there, from ONNX shape inference).

Requires: plans from :mod:`.plan` on the same proto. Ensures: each planned site reads a
float32 constant of one entry per axis of X; no graph input is removed that anything still
reads. Does NOT fold anything else, and does NOT touch sites outside the plans.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import onnx
from onnx import ModelProto, numpy_helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.checker import inferred_copy, static_shape, value_info_map
from graphsurgeon_tools.passes.set_factor.plan import PLUGIN_OP, Plan

__all__ = ["bake", "check_feeds"]

#: TensorRT's shape-input marker: the baked input is a float constant, not a shape input.
_SHAPE_INPUT_ATTRIBUTE = "tensorrt_plugin_shape_input_indices"


def bake(model: ModelProto, plans: list[Plan]) -> tuple[list[str], list[str]]:
    """Write each plan's constant scales into its site (in place); returns (the graph inputs removed,
    the tensors whose producers or initializers went with them)."""
    from graphsurgeon_tools.resize.original_values import record_original_values

    graph = model.graph
    taken = core_graph.all_tensor_names(graph)
    released: list[str] = []
    for plan in plans:
        node = graph.node[plan.site.index]
        name = core_graph.unique_name(taken, f"{plan.site.node or plan.site.output}_scales")
        taken.add(name)
        graph.initializer.append(numpy_helper.from_array(np.asarray(plan.scales, dtype=np.float32), name))
        released.extend(node.input[s] for s in plan.site.slots if s < len(node.input))
        inputs = list(node.input)
        while len(inputs) <= plan.site.slot:
            inputs.append("")
        inputs[plan.site.slot] = name
        del inputs[plan.site.slot + 1:]  # Resize-11+: the sizes slot goes (scales and sizes are exclusive)
        del node.input[:]
        node.input.extend(inputs)
        if node.op_type == PLUGIN_OP:
            kept = [a for a in node.attribute if a.name != _SHAPE_INPUT_ATTRIBUTE]
            del node.attribute[:]
            node.attribute.extend(kept)
    gone = core_graph.remove_unused(graph, released)
    dynamic = {name for plan in plans for name in plan.site.inputs}
    still_read = set()
    for node in graph.node:
        still_read |= core_graph.node_reads(node)
    still_read |= {o.name for o in graph.output}
    removed = [i.name for i in graph.input if i.name in dynamic and i.name not in still_read]
    if removed:
        kept_inputs = [i for i in graph.input if i.name not in removed]
        del graph.input[:]
        graph.input.extend(kept_inputs)
        record_original_values(model, [])  # drops the entries of inputs that are gone
    return removed, gone


def check_feeds(model: ModelProto, plans: list[Plan],
                input_shapes: dict[str, list[int]]) -> tuple[dict[str, np.ndarray], Optional[str]]:
    """The feeds that make ``model`` (the input model) compute each plan's scales; (feeds, why not)."""
    infos = {i.name: i for i in model.graph.input}
    feeds: dict[str, np.ndarray] = {}
    dims: Optional[dict[str, Any]] = None
    for plan in plans:
        for name, kind in plan.kinds.items():
            if name in feeds:
                continue
            info = infos[name]
            dtype = onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
            if kind == "scales":
                feeds[name] = np.asarray(plan.scales, dtype=dtype)
            elif kind == "factor":
                feeds[name] = np.asarray(plan.factor, dtype=dtype)
            else:  # sizes, size-tensor: the output size at the check's input shapes
                if dims is None:
                    dims = _shapes_at(model, input_shapes)
                x = dims.get(plan.site.x)
                if not x or any(not isinstance(d, int) for d in x):
                    return {}, (f"the shape of {plan.site.x!r} at the check's inputs is unknown, "
                                f"so {name!r} has no value")
                k = len(plan.factor)
                out = [int(np.floor(np.float32(d) * np.float32(f))) for d, f in zip(x[-k:], plan.factor)]
                if kind == "sizes":
                    feeds[name] = np.asarray(out, dtype=dtype)
                else:
                    declared = static_shape(info) or ()
                    lead = [d if isinstance(d, int) and d > 0 else 1 for d in declared[:len(declared) - 2]]
                    feeds[name] = np.zeros(lead + out[-2:], dtype=dtype)
    return feeds, None


def _shapes_at(model: ModelProto, input_shapes: dict[str, list[int]]) -> dict[str, Any]:
    """Tensor shapes by ONNX shape inference with the graph inputs fixed to ``input_shapes``."""
    inferred = inferred_copy(model, input_shapes)
    if inferred is None:
        return {}
    return {name: static_shape(info) for name, info in value_info_map(inferred.graph).items()}
