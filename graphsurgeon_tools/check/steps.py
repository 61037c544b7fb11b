"""Which two models every figure of a built-in check compares, and each intermediate step's share.

A pass may rewrite an intermediate before its own rewrite (onnxsim with ``simplify=True``,
inlined functions, a rebaked earlier layout). The check's verdict is always about the model
written against the model the USER handed in, byte for byte; each intermediate step is
measured on its own against that same user model (:func:`measure_step`), so a report says
how much of the end-to-end difference a step introduced. A step whose own difference exceeds
the check's bound fails the check like any other difference.

Models are named by role and by the sha256 of their serialized bytes (:func:`model_ref`):
``input`` (the user's model), ``written`` (the pass's output), ``after <step>``.

Requires: ModelProtos or their bytes. Ensures: JSON-ready dicts. Does NOT decide the
verdict of the end-to-end comparison (compare_models does) and imports onnxruntime only
through compare_models.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from onnx import ModelProto

from graphsurgeon_tools.check import equivalence

__all__ = ["INPUT_ROLE", "WRITTEN_ROLE", "Intermediate", "measure_step", "model_ref", "name_models"]

#: The role of the model the user handed in, and of the model a pass writes.
INPUT_ROLE = "input"
WRITTEN_ROLE = "written"


@dataclass
class Intermediate:
    """A model a pass made on the way (``step``: "onnxsim", "inline-functions", "relayout") and what
    the step changed (e.g. nodes before/after)."""

    step: str
    model: ModelProto
    changes: dict[str, Any] = field(default_factory=dict)


def _sha256(model: Union[ModelProto, bytes]) -> str:
    blob = model if isinstance(model, bytes) else model.SerializeToString()
    return hashlib.sha256(blob).hexdigest()


def model_ref(role: str, model: Union[ModelProto, bytes], sha256: Optional[str] = None) -> dict[str, str]:
    """``{"role", "sha256"}``: the sha256 of the serialized ModelProto (given when already known)."""
    return {"role": role, "sha256": sha256 or _sha256(model)}


def _evidence_sha(check: Any, role: str) -> Optional[str]:
    """The sha256 compare_models' evidence record already took of one of its two models."""
    for entry in (getattr(check, "evidence", None) or {}).get("models", ()):
        if entry.get("role") == role and entry.get("sha256"):
            return entry["sha256"]
    return None


def name_models(check: Any, reference: Union[ModelProto, bytes], written: ModelProto) -> None:
    """Set ``check.models``: the user's model as the reference, the written model as the candidate."""
    check.models = {
        "reference": model_ref(INPUT_ROLE, reference, _evidence_sha(check, "reference")),
        "candidate": model_ref(WRITTEN_ROLE, written, _evidence_sha(check, "candidate")),
    }


def measure_step(
    reference: Union[ModelProto, bytes],
    step: Intermediate,
    *,
    reference_feeds: Optional[Mapping[str, Any]] = None,
    dims: Optional[Mapping[str, int]] = None,
    atol: float = 0.0,
    rtol: float = 0.0,
) -> dict[str, Any]:
    """The intermediate ``step.model`` against the user's ``reference`` on the check's inputs."""
    measured = equivalence.compare_models(
        reference, step.model, reference_feeds=reference_feeds, dims=dims, atol=atol, rtol=rtol
    )
    outputs = [o.max_abs_diff for o in measured.outputs]
    sites = [o.max_abs_diff for o in measured.sites]
    return {
        "step": step.step,
        "changes": dict(step.changes),
        "reference": model_ref(INPUT_ROLE, reference, _evidence_sha(measured, "reference")),
        "candidate": model_ref(f"after {step.step}", step.model, _evidence_sha(measured, "candidate")),
        "passed": measured.passed,
        "skipped": measured.skipped,
        "max_abs_diff": max(outputs) if outputs else None,  # the model's outputs, as the check's headline
        "sites_max_abs_diff": max(sites) if sites else None,  # Resize/Upsample outputs both graphs have
        "outputs": len(measured.outputs),
        "sites": len(measured.sites),
        "atol": atol,
        "rtol": rtol,
        # the user's model's session is the check's own (reused); the step's model gets one of its own
        "sessions": [dict(entry) for entry in measured.sessions],
    }
