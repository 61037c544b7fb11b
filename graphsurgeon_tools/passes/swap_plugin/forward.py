"""swap-plugin forward, the ``resize`` handler: Resize/Upsample -> DynamicTRTResize.

::

    Resize(X, roi, scales)        -> DynamicTRTResize(X, scales')            signature "scales"
    Resize(X, roi, scales)        -> DynamicTRTResize(X, size_tensor)        signature "size-tensor"
    Resize(X, roi, "", sizes)     -> DynamicTRTResize(X, size_tensor(sizes))
    Resize-18(X, roi, s, axes=A)  -> DynamicTRTResize(X, Gather(Concat(ones, s), index(A)))   (sizes: Shape(X))

``scales'`` is a graph input made by make-dynamic-scale's own rewrite (:mod:`.to_dynamic`,
:func:`~graphsurgeon_tools.passes.make_dynamic_scale.dynamize_sites`) on the sites found
here (no second discovery, no second checker run), or the constant itself with
``keep_constant=True``.

Sites outside the main graph (If/Loop/Scan bodies, model-local functions) are matched and
refused with the reason: a plugin node inside a body is not something TensorRT's parser
or the checks here run.

Every refusal is decided before anything changes (site_facts.py: the rank from X or the
scales/sizes length), so a run that swaps nothing adds no input. Each swapped site reports its
factor freedom (``free``, ``pinned_by``); run-time sizes read from data shapes say where from.

A selected node whose attributes are out of range is refused before anything changes: they
are in ``ResizeSite.problems`` (``resize.semantics.attribute_problems``), the one nonsense gate.

Requires: the pass's working copy (changed in place) that passed the structural checker.
Ensures: every matched site is swapped or skipped with its reason; the constants the swap
no longer reads are removed in one cleanup step. Does NOT run any checker.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto

from graphsurgeon_tools.core import checker, opsets, records
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.errors import RefusedRequestError
from graphsurgeon_tools.passes.base import Skip, Timer, select
from graphsurgeon_tools.passes.swap_plugin import qdq_forms, refusals, shape_input, size_tensor
from graphsurgeon_tools.passes.swap_plugin.edit import Builder, elem_types_and_shapes, set_value_info
from graphsurgeon_tools.passes.swap_plugin.result import SwappedNode, SwapPluginResult
from graphsurgeon_tools.passes.swap_plugin.site_facts import (
    SourceNotes,
    expand_axes,
    freedom_of,
    full_rank_view,
    site_rank,
)
from graphsurgeon_tools.passes.swap_plugin.to_dynamic import make_dynamic, runtime_sizes_sites
from graphsurgeon_tools.plugins import PluginSpec
from graphsurgeon_tools.resize import sites as resize_sites
from graphsurgeon_tools.resize.original_values import record_original_values
from graphsurgeon_tools.resize.qdq import qdq_sites
from graphsurgeon_tools.resize.sanity import raise_if_nonsense
from graphsurgeon_tools.resize.semantics import is_legacy
from graphsurgeon_tools.resize.site_inputs import ValueInfoIndex
from graphsurgeon_tools.resize.sites import ResizeSite, ValueSource

__all__ = ["FORM_CODES", "forward_resize", "raise_if_form_refused"]

#: Refusals that depend on the signature asked for (another form, or make_dynamic_scale, may take the
#: site): a request whose every matched site gets one of these failed, it did not find "nothing to swap".
FORM_CODES = frozenset(
    {
        "sizes-driven",
        "static-shape-source",
        "sizes-not-exact",
        "sizes-not-hw",
        "unknown-rank",
        "runtime-sizes",
        "size-tensor-opset",
        "size-tensor-rank",
        "size-tensor-leading-axis",
        "size-tensor-inexact",
        "layout-needs-resize-11",
        "layout-axes",
        "layout-tf-crop-and-resize",
        "layout-no-spatial-axes",
        "layout-non-spatial",
        "not-whole-factor",
    }
)

_DYNAMIC = (ValueSource.GRAPH_INPUT, ValueSource.RUNTIME)


def _label(site: ResizeSite) -> str:
    return site.node_name or site.output_name


def _choose(
    sites: list[ResizeSite],
    spec: PluginSpec,
    signature: str,
    keep_constant: bool,
    result: SwapPluginResult,
    label: str,
    ranks: dict[str, Optional[int]],
    sources: SourceNotes,
    types: dict[str, Any],
    op_type: str,
    integer: Optional[dict[str, Any]] = None,
) -> list[ResizeSite]:
    """The rule's check for every selected site: the chosen ones, skips (with reasons) for the rest.
    Every refusal is decided here, before any input is added, so a skipped site leaves no trace."""
    chosen = []
    for site in sites:
        if not refusals.name_matches(spec, site.node_name):
            continue
        raise_if_nonsense(site, label)
        rank = ranks[site.output_name]
        view = full_rank_view(site, rank)  # Resize-18 axes: judged as the full vector the plugin reads
        refusal = (
            # the spec's [match.attributes]: none in the built-in spec, so no semantics dict per site
            (refusals.attribute_conditions_hold(spec, refusals.site_semantics(site)) if spec.match.attributes else None)
            or refusals.dtype_refusal(site, types, op_type)
            or (
                qdq_forms.integer_refusal(integer[site.output_name], types, op_type, site.mode)
                if integer and site.output_name in integer
                else None
            )
            or refusals.rank_refusal(site, rank, signature)
            or refusals.resize_refusal(view, signature)
            or refusals.sizes_or_scales_refusal(site, signature, keep_constant, sources)
        )
        if refusal:
            result.skipped.append(Skip(_label(site), site.op_type, refusal))
        else:
            chosen.append(site)
    return chosen


def raise_if_form_refused(signature: str, result: SwapPluginResult, qdq_form: str = "inside") -> None:
    """RefusedRequestError (exit 3) when nothing was swapped and a matched site was refused by the
    requested signature itself, with every site's reason: a refusal is never reported as success."""
    if result.rewritten:
        return
    # The integer QDQ form was asked for too: its refusals are refusals of the requested form.
    codes = FORM_CODES | (qdq_forms.FORM_CODES if qdq_form == "integer" else frozenset())
    refused = [s for s in result.skipped if s.code in codes]
    if not refused:
        return
    detail = "; ".join(f"{s.node}: {s.reason} [{s.code}]" for s in refused[:6])
    more = f" (and {len(refused) - 6} more)" if len(refused) > 6 else ""
    asked = f"signature={signature!r}" + (f", qdq_form={qdq_form!r}" if qdq_form != "inside" else "")
    raise RefusedRequestError(f"{asked} can swap none of the matched site(s): {detail}{more}", tuple(result.skipped))


def forward_resize(
    model: ModelProto,
    spec: PluginSpec,
    op_type: str,
    domain: str,
    signature: str,
    nodes: Optional[list[str]],
    keep_constant: bool,
    result: SwapPluginResult,
    label: str,
    size_input: Optional[str] = None,
    qdq_form: str = "inside",
    weightless: Optional[bytes] = None,
) -> None:
    """Swap the matching Resize/Upsample sites of ``model`` (in place) for plugin nodes.
    ``qdq_form="integer"``: full DQ -> Resize -> Q sites become one plugin node on the quantized
    tensors (:mod:`.qdq_forms`), refused up front where that cannot load or cannot be exact.
    ``weightless``: ``model``'s weightless bytes as the structural checker accepted them, when the caller has them
    (what inference reads; the site search reads them too)."""
    timer = Timer(result.timings)  # the pass's stages, as make-dynamic-scale names its own
    inferred = checker.inferred_copy(weightless or model)  # one shape inference for the sites and the types below
    value_infos = ValueInfoIndex(inferred.graph) if inferred is not None else None  # and one index of it for both
    found = [
        s
        for s in resize_sites.find_resize_sites(
            model, nested=True, inferred=inferred, weightless=weightless, inferred_infos=value_infos
        )
        if s.op_type in spec.match.op_types
    ]
    selected = select(found, nodes, lambda s: (s.node_name, s.output_name), what="/".join(spec.match.op_types))
    for site in selected:
        if not site.in_main_graph:
            raise_if_nonsense(site, label)
            result.skipped.append(Skip(_label(site), site.op_type, refusals.scope_refusal(site)))
    selected = [s for s in selected if s.in_main_graph]
    types = elem_types_and_shapes(model, inferred, value_infos)
    del inferred, value_infos
    ranks = {s.output_name: site_rank(s, types) for s in selected}
    sources = SourceNotes(model)
    integer = {}
    if qdq_form == "integer":
        integer = {name: q for name, q in qdq_sites(model).items() if q.full}
    chosen = _choose(selected, spec, signature, keep_constant, result, label, ranks, sources, types, op_type, integer)
    timer.lap("find")
    if not chosen:
        return
    freedom = freedom_of(model, chosen)  # on the model as it was given
    timer.lap("freedom")
    notes = {
        s.output_name: sources.notes(s)
        for s in chosen
        if s.scales_source == ValueSource.RUNTIME or s.sizes_source == ValueSource.RUNTIME
    }
    before = {s.output_name: s for s in chosen}
    if signature == shape_input.SIGNATURE:  # constant scales or sizes -> an int64 (h, w) input
        # run-time sizes too, where make-dynamic-scale rewrites them: round(dim * constant) (resize.runtime_sizes)
        to_dynamic = [
            s for s in chosen if s.has_constant_scales or (s.sizes is not None and s.sizes_source not in _DYNAMIC)
        ] + runtime_sizes_sites(model, chosen)
    else:
        to_dynamic = [
            s
            for s in chosen
            if not keep_constant
            and size_input is None
            and s.scales_source not in _DYNAMIC
            and (s.scales_source != ValueSource.ABSENT or signature == "scales")
        ]
    recorded = -1  # how many of result.new_inputs make-dynamic-scale's rewrite recorded (-1: it did not run)
    timer.lap("plan")
    if to_dynamic:
        inner: dict[str, float] = {}
        now = make_dynamic(
            model, to_dynamic, result, "sizes" if signature == shape_input.SIGNATURE else "scales", inner, weightless
        )
        timer.lap("rewrite")  # all of it, then its shape refresh moved to "shapes"
        result.timings["rewrite"] -= inner.get("shapes", 0.0)
        result.timings["shapes"] = result.timings.get("shapes", 0.0) + inner.get("shapes", 0.0)
        if now:  # it rewrote sites, and recorded their inputs' original values in the model
            recorded = len(result.new_inputs)
        refused = {s.output_name for s in to_dynamic} - set(now)  # its skip reason is in the result
        chosen = [now.get(s.output_name, s) for s in chosen if s.output_name not in refused]
    if signature == shape_input.SIGNATURE:
        chosen = shape_input.with_hw(model, chosen, types, result.skipped)

    builder = Builder(model)
    graph = model.graph
    index_of = _positions(graph, chosen)
    # what the plugin nodes no longer read, each name once (see _swap_site), for the one cleanup below
    replaced_inputs: dict[str, None] = {}
    for site in chosen:
        position = index_of[site.output_name]
        orig = before.get(site.output_name, site)
        if site is orig and site.output_name in notes:  # run-time sources: the shape source says more
            site = dataclasses.replace(site, notes=notes[site.output_name])
        swapped = _swap_site(
            model,
            builder,
            graph.node[position],
            position,
            site,
            spec,
            op_type,
            domain,
            signature,
            size_input,
            len(chosen),
            types,
            ranks[site.output_name],
            replaced_inputs,
            orig,
            result,
            scales_before=orig.scales if orig.has_constant_scales else None,
            decided=freedom.get(_label(orig)),
        )
        result.rewritten.append(swapped)
    builder.insert_all()
    folding = [integer[s.output_name] for s in chosen if s.output_name in integer]
    if folding:  # every one passed integer_refusal in _choose
        result.removed_nodes.extend(qdq_forms.fold_integer(model, folding, op_type))
        for site in folding:
            quantized = types.get(site.quantized_input)
            set_value_info(model, site.quantized_outputs[0], quantized.tensor_type.elem_type, ranks.get(site.output))
        folded = {s.resize for s in folding}
        result.rewritten[:] = [
            dataclasses.replace(
                r,
                notes=r.notes
                + (
                    'qdq_form="integer": one plugin node on the quantized tensors (DequantizeLinear and QuantizeLinear '
                    "removed); a TensorRT plugin must declare kINT8 with the tensor's scale",
                ),
            )
            if r.node in folded
            else r
            for r in result.rewritten
        ]
    if result.rewritten:
        opsets.ensure_opset_import(model, domain)
        result.removed_nodes.extend(core_graph.remove_unused(graph, list(replaced_inputs)))
        if len(result.new_inputs) != recorded:  # size tensors too: validate's "original" point
            # (the same entries again would write the same record: nothing changed the inputs since)
            record_original_values(model, result.new_inputs)
    timer.lap("swap")


def _positions(graph: Any, sites: list[ResizeSite]) -> dict[str, int]:
    """First output name -> node index, for finding each site's node: the index the site was found
    at where its node is still there (make-dynamic-scale's rewrite rarely moves nodes), else one
    map over every node."""
    nodes = graph.node
    count = len(nodes)
    found: dict[str, int] = {}
    for site in sites:
        index = site.node_index
        if not 0 <= index < count or nodes[index].output[:1] != [site.output_name]:
            return {node.output[0]: i for i, node in enumerate(nodes) if node.output}
        found[site.output_name] = index
    return found


def _swap_site(
    model: ModelProto,
    builder: Builder,
    node: NodeProto,
    position: int,
    site: ResizeSite,
    spec: PluginSpec,
    op_type: str,
    domain: str,
    signature: str,
    size_input: Optional[str],
    count: int,
    types: dict[str, Any],
    rank: Optional[int],
    replaced_inputs: dict[str, None],
    original: ResizeSite,
    result: SwapPluginResult,
    *,
    scales_before: Optional[tuple[float, ...]],
    decided: Any,
) -> SwappedNode:
    """Swap one chosen site (``_choose`` has refused everything that cannot be swapped).
    ``original``: the site as given (its constant scales/sizes, before make-dynamic);
    ``scales_before`` and ``decided`` (its Freedom, or None) are reported with it."""
    notes: list[str] = []
    extra: list[NodeProto] = []
    x_type = types.get(site.input_name)
    elem = x_type.tensor_type.elem_type if x_type is not None else TensorProto.FLOAT
    base = _label(site)
    scales_name = site.scales_tensor
    sizes_name = site.sizes_tensor
    if site.scales_source == ValueSource.ATTRIBUTE:
        # Upsample-7 with keep_constant: its attribute becomes an initializer the plugin can read
        scales_name = builder.initializer(f"{base}_scales", np.array(site.scales, dtype=np.float32))
    if site.axes is not None and rank is not None:
        # Resize-18 axes: the plugin takes one entry per axis, built in-graph from what the node reads
        if site.scales_source != ValueSource.ABSENT:
            scales_name = expand_axes(builder, extra, base, scales_name, rank, site.axes)
        elif sizes_name:
            sizes_name = expand_axes(builder, extra, base, sizes_name, rank, site.axes, x=site.input_name)
        notes.append(f"axes={list(site.axes)}: the plugin reads the {rank}-entry vector expanded in-graph")
    if signature == "scales":
        second = scales_name
    elif signature == shape_input.SIGNATURE:
        second = site.sizes_tensor  # what shape_input.with_hw found: (h, w), or the full-rank sizes (1-D, 3-D)
    else:
        assert rank is not None  # refused in _choose otherwise
        if size_input is not None:
            given = full_rank_view(original, rank)  # its full-rank scales/sizes, as the plugin reads them
            second = size_tensor.size_input(model, builder, given, size_input, count, rank, elem, result.new_inputs)
        elif site.scales_source != ValueSource.ABSENT:
            second = size_tensor.from_scales(builder, extra, base, site.input_name, scales_name, rank, elem)
            if (
                site.input_shape is None
                or any(not isinstance(d, int) for d in site.input_shape[-2:])
                or site.scales is None
            ):
                notes.append("size tensor from dynamic shapes/scales: equals Resize only where in*scale is whole")
        else:
            second = size_tensor.from_sizes(builder, extra, base, sizes_name, rank, elem)
            if site.sizes is None:
                notes.append("dynamic sizes: only their last two entries are used")
    if is_legacy(site.op_type, site.op_version) and site.mode == "nearest" and not site.has_constant_scales:
        notes.append(
            f"{site.op_type} nearest rounds up when downsampling; the plugin floors (same result for factors >= 1)"
        )
    fixed = {shape_input.SHAPE_INPUT_INDICES: [1]} if signature == shape_input.SIGNATURE else {}
    attrs, template = builder.plugin_attributes(spec, refusals.site_semantics(site), fixed)
    for name in node.input[1:]:
        if name and name != second:
            # once, at its last replacement: remove_unused pops candidates from the end, so it meets each name
            # first where a list of every replacement had it, and a repeat changes nothing (one roi, not 2,000)
            replaced_inputs.pop(name, None)
            replaced_inputs[name] = None
    # the node becomes what helper.make_node(op_type, inputs, outputs, name=, domain=) makes, in place:
    # the template's attributes (one copy in C), then the fields make_node sets
    name = node.name
    node.CopyFrom(template)
    node.op_type = op_type
    node.input.extend((site.input_name, second))
    node.output.append(site.output_name)
    if name:
        node.name = name
    node.domain = domain
    if extra:
        builder.pending.append((position, extra))
    builder.value_info(site.output_name, elem, rank)
    return records.build(  # SwappedNode(...), every field named in order: once per site
        SwappedNode,
        dict(
            node=base,
            op_type_before=site.op_type,
            op_type_after=op_type,
            domain_after=domain,
            signature=signature,
            inputs=(site.input_name, second),
            attributes=attrs,
            scales_before=scales_before,
            notes=tuple(notes) + tuple(site.notes),
            free=decided.free if decided is not None else None,
            pinned_by=decided.pinned_by.describe() if decided is not None and decided.pinned_by else None,
        ),
    )
