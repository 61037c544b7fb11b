"""What a graph's serialized bytes say about a few tensor names, without walking its nodes.

protobuf writes every string verbatim, and nested graphs inside their parent's bytes: a node
input is string field 1 of its NodeProto, a node output field 2. So a name that never occurs as
those bytes is read (or produced) by no node, bodies included. :class:`Mentions` answers
"certainly none" or "maybe" for a few names; on "maybe" the caller walks the nodes as before.

Requires: a ``GraphProto``. Ensures: never a wrong "none"; declines (``usable`` False) where the
search would cost more than the walk. Does NOT change the graph or tell where a name occurs.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

from onnx import GraphProto

from graphsurgeon_tools.core.checker import has_big_initializer
from graphsurgeon_tools.core.wire import countable, string_field

__all__ = ["Mentions", "searchable_bytes"]


#: The search is used on graphs of at least this many nodes, for at most this many names, while the
#: bytes searched (bytes x names) stay under this many per node: a walk over the nodes costs about
#: 1.3 us a node, serializing 0.3 ns a byte, each search 0.4 ns a byte (weights in Constant nodes
#: make bytes, not nodes).
_SEARCH_NODES = 1024
_SEARCH_NAMES = 8
_SEARCH_BYTES_PER_NODE = 1024


def searchable_bytes(graph: "GraphProto") -> Optional[bytes]:
    """The graph serialized for a search of its bytes, or None where it holds big or external
    weights (serializing would copy them: the caller walks the nodes instead)."""
    if has_big_initializer(graph):
        return None
    return graph.SerializeToString()


class Mentions:
    """Whether any node of a big graph (bodies included) reads or produces a few names. The bytes
    searched for occur elsewhere too (a graph input's, output's or value_info's name is field 1 of
    its ValueInfoProto; an attribute's name; a graph's name): each answer is "certainly none" or
    "maybe", never a wrong "none".

    ``usable`` is False where the search would cost more than the walk (a small graph, many names,
    many bytes a node; big weights, which serializing would copy) or could miscount (a name holding
    a tag byte, whose occurrences might overlap)."""

    def __init__(self, graph: "GraphProto", names: set[str]) -> None:
        self._graph = graph
        self._names = {name: name.encode() for name in names}
        self.usable = (
            len(graph.node) >= _SEARCH_NODES
            and len(names) <= _SEARCH_NAMES
            and all(countable(data) for data in self._names.values())
        )
        blob = searchable_bytes(graph) if self.usable else None
        if blob is None or len(blob) * len(names) > _SEARCH_BYTES_PER_NODE * len(graph.node):
            self.usable, blob = False, b""
        self._blob = blob
        self._declared: Optional[Counter] = None

    def unread(self) -> bool:
        """True when certainly no node reads any of the names: each occurs as field 1 no more often
        than the graph's own inputs, outputs and value_info declare it (one occurrence each)."""
        if not self.usable:
            return False
        for name, data in self._names.items():
            seen = self._blob.count(string_field(1, data))  # no overlaps: the name holds no tag byte
            if seen and seen != self._declarations()[name]:
                return False
        return True

    def unproduced(self) -> bool:
        """True when certainly no node produces any of the names (no field-2 occurrence at all)."""
        return self.usable and not any(string_field(2, data) in self._blob for data in self._names.values())

    def _declarations(self) -> Counter:
        if self._declared is None:
            graph, names = self._graph, self._names
            self._declared = Counter(
                v.name for field in (graph.input, graph.output, graph.value_info) for v in field if v.name in names
            )
        return self._declared
