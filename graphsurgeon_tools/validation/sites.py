"""Per-site sweep points, the freedom of sweep points, and where a mismatch starts.

Per-site points: chosen resize sites at chosen factors, every other site at its original factor.

``validate(..., sites={"up1": [2, 3], "#0": 4})`` (CLI: ``--site up1=2,3 --site '#0=4'``) sweeps
the named sites of a candidate whose scales are graph inputs. A name is a resize node of the
candidate, ``#k`` (its k-th scale-driven site in graph order), or the module scope of a routed
PyTorch reference's call (``decoder.up``). Lists are zipped into points (a one-factor list
applies to every point); each point feeds the named sites their factor and every other scale
input the scales its node has originally (the PyTorch reference's code, or a static reference's
baked scales), so both sides receive exactly the same per-site factors.

Only free sites are swept: a point that changes a site the graph pins is skipped with
``<node> is not free at xN: <the node that breaks>`` (:class:`ClashFinder`, through
:func:`graphsurgeon_tools.resize.freedom.factor_clash` from a base pass at the original scales).

:func:`not_free_points` skips the factors of a plain sweep the graph cannot run ("not free at
x3: Concat ... joins ..."), never leaving them to a raw ONNX Runtime error; :func:`localise`
asks a reference that can (a routed PyTorch module) which site a mismatch starts at.

Requires: the candidate's ports and the reference. Ensures: one (point, skip reason) per point;
a name that matches no site, lists of different lengths, or a site whose original factor is
unknown is a :class:`UsageError`. Does NOT run anything, except :func:`localise` (one extra
candidate run with its site tensors as outputs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
import onnx

from graphsurgeon_tools.errors import CheckFailedError, OnnxToolError, UsageError
from graphsurgeon_tools.passes.swap_plugin import swap_plugin
from graphsurgeon_tools.resize.freedom import factor_clash, not_free_message
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE
from graphsurgeon_tools.resize.shape_flow import ShapeFlow
from graphsurgeon_tools.resize.sites import find_resize_sites
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed
from graphsurgeon_tools.validation.sweep import parse_factors

__all__ = [
    "ClashFinder",
    "SitePoint",
    "localise",
    "not_free_points",
    "originals_of",
    "parse_site_factors",
    "plan_site_points",
    "point_feeds",
]

SitesLike = Union[Mapping[str, Any], Iterable[str]]


@dataclass(frozen=True)
class SitePoint:
    """One per-site sweep point: candidate node name -> factor, for the named sites."""

    factors: tuple[tuple[str, float], ...]

    @property
    def label(self) -> str:
        return ",".join(f"{node}=x{factor:g}" for node, factor in self.factors)

    def as_dict(self) -> dict[str, float]:
        return dict(self.factors)


def _floats(value: Any, name: str) -> list[float]:
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    try:
        return parse_factors(items)
    except UsageError as exc:
        raise UsageError(f"sites={{{name!r}: ...}}: {exc}") from None


def parse_site_factors(values: SitesLike) -> dict[str, list[float]]:
    """``{"name": 2 | [2, 3] | "2,3"}`` or ``["name=2,3", ...]`` -> name -> factors."""
    if isinstance(values, Mapping):
        return {str(name): _floats(value, str(name)) for name, value in values.items()}
    parsed: dict[str, list[float]] = {}
    for item in values:
        name, sep, factors = str(item).rpartition("=")
        if not sep or not name:
            raise UsageError(f"sites= entries look like NAME=2,3, got {item!r}")
        parsed[name] = _floats(factors, name)
    if not parsed:
        raise UsageError("sites= is empty: name at least one site")
    return parsed


def _scale_driven_nodes(ports: Any) -> list[str]:
    nodes: list[str] = []
    for scale in ports.scale_inputs:
        nodes.extend(n for n in scale.nodes if n not in nodes)
    return nodes


def _resolve(name: str, nodes: list[str], reference: Any) -> list[str]:
    if name in nodes:
        return [name]
    if name.startswith("#") and name[1:].isdigit():
        k = int(name[1:])
        if k < len(nodes):
            return [nodes[k]]
        raise UsageError(f"sites={{{name!r}: ...}}: the candidate has {len(nodes)} scale-driven site(s)")
    sites = getattr(reference, "sites", None)
    if callable(sites):
        try:
            matched = [s["node"] for s in sites() if s.get("scope") == name and s["node"] in nodes]
        except AssertionError:  # the reference has not been prepared yet
            matched = []
        if matched:
            return matched
    raise UsageError(
        f"sites={{{name!r}: ...}} names no scale-driven site of the candidate; sites: "
        + ", ".join(f"#{i} {n}" for i, n in enumerate(nodes))
    )


def plan_site_points(
    site_factors: Mapping[str, Sequence[float]],
    model: Any,
    ports: Any,
    reference: Any,
    originals: Mapping[str, Sequence[float]],
    notes: list[str],
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
) -> list[tuple[SitePoint, str]]:
    """The zipped points, each with its skip reason ("" to run it).

    Args:
        site_factors: name -> factors (see :func:`parse_site_factors`).
        model: the candidate (its freedom is decided once, from the graph).
        ports: the candidate's ports; reference: the Reference (for module scopes).
        originals: node name -> original full scales of every scale-driven site.
        notes: appended to when a named site shares its scale input with others.
        input_shapes: the data inputs' shapes (for the freedom check's shape pass).
    """
    nodes = _scale_driven_nodes(ports)
    if not nodes:
        raise UsageError("sites= needs a candidate whose scales are graph inputs (make_dynamic_scale first)")
    resolved = {name: _resolve(name, nodes, reference) for name in site_factors}
    lengths = {len(v) for v in site_factors.values()} - {1}
    if len(lengths) > 1:
        raise UsageError(
            f"sites= lists have different lengths {sorted(lengths)}: give each the same number "
            "of factors (or one, for every point)"
        )
    count = max(lengths) if lengths else 1
    missing = [n for n in nodes if n not in originals]
    if missing:
        raise UsageError(
            f"sites=: the original factor of {', '.join(missing)} is unknown (a dynamic ONNX "
            "reference has none); compare against the static original or a PyTorch module"
        )
    for scale in ports.scale_inputs:
        named = [n for n in scale.nodes if any(n in v for v in resolved.values())]
        if named and len(scale.nodes) > 1:
            notes.append(f"input {scale.name!r} drives {', '.join(scale.nodes)}: they take the factor together")
    finder = ClashFinder(model, ports, originals, input_shapes)
    points: list[tuple[SitePoint, str]] = []
    for i in range(count):
        factors = tuple(
            (node, float(v[0] if len(v) == 1 else v[i])) for name, v in site_factors.items() for node in resolved[name]
        )
        changed = {node: f for node, f in factors if any(abs(f - o) > 1e-9 for o in list(originals[node])[2:])}
        clash = finder.clash(changed) if changed else None
        reason = ""
        if clash is not None:
            at = ", ".join(f"x{f:g}" for f in dict.fromkeys(changed.values()))
            reason = f"{', '.join(changed)} {'is' if len(changed) == 1 else 'are'} not free at {at}: {clash.describe()}"
        points.append((SitePoint(factors), reason))
    return points


class ClashFinder:
    """Whether sites at given factors break the candidate's shapes, from the graph (one base shape pass).

    The base pass feeds the scale inputs the sites' original scales when known, so the shapes
    downstream of every site are known before one is changed.
    """

    def __init__(
        self,
        model: Any,
        ports: Any,
        originals: Mapping[str, Sequence[float]],
        input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
    ) -> None:
        self.model, self.ports, self.originals, self.input_shapes = model, ports, originals, input_shapes
        self._state: Optional[tuple[Any, Any, Any]] = None

    def clash(self, factors: Mapping[str, float]) -> Any:
        if self._state is None:
            self._state = self._prepare()
        model, flow, sites = self._state
        if model is None:
            return None
        return factor_clash(model, dict(factors), sites=sites, flow=flow)

    def _prepare(self) -> tuple[Any, Any, Any]:
        model = self.model
        if any(node.op_type == PLUGIN_OP_TYPE for node in model.graph.node):
            # Shapes cannot be followed through a plugin node: decide on the same graph with the
            # plugin nodes swapped back to Resize (node names are kept).
            try:
                model = swap_plugin(model, reverse=True).model
            except OnnxToolError:
                return None, None, None
        values = {}
        for scale in self.ports.scale_inputs:
            node = next((n for n in scale.nodes if n in self.originals), None)
            if node is not None and scale.layout in ("scales", "pair", "factor"):
                values[scale.name] = scale.feed_scales(list(self.originals[node]), ())
        flow = ShapeFlow(model, input_shapes=self.input_shapes, input_values=values)
        return model, flow, find_resize_sites(model)


def point_feeds(
    point: SitePoint, ports: Any, x_shape: Sequence[int], originals: Mapping[str, Sequence[float]]
) -> dict[str, np.ndarray]:
    """One value per scale input: the point's factor for a named node, else the node's original scales."""
    chosen = point.as_dict()
    feeds: dict[str, np.ndarray] = {}
    for scale in ports.scale_inputs:
        factor = next((chosen[n] for n in scale.nodes if n in chosen), None)
        if factor is not None:
            feeds[scale.name] = scale.feed(factor, x_shape)
        else:
            node = next((n for n in scale.nodes if n in originals), None)
            if node is not None:
                feeds[scale.name] = scale.feed_scales(list(originals[node]), x_shape)
            elif scale.name in (ports.original_feeds() or {}):  # a declared input driving no resize site
                feeds[scale.name] = ports.original_feeds()[scale.name]
    return feeds


def not_free_points(
    plan: list[tuple[Any, str]], runner: Any, fixed: Mapping[str, Any], finder: "ClashFinder"
) -> list[tuple[Any, str]]:
    """``plan`` with each factor the graph cannot run skipped as ``not free at xN: <the node that breaks>``.

    Only the sites the sweep drives (scale inputs the user did not fix) take the factor.
    Decided from the graph (:func:`graphsurgeon_tools.resize.freedom.factor_clash`); a graph whose
    shapes cannot be followed keeps its points (ONNX Runtime is then the judge).
    """
    driven = [node for scale in runner.ports.scale_inputs if scale.name not in fixed for node in scale.nodes]
    if not driven:
        return plan
    checked: list[tuple[Any, str]] = []
    for factor, reason in plan:
        if not reason and isinstance(factor, (int, float)):
            clash = finder.clash({node: float(factor) for node in driven})
            if clash is not None:
                reason = not_free_message(float(factor), clash)
        checked.append((factor, reason))
    return checked


def originals_of(reference: Any, data: Sequence[tuple[str, np.ndarray]]) -> dict[str, tuple[float, ...]]:
    """Node name -> original scales, from a routed PyTorch reference (paired with the candidate now) or a
    static reference's baked scales; empty when unknown or when the pairing fails (the run reports that)."""
    if hasattr(reference, "original_scales"):
        try:
            reference.prepare([array for _, array in data])
            return dict(reference.original_scales())
        except (CheckFailedError, RunFailed):  # the module itself failed: each sweep point reports it
            return {}
    return dict(getattr(reference, "baked_scales", {}) or {})


def localise(
    runner: Any, reference: Any, data: Sequence[tuple[str, np.ndarray]], feeds: Mapping[str, np.ndarray]
) -> Optional[str]:
    """The reference's one-line localisation of a mismatch (the first differing site), when it offers one.

    The candidate is re-run on ``feeds`` with the site tensors the reference names as extra outputs.
    """
    find = getattr(reference, "localise", None)
    if find is None:
        return None

    def run_candidate(names: list[str]) -> dict[str, np.ndarray]:
        model = onnx.ModelProto()
        model.CopyFrom(runner.model)
        known = {o.name for o in model.graph.output}
        model.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n) for n in names if n not in known)
        return dict(OnnxRunner(model, f"{runner.where} (site outputs)").run(dict(feeds)))

    return find(run_candidate, data, feeds).message
