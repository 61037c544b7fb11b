"""swap-plugin with a generic spec (``handler = "generic"``): any op -> any plugin, as the TOML says.

::

    Op(a, b, c){attrs}  ->  Plugin(inputs in spec order, extra inputs){spec attributes, constant inputs as attributes}

e.g. GridSample -> grid_sampler. Inputs are named by slot index or by the op schema's
formal name; a constant input can become an attribute; outputs get value_info from the
spec's output rules. There is no reverse.

Requires: the working copy (changed in place). Ensures: every matching node is swapped or
skipped with its reason; a ``graph_input`` extra input named like a tensor the model already
has is refused (InvalidSpecError, exit 3) before anything changes. Does NOT run any checker.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper

from graphsurgeon_tools.core import dtypes, opsets
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.attributes import attributes, make_attr
from graphsurgeon_tools.core.constants import ConstantTracer
from graphsurgeon_tools.errors import PreconditionError
from graphsurgeon_tools.passes.base import Skip, select
from graphsurgeon_tools.passes.swap_plugin import refusals
from graphsurgeon_tools.passes.swap_plugin.edit import Builder, elem_types_and_shapes, plugin_attributes
from graphsurgeon_tools.passes.swap_plugin.result import SwappedNode, SwapPluginResult
from graphsurgeon_tools.plugins import InvalidSpecError, PluginSpec
from graphsurgeon_tools.refusal import Refusal, RefusedError

__all__ = ["forward_generic", "refuse_name_collisions"]


def _label(node: NodeProto) -> str:
    return node.name or (node.output[0] if node.output else "")


def _slot_resolver(node: NodeProto, slot_names: list[str], source: str) -> Callable[[Union[int, str]], str]:
    def resolve(ref: Union[int, str]) -> str:
        if isinstance(ref, str):
            if ref not in slot_names:
                raise RefusedError(
                    Refusal(
                        "spec-unknown-input",
                        f"{node.op_type} has no input named {ref!r} (inputs: {', '.join(slot_names)}); see {source}",
                    )
                )
            index = slot_names.index(ref)
        else:
            index = ref
        return node.input[index] if index < len(node.input) else ""

    return resolve


def _node_attributes(node: NodeProto, schema: Any, spec: PluginSpec) -> dict[str, Any]:
    attrs = attributes(node)
    if spec.attributes.schema_defaults:
        for name, attr in schema.attributes.items():
            if name not in attrs and attr.default_value is not None and attr.default_value.type:
                value = helper.get_attribute_value(attr.default_value)
                attrs[name] = value.decode() if isinstance(value, bytes) else value
    return attrs


def _inputs(
    node: NodeProto, spec: PluginSpec, slot_names: list[str], tracer: ConstantTracer
) -> tuple[list[str], dict[str, Any]]:
    """The plugin's inputs and the attributes made from constant inputs; raises RefusedError."""
    resolve = _slot_resolver(node, slot_names, spec.source)
    from_inputs = {}
    for ref, attr_name in spec.input_attributes.items():
        tensor = resolve(ref)
        if not tensor:
            continue  # an absent optional input: the plugin's default applies
        trace = tracer.trace(tensor)
        if trace.value is None or trace.source.value in ("graph_input", "runtime"):
            raise RefusedError(
                Refusal(
                    "input-not-constant", f"input {ref!r} ({tensor}) must be constant to become attribute {attr_name!r}"
                )
            )
        flat = np.asarray(trace.value).reshape(-1)
        value = flat.tolist()
        from_inputs[attr_name] = value[0] if flat.size == 1 else value
    if spec.inputs is not None:
        order = list(spec.inputs)
    else:  # every original input except those turned into attributes
        moved = {
            ref if isinstance(ref, int) else slot_names.index(ref)
            for ref in spec.input_attributes
            if isinstance(ref, int) or ref in slot_names
        }
        order = [i for i in range(len(node.input)) if i not in moved]
    return [resolve(ref) for ref in order], from_inputs


def _extra_inputs(
    model: ModelProto, spec: PluginSpec, builder: Builder, base: str, added: set[str], result: SwapPluginResult
) -> list[str]:
    names = []
    for extra in spec.extra_inputs:
        elem = dtypes.elem_type(extra.dtype)
        if extra.kind == "constant":
            array = np.array(extra.value, dtype=dtypes.np_dtype(elem))
            if extra.shape is not None:
                array = array.reshape(extra.shape)
            elif array.size == 1:
                array = array.reshape(())
            names.append(builder.initializer(f"{base}_{extra.name}", array))
            continue
        if extra.name not in added:
            shape = list(extra.shape) if extra.shape is not None else None  # () is a scalar, not unknown
            model.graph.input.append(helper.make_tensor_value_info(extra.name, elem, shape))
            added.add(extra.name)
            result.new_inputs.append({"name": extra.name, "dtype": extra.dtype, "shape": shape})
        names.append(extra.name)
    return names


def _taken_tensor_names(model: ModelProto) -> dict[str, str]:
    """Every tensor name the model defines other than its main graph's inputs -> what it is
    (bodies included: ONNX wants names unique across nested graphs too)."""
    graph = model.graph
    taken: dict[str, str] = {o.name: "a graph output" for o in graph.output}
    for scope in core_graph.scopes(model, functions=False):
        body = scope.graph
        if body is not graph:
            taken.update((i.name, f"an input of the body {scope.name}") for i in body.input)
        taken.update((t.name, "an initializer") for t in body.initializer)
        taken.update((t.values.name, "an initializer") for t in body.sparse_initializer)
        for node in body.node:
            taken.update((out, f"the output of node {_label(node)!r}") for out in node.output if out)
    return taken


def refuse_name_collisions(model: ModelProto, spec: PluginSpec) -> None:
    """Refuse (InvalidSpecError, exit 3) a ``graph_input`` extra input whose name the model already uses
    for another tensor, before anything changes: the swapped model would not be SSA.

    An existing graph input of the same element type and shape is the same input (shared), not a clash.
    """
    extras = [e for e in spec.extra_inputs if e.kind == "graph_input"]
    if not extras:
        return
    taken = _taken_tensor_names(model)
    declared = {i.name: i.type for i in model.graph.input}
    for extra in extras:
        what = taken.get(extra.name)
        if what is None and extra.name in declared:
            tensor = declared[extra.name].tensor_type
            dims = (
                tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in tensor.shape.dim)
                if tensor.HasField("shape")
                else None
            )
            wanted = tuple(extra.shape) if extra.shape is not None else None
            if tensor.elem_type != dtypes.elem_type(extra.dtype) or (wanted is not None and dims != wanted):
                shown = ", ".join(str(d) for d in dims or ())
                what = f"a graph input of another type ({dtypes.dtype_name(tensor.elem_type)}[{shown}])"
        if what is not None:
            raise InvalidSpecError(
                f"{spec.source}: [[inputs.extra]] name {extra.name!r} is already {what} in the "
                "model; a new graph input needs a name the model does not use"
            )


def _output_value_info(builder: Builder, spec: PluginSpec, node: NodeProto, types: dict[str, Any], base: str) -> None:
    for index, output in enumerate(node.output):
        rule = spec.outputs[index] if index < len(spec.outputs) else None
        if not output or rule is None:
            continue
        if rule.same_as_input is not None:
            source = node.input[rule.same_as_input] if rule.same_as_input < len(node.input) else ""
            t = types.get(source)
            elem = t.tensor_type.elem_type if t is not None else 0
            rank = (
                rule.rank
                if rule.rank is not None
                else (len(t.tensor_type.shape.dim) if t is not None and t.tensor_type.HasField("shape") else None)
            )
        else:
            elem, rank = dtypes.elem_type(rule.dtype or "float32"), rule.rank
        builder.value_info(output, elem, rank, rule.shape, prefix=f"{base}_out{index}")


def forward_generic(
    model: ModelProto,
    spec: PluginSpec,
    op_type: str,
    domain: str,
    nodes: Optional[list[str]],
    result: SwapPluginResult,
    label: str,
) -> None:
    """Swap the nodes of ``model`` (in place) that the generic ``spec`` matches."""
    graph = model.graph
    opset = opsets.default_opset(model)
    candidates = [
        (i, n, scope.name)
        for scope in core_graph.scopes(model)
        for i, n in enumerate(scope.graph.node)
        if n.op_type in spec.match.op_types and opsets.is_default_domain(n.domain)
    ]
    selected = select(
        candidates,
        nodes,
        lambda c: (c[1].name, c[1].output[0] if c[1].output else ""),
        what="/".join(spec.match.op_types),
    )
    for _, node, where in selected:  # left as they are, never silently
        if where != core_graph.MAIN_GRAPH and refusals.name_matches(spec, node.name):
            result.skipped.append(
                Skip(
                    _label(node),
                    node.op_type,
                    Refusal("in-body", f"inside {where}: swap-plugin swaps main-graph nodes only"),
                )
            )
    selected = [(i, n) for i, n, where in selected if where == core_graph.MAIN_GRAPH]
    if any(refusals.name_matches(spec, n.name) for _, n in selected):
        refuse_name_collisions(model, spec)  # before the first change: the caller's proto may be this one
    types = elem_types_and_shapes(model)
    builder = Builder(model)
    tracer = ConstantTracer(model)
    added_inputs = {i.name for i in graph.input}
    dropped: list[str] = []
    for position, live in selected:
        if not refusals.name_matches(spec, live.name):
            continue
        node = NodeProto()
        node.CopyFrom(live)  # the graph's node is rewritten in place below
        base = _label(node)
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, "")
        except onnx.defs.SchemaError:
            # the structural checker the wrapper ran refuses such a node first
            raise PreconditionError(f"{label}: no ONNX schema for {node.op_type} at opset {opset}") from None
        attrs = _node_attributes(node, schema, spec)
        refusal = refusals.attribute_conditions_hold(spec, attrs)
        if refusal:
            result.skipped.append(Skip(base, node.op_type, refusal))
            continue
        try:
            inputs, from_inputs = _inputs(node, spec, [formal.name for formal in schema.inputs], tracer)
            plugin_attrs = plugin_attributes(spec, attrs, from_inputs)
        except RefusedError as refused:
            result.skipped.append(Skip(base, node.op_type, refused.refusal))
            continue
        except InvalidSpecError as refused:  # the spec's rules have no entry for this node's values
            result.skipped.append(Skip(base, node.op_type, Refusal("spec-value-unmapped", str(refused))))
            continue
        inputs += _extra_inputs(model, spec, builder, base, added_inputs, result)
        while inputs and inputs[-1] == "":
            inputs.pop()
        new = helper.make_node(op_type, inputs, list(node.output), name=node.name, domain=domain)
        new.attribute.extend(make_attr(k, v) for k, v in plugin_attrs.items())
        dropped.extend(i for i in node.input if i and i not in inputs)
        live.CopyFrom(new)
        _output_value_info(builder, spec, node, types, base)
        result.rewritten.append(
            SwappedNode(
                node=base,
                op_type_before=node.op_type,
                op_type_after=op_type,
                domain_after=domain,
                signature="generic",
                inputs=tuple(inputs),
                attributes=plugin_attrs,
            )
        )
    builder.insert_all()
    if result.rewritten:
        opsets.ensure_opset_import(model, domain)
        result.removed_nodes.extend(core_graph.remove_unused(graph, dropped))
