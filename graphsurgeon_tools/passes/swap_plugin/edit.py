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
from graphsurgeon_tools.plugins import PluginSpec

__all__ = ["Builder", "elem_types_and_shapes", "plugin_attributes", "set_value_info", "set_value_infos"]


def plugin_attributes(
    spec: PluginSpec, values: dict[str, Any], from_inputs: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """The plugin node's attributes: the spec's rules applied to ``values``, then node data."""
    attrs = spec.attributes.apply(values)
    attrs.update(from_inputs or {})  # real node data beats [attributes.defaults]
    attrs["plugin_version"] = spec.plugin_version
    attrs["plugin_namespace"] = spec.plugin_namespace
    return attrs


def elem_types_and_shapes(model: ModelProto, inferred: Optional[ModelProto] = None) -> dict[str, onnx.TypeProto]:
    """Tensor name -> TypeProto, from declarations plus (weightless) shape inference.
    ``inferred``: :func:`~graphsurgeon_tools.core.checker.inferred_copy` of this model, when the caller has it."""
    types: dict[str, onnx.TypeProto] = {}
    inferred = inferred if inferred is not None else checker.inferred_copy(model)
    # shape inference only refines types here; declarations still count when it refuses the model
    graph = inferred.graph if inferred is not None else model.graph
    for init in model.graph.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    for info in list(graph.value_info) + list(graph.input) + list(graph.output):
        if info.type.HasField("tensor_type"):
            types[info.name] = info.type
    return types


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
        graph.value_info.append(helper.make_tensor_value_info(name, elem_type, shape))


class Builder:
    """Adds nodes/initializers with unique names; collects nodes to insert before an anchor.

    Insertion is one rebuild of the node list at the end (:meth:`insert_all`), so a pass
    that adds nodes at many sites stays linear.
    """

    def __init__(self, model: ModelProto) -> None:
        self.model = model
        self._taken: Optional[set[str]] = None  # every name of the graph: gathered on the first new name
        self.pending: list[tuple[int, list[NodeProto]]] = []
        self.value_infos: list[tuple[str, int, Optional[int], Optional[tuple], str]] = []
        #: (name, type, repr of the value) -> AttributeProto: like plugin nodes share their attributes
        self.attributes: dict[tuple[str, type, str], Any] = {}

    @property
    def taken(self) -> set[str]:
        if self._taken is None:
            self._taken = core_graph.all_tensor_names(self.model.graph)
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
