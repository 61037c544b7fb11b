"""The certificate: a JSON document a release can carry, and its words for a human.

Schema ``onnxtool.certificate/1`` (docs/certify.md describes every key)::

    schema, certified, first_counterexample {site, pair, axis, length, factor, text, cause, source}
    tool {name, version}, engines {onnx, onnxruntime, numpy, torch, ort_op_library, tensorrt_model}
    models {candidate {path, sha256}, reference {kind, spec, sha256}}
    profile {text, lengths [[a, b], ...], factors [...]}
    weight_bound {nearest, linear_cubic, output}
    sites [{site, op_type, semantics, reference_semantics, form, gate [a, b], notes,
            implementations [{name, kind: run|model, covers: every|sampled, note, calls, seconds, points?}],
            pairs [{a, b, gating, verdict: identical|within-bound|differs|not-compared, compared,
                    identical [{axis, factor, lengths}], within_bound [...], largest_weight_difference,
                    not_run [...], counterexamples [{axis, factor, cause, source, lint_rule, lengths, count,
                    first {axis, length, factor, out [a, b], row, a [[col, w]...], b [...], rows_differing, cause}}]}]}]
    skipped_sites [{site, reason}], whole_model {...}, seconds

Requires: the ledgers of a run (:mod:`.api`). Ensures: :meth:`Certificate.to_dict` is JSON-able
and deterministic for the same models, engines and profile (timings aside). Does NOT run
anything.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Optional

import numpy
import onnx

from graphsurgeon_tools import __version__
from graphsurgeon_tools.certify.ledger import Counterexample, PairLedger, weight_bound
from graphsurgeon_tools.certify.profile import CertifyProfile
from graphsurgeon_tools.certify.semantics import SiteSemantics
from graphsurgeon_tools.certify.trt_model import PARSER_SNAPSHOT
from graphsurgeon_tools.runtime import ort_library
from graphsurgeon_tools.runtime.session import ort_module

__all__ = ["SCHEMA", "Certificate", "SiteCertificate", "engine_versions", "file_sha256", "model_sha256", "words"]

SCHEMA = "onnxtool.certificate/1"
_SHOWN = {
    "onnxruntime": "ONNX Runtime",
    "candidate": "the candidate",
    "torch-routed": "PyTorch (routed op)",
    "torch-interpolate": "PyTorch's interpolate",
    "onnx-reference": "onnx.reference",
    "tensorrt-model": "TensorRT (model)",
}
_AXIS = {"h": "height", "w": "width"}


def file_sha256(path: Any) -> str:
    digest = hashlib.sha256()
    with open(os.fspath(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def model_sha256(model: Any) -> str:
    return hashlib.sha256(model.SerializeToString(deterministic=True)).hexdigest()


def engine_versions(torch: bool = True) -> dict[str, Optional[str]]:
    """Versions of what the certificate's runs used (torch only if the PyTorch side is importable)."""
    library = ort_library.library_path(allow_build=False)
    versions: dict[str, Optional[str]] = {
        "onnxtool": __version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort_module().__version__,
        "numpy": numpy.__version__,
        "torch": None,
        "ort_op_library": file_sha256(library) if library is not None else None,
        "tensorrt_model": PARSER_SNAPSHOT,
    }
    if torch:
        try:
            versions["torch"] = version("torch")
        except PackageNotFoundError:
            pass
    return versions


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _weights(entries: list[list[float]]) -> str:
    return ", ".join(f"{int(c)}:{w:.6g}" for c, w in entries) or "nothing"


def words(site: str, a: str, b: str, mode: str, example: Counterexample) -> str:
    """One counterexample as a sentence a user can act on."""
    axis = _AXIS.get(example.axis, example.axis)
    name_a, name_b = _SHOWN.get(a, a), _SHOWN.get(b, b)
    where = f"site {site!r}: at {axis} {example.length}"
    if example.out[0] != example.out[1]:
        text = (
            f"{where} (x{_fmt(example.factor)}), {name_a} makes {example.out[0]} pixels where {name_b} "
            f"makes {example.out[1]}"
        )
    elif mode == "nearest" and len(example.a) == 1 and len(example.b) == 1:
        text = (
            f"{where} -> {example.out[0]} (x{_fmt(example.factor)}), {name_a} picks input pixel "
            f"{int(example.a[0][0])} where {name_b} picks {int(example.b[0][0])} (output pixel {example.row})"
        )
    else:
        text = (
            f"{where} -> {example.out[0]} (x{_fmt(example.factor)}), output pixel {example.row}: {name_a} "
            f"weighs inputs {_weights(example.a)} where {name_b} weighs {_weights(example.b)}"
        )
    if example.cause is not None:
        text += f" [{example.cause.id}, {example.cause.source}]"
    return text


@dataclass
class SiteCertificate:
    site: str
    op_type: str
    semantics: SiteSemantics
    reference_semantics: SiteSemantics
    form: str
    gate: tuple[str, str]
    readers: list[Any]
    ledgers: list[PairLedger]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    compare_seconds: float = 0.0

    @property
    def gating(self) -> Optional[PairLedger]:
        return next((led for led in self.ledgers if (led.a, led.b) == self.gate), None)

    @property
    def certified(self) -> bool:
        gate = self.gating
        return gate is not None and gate.compared > 0 and not gate.differs

    def to_dict(self) -> dict[str, Any]:
        pairs = []
        for ledger in self.ledgers:
            entry = ledger.to_dict()
            entry["gating"] = (ledger.a, ledger.b) == self.gate
            pairs.append(entry)
        return {
            "site": self.site,
            "op_type": self.op_type,
            "semantics": self.semantics.to_dict(),
            "reference_semantics": self.reference_semantics.to_dict(),
            "form": self.form,
            "gate": list(self.gate),
            "notes": list(self.notes),
            "implementations": [r.describe() for r in self.readers],
            "pairs": pairs,
            "seconds": round(self.seconds, 3),
            "compare_seconds": round(self.compare_seconds, 3),
        }


@dataclass
class Certificate:
    profile: CertifyProfile
    sites: list[SiteCertificate]
    skipped: list[dict[str, Any]]
    models: dict[str, Any]
    reference_kind: str
    whole_model: Optional[dict[str, Any]] = None
    seconds: float = 0.0
    engines: dict[str, Optional[str]] = field(default_factory=engine_versions)

    @property
    def certified(self) -> bool:
        whole_ok = self.whole_model is None or self.whole_model.get("agrees", True)
        return bool(self.sites) and all(s.certified for s in self.sites) and whole_ok

    @property
    def passed(self) -> bool:
        return self.certified

    def first_counterexample(self) -> Optional[dict[str, Any]]:
        for site in self.sites:
            gate = site.gating
            if gate is None:
                continue
            example = gate.first()
            if example is not None:
                return {
                    "site": site.site,
                    "pair": [gate.a, gate.b],
                    "axis": example.axis,
                    "length": example.length,
                    "factor": example.factor,
                    "cause": example.cause.id if example.cause else None,
                    "source": example.cause.source if example.cause else None,
                    "text": words(site.site, gate.a, gate.b, site.reference_semantics.mode, example),
                }
        return None

    def summary_line(self) -> str:
        profile = self.profile.to_dict()
        lengths = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in profile["lengths"])
        factors = ", ".join(_fmt(f) for f in self.profile.factors)
        if not self.sites:
            return "nothing certified: no free Resize/plugin site"
        first = self.first_counterexample()
        if first is not None:
            return f"NOT certified: {first['text']}"
        if self.whole_model is not None and not self.whole_model.get("agrees", True):
            return f"NOT certified: the whole-model run disagrees with the per-axis tables ({self.whole_model['note']})"
        return (
            f"certified: {len(self.sites)} site(s) identical (or within the stated weight bound) to the reference "
            f"for every length in {lengths} and factor in {factors}, both axes"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "certified": self.certified,
            "summary": self.summary_line(),
            "first_counterexample": self.first_counterexample(),
            "tool": {"name": "onnxtool", "version": self.engines.get("onnxtool")},
            "engines": dict(self.engines),
            "models": self.models,
            "profile": self.profile.to_dict(),
            "weight_bound": {
                "nearest": 0.0,
                "linear_cubic": "2^-20 * 2^ceil(log2(max(L, 16))) per weight (8 float32 ulps of the coordinate); "
                f"e.g. {weight_bound('linear', 2048):.3g} at L=2048",
                "output": "|y_a - y_b| <= sum_j |w_a - w_b| * max|x| per axis (identical weights: float32 "
                "summation order only)",
            },
            "sites": [s.to_dict() for s in self.sites],
            "skipped_sites": list(self.skipped),
            "whole_model": self.whole_model,
            "seconds": round(self.seconds, 3),
        }

    def text(self) -> str:
        lines = [self.summary_line()]
        for site in self.sites:
            lines.append(f"site {site.site} ({site.op_type}, {site.form}; {site.reference_semantics.describe()}):")
            for ledger in site.ledgers:
                entry = ledger.to_dict()
                mark = "*" if (ledger.a, ledger.b) == site.gate else " "
                detail = entry["verdict"]
                if entry["verdict"] == "within-bound":
                    detail += f" (largest weight difference {entry['largest_weight_difference']:.3g})"
                if entry["counterexamples"]:
                    causes = sorted({c["cause"] or "unexplained" for c in entry["counterexamples"]})
                    detail += f" at {sum(c['count'] for c in entry['counterexamples'])} point(s): {', '.join(causes)}"
                lines.append(f" {mark} {ledger.a} vs {ledger.b}: {detail}")
            lines += [f"   note: {n}" for n in site.notes]
        for skipped in self.skipped:
            lines.append(f"skipped {skipped['site']}: {skipped['reason']}")
        if self.whole_model is not None:
            lines.append(f"whole model: {self.whole_model.get('note', '')}")
        return "\n".join(lines)
