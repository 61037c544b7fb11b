"""Pair a PyTorch run's routed resize calls with an ONNX candidate's resize sites.

``map_sites(calls, candidate) -> SiteMapping``: ``calls`` are the :class:`ResizeCall`
records of a :class:`~exporters.routing.ResizeRouter` run; ``candidate`` is an ONNX
model (or path) exported from the same module and perhaps rewritten since (made
dynamic, plugin-swapped). Each scale-driven call is paired with one scale-driven
site of the candidate::

    routed call (site k, scope, mode, ctm, factor)  <->  Resize / Upsample / DynamicTRTResize node

How. Sites are the candidate's resize nodes in graph order (ONNX requires a
topological order; both exporters emit nodes in execution order) that take
their factor from ``scales`` (constant, graph input or computed) or are plugin
nodes; nodes driven by ``sizes`` follow the data, as size-driven calls do, and are
not sites. Pairing is by position. Where the candidate records module scopes
(TorchScript node names ``/blocks.0/up/Resize``, the dynamo exporter's
``pkg.torch.onnx.name_scopes`` metadata) they are checked too: two scopes agree when
equal, when one is a dotted suffix of the other (a wrapper module adds a prefix;
TorchScript drops modules entered through a method other than ``forward``) or when
one is the root (``""``). When
scopes disagree with the order, sites are re-paired by scope (a rewrite may have
reordered the graph); when no pairing by scope exists, that is the error.

Then every pair must agree: mode; coordinate transformation mode (``half_pixel``
and ``pytorch_half_pixel`` agree: they differ only for a one-pixel output);
nearest_mode for nearest; ``cubic_coeff_a`` for cubic; antialias; and, where the
candidate's scales are constants, the factor. Disagreements are collected and
raised as ONE :class:`SiteMappingError` naming each site and what differs.

Requires: the calls of one run of the reference at its original factors (the
factors are compared); :func:`graphsurgeon_tools.resize.find_resize_sites`.
Ensures: a returned mapping pairs every scale-driven call with exactly one site.
Does NOT: run anything, look inside subgraphs/functions, or map size-driven calls.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import onnx
from onnx import helper

from exporters.routing import ResizeCall
from graphsurgeon_tools.errors import CheckFailedError
from graphsurgeon_tools.resize import ValueSource, find_resize_sites
from graphsurgeon_tools.validation.ports import model_ports

__all__ = ["CandidateSite", "SiteMapping", "SiteMappingError", "candidate_sites", "map_sites"]

PLUGIN_OP_TYPE = "DynamicTRTResize"
_HALF_PIXEL = {"half_pixel", "pytorch_half_pixel"}


class SiteMappingError(CheckFailedError):
    """The reference's resize calls and the candidate's resize sites do not pair up, or disagree."""


@dataclass(frozen=True)
class CandidateSite:
    """One scale-driven resize node of the candidate, as the mapping sees it."""

    node_name: str
    node_index: int
    op_type: str
    input_name: str
    output_name: str
    mode: str
    coordinate_transformation_mode: str
    nearest_mode: str
    cubic_coeff_a: float
    antialias: bool
    factors: Optional[tuple[float, ...]]  # spatial factors of constant scales; None when fed at run time
    scope: Optional[str]  # dotted module path recorded by the exporter; None when unknown
    scales_input: str = ""  # the graph input driving the scales (directly or through in-graph math), if any
    size_tensor: bool = False  # a plugin node fed a size tensor: output floor(in * f), coordinates out / in

    def describe(self) -> str:
        return f"node {self.node_name!r} ({self.op_type})"


@dataclass
class SitePair:
    call: ResizeCall
    site: CandidateSite


@dataclass
class SiteMapping:
    """The pairing, in site order, and what was noticed on the way."""

    pairs: list[SitePair]
    size_driven_calls: list[ResizeCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Scale-driven calls the exporter wrote no Resize for (e.g. the dynamo exporter decomposes
    # nearest-exact into index arithmetic): left to PyTorch at the code's factor, listed.
    unpaired_calls: list[ResizeCall] = field(default_factory=list)

    def site_for(self, site: int) -> CandidateSite:
        return self.pairs[site].site

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": [
                {
                    "site": p.call.site,
                    "scope": p.call.scope,
                    "node": p.site.node_name,
                    "mode": p.site.mode,
                    "coordinate_transformation_mode": p.site.coordinate_transformation_mode,
                    "factors": p.call.original_factors,
                }
                for p in self.pairs
            ],
            "size_driven_calls": len(self.size_driven_calls),
            "left_to_pytorch": [c.describe() for c in self.unpaired_calls],
            "notes": list(self.notes),
        }


def _text(value: Any, default: str) -> str:
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


def _scope_of(node: Any) -> Optional[str]:
    """The dotted module path an exporter recorded for ``node`` (None when it recorded none)."""
    for prop in node.metadata_props:
        if prop.key == "pkg.torch.onnx.name_scopes":  # dynamo: ['', 'blocks.0', 'blocks.0.up', 'op_name']
            try:
                scopes = ast.literal_eval(prop.value)
            except (ValueError, SyntaxError):
                return None
            return str(scopes[-2]) if isinstance(scopes, list) and len(scopes) >= 2 else ""
    name = node.name
    if not name.startswith("/"):
        return None
    # TorchScript: /blocks.0/up/Resize_1. A Sequential's forward is a scope of its own and its
    # children are named after it: /head/head/head.1/Resize is module head.head.1.
    parts: list[str] = []
    for part in name.split("/")[1:-1]:
        if parts and part.startswith(parts[-1] + "."):
            parts.pop()
        parts.append(part)
    return ".".join(parts)


def _plugin_site(node: Any, index: int, driver: str, producers: dict[str, Any], ranks: dict[str, int]) -> CandidateSite:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    mode = _text(attrs.get("mode"), "nearest")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    ctm = _text(attrs.get("coordinate_transformation_mode"), "")
    if not ctm:
        ctm = "align_corners" if int(attrs.get("align_corners", 0) or 0) else "half_pixel"
    return CandidateSite(
        node_name=node.name,
        node_index=index,
        op_type=node.op_type,
        input_name=node.input[0],
        output_name=node.output[0],
        mode=mode,
        coordinate_transformation_mode=ctm,
        nearest_mode=_text(attrs.get("nearest_mode"), "round_prefer_floor"),
        cubic_coeff_a=float(attrs.get("cubic_coeff_a", -0.75)),
        antialias=bool(attrs.get("antialias", 0)),
        factors=None,
        scope=_scope_of(node),
        scales_input=driver,
        size_tensor=len(node.input) > 1
        and (
            getattr(producers.get(node.input[1]), "op_type", "") == "ConstantOfShape" or ranks.get(node.input[1], 1) > 1
        ),
    )


def candidate_sites(candidate: Union[Any, str]) -> list[CandidateSite]:
    """The candidate's scale-driven resize sites (Resize, Upsample, DynamicTRTResize) in graph order."""
    model = candidate if isinstance(candidate, onnx.ModelProto) else onnx.load(str(candidate), load_external_data=False)
    # Which graph input drives each node: validate's own ports, so a pair [f, f] or a single
    # factor expanded in the graph, a shared input and a size tensor built in-graph all count.
    drivers = {node: scale.name for scale in model_ports(model, "the candidate").scale_inputs for node in scale.nodes}
    producers = {out: node for node in model.graph.node for out in node.output}
    ranks = {i.name: len(i.type.tensor_type.shape.dim) for i in model.graph.input}
    found = {s.node_index: s for s in find_resize_sites(model)}
    sites: list[CandidateSite] = []
    for index, node in enumerate(model.graph.node):
        if node.op_type == PLUGIN_OP_TYPE:
            sites.append(_plugin_site(node, index, drivers.get(node.name, ""), producers, ranks))
            continue
        site = found.get(index)
        if site is None or (site.scales_source == ValueSource.ABSENT and node.name not in drivers):
            continue  # not a resize, or driven by sizes that follow the data (a factor input's sizes count)
        factors = None
        if site.has_constant_scales and site.scales is not None:
            scales = tuple(float(v) for v in site.scales)
            factors = scales[2:] if len(scales) > 2 else scales
        sites.append(
            CandidateSite(
                node_name=site.node_name,
                node_index=index,
                op_type=site.op_type,
                input_name=site.input_name,
                output_name=site.output_name,
                mode=site.mode,
                coordinate_transformation_mode=site.coordinate_transformation_mode,
                nearest_mode=site.nearest_mode,
                cubic_coeff_a=float(site.cubic_coeff_a),
                antialias=bool(site.antialias),
                factors=factors,
                scope=_scope_of(node),
                scales_input=drivers.get(node.name, ""),
            )
        )
    return sites


def _differences(call: ResizeCall, site: CandidateSite) -> list[str]:
    attrs = call.attributes or {}
    diffs: list[str] = []
    if call.attributes is None:
        return [f"the call's mode {call.torch_mode!r} has no ONNX Resize"]
    if site.mode != attrs["mode"]:
        diffs.append(f"mode {site.mode} (the reference: {attrs['mode']})")
    ctm, want = site.coordinate_transformation_mode, attrs["coordinate_transformation_mode"]
    if ctm != want and not (ctm in _HALF_PIXEL and want in _HALF_PIXEL):
        diffs.append(f"coordinate_transformation_mode {ctm} (the reference: {want})")
    if attrs["mode"] == "nearest" and site.mode == "nearest" and site.nearest_mode != attrs["nearest_mode"]:
        diffs.append(f"nearest_mode {site.nearest_mode} (the reference: {attrs['nearest_mode']})")
    if attrs["mode"] == "cubic" and site.mode == "cubic" and abs(site.cubic_coeff_a - attrs["cubic_coeff_a"]) > 1e-6:
        diffs.append(f"cubic_coeff_a {site.cubic_coeff_a:g} (the reference: {attrs['cubic_coeff_a']:g})")
    if site.antialias != bool(attrs.get("antialias")):
        diffs.append(f"antialias {int(site.antialias)} (the reference: {int(bool(attrs.get('antialias')))})")
    if site.factors is not None and call.original_factors is not None:
        spatial = site.factors[-len(call.original_factors) :]
        if len(site.factors) < len(call.original_factors) or any(
            abs(a - b) > 1e-6 * max(1.0, abs(b)) for a, b in zip(spatial, call.original_factors)
        ):
            diffs.append(f"factors {_factors(site.factors)} (the reference: {_factors(call.original_factors)})")
    return diffs


def _factors(values: Sequence[float]) -> str:
    return "x".join(f"{v:g}" for v in values)


def _scopes_agree(ours: str, theirs: Optional[str]) -> bool:
    """Equal, or one a dotted suffix of the other: a wrapper module adds a prefix, and TorchScript
    drops the scopes of modules entered through a method other than ``forward`` (``vae.decode``).
    The root's own calls (``""``) agree with any scope: the other side's root may be a wrapper."""
    if theirs is None or ours == theirs or not ours or not theirs:
        return True
    return ours.endswith("." + theirs) or theirs.endswith("." + ours)


def _pair_by_scope(calls: Sequence[ResizeCall], sites: Sequence[CandidateSite]) -> Optional[list[CandidateSite]]:
    """Each call paired with the first unpaired site of its scope, in order (None: some call has none)."""
    free = list(sites)
    paired = []
    for call in calls:
        match = next((s for s in free if _scopes_agree(call.scope, s.scope)), None)
        if match is None:
            return None
        free.remove(match)
        paired.append(match)
    return paired


def _without_resize(calls: list[ResizeCall], sites: list[CandidateSite]) -> Optional[list[ResizeCall]]:
    """The calls that pair with ``sites`` in order (scope and attributes agreeing), when every site finds
    one and the rest are calls the exporter turned into something other than a Resize; else None."""
    kept: list[ResizeCall] = []
    position = 0
    for site in sites:
        while position < len(calls) and (
            not _scopes_agree(calls[position].scope, site.scope) or _differences(calls[position], site)
        ):
            position += 1
        if position == len(calls):
            return None
        kept.append(calls[position])
        position += 1
    return kept


def map_sites(calls: Sequence[ResizeCall], candidate: Union[Any, str], *, label: str = "the candidate") -> SiteMapping:
    """Pair the scale-driven ``calls`` with ``candidate``'s sites; raise ONE :class:`SiteMappingError` if they differ."""
    sites = candidate_sites(candidate)
    ours = [c for c in calls if c.site is not None]
    mapping = SiteMapping(pairs=[], size_driven_calls=[c for c in calls if c.site is None])
    if len(ours) > len(sites):
        kept = _without_resize(ours, sites)
        if kept is not None:  # every site found its call; the other calls have no Resize in the candidate
            mapping.unpaired_calls = [c for c in ours if all(c is not k for k in kept)]
            mapping.notes.append(
                f"{len(mapping.unpaired_calls)} resize call(s) have no Resize in {label} (the exporter computed them "
                f"another way): left to PyTorch at the code's factor and not driven by the sweep: "
                f"{[c.describe() for c in mapping.unpaired_calls]}"
            )
            ours = kept
    if len(ours) != len(sites):
        hint = ""
        if mapping.size_driven_calls and len(sites) > len(ours):
            hint = (
                f" (its {len(mapping.size_driven_calls)} size-driven call(s) follow the data and take no factor: "
                "a site made dynamic from its sizes has no counterpart in the module)"
            )
        raise SiteMappingError(
            f"the reference makes {len(ours)} scale-driven resize call(s) but {label} has {len(sites)} "
            f"scale-driven resize site(s){hint}; reference: {[c.describe() for c in ours] or 'none'}; "
            f"{label}: {[s.describe() for s in sites] or 'none'}"
        )
    if not all(_scopes_agree(c.scope, t.scope) for c, t in zip(ours, sites)):
        by_scope = _pair_by_scope(ours, sites)
        if by_scope is None:
            first = next(i for i, (c, t) in enumerate(zip(ours, sites)) if not _scopes_agree(c.scope, t.scope))
            raise SiteMappingError(
                f"{label}'s resize sites come from other modules than the reference's calls: "
                f"{ours[first].describe()} vs {sites[first].describe()} from module {sites[first].scope!r}; "
                f"reference scopes {[c.scope for c in ours]}, {label} {[t.scope for t in sites]}"
            )
        mapping.notes.append("graph order differs from execution order; sites paired by module scope")
        sites = by_scope
    problems = []
    for call, site in zip(ours, sites):
        diffs = _differences(call, site)
        if diffs:
            problems.append(f"{call.describe()} vs {site.describe()}: " + ", ".join(diffs))
        mapping.pairs.append(SitePair(call, site))
    if problems:
        raise SiteMappingError(
            f"{label} disagrees with the reference at {len(problems)} site(s): " + "; ".join(problems)
        )
    return mapping
