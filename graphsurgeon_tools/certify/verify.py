"""``verify_certificate(cert, models) -> VerifyReport``: does a certificate still hold here?

Checks, in order: the schema; each model's sha256 against the certificate's (the candidate
first, then an ONNX reference when the certificate has one); the engine versions (onnx,
onnxruntime, numpy, torch when the certificate recorded it, onnxtool's ORT op library); then
re-runs a sample of the claims: for every site and pair, the first length of each
identical/within-bound range and the first of each counterexample group, at most
``sample`` points per pair, each expected to land in the same verdict.

Requires: a certificate written by :func:`~.api.certify` (dict or JSON path) and the models
it names. Ensures: reads only; ``passed`` is False with the reasons when anything differs.
Does NOT re-run the whole profile (run ``certify`` again for that).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from graphsurgeon_tools.certify.api import _match_reference_sites, _model_sites, site_readers
from graphsurgeon_tools.certify.certificate import SCHEMA, engine_versions, file_sha256, model_sha256
from graphsurgeon_tools.certify.ledger import PairLedger
from graphsurgeon_tools.errors import InvalidModelError, UsageError
from graphsurgeon_tools.io import load_model

__all__ = ["VerifyReport", "verify_certificate"]


@dataclass
class VerifyReport:
    passed: bool = True
    problems: list[str] = field(default_factory=list)
    checked: list[dict[str, Any]] = field(default_factory=list)

    def fail(self, text: str) -> None:
        self.passed = False
        self.problems.append(text)

    def summary_line(self) -> str:
        if self.passed:
            return f"certificate holds: hashes and versions match, {len(self.checked)} claim(s) re-run and confirmed"
        return f"certificate does NOT hold: {self.problems[0]}" + (
            f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "summary": self.summary_line(),
            "problems": list(self.problems),
            "checked": list(self.checked),
        }


def _load(certificate: Union[str, os.PathLike, Mapping[str, Any]]) -> dict[str, Any]:
    if isinstance(certificate, Mapping):
        return dict(certificate)
    try:
        with open(os.fspath(certificate), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise InvalidModelError(f"{certificate}: not a readable certificate ({exc})") from None


def _samples(pair: Mapping[str, Any], sample: int) -> list[tuple[str, float, int, str]]:
    points: list[tuple[str, float, int, str]] = []
    for group in pair.get("counterexamples", []):
        points.append((group["axis"], group["factor"], group["lengths"][0][0], "differs"))
    for kind in ("identical", "within_bound"):
        for group in pair.get(kind, []):
            points.append((group["axis"], group["factor"], group["lengths"][0][0], "same"))
    return points[:sample]


def verify_certificate(
    certificate: Union[str, os.PathLike, Mapping[str, Any]], models: Sequence[Any], *, sample: int = 4
) -> VerifyReport:
    """Re-check ``certificate`` against ``models`` (candidate first, then an ONNX reference if any)."""
    data = _load(certificate)
    report = VerifyReport()
    if data.get("schema") != SCHEMA:
        report.fail(f"schema {data.get('schema')!r} is not {SCHEMA!r}")
        return report
    if not models:
        raise UsageError("verify needs the certified model (and the reference model, if it was a file)")
    recorded = data.get("models", {})
    wanted = [("candidate", recorded.get("candidate", {}).get("sha256"))]
    if recorded.get("reference", {}).get("kind") == "onnx":
        wanted.append(("reference", recorded["reference"].get("sha256")))
    for (role, digest), model in zip(wanted, models):
        got = file_sha256(model) if isinstance(model, (str, os.PathLike)) else model_sha256(model)
        if got != digest:
            report.fail(f"the {role} model's sha256 is {got[:12]}..., the certificate's {str(digest)[:12]}...")
    if len(models) < len(wanted):
        report.fail("the certificate names an ONNX reference model: pass it after the candidate")
    now = engine_versions(torch=data.get("engines", {}).get("torch") is not None)
    for key in ("onnx", "onnxruntime", "numpy", "torch", "ort_op_library"):
        then = data.get("engines", {}).get(key)
        if then is not None and now.get(key) != then:
            report.fail(f"{key} is {now.get(key)} here, the certificate was made with {then}")
    if not report.passed:
        return report
    candidate = load_model(models[0])
    sites = {s.name: s for s in _model_sites(candidate)}
    if len(models) > 1 and recorded.get("reference", {}).get("kind") == "onnx":
        _match_reference_sites(list(sites.values()), load_model(models[1]))
    for entry in data.get("sites", []):
        site = sites.get(entry["site"])
        if site is None:
            report.fail(f"site {entry['site']!r} is not in the model")
            continue
        readers, _ = site_readers(site, onnx_reference_budget_s=1e9, torch=now.get("torch") is not None)
        by_name = {r.name: r for r in readers}
        for pair in entry.get("pairs", []):
            a, b = by_name.get(pair["a"]), by_name.get(pair["b"])
            if a is None or b is None:
                continue
            for axis, factor, length, expected in _samples(pair, sample):
                ledger = PairLedger(pair["a"], pair["b"], site.reference_semantics or site.semantics)
                ledger.record(axis, factor, length, a.band(length, factor, axis), b.band(length, factor, axis))
                got = "differs" if ledger.differs else ("same" if ledger.compared else "not-run")
                report.checked.append(
                    {
                        "site": entry["site"],
                        "pair": [pair["a"], pair["b"]],
                        "axis": axis,
                        "factor": factor,
                        "length": length,
                        "expected": expected,
                        "got": got,
                    }
                )
                if got != expected:
                    report.fail(
                        f"site {entry['site']!r} {pair['a']} vs {pair['b']} at {axis} {length} "
                        f"x{factor:g}: the certificate says {expected}, a re-run says {got}"
                    )
    return report
