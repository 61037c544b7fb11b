"""The value infos a site's description reads, and X's static shape from them.

:func:`declared_infos` gathers what the graphs declare for the sites' input names;
:func:`with_inferred_infos` adds shape inference's answers for them (on a weightless copy), from
:func:`inferred_value_infos` where the caller indexed the inference for other readers too;
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

__all__ = ["declared_infos", "inferred_value_infos", "input_shape", "with_inferred_infos"]


def declared_infos(graphs: list[Any], wanted: set[str]) -> dict[str, Any]:
    """Declared value infos of ``graphs`` (the main graph, then bodies: names are unique
    model-wide), for the names in ``wanted`` only (a site reads its inputs' infos, no other)."""
    merged: dict[str, Any] = {}
    for graph in graphs:
        merged.update(value_info_map(graph, wanted))
    return merged


def inferred_value_infos(inferred: "ModelProto") -> dict[str, Any]:
    """Name -> ValueInfoProto over the main graph's value_info of ``inferred`` (of a name given twice,
    the last: what a dict filled in order holds). For readers that share one inference (swap-plugin's
    type table and its sites) or ask for many names: a big graph has a value_info per tensor, and the
    whole index costs twice what :func:`with_inferred_infos` costs for a few names on its own."""
    return {v.name: v for v in inferred.graph.value_info}


def with_inferred_infos(
    model: "ModelProto",
    infos: dict[str, Any],
    nested: bool,
    wanted: set[str],
    inferred: Optional["ModelProto"] = None,
    weightless: Optional[bytes] = None,
    inferred_infos: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """Value infos with shape inference's answers added (on a weightless copy; model untouched),
    for the names in ``wanted``. ``nested``: the model has If/Loop/Scan bodies, whose answers are
    added too. ``inferred``: the caller's inference result for this model (not run again);
    ``weightless``: the model's weightless bytes, when the caller has them (what inference reads);
    ``inferred_infos``: :func:`inferred_value_infos` of ``inferred``, when the caller has it.
    Shape inference is a nicety for reports: a model it chokes on is still inspectable."""
    inferred = inferred if inferred is not None else inferred_copy(weightless or model)
    if inferred is None:
        return infos
    if inferred_infos is not None:  # the caller's index: looked up, the value_info not walked again
        merged = {name: inferred_infos[name] for name in wanted if name in inferred_infos}
    else:  # the same entries, read off the value_info for the few names wanted
        merged = {v.name: v for v in inferred.graph.value_info if v.name in wanted}
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
