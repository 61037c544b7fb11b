"""The ONNX checker's part of the pass contract: the structural checks before ``call``, the full check after.

Run once per pass by the wrapper (:class:`~graphsurgeon_tools.passes.base.Pass`), the same for every pass,
so one bad model gets one exit code and one message from every pass. Its snapshot of the model as handed
in (weightless bytes, structurally checked) also serves the pass: what shape inference reads
(``Pass.handed_bytes``).

Requires: a ModelProto. Ensures: a failure of the input is the user's (PreconditionError, exit 3), of the
output ours unless the input fails the same check (PostconditionError). Does NOT run ONNX Runtime (the
self-check is ``Pass.self_check``'s).
"""

from __future__ import annotations

from typing import Any

import onnx
from onnx import ModelProto

from graphsurgeon_tools.core.checker import (
    check_model_full,
    check_model_inference,
    check_model_structure,
    check_tensor_data,
    weightless_bytes,
)
from graphsurgeon_tools.core.opsets import default_opset, raise_if_unknown_opsets
from graphsurgeon_tools.errors import InvalidModelError, PostconditionError, PreconditionError

__all__ = ["ModelCheck", "one_line"]


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's text on one line, cut at ``limit`` characters (a user message is one line)."""
    return " ".join(str(exc).split())[:limit]


class ModelCheck:
    """The ONNX checker's part of the contract, the same for every pass, run ONCE per pass.

    At construction (before ``call``), the structural checks: a default-domain opset, no opset
    newer than this onnx knows, the structural checker (no shape inference) on a weightless
    snapshot, and every inline initializer's data against its shape and type (raw bytes
    included: the checker lets a short raw_data through). A failure is the user's
    (PreconditionError, exit 3). ``ensures``: the full checker on the output; only when that
    fails is the snapshot of the input fully checked, to tell the user's fault
    (PreconditionError) from ours (PostconditionError). ``unchanged``: when nothing was
    rewritten, the full check of the input instead. Either way the full checker runs once on
    the success path. Its inference half may have run inside ``call`` already, on the output
    (``result.strict_inference``: the one inference that also re-inferred the output shapes);
    ``check_model_full`` then runs the structural half only if the model is still what was
    inferred, the whole check otherwise: the verdicts and errors are the full checker's.
    """

    def __init__(self, model: ModelProto, *, label: str = "the input model") -> None:
        self.label = label
        default_opset(model)  # InvalidModelError when there is none
        raise_if_unknown_opsets(model, label)  # any domain onnx defines, ai.onnx.ml included
        # The snapshot is the weightless model's bytes: one serialization, checked as bytes by
        # the C++ checker, parsed again only if the output fails its full check.
        self.snapshot = weightless_bytes(model)
        try:
            for init in model.graph.initializer:
                problem = check_tensor_data(init)
                if problem:
                    raise PreconditionError(f"{label} fails the ONNX checker: {problem}")
            check_model_structure(self.snapshot)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
            raise PreconditionError(f"{label} fails the ONNX checker: {one_line(exc)}") from None

    def unchanged(self) -> None:
        """The full check of the input (nothing was rewritten, so nothing else is checked)."""
        try:
            # the snapshot's opsets and structure were judged at construction: its inference is what is left
            check_model_inference(self.snapshot)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, InvalidModelError) as exc:
            raise PreconditionError(f"{self.label} fails the ONNX checker: {one_line(exc)}") from None

    def ensures(self, model: ModelProto, what: str, inference: Any = None) -> None:
        """The full check of the output (``inference``: its inference half, when ``call`` ran it);
        a failure is ours unless the input fails it too."""
        try:
            # weights untouched: their sizes were checked before
            check_model_full(model, check_data=False, inference=inference)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, InvalidModelError) as exc:
            self.unchanged()
            raise PostconditionError(f"{what} produced a model the ONNX checker rejects: {exc}") from exc
