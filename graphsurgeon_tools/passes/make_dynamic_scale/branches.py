"""make-dynamic-scale, step 5 for sites in If branches: check every branch, not the one the
seeded inputs happen to pick.

::

    rewritten site inside an If whose condition is a scalar bool graph input
        ->  extra seeds of the built-in check, chosen so that each such input takes both values

The built-in check (``check.equivalence.compare_models``) feeds seeded random inputs; a
scalar bool input (an If condition) gets one value per seed, so a rewritten site in the other
branch would go unchecked. :func:`branch_seeds` picks the fewest extra seeds (from the same
generator, ``check.feeds.random_feeds``) that give every scalar bool input the value seed 0
did not.

Requires: the original model (what the check's inputs are generated from) and the sites
rewritten. Ensures: seeds only (no run); none when no rewritten site is inside an If or the
model has no scalar bool input. Does NOT know which input feeds which If (a condition
computed in the graph is not steered; the report says which seeds ran).
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from onnx import ModelProto, TensorProto

from graphsurgeon_tools import check

__all__ = ["branch_seeds"]

#: How far to look for a seed that flips every scalar bool input (each flips with p = 1/2).
_SEARCH = 32


def branch_seeds(original: ModelProto, scopes: Iterable[str], dims: Optional[Mapping[str, int]] = None) -> list[int]:
    """Extra check seeds (besides 0) under which each scalar bool graph input takes the value it
    did not take at seed 0; [] when no rewritten site is in an If branch (``scopes``: the
    rewritten sites' ``ResizeSite.scope``) or nothing can be steered."""
    if not any("If " in scope for scope in scopes):
        return []

    shapes = check.feeds.concrete_input_shapes(original, dims)
    flags = [
        i.name
        for i in original.graph.input
        if i.name in shapes and not shapes[i.name] and i.type.tensor_type.elem_type == TensorProto.BOOL
    ]
    if not flags:
        return []
    first = check.feeds.random_feeds(original, shapes, 0)
    missing = {name: not bool(first[name]) for name in flags}
    seeds: list[int] = []
    for seed in range(1, _SEARCH):
        feeds = check.feeds.random_feeds(original, shapes, seed)
        hit = [name for name, wanted in missing.items() if bool(feeds[name]) == wanted]
        if hit:
            seeds.append(seed)
            for name in hit:
                del missing[name]
        if not missing:
            break
    return seeds
