"""Describe a model's Resize/Upsample sites, after refusing a model that cannot be described.

``inspect_model(model, nodes=...) -> InspectionReport``: what ``onnxtool inspect`` prints,
including each site's factor freedom (:mod:`graphsurgeon_tools.resize.freedom`: can its
factor change alone, and if not, the node and shapes that pin it).

Requires: a ModelProto or a path (loaded by :func:`graphsurgeon_tools.io.load_model`,
weights left on disk).

Ensures: the model passed the full ONNX checker (on a weightless copy) and no site has
nonsense scales or sizes; the report lists every site (or those whose node or output name
matches one of ``nodes``, exact or glob): those of the main graph in graph order, then
those of If/Loop/Scan bodies and model-local functions, each with ``scope`` saying where it
lives (``find_resize_sites(model, nested=True)``), with the model's default opset.
Raises InvalidModelError for a model the checker rejects, InvalidScalesError for the first
site with a problem (named), UnsupportedModelError for an opset newer than onnx knows.

Does NOT modify the model, write anything, or run it. A ``nodes`` pattern that matches
nothing gives an empty list, not an error (inspect is how a user finds the names).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

import onnx
from onnx import ModelProto

from graphsurgeon_tools.core.checker import check_model_full
from graphsurgeon_tools.core.opsets import default_opset
from graphsurgeon_tools.errors import InvalidModelError, naming
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.resize import ResizeSite, ValueSource, find_resize_sites
from graphsurgeon_tools.resize.freedom import Freedom, site_freedom
from graphsurgeon_tools.resize.qdq import qdq_sites
from graphsurgeon_tools.resize.runtime_sizes import RuntimeSizes, recognise
from graphsurgeon_tools.resize.sanity import raise_if_nonsense
from graphsurgeon_tools.resize.shape_source import SourceNotes

__all__ = ["InspectionReport", "inspect_model"]


@dataclass(frozen=True)
class InspectionReport:
    """The Resize/Upsample sites of one model.

    ``model``: the path given, or None for a ModelProto. ``opset``: the default-domain opset.
    ``sites``: the selected :class:`~graphsurgeon_tools.resize.ResizeSite` objects, graph order.
    ``freedom``: each selected site's :class:`~graphsurgeon_tools.resize.freedom.Freedom`, keyed by
    node name (else output name); empty when not asked for.
    """

    model: Optional[str]
    opset: int
    sites: Sequence["ResizeSite"] = field(default_factory=tuple)
    freedom: Mapping[str, "Freedom"] = field(default_factory=dict)
    # run-time sizes recognised as round(dim * constant) (resize.runtime_sizes), keyed like freedom
    patterns: Mapping[str, "RuntimeSizes"] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``{"model", "opset", "sites": [site.to_dict(), ...]}`` (the CLI's ``--json``);
        each site also carries ``free``, ``pinned_by``, ``pinned_node``, ``freedom_probe`` and
        ``freedom_note`` when freedom was decided, and ``runtime_sizes`` (the pattern, the constant
        factors, the roundings) when its run-time sizes are a constant factor of data shapes."""
        sites = []
        for site in self.sites:
            data = site.to_dict()
            freedom = self.freedom.get(site.node_name or site.output_name)
            if freedom is not None:
                data.update(freedom.to_dict())
            pattern = self.patterns.get(site.node_name or site.output_name)
            if pattern is not None:
                data["runtime_sizes"] = pattern.to_dict()
            sites.append(data)
        return {"model": self.model, "opset": self.opset, "sites": sites}


def inspect_model(
    model: Union["ModelProto", str, "os.PathLike[str]"],
    *,
    nodes: Optional[Sequence[str]] = None,
    freedom: bool = True,
) -> InspectionReport:
    """Check ``model`` and list its Resize/Upsample sites.

    Args:
        model: a ModelProto or a path to an ONNX file.
        nodes: node or output names (exact or ``fnmatch`` globs) to keep; None keeps all.
        freedom: decide each kept site's factor freedom (static shapes only; no ORT run).
    """
    label = None if isinstance(model, onnx.ModelProto) else str(model)
    with naming(label):  # errors name the file when there is one
        return _inspect(load_model(model), label, nodes, freedom)


def _inspect(
    proto: "ModelProto", label: Optional[str], nodes: Optional[Sequence[str]], freedom: bool
) -> InspectionReport:
    try:
        # A model the checker rejects (cycle, dangling input, unknown op...) is refused rather
        # than half-described; the weights are not serialized for this.
        check_model_full(proto)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise InvalidModelError(f"fails the ONNX checker: {' '.join(str(exc).split())[:300]}") from None
    sites = find_resize_sites(proto, nested=True)
    for site in sites:
        raise_if_nonsense(site)
    if nodes:
        sites = [
            s
            for s in sites
            if any(fnmatch.fnmatchcase(s.node_name, p) or fnmatch.fnmatchcase(s.output_name, p) for p in nodes)
        ]
    patterns: dict[str, Any] = {}
    sites = _shape_source_notes(proto, sites, patterns)
    sites = _quantized_notes(proto, sites)
    decided = {}
    if freedom and sites:
        decided = site_freedom(proto, sites=sites)
    return InspectionReport(
        model=label, opset=default_opset(proto), sites=tuple(sites), freedom=decided, patterns=patterns
    )


def _quantized_notes(proto: "ModelProto", sites: Sequence["ResizeSite"]) -> list["ResizeSite"]:
    """A main-graph site between quantization nodes says so (resize.qdq): the form ORT's quantizer and
    ModelOpt write, which swap-plugin and validate compare at ORT_ENABLE_BASIC."""
    found = qdq_sites(proto) if any(s.in_main_graph for s in sites) else {}
    return [
        dataclasses.replace(s, notes=s.notes + (f"quantized: {found[s.output_name].describe()}",))
        if s.in_main_graph and s.output_name in found
        else s
        for s in sites
    ]


def _shape_source_notes(
    proto: "ModelProto", sites: Sequence["ResizeSite"], patterns: dict[str, Any]
) -> list["ResizeSite"]:
    """Run-time scales/sizes that read data SHAPES say so (static ones: simplify=True folds them)
    instead of the tracer's "computed from graph input"/"constant subgraph over 64 nodes"; sizes
    that are round(dim * constant) say the pattern (make-dynamic-scale makes the constant an input)
    and land in ``patterns``."""
    sources = SourceNotes(proto)
    out = []
    for site in sites:
        better = {kind: f"{kind}: {text}" for kind, text in sources.of_site(site).items()}
        if site.sizes_source == ValueSource.RUNTIME and site.sizes_tensor and site.in_main_graph:
            pattern, _ = recognise(proto, site, sources.flow)
            if pattern is not None:
                patterns[site.node_name or site.output_name] = pattern
                better["sizes"] = (
                    f"sizes: {pattern.describe()}; make-dynamic-scale turns the constant(s) "
                    "into an input (every layout)"
                )
        if better:
            notes = [better.pop(n.split(":", 1)[0], n) for n in site.notes]
            site = dataclasses.replace(site, notes=tuple(notes + list(better.values())))
        out.append(site)
    return out
