"""The value infos a site's description reads, and X's static shape from them.

:func:`declared_infos` gathers what the graphs declare for the sites' input names;
:func:`with_inferred_infos` adds shape inference's answers for them (on a weightless copy), from
:class:`ValueInfoIndex`, which other readers of the same inference may share;
:func:`input_shape` reads X's shape from an info, once per distinct type.

Requires: the ModelProto the sites were found in (read, never changed). Ensures: only the names
asked for are gathered; inference runs at most once, and not at all when the caller hands its
result in. Does NOT decide anything about a site (:mod:`.sites` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from graphsurgeon_tools.core.checker import inferred_copy, static_shape, value_info_map
from graphsurgeon_tools.core.graph import scopes

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

__all__ = ["ValueInfoIndex", "declared_infos", "input_shape", "with_inferred_infos"]


def declared_infos(graphs: list[Any], wanted: set[str]) -> dict[str, Any]:
    """Declared value infos of ``graphs`` (the main graph, then bodies: names are unique
    model-wide), for the names in ``wanted`` only (a site reads its inputs' infos, no other)."""
    merged: dict[str, Any] = {}
    for graph in graphs:
        merged.update(value_info_map(graph, wanted))
    return merged


class ValueInfoIndex:
    """Name -> ValueInfoProto over a graph's value_info (of a name given twice, the last: what a dict
    filled in order holds), for readers that share one inference and ask a few names each (the sites,
    swap-plugin's type table). A big graph has a value_info per tensor, and an index keeping every entry
    costs twice a pass that keeps a few: so names handed to :meth:`cover` first are indexed alone, in one
    pass; any other name asked later makes the whole index, once. Every answer is the whole index's."""

    def __init__(self, graph: Any) -> None:
        self._graph = graph
        self._index: dict[str, Any] = {}
        self._covered: Optional[set[str]] = set()  # the names indexed; None: every name

    def cover(self, names: Optional[set[str]] = None) -> None:
        """Index ``names`` (None: every name): alone where none is indexed yet, else every name."""
        covered = self._covered
        if covered is None or (names is not None and names <= covered):
            return
        if names is None or covered:
            self._index, self._covered = {v.name: v for v in self._graph.value_info}, None
        else:
            self._index, self._covered = {v.name: v for v in self._graph.value_info if v.name in names}, set(names)

    def get(self, name: str) -> Any:
        """The last value_info entry named ``name``, or None."""
        if self._covered is not None and name not in self._covered:
            self.cover()
        return self._index.get(name)


def with_inferred_infos(
    model: "ModelProto",
    infos: dict[str, Any],
    nested: bool,
    wanted: set[str],
    inferred: Optional["ModelProto"] = None,
    weightless: Optional[bytes] = None,
    inferred_infos: Optional["ValueInfoIndex"] = None,
) -> dict[str, Any]:
    """Value infos with shape inference's answers added (on a weightless copy; model untouched),
    for the names in ``wanted``. ``nested``: the model has If/Loop/Scan bodies, whose answers are
    added too. ``inferred``: the caller's inference result for this model (not run again);
    ``weightless``: the model's weightless bytes, when the caller has them (what inference reads);
    ``inferred_infos``: a :class:`ValueInfoIndex` of ``inferred``'s main graph other readers share.
    Shape inference is a nicety for reports: a model it chokes on is still inspectable."""
    inferred = inferred if inferred is not None else inferred_copy(weightless or model)
    if inferred is None:
        return infos
    index = inferred_infos if inferred_infos is not None else ValueInfoIndex(inferred.graph)
    index.cover(wanted)
    merged = {name: info for name, info in ((name, index.get(name)) for name in wanted) if info is not None}
    if nested:
        for scope in scopes(inferred, functions=False):
            merged.update({v.name: v for v in scope.graph.value_info if v.name in wanted})
    merged.update(infos)
    return merged


def input_shape(info: Any, declared: bool, memo: dict[Any, Any]) -> Optional[tuple[Any, ...]]:
    """X's shape as :func:`~graphsurgeon_tools.core.checker.static_shape` reads ``info``, the names
    shape inference invents (unk__12: not stable) read as unknown where it is not ``declared``.
    A function of ``info.type`` alone, so ``memo`` (the caller's, kept across its sites) holds it per
    serialized type: a graph's sites share a few (2,000 sites of one shape: the dims read once)."""
    if info is None:
        return None
    key = ("type", declared, info.type.SerializeToString())
    if key not in memo:
        shape = static_shape(info)
        if shape is not None and not declared:
            shape = tuple(None if isinstance(d, str) and d.startswith("unk__") else d for d in shape)
        memo[key] = shape
    return memo[key]
