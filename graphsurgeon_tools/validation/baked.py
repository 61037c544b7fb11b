"""What a model bakes in: the constant scales of every Resize/Upsample/plugin node, read the ways
a factor can be fixed in a graph (constant scales, constant sizes on static dims, sizes computed from
static shapes, round(dim * constant) sizes).

``sites_baked_scales(model) -> (node -> full scales, nodes without any, count)``: what
:func:`.ports.model_ports` reports as a static model's baked factor.

Requires: a ModelProto. Ensures: a site it cannot read is listed, never guessed. Does NOT run the model.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np
import onnx

from graphsurgeon_tools.core.checker import shape_inference
from graphsurgeon_tools.core.constants import ConstantTracer, ValueSource
from graphsurgeon_tools.resize import find_resize_sites
from graphsurgeon_tools.resize.runtime_sizes import recognise
from graphsurgeon_tools.resize.scales import sizes_to_scales
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE
from graphsurgeon_tools.resize.shape_source import shape_flow_for_sources

__all__ = ["sites_baked_scales"]


def _full_scales(scales: Sequence[float], axes: Optional[Sequence[int]], rank: Optional[int]) -> tuple[float, ...]:
    if axes is None:
        return tuple(float(s) for s in scales)
    rank = rank or (max(a for a in axes) + 1)
    full = [1.0] * rank
    for axis, value in zip(axes, scales):
        full[axis % rank] = float(value)
    return tuple(full)


def _static_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """Fully static shapes (every dim a positive int) that shape inference with data propagation finds."""
    try:
        inferred = shape_inference(model)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError):
        return {}  # a model inference cannot follow keeps its runtime sizes unknown
    shapes: dict[str, tuple[int, ...]] = {}
    for info in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        dims = info.type.tensor_type.shape.dim
        if info.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
            shapes[info.name] = tuple(int(d.dim_value) for d in dims)
    return shapes


def sites_baked_scales(model: onnx.ModelProto) -> tuple[dict[str, tuple[float, ...]], list[str], int]:
    """Constant scales of every Resize/Upsample/plugin node, the nodes without any, and the count.

    Uses :func:`graphsurgeon_tools.resize.find_resize_sites` for Resize/Upsample (it
    folds constant subgraphs); a site driven by constant sizes with static input dims
    counts with the scales that reproduce its sizes exactly (as ``from_sizes=True``
    computes them), and so does one whose sizes are computed from static shapes (shape
    inference with data propagation pins its input and output shapes), and so does one whose
    run-time sizes are round(dim * constant) (resize.runtime_sizes: the constants). The plugin
    node is not a Resize site, so its constant scales input is read directly.
    """
    baked: dict[str, tuple[float, ...]] = {}
    unknown: list[str] = []
    count = 0
    static_shapes: Optional[dict[str, tuple[int, ...]]] = None
    flow: Any = None  # resize.shape_flow, built at the first run-time sizes site
    for site in find_resize_sites(model, nested=True):  # bodies too (functions: their calls are not sites)
        if site.scope.startswith("function "):
            continue
        count += 1
        name = site.node_name or f"#{site.node_index}"
        if site.has_constant_scales and site.scales:
            baked[name] = _full_scales(site.scales, site.axes, site.input_rank)
            continue
        # Constant sizes on static input dims bake a factor too: the one make_dynamic_scale
        # (from_sizes=True) computes, so a rewrite of this site is fed its own factor.
        from_sizes, _ = sizes_to_scales(site)
        if from_sizes is None and site.sizes_source is ValueSource.RUNTIME and site.axes is None:
            # Sizes computed from Shape of static tensors (the TorchScript exporter's interpolate
            # size=...): shape inference with data propagation pins both shapes in a static model.
            if static_shapes is None:
                static_shapes = _static_shapes(model)
            before, after = static_shapes.get(site.input_name), static_shapes.get(site.output_name)
            if before and after and len(before) == len(after):
                pinned = replace(site, sizes=after, input_shape=before, sizes_source=ValueSource.FOLDED)
                from_sizes, _ = sizes_to_scales(pinned)
        if from_sizes is None and site.sizes_source is ValueSource.RUNTIME and site.in_main_graph:
            # round(dim * constant) sizes (a recompute_scale_factor export): the constants are its factor
            flow = flow or shape_flow_for_sources(model)
            pattern, _ = recognise(model, site, flow)
            if pattern is not None:
                from_sizes = (1.0,) * pattern.start + pattern.factors
        if from_sizes is not None:
            baked[name] = _full_scales(from_sizes, site.axes, site.input_rank)
        else:
            unknown.append(name)
    tracer: Optional[ConstantTracer] = None
    for index, node in enumerate(model.graph.node):
        if node.op_type != PLUGIN_OP_TYPE:
            continue
        count += 1
        name = node.name or f"#{index}"
        value = None
        if len(node.input) > 1 and node.input[1]:
            tracer = tracer or ConstantTracer(model)
            trace = tracer.trace(node.input[1])
            if trace.source in (ValueSource.INITIALIZER, ValueSource.CONSTANT, ValueSource.IDENTITY):
                value = None if trace.value is None else np.asarray(trace.value)
        if value is not None and value.size and value.ndim == 1 and np.issubdtype(value.dtype, np.floating):
            baked[name] = tuple(float(v) for v in value)
        else:
            unknown.append(name)
    return baked, unknown, count
