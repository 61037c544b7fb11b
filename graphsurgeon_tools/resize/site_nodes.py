"""Where a model's Resize/Upsample nodes are: each scope (main graph, bodies, functions) and its sites.

:func:`walk` gives :mod:`.sites` every scope it describes sites in, each with its Resize/Upsample
nodes (index, node, input names), in node order.

Requires: a ModelProto; optionally its weightless bytes as the structural checker accepted them
(``Pass.handed_bytes``). Ensures: the same scopes and nodes with the bytes as without; the bytes only
spare the walk over the nodes where they prove it needless (no body to find, no site left to find),
never wrongly: a chance match in them only makes the walk go on. Does NOT describe a site or read
anything but op types, domains, inputs and the attributes that may hold a body.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from onnx import AttributeProto

from graphsurgeon_tools.core.graph import MAIN_GRAPH, Scope, scopes, subgraphs
from graphsurgeon_tools.core.wire import string_field, varint_field
from graphsurgeon_tools.resize import semantics

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

__all__ = ["walk"]


#: One site as the walk finds it: its index in its scope's graph, the node, and its input names (read
#: from the proto once: the checks, the value-info filter and the description all read them).
_Found = tuple[int, Any, list[str]]


#: A Resize or Upsample node, as protobuf writes its op_type (NodeProto field 4), in any graph or function.
_RESIZE_OP_TYPE = re.compile(b"|".join(re.escape(string_field(4, op.encode())) for op in semantics.RESIZE_OPS))
#: An attribute of type GRAPH or GRAPHS, as protobuf writes its type (AttributeProto field 20).
_BODY_TYPE = re.compile(
    b"|".join(re.escape(varint_field(20, t)) for t in (AttributeProto.GRAPH, AttributeProto.GRAPHS))
)


def walk(model: "ModelProto", nested: bool, checked: Optional[bytes]) -> list[tuple[Scope, list[_Found]]]:
    """Each scope and its sites: the main graph's in one pass over its nodes that also sees whether
    any holds a body; :func:`~graphsurgeon_tools.core.graph.scopes` walks again only when one does
    (or the model has functions). ``checked``: ``model``'s weightless bytes as the structural checker
    accepted them, which may prove that no node holds a body (:func:`_no_body`); the pass then only
    looks for sites, and stops at the last one the bytes allow (:func:`_counted_sites`)."""
    seek_bodies = nested and not len(model.functions) and not _no_body(model, checked)
    main_sites: list[_Found] = []
    bodies = False
    if checked is not None and not seek_bodies:
        main_sites = _counted_sites(model.graph.node, len(_RESIZE_OP_TYPE.findall(checked)))
    else:
        for index, node in enumerate(model.graph.node):
            if semantics.is_resize_node(node):
                main_sites.append((index, node, node.input[:]))
            if seek_bodies and not bodies and len(node.attribute):  # scopes()'s own test of a body
                bodies = next(subgraphs(node), None) is not None
    if nested and (bodies or len(model.functions)):
        return [(s, main_sites if s.parent is None and not s.function else _sites_of(s.graph)) for s in scopes(model)]
    return [(_main_scope(model), main_sites)]


def _no_body(model: "ModelProto", checked: Optional[bytes]) -> bool:
    """Whether ``checked`` (see :func:`walk`) prove that no node of any graph or function holds a body.
    The bytes hold every node, fields written as :mod:`~graphsurgeon_tools.core.wire` spells them. From
    IR version 2 the checker requires an attribute's type, and one that matches the field it holds, so
    an attribute holding a graph (``g``) or graphs has its type written as GRAPH or GRAPHS (scopes()
    reads ``g`` and ``graphs`` themselves, so an IR-1 model is walked). A chance match in other bytes (a
    name, a tensor) only says "walk", never "none" wrongly."""
    return checked is not None and model.ir_version >= 2 and _BODY_TYPE.search(checked) is None


def _counted_sites(nodes: Any, most: int) -> list[_Found]:
    """The Resize/Upsample nodes among ``nodes``, in node order, where there are at most ``most``: the
    times their op_type occurs in the model's bytes (each such node, in any graph or function, writes it
    once; a chance match in other bytes only adds one). So the walk stops at the ``most``-th found, and
    none at all where there are none. It looks from the last node back, as networks mostly upsample
    late (decoders, FPN necks, heads): the count is reached early there, elsewhere the walk goes on."""
    found: list[_Found] = []
    index = len(nodes)
    while len(found) < most and index:
        index -= 1
        node = nodes[index]
        if semantics.is_resize_node(node):
            found.append((index, node, node.input[:]))
    found.reverse()
    return found


def _sites_of(graph: Any) -> list[_Found]:
    return [(i, n, n.input[:]) for i, n in enumerate(graph.node) if semantics.is_resize_node(n)]


def _main_scope(model: "ModelProto") -> Any:
    return Scope(MAIN_GRAPH, model.graph, None, None, False)
