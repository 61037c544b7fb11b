"""Which sites a failed built-in check blames: the differing site outputs whose own input does
not depend on another differing site (a failed check names each responsible site); the others
differ only because something upstream did.

``responsible_sites(model, differing) -> [(node label, output), ...]`` in graph order.

Requires: ``differing``: output tensor names of Resize/Upsample/plugin sites that differ
(``CheckResult.sites``), and the (rewritten) model whose main graph is topologically sorted.
Ensures: one pass over the main graph's nodes. Does NOT run anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from graphsurgeon_tools.core.graph import node_reads

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

__all__ = ["responsible_sites"]


def responsible_sites(model: "ModelProto", differing: Iterable[str]) -> list[tuple[str, str]]:
    wanted = set(differing)
    tainted: set[str] = set()  # computed from a differing site output
    found: list[tuple[str, str]] = []
    for node in model.graph.node:
        upstream = not tainted.isdisjoint(node_reads(node))
        hits = [out for out in node.output if out in wanted]
        if hits and not upstream:
            found.append((node.name or hits[0], hits[0]))
        if hits or upstream:
            tainted.update(out for out in node.output if out)
    return found
