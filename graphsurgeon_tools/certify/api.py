"""``certify(candidate, reference=None, *, profile) -> Certificate``: per-axis proof over a whole profile.

For each free Resize/DynamicTRTResize site of ``candidate`` (or the ones named in ``sites``)
and each axis (height, width), every length and factor of ``profile`` is probed in every
implementation (:mod:`.readers`), and each pair's bands compared (:mod:`.ledger`). The pair
that decides the verdict ("gating") is the candidate's site against the reference's
implementation: ONNX Runtime's own Resize with the reference model's attributes (an ONNX
reference, or no reference: the candidate's own semantics), ``onnx.reference``
(``reference="onnx-reference"``), or the routed PyTorch op (``torch:``/``python:``
references). Other pairs are reported with their known causes but do not decide.

Requires: a candidate with 4-D (NCHW) sites whose factor is a graph input (or a plugin node);
the PyTorch side for torch readers (skipped, and said so, without it). Ensures: reads models,
writes nothing; memory bounded by one point's bands; every implementation that did not run
at a point is reported as ``not_run`` (never counted as agreeing). Does NOT cover sites
inside If/Loop bodies or functions, axes other than the last two, or non-float32 data.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from graphsurgeon_tools import extensions
from graphsurgeon_tools.certify.certificate import Certificate, SiteCertificate, file_sha256, model_sha256
from graphsurgeon_tools.certify.ledger import PairLedger
from graphsurgeon_tools.certify.profile import CertifyProfile, parse_certify_profile
from graphsurgeon_tools.certify.readers import (
    OnnxReferenceReader,
    OrtResizeReader,
    Reader,
    RegisteredReader,
    SiteReader,
)
from graphsurgeon_tools.certify.semantics import SiteSemantics, site_form
from graphsurgeon_tools.certify.trt_model import TensorRTModel
from graphsurgeon_tools.certify.whole_model import whole_model_check
from graphsurgeon_tools.errors import EnvironmentProblemError, OnnxToolError, UsageError
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.resize import find_resize_sites
from graphsurgeon_tools.resize.semantics import PLUGIN_OP_TYPE

__all__ = ["CertSite", "certify", "site_readers"]

#: Seconds onnx.reference may take per site (it is per-element Python).
DEFAULT_ONNX_REFERENCE_BUDGET_S = 2.0
_FREE_SOURCES = ("graph_input", "runtime")
_TORCH_PREFIXES = ("torch:", "python:", "python-scales:")


@dataclass
class CertSite:
    """One site to certify: the candidate's node and what it means."""

    name: str
    node: Any
    semantics: SiteSemantics
    form: str
    free: bool
    reason: str = ""
    reference_semantics: Optional[SiteSemantics] = None
    extra: dict[str, Any] = field(default_factory=dict)


def _model_sites(model: Any) -> list[CertSite]:
    found: list[tuple[int, CertSite]] = []
    outside = len(model.graph.node)  # sites of bodies and functions sort after the main graph's
    for site in find_resize_sites(model, nested=True):
        if not site.in_main_graph:
            outside += 1
            found.append(
                (
                    outside,
                    CertSite(
                        site.node_name or site.output_name,
                        None,
                        SiteSemantics.from_site(site),
                        "scales",
                        False,
                        f"in {site.scope}: certify reads main-graph sites",
                    ),
                )
            )
            continue
        node = model.graph.node[site.node_index]
        free = site.scales_source.value in _FREE_SOURCES or site.sizes_source.value in _FREE_SOURCES
        reason = "" if free else f"its scales are {site.scales_source.value}: no factor reaches it"
        if free and site.input_rank not in (None, 4):
            free, reason = False, f"rank {site.input_rank}: certify probes 4-D (NCHW) sites"
        if free and site.axes is not None and tuple(a % 4 for a in site.axes) not in ((2, 3),):
            free, reason = False, f"axes {list(site.axes)}: certify probes the last two axes"
        found.append(
            (
                site.node_index,
                CertSite(
                    site.node_name or site.output_name,
                    node,
                    SiteSemantics.from_site(site),
                    site_form(model, node),
                    free,
                    reason,
                ),
            )
        )
    for index, node in enumerate(model.graph.node):
        if node.op_type == PLUGIN_OP_TYPE:
            found.append(
                (
                    index,
                    CertSite(
                        node.name or node.output[0], node, SiteSemantics.from_plugin(node), site_form(model, node), True
                    ),
                )
            )
    return [site for _, site in sorted(found, key=lambda item: item[0])]


def _reference_kind(reference: Any) -> str:
    if reference is None:
        return "none"
    if isinstance(reference, str) and reference == "onnx-reference":
        return "onnx-reference"
    if isinstance(reference, str) and reference.startswith(_TORCH_PREFIXES):
        return "torch"
    if isinstance(reference, (str, os.PathLike)) or hasattr(reference, "graph"):
        return "onnx"
    return "torch"  # an nn.Module or callable: run by the routed op


def _gate(kind: str) -> str:
    return {"none": "onnxruntime", "onnx": "onnxruntime", "onnx-reference": "onnx-reference", "torch": "torch-routed"}[
        kind
    ]


def site_readers(
    site: CertSite, *, onnx_reference_budget_s: float, torch: bool = True
) -> tuple[list[Reader], list[str]]:
    """The implementations of one site, and notes on those that could not be made."""
    original = site.reference_semantics or site.semantics
    readers: list[Reader] = [
        OrtResizeReader("onnxruntime", original, "scales"),
        SiteReader("candidate", site.semantics, site.node, site.form),
        OnnxReferenceReader(original, onnx_reference_budget_s),
    ]
    notes: list[str] = []
    trt = TensorRTModel(site.semantics)
    if trt.refused:
        notes.append(f"tensorrt-model: not applicable ({trt.refused})")
    else:
        readers.append(trt)
    if torch:
        loaders = extensions.resize_readers()
        if not loaders:
            notes.append(
                f"torch-routed, torch-interpolate: not run (the PyTorch side is not installed: {extensions.TORCH_HINT})"
            )
        for name, loader in loaders.items():
            try:
                made = loader(original.to_dict())
            except (ImportError, OnnxToolError) as exc:  # torch or its op missing: said, and the rest runs
                notes.append(f"{name}: not run ({exc})")
                continue
            if made is None:
                notes.append(f"{name}: no interpolate call exports as {original.describe()}")
                continue
            fn, note = made
            readers.append(RegisteredReader(name, original, fn, note))
    return readers, notes


def _pairs(names: list[str], gate: str) -> list[tuple[str, str]]:
    """The gating pair first, then the candidate and ONNX Runtime against every other implementation."""
    pairs = [("candidate", gate)]
    for base in ("candidate", "onnxruntime"):
        pairs += [(base, other) for other in names if other not in ("candidate", base) and (base, other) not in pairs]
    return pairs


def _read_all(readers: list[Reader], length: int, factor: float, axis: str) -> dict[str, Any]:
    """Each reader's band at one point; readers making the same engine call share one run."""
    bands: dict[str, Any] = {}
    shared: dict[Any, Any] = {}
    for reader in readers:
        if reader.key is not None and reader.key in shared:
            bands[reader.name] = shared[reader.key]
            reader.calls += 1
            continue
        bands[reader.name] = reader.band(length, factor, axis)
        if reader.key is not None:
            shared[reader.key] = bands[reader.name]
    return bands


def certify_site(
    site: CertSite, profile: CertifyProfile, gate: str, *, onnx_reference_budget_s: float, torch: bool = True
) -> SiteCertificate:
    """Probe every (axis, factor, length) of ``profile`` in every implementation of ``site``."""
    readers, notes = site_readers(site, onnx_reference_budget_s=onnx_reference_budget_s, torch=torch)
    by_name = {r.name: r for r in readers}
    if gate not in by_name:
        raise EnvironmentProblemError(
            f"site {site.name!r}: the reference implementation {gate!r} cannot run here "
            f"({'; '.join(notes) or 'not available'})"
        )
    candidate_is_ort = site.node.op_type == "Resize"
    ledgers = [
        PairLedger(a, b, site.reference_semantics or site.semantics, candidate_is_ort, site.form)
        for a, b in _pairs(list(by_name), gate)
    ]
    started = time.perf_counter()
    comparing = 0.0
    # The engines release the GIL while they run: the PyTorch side and a plugin candidate in one
    # worker thread -- always the same one, so torch's per-thread state never mixes -- beside ONNX
    # Runtime's own Resize and the TensorRT model here (about half the work each, cubic site).
    side = [r for r in readers if r.name.startswith("torch-") or (r.name == "candidate" and r.key is None)]
    main = [r for r in readers if r not in side]
    with ThreadPoolExecutor(max_workers=1) as worker:
        for axis in ("h", "w"):
            for factor in profile.factors:
                for length in profile.lengths:
                    pending = worker.submit(_read_all, side, length, factor, axis) if side else None
                    bands = _read_all(main, length, factor, axis)
                    if pending is not None:
                        bands.update(pending.result())
                    mark, memo = time.thread_time(), {}
                    for ledger in ledgers:
                        ledger.record(axis, factor, length, bands[ledger.a], bands[ledger.b], memo)
                    comparing += time.thread_time() - mark  # CPU of this thread
    return SiteCertificate(
        site=site.name,
        op_type=site.node.op_type,
        semantics=site.semantics,
        reference_semantics=site.reference_semantics or site.semantics,
        form=site.form,
        gate=("candidate", gate),
        readers=readers,
        ledgers=ledgers,
        notes=notes,
        seconds=time.perf_counter() - started,
        compare_seconds=comparing,
    )


def _match_reference_sites(sites: list[CertSite], reference_model: Any) -> None:
    reference_sites = _model_sites(reference_model)
    by_name = {s.name: s for s in reference_sites}
    for index, site in enumerate(sites):
        match = by_name.get(site.name) or (reference_sites[index] if index < len(reference_sites) else None)
        if match is not None:
            site.reference_semantics = match.semantics


def certify(
    candidate: Union[str, os.PathLike, Any],
    reference: Any = None,
    *,
    profile: Union[str, CertifyProfile],
    sites: Optional[Sequence[str]] = None,
    onnx_reference_budget_s: float = DEFAULT_ONNX_REFERENCE_BUDGET_S,
    whole_model: bool = True,
    whole_model_points: int = 4,
    whole_model_max_length: int = 96,
    torch: bool = True,
) -> Certificate:
    """Certify ``candidate``'s sites over ``profile`` (see the module docstring).

    Args:
        candidate: the rewritten model (path or ModelProto; never modified).
        reference: None (the candidate's own Resize semantics in ONNX Runtime), an ONNX model
            (its sites' attributes, matched by node name, else by order), ``"onnx-reference"``,
            or a ``torch:``/``python:`` reference (the routed PyTorch op).
        profile: ``"SIZES:FACTORS"`` (:func:`~.profile.parse_certify_profile`), e.g. ``"16..512:1,2,3,4"``.
        sites: node names to certify (default: every free site).
        onnx_reference_budget_s: seconds onnx.reference may take per site (it is sampled).
        whole_model: also run the full candidate against the reference at the boundary points.
        whole_model_points, whole_model_max_length: the budget of that check.
        torch: read the PyTorch implementations when the PyTorch side is installed.
    """
    started = time.perf_counter()
    parsed = profile if isinstance(profile, CertifyProfile) else parse_certify_profile(profile)
    model = load_model(candidate)
    kind = _reference_kind(reference)
    all_sites = _model_sites(model)
    if kind == "onnx":
        _match_reference_sites(all_sites, load_model(reference))
    chosen = [s for s in all_sites if s.free] if not sites else [s for s in all_sites if s.name in set(sites)]
    if sites:
        missing = sorted(set(sites) - {s.name for s in all_sites})
        if missing:
            raise UsageError(
                f"sites={missing!r}: no such Resize/plugin node (sites: "
                f"{', '.join(s.name for s in all_sites) or 'none'})"
            )
        chosen = [s for s in chosen if s.free] + [s for s in chosen if not s.free]
    skipped = [
        {"site": s.name, "reason": s.reason or "not among sites=" + repr(list(sites or []))}
        for s in all_sites
        if not s.free or s not in chosen
    ]
    chosen = [s for s in chosen if s.free]
    gate = _gate(kind)
    results = [
        certify_site(site, parsed, gate, onnx_reference_budget_s=onnx_reference_budget_s, torch=torch)
        for site in chosen
    ]
    certificate = Certificate(
        profile=parsed,
        sites=results,
        skipped=skipped,
        models={"candidate": _model_entry(candidate, model), "reference": _reference_entry(reference, kind)},
        reference_kind=kind,
    )
    if whole_model and results:
        certificate.whole_model = whole_model_check(
            model, reference, certificate, max_points=whole_model_points, max_length=whole_model_max_length
        )
    certificate.seconds = time.perf_counter() - started
    return certificate


def _model_entry(source: Any, model: Any) -> dict[str, Any]:
    if isinstance(source, (str, os.PathLike)):
        return {"path": str(source), "sha256": file_sha256(source)}
    return {"path": None, "sha256": model_sha256(model)}


def _reference_entry(reference: Any, kind: str) -> dict[str, Any]:
    if kind == "onnx" and isinstance(reference, (str, os.PathLike)):
        return {"kind": kind, "spec": str(reference), "sha256": file_sha256(reference)}
    if kind == "onnx":
        return {"kind": kind, "spec": None, "sha256": model_sha256(reference)}
    return {"kind": kind, "spec": reference if isinstance(reference, str) else type(reference).__name__, "sha256": None}
