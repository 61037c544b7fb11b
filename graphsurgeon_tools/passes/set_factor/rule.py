"""set-factor's rule: which sites read a dynamic factor (pattern), what each is baked at or why
not (check), and the bake itself (rewrite)::

    Resize(X, roi, scales)                        scales: graph input float[rank]     kind "scales"
    Resize(X, roi, Concat(c, scales))             scales: graph input float[k]        kind "factor"
    Resize(X, .., .., Concat(lead, Shape*f))      factor: graph input int64[k]        kind "factor"
    Resize(X, .., .., Concat(lead, sizes))        sizes:  graph input int64[k]        kind "sizes"
    DynamicTRTResize(X, scales | sizes | Shape-chain of scales | size_tensor input)
        -> the same node reading a float32 constant of scales (one per axis of X)

A *site* is a Resize, Upsample or DynamicTRTResize node of the main graph (:func:`find_sites`); it
is *dynamic* when a graph input (not an initializer) reaches one of its scales/sizes slots by value
(a walk upstream that stops at Shape/Size: reading a tensor's shape is no value source). The
factor a site is baked at (:func:`plan_sites`) is, in this order: the one named for it (by node,
output or the dynamic input it reads), the one for every site (``every``), or the value
make-dynamic-scale or swap-plugin recorded for its input (``onnxtool.original_values``).
:func:`bake` writes the plans: each site reads its constant; the chains that computed the old
slot values (Concat, Shape * factor, the size-tensor arithmetic) go once nothing reads them, and
so does a dynamic graph input nothing reads any more (with its ``onnxtool.original_values`` entry).

Requires: a ModelProto whose graph inputs have declared types. Ensures: each plan carries the
full scales vector (float32 values, one per axis of X) the site is baked at; a refused site is a
Skip with a Refusal code (``no-recorded-value``, ``factor-arity``, ``factor-not-whole``,
``shared-input-factors-differ``, ``no-dynamic-input``, ``rank-unknown``); after :func:`bake` each
planned site reads a float32 constant and no graph input is removed that anything still reads.
Does NOT look into control-flow bodies or functions (their sites are not candidates), does NOT
change the model before :func:`bake`, and does NOT fold anything else.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import ModelProto, numpy_helper

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.checker import shape_inference, static_shape, value_info_map
from graphsurgeon_tools.core.opsets import default_opset
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.refusal import Refusal
from graphsurgeon_tools.resize.original_values import record_original_values
from graphsurgeon_tools.resize.semantics import op_version

__all__ = ["Factor", "Plan", "SiteNode", "bake", "find_sites", "parse_factor", "plan_sites"]

#: A factor as the user gives it: one number for every spatial axis, one per spatial axis, or
#: one per axis of X (the full scales vector).
Factor = Union[float, int, Sequence[float]]

PLUGIN_OP = "DynamicTRTResize"
#: TensorRT's shape-input marker: the baked input is a float constant, not a shape input.
_SHAPE_INPUT_ATTRIBUTE = "tensorrt_plugin_shape_input_indices"
_FLOATS = ("float16", "float32", "float64", "bfloat16")


@dataclass(frozen=True)
class SiteNode:
    """A Resize/Upsample/DynamicTRTResize node of the main graph and what reaches its factor slots."""

    node: str
    index: int
    op_type: str
    output: str
    x: str
    rank: Optional[int]
    slot: int  # where the constant scales go
    slots: tuple[int, ...]  # every scales/sizes slot it reads now (cleared but ``slot``)
    inputs: tuple[str, ...]  # the dynamic graph inputs behind those slots

    def names(self) -> tuple[str, ...]:
        return (self.node, self.output, *self.inputs)


@dataclass(frozen=True)
class Plan:
    """A site to bake: its constant scales, and the feed that makes the input model compute them."""

    site: SiteNode
    factor: tuple[float, ...]  # spatial factors, one per spatial axis
    scales: tuple[float, ...]  # the full scales vector written into the site
    source: str  # "named" | "all" | "original"
    kinds: dict[str, str]  # dynamic input -> scales | factor | sizes | size-tensor


def parse_factor(value: Factor, what: str) -> tuple[float, ...]:
    """A factor as a tuple of positive finite floats; UsageError (exit 2) for anything else."""
    values = (value,) if isinstance(value, (int, float)) else tuple(value)
    try:
        floats = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise UsageError(f"{what}: the factor must be numbers, got {value!r}") from None
    if not floats or any(not math.isfinite(v) or v <= 0 for v in floats):
        raise UsageError(f"{what}: the factor must be one or more positive finite numbers, got {value!r}")
    return floats


def _slots(op_type: str, version: int, arity: int) -> tuple[int, ...]:
    if op_type == PLUGIN_OP:
        return (1,)
    if op_type == "Upsample":
        return (1,) if version >= 9 else ()
    if version <= 10:
        return (1,)
    return tuple(s for s in (2, 3) if s < arity)


def _ranks(model: ModelProto) -> dict[str, Optional[int]]:
    """Tensor name -> rank where ONNX shape inference knows it (a weightless copy: cheap)."""
    try:
        inferred = shape_inference(model, data_prop=False)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        inferred = model
    ranks = {}
    for name, info in value_info_map(inferred.graph).items():
        shape = static_shape(info)
        ranks[name] = len(shape) if shape is not None else None
    return ranks


def find_sites(model: ModelProto) -> list[SiteNode]:
    """Every Resize/Upsample/DynamicTRTResize node of the main graph (dynamic or not)."""
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    dynamic = {i.name for i in graph.input if i.name not in initializers}
    producers = core_graph.producers(graph)
    opset = default_opset(model)
    ranks: Optional[dict[str, Optional[int]]] = None
    sites = []
    for index, node in enumerate(graph.node):
        if node.op_type not in ("Resize", "Upsample", PLUGIN_OP) or not node.input:
            continue
        version = 0 if node.op_type == PLUGIN_OP else op_version(node.op_type, opset)
        slots = _slots(node.op_type, version, len(node.input))
        inputs = tuple(
            sorted(
                core_graph.upstream_sources(graph, [node.input[s] for s in slots], producers, dynamic - {node.input[0]})
            )
        )
        rank = None
        if inputs:
            if ranks is None:
                ranks = _ranks(model)
            rank = ranks.get(node.input[0])
        slot = slots[0] if slots else 1
        sites.append(
            SiteNode(
                node.name,
                index,
                node.op_type,
                node.output[0] if node.output else "",
                node.input[0],
                rank,
                slot,
                slots,
                inputs,
            )
        )
    return sites


def input_kind(model: ModelProto, name: str, rank: Optional[int]) -> str:
    """What a dynamic input holds: scales (float, one per axis), factor (per spatial axis, float,
    or int64 multiplying a shape), sizes (int64 output sizes) or size-tensor (its shape is the size)."""
    info = next(i for i in model.graph.input if i.name == name)
    shape = static_shape(info) or ()
    if len(shape) >= 2:
        return "size-tensor"
    elem = info.type.tensor_type.elem_type
    if dtypes.is_known(elem) and dtypes.dtype_name(elem) in _FLOATS:
        length = shape[0] if shape and isinstance(shape[0], int) else None
        return "scales" if rank is not None and length == rank else "factor"
    readers = core_graph.consumers(model.graph).get(name, [])
    return "factor" if any(model.graph.node[i].op_type == "Mul" for i in readers) else "sizes"


def _spatial(rank: int) -> int:
    return rank - 2 if rank >= 3 else rank


def _full_scales(factor: tuple[float, ...], rank: int) -> Optional[tuple[float, ...]]:
    k = _spatial(rank)
    if len(factor) == rank:
        return factor
    if len(factor) == 1:
        factor = factor * k
    if len(factor) != k:
        return None
    return (1.0,) * (rank - k) + factor


def _recorded(recorded: Mapping[str, Any], name: str, kind: str, rank: int) -> Optional[tuple[float, ...]]:
    value = recorded.get(name)
    if not isinstance(value, list) or not value or kind in ("sizes", "size-tensor"):
        return None
    try:
        return tuple(float(v) for v in value)
    except (TypeError, ValueError):
        return None


def _skip(site: SiteNode, code: str, text: str) -> Skip:
    return Skip(site.node, site.op_type, Refusal(code, text))


def _matches(site: SiteNode, pattern: str) -> bool:
    return any(name and fnmatch.fnmatchcase(name, pattern) for name in site.names())


def plan_sites(
    model: ModelProto,
    sites: Sequence[SiteNode],
    named: Mapping[str, Optional[Factor]],
    every: Optional[Factor],
    original: bool,
    recorded: Mapping[str, Any],
) -> tuple[list[Plan], list[Skip]]:
    """The plans and refusals for ``named`` sites (pattern -> factor, None: the recorded one),
    then, with ``every`` or ``original``, every other dynamic site."""
    wanted: dict[int, tuple[Optional[tuple[float, ...]], str]] = {}
    for pattern, value in named.items():
        hits = [s for s in sites if _matches(s, pattern)]
        if not hits:
            shown = ", ".join(repr(s.node or s.output) for s in sites if s.inputs)[:300] or "none"
            raise UsageError(
                f"site {pattern!r} matches no Resize/Upsample/DynamicTRTResize node or dynamic input "
                f"(dynamic sites: {shown})"
            )
        parsed = parse_factor(value, f"site {pattern!r}") if value is not None else None
        for site in hits:
            wanted[site.index] = (parsed, "named" if parsed is not None else "original")
    if every is not None or original:
        default = (parse_factor(every, "every="), "all") if every is not None else (None, "original")
        for site in sites:
            if site.inputs and site.index not in wanted:
                wanted[site.index] = default

    plans: list[Plan] = []
    skipped: list[Skip] = []
    fed: dict[str, tuple[float, ...]] = {}  # dynamic input -> the spatial factor its sites are baked at
    for site in sites:
        if site.index not in wanted:
            continue
        value, source = wanted[site.index]
        if not site.inputs:
            skipped.append(_skip(site, "no-dynamic-input", "its scales/sizes read no graph input: nothing to bake"))
            continue
        if not site.rank:  # unknown (or a scalar X, which no Resize takes)
            skipped.append(
                _skip(
                    site,
                    "rank-unknown",
                    f"the rank of its input {site.x!r} is unknown, so the factor cannot be laid out per axis",
                )
            )
            continue
        kinds = {name: input_kind(model, name, site.rank) for name in site.inputs}
        if value is None:
            found = [_recorded(recorded, name, kinds[name], site.rank) for name in site.inputs]
            if len(found) != 1 or found[0] is None:
                skipped.append(
                    _skip(
                        site,
                        "no-recorded-value",
                        f"no original value is recorded for {', '.join(map(repr, site.inputs))} (onnxtool.original_values)"
                        "; give the factor with sites= or every=",
                    )
                )
                continue
            value = found[0]
        scales = _full_scales(value, site.rank)
        if scales is None:
            k = _spatial(site.rank)
            skipped.append(
                _skip(
                    site,
                    "factor-arity",
                    f"factor {list(value)} has {len(value)} entries; its input "
                    f"{site.x!r} (rank {site.rank}) takes 1, {k} (one per spatial axis) or {site.rank}",
                )
            )
            continue
        spatial = scales[len(scales) - _spatial(site.rank) :]
        # int64 factor/sizes and a size tensor's shape hold whole numbers: floor(in * f) only equals
        # the baked scales' output and coordinates when f is whole
        integer = [name for name, kind in kinds.items() if kind == "size-tensor" or not _is_float_input(model, name)]
        if integer and any(v != int(v) for v in spatial):
            skipped.append(
                _skip(
                    site,
                    "factor-not-whole",
                    f"{', '.join(map(repr, integer))} holds whole numbers "
                    f"({'/'.join(sorted({kinds[n] for n in integer}))}); factor {list(spatial)} is not "
                    "whole, so no value of it computes these scales",
                )
            )
            continue
        clash = [name for name in site.inputs if name in fed and fed[name] != scales]
        if clash:
            skipped.append(
                _skip(
                    site,
                    "shared-input-factors-differ",
                    f"{clash[0]!r} also feeds a site baked at {list(fed[clash[0]])}: one input cannot be "
                    f"fed both {list(fed[clash[0]])} and {list(scales)} to check the result",
                )
            )
            continue
        for name in site.inputs:
            fed[name] = scales
        plans.append(Plan(site, tuple(spatial), tuple(scales), source, kinds))
    return plans, skipped


def _is_float_input(model: ModelProto, name: str) -> bool:
    info = next(i for i in model.graph.input if i.name == name)
    elem = info.type.tensor_type.elem_type
    return dtypes.is_known(elem) and dtypes.dtype_name(elem) in _FLOATS


def bake(model: ModelProto, plans: list[Plan]) -> tuple[list[str], list[str]]:
    """Write each plan's constant scales into its site (in place); returns (the graph inputs removed,
    the tensors whose producers or initializers went with them)."""
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
        del inputs[plan.site.slot + 1 :]  # Resize-11+: the sizes slot goes (scales and sizes are exclusive)
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
