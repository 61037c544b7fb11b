"""make-dynamic-scale, step 2: planned sites read their scales from new graph inputs.

::

    Resize(X, roi, <constant scales>)       ->  Resize(X, roi, scales)
    Resize(X, roi, "", <constant sizes>)    ->  Resize(X, roi, scales)        (exact sizes only)
    Resize(X, roi, "", round(dim * c) ...)  ->  the same, c read from scales[j]  (:mod:`.runtime`)
    Upsample-7(X){scales=[..]}              ->  Upsample-9(X, scales), opset 9
    factor=True:  ... scales                ->  Concat(Constant(prefix), scales[h, w])

Sites in If/Loop/Scan bodies read the new main-graph input from the outer scope (ONNX
lets a body read any name of an enclosing graph); their helper nodes (factor Concat, roi
Constant) go into the body, before the site.

Requires: plans from :mod:`.plan` for sites of this very proto (``model`` is changed in
place). Ensures: each plan's ``input_name`` is its graph input; the constants the sites
no longer read are removed once, at the end (one cleanup step over all candidates, per
graph that held a rewritten site or encloses one, innermost first).
Linear in nodes + sites: node lookups by output name are built once; new nodes are
spliced in with one rebuild of the node list. Does NOT check anything and does NOT
refresh shapes (:mod:`.shapes`).

:func:`graphsurgeon_tools.resize.original_values.record_original_values` writes each new input's
original value into the model's ``metadata_props``, so ``validate`` can run a rewritten
model at its own original factors without the original at hand.
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper

from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan
from graphsurgeon_tools.passes.make_dynamic_scale.result import NewInput
from graphsurgeon_tools.passes.make_dynamic_scale.runtime import replace_constants

__all__ = ["check_input_name", "rewrite"]

#: Names this rewrite generates (``unique_name`` may append ``__N``): a final input name that
#: could be one of them goes through a placeholder, so every name comes out as it would then.
_GENERATED = re.compile(r".*_(scales|fixed|full|roi)(__[0-9]+)?$")


def _final_names(base: str, count: int) -> list[str]:
    return [base] if count == 1 else [f"{base}_{i}" for i in range(count)]


def check_input_name(model: ModelProto, plans: list[Plan], shared: bool, input_name: Optional[str]) -> None:
    """Refuse a clash before anything changes (an in-place run must not leave a half-done model)."""
    if input_name is None:
        return
    count = 1 if shared else len(plans)
    freed = {p.site.scales_tensor for p in plans}
    existing = core_graph.all_tensor_names(model.graph) - freed
    for wanted in _final_names(input_name, count):
        if wanted in existing:
            raise UsageError(f"input_name={wanted!r} is already a tensor name in the model")


def _graphs(model: ModelProto, site_scopes: set[str]) -> dict[str, "core_graph.Scope"]:
    """Scope name -> scope, for the graphs a rewrite may touch (functions are never rewritten).
    Sites all in the main graph (the usual case): the main graph alone, no walk over the nodes."""
    if site_scopes <= {core_graph.MAIN_GRAPH}:
        return {core_graph.MAIN_GRAPH: core_graph.Scope(core_graph.MAIN_GRAPH, model.graph, None, None, False)}
    return {scope.name: scope for scope in core_graph.scopes(model, functions=False)}


def _site_nodes(plans: list[Plan], scopes: dict[str, "core_graph.Scope"]) -> dict[str, NodeProto]:
    """Site output -> its node: by ``site.node_index`` (one lookup per site); a map over the
    scope's nodes only where the index no longer points at the site (the Upsample-7 bump
    inserted nodes ahead of it)."""
    found: dict[str, NodeProto] = {}
    maps: dict[str, dict[str, NodeProto]] = {}
    for plan in plans:
        site = plan.site
        nodes = scopes[site.scope].graph.node
        if 0 <= site.node_index < len(nodes):
            node = nodes[site.node_index]
            if node.output and node.output[0] == site.output_name:
                found[site.output_name] = node
                continue
        if site.scope not in maps:
            maps[site.scope] = {n.output[0]: n for n in nodes if n.output}
        found[site.output_name] = maps[site.scope][site.output_name]
    return found


def _splice(graph: onnx.GraphProto, before: dict[str, list[NodeProto]]) -> None:
    """Insert ``before[output]`` ahead of the node producing ``output``, in one rebuild."""
    if not before:
        return
    rebuilt: list[NodeProto] = []
    for node in graph.node:
        if node.output and node.output[0] in before:
            rebuilt.extend(before[node.output[0]])
        rebuilt.append(node)
    del graph.node[:]
    graph.node.extend(rebuilt)


def _bump_upsample7(model: ModelProto, taken: set[str]) -> list[str]:
    """Every Upsample-7 becomes Upsample-9 reading a Constant; the default opset becomes 9.

    Returns the new Constant outputs (the scales tensors of the former attribute sites).
    """
    graph = model.graph
    before: dict[str, list[NodeProto]] = {}
    made: list[str] = []
    for node in graph.node:
        if node.op_type != "Upsample" or node.domain not in opsets.DEFAULT_DOMAINS:
            continue
        scales_attr = [a for a in node.attribute if a.name == "scales"]
        if not scales_attr:
            continue
        values = list(scales_attr[0].floats)
        kept = [a for a in node.attribute if a.name != "scales"]
        del node.attribute[:]
        node.attribute.extend(kept)
        const_name = core_graph.unique_name(taken, f"{node.name or node.output[0]}_scales")
        before[node.output[0]] = [
            helper.make_node(
                "Constant",
                [],
                [const_name],
                name=const_name,
                value=helper.make_tensor(const_name, TensorProto.FLOAT, [len(values)], values),
            )
        ]
        node.input.append(const_name)
        made.append(const_name)
    _splice(graph, before)
    opsets.set_default_opset(model, 9)
    return made


def _encloses(name: str, site_scopes: set[str]) -> bool:
    """True when scope ``name`` is, or encloses, the scope of a rewritten site."""
    return any(s == name or s.startswith(name + " / ") for s in site_scopes)


def _chain(name: str, scopes: dict[str, "core_graph.Scope"]) -> list[str]:
    """``name`` and its enclosing scopes up to the main graph."""
    chain = [name]
    while scopes[chain[-1]].parent is not None:
        chain.append(scopes[chain[-1]].parent)
    return chain


def _rewire(node: NodeProto, plan: Plan, source: str, extra: list[NodeProto], taken: "core_graph.NameSet") -> None:
    """The site's node reads its scales from ``source``; a sizes site also drops its sizes (and
    Resize-11/12 gets a roi Constant in ``extra`` where its roi slot is empty); trailing "" dropped."""
    legacy = plan.site.op_type == "Upsample" or plan.site.op_version == 10
    slot = 1 if legacy else 2
    if plan.source != "sizes" and slot < len(node.input) and node.input[-1]:
        # the usual site: only the slot changes (none appended, no trailing "" to drop, no sizes or
        # roi slot touched), so one field is set instead of the node's inputs rebuilt, once per site
        node.input[slot] = source
        return
    inputs = list(node.input)
    while len(inputs) <= slot:
        inputs.append("")
    inputs[slot] = source
    if plan.source == "sizes":
        if len(inputs) > 3:
            inputs[3] = ""
        if plan.site.op_version in (11, 12) and not inputs[1]:
            roi = core_graph.unique_name(taken, f"{plan.label}_roi".replace(" ", "_"))
            extra.append(
                helper.make_node(
                    "Constant", [], [roi], name=roi, value=helper.make_tensor(roi, TensorProto.FLOAT, [0], [])
                )
            )
            inputs[1] = roi
    while inputs and inputs[-1] == "":
        inputs.pop()
    del node.input[:]
    node.input.extend(inputs)


def rewrite(
    model: ModelProto,
    plans: list[Plan],
    *,
    opset: int,
    shared: bool,
    input_name: Optional[str],
    factor: bool,
    keep_default: bool,
    handed: Optional[bytes] = None,
) -> tuple[list[NewInput], list[str], list[str]]:
    """Rewire every planned site to a new graph input. Returns (new inputs, removed tensors, notes).
    ``handed``: the model's weightless bytes as it is now, when the caller has them (the names are searched there)."""
    graph = model.graph
    notes: list[str] = []
    taken = core_graph.NameSet(graph, handed)
    old_tensors = [p.site.scales_tensor for p in plans if p.site.scales_tensor]
    old_tensors += [p.site.sizes_tensor for p in plans if p.source == "sizes"]

    # Rewire to placeholder names first: the final names (usually "scales") are often held
    # by the very constants this rewrite removes, and are free only after that. Final names
    # free now that no generated name can take are used at once: same names, and no renaming
    # walk over every node at the end.
    count = 1 if shared else len(plans)
    base = input_name or "scales"
    finals = _final_names(base, count)
    # every final name starts with ``base``: one search of the graph's bytes for it, not one per name
    unused = taken.none_start_with(base) or not any(name in taken for name in finals)
    direct = unused and not any(_GENERATED.match(name) for name in finals)
    if direct:
        placeholders = list(finals)
        taken.update(finals)
    else:
        placeholders = [core_graph.unique_name(taken, f"__onnxtool_scales_{index}") for index in range(count)]
    for index, plan in enumerate(plans):
        plan.input_name = placeholders[0 if shared else index]
    pretty = dict(zip(placeholders, finals))

    if any(p.needs_bump for p in plans):
        old_tensors += _bump_upsample7(model, taken)
        for plan in plans:
            plan.bumped = plan.needs_bump
        notes.append(
            f"opset raised from {opset} to 9: Upsample-7 keeps scales in an attribute, Upsample-9 reads an input"
        )

    site_scopes = {p.site.scope for p in plans}
    scopes = _graphs(model, site_scopes)
    by_output = _site_nodes([p for p in plans if p.runtime is None], scopes)
    before: dict[str, dict[str, list[NodeProto]]] = {}  # scope -> site output -> nodes to insert
    expansions: dict[tuple[str, str, tuple[float, ...]], str] = {}
    for plan in plans:
        if plan.runtime is not None:  # run-time sizes: the Muls read the input instead of their constants
            inserts, freed = replace_constants(model, plan, plan.input_name, taken)
            for output, nodes in inserts.items():
                before.setdefault(plan.site.scope, {}).setdefault(output, []).extend(nodes)
            old_tensors += freed
            continue
        node = by_output[plan.site.output_name]
        extra: list[NodeProto] = []  # what goes before the site: a factor Concat, a roi Constant
        source = plan.input_name
        if factor and plan.prefix:
            key = (plan.site.scope, plan.input_name, plan.prefix)  # a graph never reads a body's tensor
            if key not in expansions:
                prefix_name = core_graph.unique_name(taken, f"{pretty[plan.input_name]}_fixed")
                full_name = core_graph.unique_name(taken, f"{pretty[plan.input_name]}_full")
                extra.append(
                    helper.make_node(
                        "Constant",
                        [],
                        [prefix_name],
                        name=prefix_name,
                        value=helper.make_tensor(prefix_name, TensorProto.FLOAT, [len(plan.prefix)], list(plan.prefix)),
                    )
                )
                extra.append(
                    helper.make_node("Concat", [prefix_name, plan.input_name], [full_name], name=full_name, axis=0)
                )
                expansions[key] = full_name
            source = expansions[key]
        _rewire(node, plan, source, extra, taken)
        if extra:  # most sites insert nothing: no empty list kept per site
            before.setdefault(plan.site.scope, {}).setdefault(plan.site.output_name, []).extend(extra)
    for name, inserts in before.items():
        _splice(scopes[name].graph, {k: v for k, v in inserts.items() if v})

    # The one cleanup step: every freed constant at once, in each graph that held a site or
    # encloses one, innermost first (a body's reads of an outer constant end before the
    # outer graph counts them). The tensor names it removed are free again: nothing reads,
    # produces or declares them now (no second walk over every name of the graph).
    removed = []
    for scope in reversed(list(scopes.values())):
        if scope.parent is None or _encloses(scope.name, site_scopes):
            removed += core_graph.remove_unused(scope.graph, old_tensors)
    taken -= set(removed)
    names: list[str] = list(finals) if direct else []
    for wanted in [] if direct else finals:
        if wanted in taken:
            if input_name is not None:
                raise UsageError(f"input_name={wanted!r} is already a tensor name in the model")
            wanted = core_graph.unique_name(taken, wanted)
        taken.add(wanted)
        names.append(wanted)
    renames = dict(zip(placeholders, names))
    for name in set() if direct else {ancestor for s in site_scopes for ancestor in _chain(s, scopes)}:
        for node in scopes[name].graph.node:
            if any(n in renames for n in node.input):
                replaced = [renames.get(n, n) for n in node.input]
                del node.input[:]
                node.input.extend(replaced)
    for plan in plans:
        plan.input_name = renames[plan.input_name]

    new_inputs: list[NewInput] = []
    owners = {}
    for plan in plans:
        owners.setdefault(plan.input_name, plan)
    types: dict[int, onnx.TypeProto] = {}  # per length, the type its first input was given: the others copy it
    for name in names:
        value = [float(v) for v in owners[name].fed]
        made = types.get(len(value))
        if made is None:
            core_graph.add_tensor_value_info(graph.input, name, TensorProto.FLOAT, [len(value)])
            made = types[len(value)] = onnx.TypeProto()
            made.CopyFrom(graph.input[-1].type)
        else:  # the same entry, one copy in C instead of a type built field by field (one input per site)
            entry = graph.input.add()
            entry.name = name
            entry.type.CopyFrom(made)
        default = None
        if keep_default:
            graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
            default = value
        new_inputs.append(NewInput(name, "float32", [len(value)], default, value))
    return new_inputs, removed, notes
