"""make-dynamic-scale layouts: what the new graph input holds, and how the graph expands it.

::

    layout="scales"  Resize(X, roi, scales:float[r])                         (today; ONNX Runtime)
    layout="factor"  Resize(X, roi, "", Concat(Shape(X)[:-k], Shape(X)[-k:] * factor:int64[k]))
    layout="sizes"   Resize(X, roi, "", Concat(Shape(X)[:-k], sizes:int64[k]))

``k`` is the number of spatial axes the site resizes (the scales' suffix past N, C): 1 for
(N, C, L) audio, 2 for (N, C, H, W) images, 3 for (N, C, D, H, W) volumes; the input holds
one entry per spatial axis ((l), (h, w), (d, h, w)).

The integer layouts are for TensorRT: an int64 graph input that sets a shape is a shape
tensor TensorRT accepts (a float one it refuses; lint rule trt-shape-input-integer), and
a Resize driven by ``sizes`` is what its parser imports without float shape arithmetic.
Both resize by out/in, in ONNX Runtime and in TensorRT alike.

Where each layout equals the original (:func:`arithmetic` for the layout written, and
:func:`alternatives` for all three, per site in the report):

* scales: ONNX Runtime computes exactly as before (the same float scale); TensorRT sizes
  the output floor(in*scale) and resizes by out/in, which departs wherever in*scale is
  not whole.
* factor: only whole spatial factors (>= 1) are expressible; at those out/in == scale,
  so ONNX Runtime and TensorRT equal the original at every input size.
* sizes: equal to the original where in*scale is whole (out/in == scale); elsewhere
  the original's scale and out/in differ, and so do the outputs. TensorRT equals ONNX
  Runtime (both use out/in).

Requires: plans from :mod:`.plan` (``plan.value`` the full constant scales). Ensures: the
gate refuses (a :class:`~graphsurgeon_tools.refusal.Refusal` with its code) every site a
layout cannot express exactly at the original factor; the rewrite keeps the node order
topological and removes the freed constants in one cleanup. Does NOT: check the model or
refresh shapes (the pass does).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.checker import inferred_copy, static_shape, value_info_map
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.passes.make_dynamic_scale.options import LAYOUTS
from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan, spatial_suffix
from graphsurgeon_tools.passes.make_dynamic_scale.result import NewInput
from graphsurgeon_tools.passes.make_dynamic_scale.runtime import replace_constants, runtime_arithmetic
from graphsurgeon_tools.refusal import Fix, Refusal
from graphsurgeon_tools.resize.scales import ort_output_length
from graphsurgeon_tools.resize.shape_flow import ShapeFlow

__all__ = [
    "INTEGER_LAYOUTS",
    "LAYOUTS",
    "PendingSizes",
    "alternatives",
    "arithmetic",
    "axis_names",
    "gate",
    "pending_sizes",
    "rewrite_integer",
    "sizes_feeds",
    "spatial_count",
]

INTEGER_LAYOUTS = ("factor", "sizes")
_INT64_MAX = 2**63 - 1


def _whole(value: float) -> bool:
    return math.isfinite(value) and float(value).is_integer()


def axis_names(count: int) -> str:
    """``(l)``, ``(h, w)``, ``(d, h, w)``: what each entry of a k-entry spatial input is."""
    names = {1: ("l",), 2: ("h", "w"), 3: ("d", "h", "w")}.get(count) or tuple(f"s{i}" for i in range(count))
    return "(" + ", ".join(names) + ")"


def spatial_count(plan: Plan) -> int:
    """How many spatial axes the plan's site resizes (its scales' suffix past N, C); 0 when none."""
    start = spatial_suffix(plan.site, len(plan.value))
    return 0 if start is None else len(plan.value) - start


_SCALES_LAYOUT = Fix("make_dynamic_scale", (("layout", "scales"),))


def _refusal(plan: Plan, layout: str, opset: int) -> Optional[Refusal]:
    site = plan.site
    if not site.in_main_graph:
        return Refusal(
            "layout-in-body", f"inside {site.scope}: layout={layout!r} rewrites main-graph sites only", _SCALES_LAYOUT
        )
    if site.op_type != "Resize" or site.op_version < 11:
        return Refusal(
            "layout-needs-resize-11",
            f"layout={layout!r} needs a Resize-11 or later (a sizes input); "
            f'this is {site.op_type}-{site.op_version} at opset {opset}: use layout="scales" or raise '
            "the opset",
            _SCALES_LAYOUT,
        )
    if site.axes is not None:
        return Refusal(
            "layout-axes",
            f'axes={list(site.axes)}: layout={layout!r} writes full-rank sizes; use layout="scales"',
            _SCALES_LAYOUT,
        )
    if site.coordinate_transformation_mode == "tf_crop_and_resize":
        return Refusal(
            "layout-tf-crop-and-resize",
            "tf_crop_and_resize maps through roi, not through the output size",
            _SCALES_LAYOUT,
        )
    start = spatial_suffix(site, len(plan.value))
    if start is None or start >= len(plan.value):
        return Refusal(
            "layout-no-spatial-axes",
            f"scales {list(plan.value)} resize no spatial axis (axis >= 2) as a suffix of the vector",
            _SCALES_LAYOUT,
        )
    if any(v != 1.0 for v in plan.value[:start]):
        return Refusal(
            "layout-non-spatial",
            f"scales {list(plan.value)} change a non-spatial axis (N or C); the "
            f"{layout} input holds the spatial axes {axis_names(len(plan.value) - start)} only",
            _SCALES_LAYOUT,
        )
    spatial = plan.value[start:]
    if layout == "factor":
        bad = [v for v in spatial if not _whole(v) or v < 1]
        if bad:
            return Refusal(
                "not-whole-factor",
                f'scale {bad[0]:g} is not a whole factor >= 1; layout="sizes" or "scales" can express it',
                Fix("make_dynamic_scale", (("layout", "sizes"),)),
            )
    return None


def gate(plans: list[Plan], layout: str, opset: int) -> tuple[list[Plan], list[Skip]]:
    """Keep the plans ``layout`` can express exactly at the original factor; skip the others.

    Sets ``plan.prefix`` (the constant non-spatial part) and ``plan.fed`` (the factor or the
    output size to feed for the original behaviour) on the kept plans.
    """
    if layout == "scales":
        return plans, []
    kept: list[Plan] = []
    skipped: list[Skip] = []
    for plan in plans:
        refusal = _refusal(plan, layout, opset)
        if refusal is not None:
            skipped.append(Skip(plan.label, plan.site.op_type, refusal))
            continue
        start = len(plan.value) - spatial_count(plan)
        plan.prefix = plan.value[:start]
        if layout == "factor":
            plan.fed = tuple(float(int(v)) for v in plan.value[start:])
        elif plan.runtime is not None:  # the output size the constants give at the (static) input size
            known = plan.runtime.value
            plan.fed = tuple(float(v) for v in known[start:]) if known is not None else ()
        else:
            shape = plan.site.input_shape
            dims = shape[start:] if shape is not None and len(shape) == len(plan.value) else (None,)
            # symbolic dims: the output size to feed depends on the input size (see sizes_feeds)
            plan.fed = (
                tuple(float(ort_output_length(d, s)) for d, s in zip(dims, plan.value[start:]))
                if all(isinstance(d, int) for d in dims)
                else ()
            )
        kept.append(plan)
    return kept, skipped


def arithmetic(plan: Plan, layout: str) -> dict[str, Any]:
    """Where this layout equals the original at this site, in ONNX Runtime and in TensorRT."""
    ort, trt = runtime_arithmetic(plan, layout) if plan.runtime is not None else _static_arithmetic(plan, layout)
    return {
        "node": plan.label,
        "layout": layout,
        "original_scales": [float(v) for v in plan.value],
        "onnxruntime": ort,
        "tensorrt": trt,
    }


def _static_arithmetic(plan: Plan, layout: str) -> tuple[str, str]:
    """(ONNX Runtime, TensorRT) verdicts for a site with constant scales."""
    site = plan.site
    count = spatial_count(plan) or len(plan.value)
    spatial = plan.value[-count:]
    shape = site.input_shape
    dims = shape[-count:] if shape is not None and len(shape) == len(plan.value) else (None,) * count
    known = all(isinstance(d, int) for d in dims)
    uneven = [f"{d}*{s:g}" for d, s in zip(dims, spatial) if isinstance(d, int) and not _whole(d * s)]
    whole_scales = all(_whole(s) for s in spatial)
    if layout == "scales":
        ort = "equal: the same float scales, the same arithmetic"
        if whole_scales:
            trt = "equal: every scale is whole, so out/in == scale at every input size"
        elif known and not uneven:
            trt = (
                f"equal at the original input size ({'x'.join(map(str, dims))}); TensorRT resizes by out/in, "
                "which departs from the scale wherever in*scale is not whole"
            )
        elif uneven:
            trt = f"differs: in*scale is not whole ({', '.join(uneven)}); TensorRT resizes by out/in"
        else:
            trt = "equal only where in*scale is whole (TensorRT resizes by out/in)"
        # the arithmetic is moot as a graph input: TensorRT refuses float shape inputs
        trt += "; and TensorRT refuses a float32 scales graph input (lint rule trt-shape-input-integer)"
    elif layout == "factor":
        ort = "equal: a whole factor f gives out = in*f, and out/in == f at every input size"
        trt = "equal to ONNX Runtime (both resize by out/in)"
    else:
        if whole_scales:
            ort = "equal: whole scales, so out/in == scale"
        elif known and not uneven:
            ort = f"equal at the original input size ({'x'.join(map(str, dims))}): in*scale is whole there"
        elif uneven:
            ort = f"differs: in*scale is not whole ({', '.join(uneven)}), out/in != scale"
        else:
            ort = "equal only where in*scale is whole (elsewhere out/in != scale)"
        trt = "equal to ONNX Runtime (both resize by out/in)"
    return ort, trt


def alternatives(plan: Plan) -> dict[str, dict[str, Any]]:
    """Every layout at this site: whether it can express the original factor, and where it equals it."""
    out: dict[str, dict[str, Any]] = {}
    for layout in LAYOUTS:
        refusal = None if layout == "scales" else _refusal(plan, layout, plan.site.opset)
        if refusal is not None:
            out[layout] = {"expressible": False, "reason": refusal.text, "code": refusal.code}
        else:
            facts = arithmetic(plan, layout)
            out[layout] = {"expressible": True, "onnxruntime": facts["onnxruntime"], "tensorrt": facts["tensorrt"]}
    return out


class _Consts:
    """Int64 constants shared by every expansion in one rewrite (one node each)."""

    def __init__(self, taken: set[str], nodes: list[NodeProto]) -> None:
        self.taken, self.nodes, self.made = taken, nodes, {}

    def get(self, label: str, values: list[int], dtype: int = TensorProto.INT64) -> str:
        key = (label, tuple(values), dtype)
        if key not in self.made:
            name = core_graph.unique_name(self.taken, f"onnxtool_{label}")
            self.taken.add(name)
            self.nodes.append(
                helper.make_node(
                    "Constant", [], [name], name=name, value=helper.make_tensor(name, dtype, [len(values)], values)
                )
            )
            self.made[key] = name
        return self.made[key]


def _final_names(base: str, count: int) -> list[str]:
    return [base] if count == 1 else [f"{base}_{i}" for i in range(count)]


def _site_node(graph: Any, site: Any, by_output: dict[str, NodeProto]) -> NodeProto:
    """The node of a main-graph ``site``: at ``site.node_index`` (one lookup), else from ``by_output``,
    filled with every node on the first miss."""
    nodes = graph.node
    if 0 <= site.node_index < len(nodes):
        node = nodes[site.node_index]
        if node.output and node.output[0] == site.output_name:
            return node
    if not by_output:
        by_output.update((n.output[0], n) for n in nodes if n.output)
    return by_output[site.output_name]


def rewrite_integer(
    model: ModelProto, plans: list[Plan], *, layout: str, shared: bool, input_name: Optional[str]
) -> tuple[list[NewInput], list[str], list[str]]:
    """Rewire every planned site to an int64 graph input with one entry per spatial axis (k of them).

    Returns (new inputs, removed, notes)."""
    graph = model.graph
    taken = core_graph.NameSet(graph)  # the graph's names, searched in its bytes before they are gathered
    old = [p.site.scales_tensor for p in plans if p.site.scales_tensor]
    old += [p.site.sizes_tensor for p in plans if p.site.sizes_tensor]
    count = 1 if shared else len(plans)
    stem = f"__onnxtool_{layout}_"
    if taken.none_start_with(stem):  # one search of the graph's bytes: each name is its own unique_name
        placeholders = [f"{stem}{i}" for i in range(count)]
    else:
        placeholders = [core_graph.unique_name(taken, f"{stem}{i}") for i in range(count)]
    taken.update(placeholders)
    for index, plan in enumerate(plans):
        plan.input_name = placeholders[0 if shared else index]
    by_output: dict[str, NodeProto] = {}  # output -> node, built only if a site's index is stale
    head: list[NodeProto] = []
    consts = _Consts(taken, head)
    before: dict[str, list[NodeProto]] = {}
    for plan in plans:
        if plan.runtime is not None and layout == "factor":  # run-time sizes: the Muls read the input, cast
            inserts, freed = replace_constants(model, plan, plan.input_name, taken, integer=True)
            for output, nodes in inserts.items():
                before.setdefault(output, []).extend(nodes)
            old += freed
            continue
        node = _site_node(graph, plan.site, by_output)
        x = node.input[0]
        stem = f"{plan.label}_{layout}".replace(" ", "_").replace("#", "n")

        def fresh(suffix: str) -> str:
            name = core_graph.unique_name(taken, f"{stem}_{suffix}")
            taken.add(name)
            return name

        k = spatial_count(plan)
        shape, lead, size = fresh("shape"), fresh("lead"), fresh("out")
        minus = consts.get(f"minus{k}", [-k])
        extra = [
            helper.make_node("Shape", [x], [shape], name=shape),
            helper.make_node("Slice", [shape, consts.get("zero", [0]), minus], [lead], name=lead),
        ]
        hw = plan.input_name
        if layout == "factor":
            spatial, hw = fresh("in_spatial"), fresh("out_spatial")
            extra.append(
                helper.make_node("Slice", [shape, minus, consts.get("end", [_INT64_MAX])], [spatial], name=spatial)
            )
            extra.append(helper.make_node("Mul", [spatial, plan.input_name], [hw], name=hw))
        extra.append(helper.make_node("Concat", [lead, hw], [size], name=size, axis=0))
        before.setdefault(plan.site.output_name, []).extend(extra)
        inputs = list(node.input) + [""] * 4
        roi = inputs[1]
        if plan.site.op_version in (11, 12):  # roi and scales are required inputs there: empty tensors
            roi = roi or consts.get("empty_roi", [], TensorProto.FLOAT)
            scales = consts.get("empty_scales", [], TensorProto.FLOAT)
        else:
            scales = ""
        del node.input[:]
        node.input.extend([x, roi, scales, size])
    rebuilt: list[NodeProto] = list(head)
    for node in graph.node:
        if node.output and node.output[0] in before:
            rebuilt.extend(before[node.output[0]])
        rebuilt.append(node)
    del graph.node[:]
    graph.node.extend(rebuilt)
    removed = core_graph.remove_unused(graph, old)

    taken = core_graph.NameSet(graph)  # every name now, as all_tensor_names gives them
    base = input_name or layout
    names = []
    for wanted in _final_names(base, count):
        if wanted in taken:
            if input_name is not None:
                raise UsageError(f"input_name={wanted!r} is already a tensor name in the model")
            wanted = core_graph.unique_name(taken, wanted)
        taken.add(wanted)
        names.append(wanted)
    renames = dict(zip(placeholders, names))
    for node in graph.node:
        if any(name in renames for name in node.input):
            replaced = [renames.get(name, name) for name in node.input]
            del node.input[:]
            node.input.extend(replaced)
    for plan in plans:
        plan.input_name = renames[plan.input_name]
    owners: dict[str, Plan] = {}
    for plan in plans:
        owners.setdefault(plan.input_name, plan)
    new_inputs = []
    for name in names:
        k = spatial_count(owners[name])
        value = [int(v) for v in owners[name].fed]  # [] when it depends on the input size
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.INT64, [k]))
        new_inputs.append(NewInput(name, "int64", [k], None, value))
    counts = sorted({spatial_count(p) for p in plans})
    spelled = " or ".join(axis_names(c) for c in counts)
    what = f"the whole factor per spatial axis {spelled}" if layout == "factor" else f"the output size {spelled}"
    notes = [
        f"layout={layout!r}: int64 input(s) {', '.join(names)} hold {what}; TensorRT needs them in its "
        "optimization profile as shape VALUES"
    ]
    return new_inputs, removed, notes


class PendingSizes(NamedTuple):
    """A sizes input whose value to feed depends on the input size (symbolic dims)."""

    name: str  # the sizes input
    x: str  # the site's X
    scales: tuple[float, ...]  # spatial scales, one per axis (ORT's floor rule on X's dims)
    sizes: str = ""  # run-time sizes: the original's sizes tensor, whose value is computed instead
    start: int = 0  # ... and where its spatial entries start


def pending_sizes(plans: list[Plan], new_inputs: list[NewInput]) -> list[PendingSizes]:
    """The sizes inputs whose value to feed depends on the input size (symbolic dims)."""
    unknown = {i.name for i in new_inputs if not i.value}
    seen: dict[str, PendingSizes] = {}
    for plan in plans:
        if plan.input_name in unknown and plan.input_name not in seen:
            scales = tuple(float(v) for v in plan.value[len(plan.value) - spatial_count(plan) :])
            runtime = plan.runtime
            seen[plan.input_name] = PendingSizes(
                plan.input_name,
                plan.site.input_name,
                scales,
                runtime.tensor if runtime else "",
                runtime.start if runtime else 0,
            )
    return list(seen.values())


def sizes_feeds(
    original: ModelProto,
    pending: list[PendingSizes],
    input_shapes: dict[str, list[int]],
    input_values: Optional[dict[str, np.ndarray]] = None,
) -> dict[str, np.ndarray]:
    """The original output size at each pending site for concrete input shapes (ORT's floor rule).

    The site's input dims come from ONNX shape inference on the original model with the graph
    inputs fixed to ``input_shapes``; a site whose dims stay unknown is left out (the check
    then reports the missing feed). ``input_values``: values of small graph inputs of ``original``
    that run-time sizes read (a float factor input laid out again: its recorded value).
    """

    if not pending:
        return {}
    pending = [PendingSizes(*entry) for entry in pending]  # plain (name, x, scales) tuples too
    inferred = inferred_copy(original, input_shapes)
    if inferred is None:
        return {}
    infos = value_info_map(inferred.graph)
    feeds: dict[str, np.ndarray] = {}
    runtime = [p for p in pending if p.sizes]
    if runtime:  # the original's own arithmetic at these shapes (resize.shape_flow computes small values)
        flow = ShapeFlow(original, input_shapes=input_shapes, input_values=input_values, probe_dims=None)
        for entry in runtime:
            known = flow.base.get(entry.sizes)
            if known is not None and known.value is not None:
                feeds[entry.name] = np.asarray(known.value, dtype=np.int64).reshape(-1)[entry.start :]
    for name, x, scales, sizes, _ in pending:
        if sizes:
            continue
        count = len(scales)
        dims = static_shape(infos.get(x)) or ()
        if len(dims) < count or not all(isinstance(d, int) for d in dims[-count:]):
            continue
        feeds[name] = np.array([ort_output_length(d, s) for d, s in zip(dims[-count:], scales)], dtype=np.int64)
    return feeds
