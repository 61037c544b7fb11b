"""The validation report as values: :class:`FactorResult`, :class:`Diagnosis`, :class:`ValidationReport`.

Requires: nothing. Ensures: ``ValidationReport.to_dict()`` is the JSON report (stable keys);
``passed`` holds when at least one factor was compared and every compared factor passed: a
"vacuous" factor (every comparison against a constant or below-atol reference) is not a pass. Does NOT print or write (see ``render`` and ``junit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from graphsurgeon_tools.check.compare import OutputComparison
from graphsurgeon_tools.errors import CheckFailedError
from graphsurgeon_tools.validation.sweep import Factor, format_factor

__all__ = ["Diagnosis", "FactorResult", "ValidationReport"]


@dataclass
class FactorResult:
    """One sweep point: compared, skipped (with the reason) or failed to run (with the error)."""

    factor: Factor
    status: str  # passed | failed | vacuous (every comparison vacuous) | skipped | error
    reason: str = ""
    outputs: list[OutputComparison] = field(default_factory=list)
    scale_feeds: dict[str, list[Any]] = field(default_factory=dict)
    seconds: float = 0.0
    # What factor=None means here: "baked" (the scales the static side holds) or "as-is"
    # (a model without any resize, where a factor means nothing).
    factor_label: str = "baked"

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": self.factor_label if self.factor is None else self.factor,
            "status": self.status,
            "reason": self.reason,
            "outputs": [o.to_dict() for o in self.outputs],
            "scale_feeds": self.scale_feeds,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class Diagnosis:
    """What a mismatch looks like it comes from.

    ``explained_by`` is the Resize attribute change that, applied to the candidate,
    reproduces the reference within tolerance (the strongest evidence there is);
    ``closest`` the best change otherwise. ``pattern`` describes where the error sits
    (border vs interior, periodic with the upscale factor); ``weights`` lists parameters
    that differ between candidate and reference when their names match.
    """

    factor: Factor
    output: str
    summary: str
    explained_by: Optional[dict[str, Any]] = None
    closest: Optional[dict[str, Any]] = None
    pattern: dict[str, Any] = field(default_factory=dict)
    weights: list[dict[str, Any]] = field(default_factory=list)
    variants_tried: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": "baked" if self.factor is None else self.factor,
            "output": self.output,
            "summary": self.summary,
            "explained_by": self.explained_by,
            "closest": self.closest,
            "pattern": self.pattern,
            "weights": self.weights,
            "variants_tried": self.variants_tried,
        }


@dataclass
class ValidationReport:
    """Everything ``validate`` found. ``passed`` is the verdict; ``to_dict()`` is the JSON report."""

    candidate: str
    reference: dict[str, Any]
    atol: float
    rtol: float
    seed: int
    inputs: list[dict[str, Any]]
    candidate_ports: dict[str, Any]
    factors: list[FactorResult]
    diagnosis: Optional[Diagnosis] = None
    notes: list[str] = field(default_factory=list)
    tolerance: str = ""  # the dtype-aware default in words, when atol/rtol were not given (atol/rtol: its floor)
    # What ran: versions, the plugin kernel, the torch op, the models' sha256 (runtime.provenance).
    evidence: dict[str, Any] = field(default_factory=dict)
    # A certificate (onnxtool.certificate/1 dict) given to validate(certificate=...): its verdict
    # joins the report's (a refused certificate fails the report).
    certificate: Optional[dict[str, Any]] = None

    @property
    def compared(self) -> list[FactorResult]:
        return [f for f in self.factors if f.status in ("passed", "failed", "vacuous", "error")]

    @property
    def passed(self) -> bool:
        compared = self.compared
        certified = self.certificate is None or bool(self.certificate.get("certified"))
        return bool(compared) and all(f.status == "passed" for f in compared) and certified

    def summary_line(self) -> str:
        compared = self.compared
        failed = [f for f in compared if f.status != "passed"]
        skipped = [f for f in self.factors if f.status == "skipped"]
        if not compared:
            why = skipped[0].reason if skipped else "empty sweep"
            return f"FAILED: nothing was compared ({why})"
        tol = f"atol={self.atol:g} rtol={self.rtol:g}" + (" (dtype-aware: see tolerance)" if self.tolerance else "")
        tail = f"; {len(skipped)} skipped" if skipped else ""
        if not failed and self.certificate is not None and not self.certificate.get("certified"):
            return f"FAILED: {len(compared)} factor(s) within {tol}{tail}, but {self.certificate.get('summary')}"
        if not failed:
            return f"PASSED: {len(compared)} factor(s) within {tol}{tail}"
        vacuous = [f for f in failed if f.status == "vacuous"]
        names = ", ".join(_point(f) for f in failed if f.status != "vacuous")
        if len(vacuous) == len(failed):
            return (
                f"FAILED: {len(vacuous)} of {len(compared)} factor(s) vacuous "
                f"({', '.join(_point(f) for f in vacuous)}): the reference is constant or below "
                f"atol={self.atol:g}, nothing was proven{tail}"
            )
        extra = f"; {len(vacuous)} vacuous" if vacuous else ""
        return f"FAILED: {len(failed) - len(vacuous)} of {len(compared)} factor(s) out of {tol} ({names}){extra}{tail}"

    def raise_if_failed(self) -> "ValidationReport":
        """Raise :class:`CheckFailedError` (exit code 1) unless the report passed; return self."""
        if not self.passed:
            detail = f" - {self.diagnosis.summary}" if self.diagnosis else ""
            raise CheckFailedError(
                f"validate {self.candidate} vs {self.reference.get('label')}: {self.summary_line()}{detail}"
            )
        return self

    def to_dict(self) -> dict[str, Any]:
        compared = self.compared
        worst = [o.max_abs_error for f in compared for o in f.outputs if o.max_abs_error is not None]
        return {
            "passed": self.passed,
            "summary": self.summary_line(),
            "candidate": self.candidate,
            "reference": self.reference,
            "atol": self.atol,
            "rtol": self.rtol,
            "tolerance": self.tolerance,
            "seed": self.seed,
            "inputs": self.inputs,
            "candidate_ports": self.candidate_ports,
            "counts": {
                "compared": len(compared),
                "failed": sum(1 for f in compared if f.status != "passed"),
                "skipped": sum(1 for f in self.factors if f.status == "skipped"),
                "worst_max_abs_error": max(worst) if worst else None,
                "vacuous": sum(1 for f in compared for o in f.outputs if o.vacuous),
                "sites": sum(1 for f in compared for o in f.outputs if o.kind == "site"),
            },
            "factors": [f.to_dict() for f in self.factors],
            "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
            "notes": list(self.notes),
            "evidence": self.evidence,
            **({"certificate": self.certificate} if self.certificate is not None else {}),
        }


def _point(result: FactorResult) -> str:
    """A sweep point as the summary names it: x2, or its label (baked, original, a site plan)."""
    return result.factor_label if result.factor is None else format_factor(result.factor)
