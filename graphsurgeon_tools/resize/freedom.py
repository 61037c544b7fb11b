"""Factor freedom: can one Resize site change its factor alone and the graph still run?

``site_freedom(model) -> dict[site_key, Freedom]``: for each Resize/Upsample site (keyed by
node name, else output name), its output shape is changed as if its factor grew by one
(x2 -> x3 on the axes it resizes) and only the nodes downstream of it are re-run through
:class:`~graphsurgeon_tools.resize.shape_flow.ShapeFlow`. A site is *free* when nothing
downstream clashes; otherwise :attr:`Freedom.pinned_by` names the node that breaks and the
shapes that meet there ("Concat /neck/Concat_1 joins [1,64,60,60] with [1,64,40,40]": an
upsample meeting a lateral/skip connection; "Reshape ... to the shape [...] baked in the
graph": a constant shape the exporter wrote).

``factor_clash(model, factor) -> Clash | None``: the same check with EVERY site (or the sites
named in a mapping) at ``factor`` on its resized axes, for a validate sweep point;
:func:`not_free_message` words it ("not free at x3: Concat ... joins ..."), and
:func:`runnable_factors` keeps the factors of a sweep that the model can run.

Requires: a ModelProto, a path, or an onnx_graphsurgeon Graph; a topologically sorted main
graph. Ensures: decided from the graph alone (no ONNX Runtime, no weights read beyond
small initializers); one base pass, then one pass per site over its downstream cone at
most, all within ``max_visits`` node visits (sites past it are undecided, ``free=None``).
Does NOT change the model, and does NOT decide sites whose shapes it cannot follow (a
custom-domain op or an If/Loop downstream, or a site inside an If/Loop body or a function,
makes the answer ``None`` with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from graphsurgeon_tools.core.graphs import as_model
from graphsurgeon_tools.resize.shape_flow import BudgetSpent, Clash, ShapeFlow, Tensor, format_shape
from graphsurgeon_tools.resize.shape_rules import UNKNOWN
from graphsurgeon_tools.resize.sites import MAIN_GRAPH, find_resize_sites

if TYPE_CHECKING:  # pragma: no cover
    from onnx import ModelProto

    from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["Clash", "Freedom", "factor_clash", "not_free_message", "runnable_factors", "site_freedom", "site_key"]

#: Node visits all per-site passes together may make, at least (a site's cone is re-run once;
#: ~10-40 us a visit: the default bound costs at most about what the base pass costs).
MIN_VISITS = 20_000
#: ... or this many times the node count, whichever is larger.
VISITS_PER_NODE = 1


@dataclass(frozen=True)
class Freedom:
    """Whether one site's factor can change alone.

    ``free``: True (nothing downstream clashes), False (``pinned_by`` says where), None (not
    decided; ``reason`` says why). ``probe``: the output shape tried (the original's, grown by
    one factor step on the resized axes)."""

    site: str
    free: Optional[bool]
    pinned_by: Optional[Clash] = None
    probe: Optional[tuple[int, ...]] = None
    reason: str = ""

    def describe(self) -> str:
        if self.free:
            return "free"
        if self.free is False and self.pinned_by is not None:
            return f"pinned: {self.pinned_by.describe()}"
        return f"not decided: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON keys of the reports: ``free``, ``pinned_by`` (text or None), ``pinned_node``,
        ``freedom_probe`` (the output shape tried), ``freedom_note`` (why undecided)."""
        return {
            "free": self.free,
            "pinned_by": self.pinned_by.describe() if self.pinned_by else None,
            "pinned_node": self.pinned_by.node if self.pinned_by else None,
            "freedom_probe": list(self.probe) if self.probe is not None else None,
            "freedom_note": self.reason or None,
        }


def site_key(site: "ResizeSite") -> str:
    """How sites are keyed in :func:`site_freedom`'s answer: node name, else output name."""
    return site.node_name or site.output_name


def _in_main_graph(site: "ResizeSite") -> bool:
    return getattr(site, "scope", MAIN_GRAPH) == MAIN_GRAPH


def not_free_message(factor: float, clash: Clash) -> str:
    """The sweep-point wording: ``not free at x3: Concat /neck/Concat_1 joins [...] with [...]``."""
    return f"not free at x{factor:g}: {clash.describe()}"


def _prepare(
    model: Any,
    sites: Optional[Sequence["ResizeSite"]],
    input_shapes: Optional[Mapping[str, Any]],
    input_values: Optional[Mapping[str, Any]] = None,
) -> tuple["ModelProto", list["ResizeSite"], ShapeFlow]:
    proto, _ = as_model(model)
    found = list(sites) if sites is not None else find_resize_sites(proto)
    return proto, found, ShapeFlow(proto, input_shapes=input_shapes, input_values=input_values)


def _resized_axes(site: "ResizeSite", x: tuple[int, ...], out: Optional[tuple]) -> list[int]:
    """The axes a site resizes: where its output differs from X; else its ``axes``; else the
    spatial axes (2.. of an image; the last of a rank <= 2 tensor), as validate feeds factors."""
    if out is not None and len(out) == len(x) and all(isinstance(d, int) for d in out):
        changed = [i for i, (a, b) in enumerate(zip(x, out)) if a != b]
        if changed:
            return changed
    if site.axes:
        return [a + len(x) if a < 0 else a for a in site.axes]
    return list(range(2, len(x))) if len(x) > 2 else [len(x) - 1]


def _probe(site: "ResizeSite", x: tuple[int, ...], out: tuple[int, ...], probes: dict[Any, tuple[int, ...]]) -> tuple:
    """The output shape a site is tried at: one factor step more on every resized axis, out + x
    (x2 -> x3, x0.5 -> x1.5). A function of the two shapes and ``axes`` alone, so ``probes`` keeps
    it per distinct triple: a graph's sites share a few shapes (2,000 sites, one computation)."""
    key = (x, out, site.axes)
    probe = probes.get(key)
    if probe is None:
        axes = _resized_axes(site, x, out)
        probe = probes[key] = tuple(o + d if i in axes else o for i, (d, o) in enumerate(zip(x, out)))
    return probe


def site_freedom(
    model: Union["ModelProto", Any],
    *,
    sites: Optional[Sequence["ResizeSite"]] = None,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
    input_values: Optional[Mapping[str, Any]] = None,
    max_visits: Optional[int] = None,
) -> dict[str, Freedom]:
    """Freedom of every site, keyed by :func:`site_key`, in graph order.

    Args:
        model: a ModelProto, a path or an onnx_graphsurgeon Graph (read, never changed).
        sites: the sites to decide (default: :func:`~graphsurgeon_tools.resize.find_resize_sites`).
        input_shapes: concrete shapes for graph inputs with symbolic dims (default: batch 1,
            other dims 128).
        input_values: values of small graph inputs, e.g. the original scales of a model whose
            scales are inputs (without them such a site's output shape is unknown: undecided).
        max_visits: node visits all sites together may spend (default: the larger of
            :data:`MIN_VISITS` and :data:`VISITS_PER_NODE` x nodes).
    """
    proto, found, flow = _prepare(model, sites, input_shapes, input_values)
    limit = max_visits if max_visits is not None else max(MIN_VISITS, VISITS_PER_NODE * len(proto.graph.node))
    budget = [limit]
    spent = f"analysis budget spent (max_visits={limit}; raise it to decide more sites)"
    answer: dict[str, Freedom] = {}
    keys = [site_key(site) for site in found]
    probes: dict[Any, tuple[int, ...]] = {}
    # Last sites first: their cones are the smallest, so a spent budget leaves the fewest undecided.
    for site, key in zip(reversed(found), reversed(keys)):
        if not _in_main_graph(site):
            answer[key] = Freedom(key, None, reason=f"inside {site.scope}: decided for main-graph sites only")
            continue
        if flow.base_clash is not None:
            answer[key] = Freedom(
                key,
                None,
                reason="the model's own shapes clash at the probe input shape "
                f"({flow.base_clash.describe()}); give input_shapes=",
            )
            continue
        x = flow.base.get(site.input_name, UNKNOWN)
        out = flow.base.get(site.output_name, UNKNOWN)
        if not x.static or not out.static or len(out.shape) != len(x.shape):
            answer[key] = Freedom(
                key,
                None,
                reason=f"shape of {site.input_name!r} or {site.output_name!r} "
                f"unknown ({format_shape(x.shape)} -> {format_shape(out.shape)})",
            )
            continue
        probe = _probe(site, x.shape, out.shape, probes)
        if budget[0] <= 0:  # downstream's answer (BudgetSpent on its first visit) without the call
            answer[key] = Freedom(key, None, probe=probe, reason=spent)
            continue
        grown = Tensor(out.elem, probe)
        try:
            clash, lost = flow.downstream({site.node_index: lambda _inputs, t=grown: t}, budget=budget)
        except BudgetSpent:
            answer[key] = Freedom(key, None, probe=probe, reason=spent)
            continue
        if clash is not None:
            answer[key] = Freedom(key, False, pinned_by=clash, probe=probe)
        elif lost is not None:
            answer[key] = Freedom(key, None, probe=probe, reason=f"shapes unknown after {lost}")
        else:
            answer[key] = Freedom(key, True, probe=probe)
    return {key: answer[key] for key in keys}


def factor_clash(
    model: Union["ModelProto", Any],
    factor: Union[float, Mapping[str, Union[float, Sequence[float]]]],
    *,
    sites: Optional[Sequence["ResizeSite"]] = None,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
    flow: Optional[ShapeFlow] = None,
) -> Optional[Clash]:
    """The first node that clashes when sites run at ``factor``; None when the shapes fit (or
    cannot be followed: then ONNX Runtime is the judge).

    Args:
        model: as for :func:`site_freedom`; also a model whose scales are graph inputs.
        factor: one factor for every site (on its resized axes), or {site_key: factor or a
            full per-axis scales vector}; sites not named keep their own scales.
        sites: the model's sites, when already found.
        input_shapes: as for :func:`site_freedom`.
        flow: a ShapeFlow of ``model`` to reuse across calls (``sites`` then required).
    """
    if flow is None or sites is None:
        _, found, flow = _prepare(model, sites, input_shapes)
    else:
        found = list(sites)
    wanted = {site_key(s): factor for s in found} if not isinstance(factor, Mapping) else dict(factor)
    overrides = {}
    for site in found:
        if site_key(site) not in wanted or not _in_main_graph(site):
            continue
        value = wanted[site_key(site)]
        out = flow.base.get(site.output_name, Tensor()).shape

        def resized(inputs: list[Tensor], site: "ResizeSite" = site, value: Any = value, out: Any = out) -> Tensor:
            x = inputs[0] if inputs else Tensor()
            if not x.static:
                return Tensor(x.elem, None)
            if isinstance(value, (int, float)):
                axes = _resized_axes(site, x.shape, out)
                scales = [float(value) if i in axes else 1.0 for i in range(len(x.shape))]
            else:
                scales = [float(v) for v in value]
                if site.axes and len(scales) == len(site.axes):
                    full = [1.0] * len(x.shape)
                    for axis, s in zip(site.axes, scales):
                        full[axis + len(x.shape) if axis < 0 else axis] = s
                    scales = full
                if len(scales) != len(x.shape):
                    return Tensor(x.elem, None)
            import math

            return Tensor(x.elem, tuple(int(math.floor(d * s)) for d, s in zip(x.shape, scales)))

        overrides[site.node_index] = resized
    if not overrides:
        return None
    clash, _ = flow.downstream(overrides)
    return clash


def runnable_factors(
    model: Union["ModelProto", Any],
    factors: Sequence[float],
    *,
    sites: Optional[Sequence["ResizeSite"]] = None,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
) -> tuple[list[float], dict[float, str]]:
    """Split a sweep into the factors every site can run at together, and the others with
    :func:`not_free_message`'s text. One pass per factor."""
    _, found, flow = _prepare(model, sites, input_shapes)
    keep: list[float] = []
    refused: dict[float, str] = {}
    for factor in factors:
        clash = factor_clash(model, factor, sites=found, flow=flow)
        if clash is None:
            keep.append(factor)
        else:
            refused[factor] = not_free_message(factor, clash)
    return keep, refused
