"""Graph edits shared by swap-plugin's rewrites: a name-keeping node builder, plugin
attributes from a spec, value_info for plugin outputs, and the element types of tensors.

Requires: the working copy of the model (everything here changes it in place).
Does NOT decide anything about which node to swap (that is forward/reverse/generic).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper, numpy_helper

from graphsurgeon_tools.core import checker
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core.attributes import make_attr
from graphsurgeon_tools.plugins import PluginSpec
from graphsurgeon_tools.resize.site_inputs import ValueInfoIndex

__all__ = ["Builder", "TypeTable", "elem_types_and_shapes", "plugin_attributes", "set_value_info", "set_value_infos"]


def plugin_attributes(
    spec: PluginSpec, values: dict[str, Any], from_inputs: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """The plugin node's attributes: the spec's rules applied to ``values``, then node data."""
    attrs = spec.attributes.apply(values)
    attrs.update(from_inputs or {})  # real node data beats [attributes.defaults]
    attrs["plugin_version"] = spec.plugin_version
    attrs["plugin_namespace"] = spec.plugin_namespace
    return attrs


class TypeTable:
    """Tensor name -> TypeProto (``get`` only), from a shape-inferred copy of the model (or a copy of its
    declarations, where inference refused it): a graph
    output's, else a graph input's, else the value_info's, else an initializer's type (each the last
    one declared with a tensor type): what a dict filled in that order holds. The TypeProtos are
    looked up, or made for an initializer, when asked for: a pass asks about a few names per site,
    a big graph has a value_info per tensor and often an initializer per site.

    Requires: ``inferred`` is not changed afterwards (the pass works on ``model``, not on it); the
    initializers are taken as ``model`` has them now (a rewrite that removes one later does not
    change its answer). ``value_infos``: a :class:`~graphsurgeon_tools.resize.site_inputs.ValueInfoIndex` of
    ``inferred``'s graph that the sites read too, when the caller has it."""

    def __init__(self, model: ModelProto, inferred: ModelProto, value_infos: Optional[ValueInfoIndex] = None) -> None:
        graph = self._graph = inferred.graph
        self._value_infos = value_infos if value_infos is not None else ValueInfoIndex(graph)
        self._ends = {v.name: v for field in (graph.input, graph.output) for v in field}  # outputs win
        self._inits = {init.name: init for init in model.graph.initializer}
        self._made: dict[str, onnx.TypeProto] = {}

    def declared(self, name: str) -> Any:
        """What a dict filled value_info -> inputs -> outputs holds for ``name`` (or None)."""
        info = self._ends.get(name)
        return info if info is not None else self._value_infos.get(name)

    def get(self, name: str, default: Any = None) -> Any:
        info = self.declared(name)
        if info is not None:
            if info.type.HasField("tensor_type"):
                return info.type
            graph = self._graph  # the last declaration is not a tensor: an earlier one may be
            for field in (graph.output, graph.input, graph.value_info):
                for entry in reversed(field):
                    if entry.name == name and entry.type.HasField("tensor_type"):
                        return entry.type
        made = self._made.get(name)
        if made is None:
            init = self._inits.get(name)
            if init is None:
                return default
            made = self._made[name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
        return made


def elem_types_and_shapes(
    model: ModelProto, inferred: Optional[ModelProto] = None, value_infos: Optional[ValueInfoIndex] = None
) -> Any:
    """Tensor name -> TypeProto (``get``), from declarations plus (weightless) shape inference: a
    :class:`TypeTable` over ``inferred``, :func:`~graphsurgeon_tools.core.checker.inferred_copy` of
    this model when the caller has it (and ``value_infos``, its index, when the caller has that)."""
    inferred = inferred if inferred is not None else checker.inferred_copy(model)
    if inferred is None:  # shape inference refused the model: its declarations still count, copied now
        inferred = ModelProto()  # (the pass changes ``model``; the table reads what it was handed)
        declared, graph = inferred.graph, model.graph
        declared.value_info.extend(graph.value_info)
        declared.input.extend(graph.input)
        declared.output.extend(graph.output)
        value_infos = None  # an index of no inference
    return TypeTable(model, inferred, value_infos)


def set_value_info(
    model: ModelProto, name: str, elem_type: int, rank: Optional[int], dims: Optional[tuple] = None, prefix: str = ""
) -> None:
    """Replace value_info for ``name``: element type, rank, named dims (not for graph outputs).
    One rebuild of ``value_info``: for many names at once use :func:`set_value_infos`."""
    set_value_infos(model, [(name, elem_type, rank, dims, prefix)])


def set_value_infos(model: ModelProto, entries: list[tuple[str, int, Optional[int], Optional[tuple], str]]) -> None:
    """:func:`set_value_info` for many ``(name, elem_type, rank, dims, prefix)`` at once, in one
    rebuild of ``value_info`` (per name, the last entry wins), so a pass touching every site stays linear."""
    if not entries:
        return
    graph = model.graph
    latest = {entry[0]: entry for entry in entries}
    kept = [v for v in graph.value_info if v.name not in latest]
    if len(kept) != len(graph.value_info):  # else nothing to drop: no copy of every entry
        del graph.value_info[:]
        graph.value_info.extend(kept)
    outputs = {o.name for o in graph.output}
    for name, elem_type, rank, dims, prefix in latest.values():
        if name in outputs or not elem_type:
            continue
        shape = None
        if dims is not None:
            shape = list(dims)
        elif rank is not None:
            shape = [f"{prefix or name}_d{i}" for i in range(rank)]
        core_graph.add_tensor_value_info(graph.value_info, name, elem_type, shape)


class Builder:
    """Adds nodes/initializers with unique names; collects nodes to insert before an anchor.

    Insertion is one rebuild of the node list at the end (:meth:`insert_all`), so a pass
    that adds nodes at many sites stays linear.
    """

    def __init__(self, model: ModelProto) -> None:
        self.model = model
        self._taken: Optional[core_graph.NameSet] = None  # the graph's names, from its first new name on
        self.pending: list[tuple[int, list[NodeProto]]] = []
        self.value_infos: list[tuple[str, int, Optional[int], Optional[tuple], str]] = []
        #: node semantics -> (plugin attributes, their AttributeProtos): like sites share them
        self._attributes: dict[str, tuple[dict[str, Any], NodeProto, list[str]]] = {}

    @property
    def taken(self) -> core_graph.NameSet:
        if self._taken is None:  # searched in the graph's bytes: a big graph is not walked for a few names
            self._taken = core_graph.NameSet(self.model.graph)
        return self._taken

    def name(self, base: str) -> str:
        return core_graph.unique_name(self.taken, base)

    def initializer(self, base: str, array: np.ndarray) -> str:
        name = self.name(base)
        self.model.graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    def node(self, nodes: list[NodeProto], op_type: str, inputs: list[str], base: str, **attrs: Any) -> str:
        out = self.name(base)
        nodes.append(helper.make_node(op_type, inputs, [out], name=self.name(f"{base}/{op_type}"), **attrs))
        return out

    def plugin_attributes(
        self, spec: PluginSpec, semantics: dict[str, Any], fixed: dict[str, Any]
    ) -> tuple[dict[str, Any], NodeProto]:
        """:func:`plugin_attributes` of ``semantics`` plus ``fixed`` (a fresh dict, for the report) and a
        node holding only their AttributeProtos (``CopyFrom`` it, then set the rest), worked out once
        per distinct ``semantics`` in a run (the spec's rules are pure): like plugin nodes share them."""
        key = repr((tuple(semantics.values()), fixed))  # plain values: repr tells -0.0 from 0.0, 1 from 1.0
        made = self._attributes.get(key)
        if made is None:
            attrs = plugin_attributes(spec, semantics)
            attrs.update(fixed)
            template = NodeProto()
            template.attribute.extend(make_attr(name, value) for name, value in attrs.items())
            lists = [name for name, value in attrs.items() if isinstance(value, list)]
            made = self._attributes[key] = (attrs, template, lists)
        attrs, template, lists = made
        fresh = dict(attrs)
        for name in lists:  # each report entry owns its lists
            fresh[name] = list(fresh[name])
        return fresh, template

    def value_info(
        self, name: str, elem_type: int, rank: Optional[int], dims: Optional[tuple] = None, prefix: str = ""
    ) -> None:
        """:func:`set_value_info`, deferred to :meth:`insert_all` (one rebuild for every site)."""
        self.value_infos.append((name, elem_type, rank, dims, prefix))

    def insert_all(self) -> None:
        """Insert the collected nodes before their anchor indices and set the collected
        value_info, each in one rebuild."""
        set_value_infos(self.model, self.value_infos)
        self.value_infos.clear()
        if not self.pending:
            return
        graph = self.model.graph
        before: dict[int, list[NodeProto]] = {}
        for index, nodes in self.pending:
            before.setdefault(index, []).extend(nodes)
        rebuilt: list[NodeProto] = []
        for index, node in enumerate(graph.node):
            rebuilt.extend(before.get(index, ()))
            rebuilt.append(node)
        del graph.node[:]
        graph.node.extend(rebuilt)
        self.pending.clear()
