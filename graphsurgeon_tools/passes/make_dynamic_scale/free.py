"""make-dynamic-scale and factor freedom: each rewritten site says whether its factor can
change alone (``free``, ``pinned_by``), and ``only_free=True`` rewrites only the free ones.

A pinned site is still rewritten by default: at its original factor the rewrite is exact,
and a user who changes several factors together (an FPN's lateral and top-down path) may
keep the graph runnable; the report says what pins it.

Requires: the selected sites of the model as given (before any rewrite). Ensures: one
:func:`graphsurgeon_tools.resize.freedom.site_freedom` call per pass (bounded; no ORT run).
Does NOT change the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.passes.make_dynamic_scale.plan import label
from graphsurgeon_tools.refusal import Fix, Refusal
from graphsurgeon_tools.resize.freedom import site_freedom

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

    from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan
    from graphsurgeon_tools.passes.make_dynamic_scale.result import RewrittenSite
    from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["annotate", "decide", "hold_pinned"]

#: A pinned site is exact at its original factor: rewriting every site is the fix.
_ALL_SITES = Fix(
    "make_dynamic_scale", (("only_free", False),), note="change the factors of the sites that pin each other together"
)


def decide(model: "ModelProto", sites: list["ResizeSite"]) -> dict[str, Any]:
    """site key (node name, else output name) -> Freedom, for the main-graph sites."""
    main = [s for s in sites if s.in_main_graph]
    return site_freedom(model, sites=main) if main else {}


def _key(site: "ResizeSite") -> str:
    return site.node_name or site.output_name


def hold_pinned(sites: list["ResizeSite"], decided: dict[str, Any]) -> tuple[list["ResizeSite"], list[Skip]]:
    """(the free sites, a skip for every other one with what pins it or why it is undecided)."""
    kept: list["ResizeSite"] = []
    held: list[Skip] = []
    for site in sites:
        freedom = decided.get(_key(site))
        if freedom is not None and freedom.free:
            kept.append(site)
            continue
        if freedom is None:
            why = f"not decided: inside {site.scope}"
        elif freedom.pinned_by is not None:
            why = freedom.pinned_by.describe()
        else:
            why = f"not decided: {freedom.reason}"
        held.append(
            Skip(label(site), site.op_type, Refusal("not-free", f"not free (only_free=True): {why}", _ALL_SITES))
        )
    return kept, held


def annotate(rewritten: list["RewrittenSite"], plans: list["Plan"], decided: dict[str, Any]) -> list["RewrittenSite"]:
    """The rewritten sites with ``free``/``pinned_by`` filled (plans and rewritten share their order), in
    place: they are the pass's own fresh report entries (a copy of each cost more than the whole loop)."""
    for site, plan in zip(rewritten, plans):
        freedom = decided.get(_key(plan.site))
        if freedom is not None:
            site.free = freedom.free
            site.pinned_by = freedom.pinned_by.describe() if freedom.pinned_by else None
    return rewritten
