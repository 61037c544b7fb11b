"""Known departures between Resize implementations: which one explains a counterexample.

Each cause is a predicate on (the two implementations, the site's semantics, length, factor,
the two output lengths) plus the lint rule that names the class and its source:

    ort-nearest-fractional-ratio          nearest, out/in not whole, ONNX Runtime on one side
    torch-pytorch-half-pixel-length-one   pytorch_half_pixel (linear/cubic), output length 1
    ort-cubic-pytorch-half-pixel-length-one   cubic + pytorch_half_pixel, output length 1, ORT
    trt-scale-arithmetic                  TensorRT's floor(in*scale) and out/in resize, in*scale not whole
    align-corners-fractional-length       align_corners where in*scale is not whole: ONNX Runtime
                                          uses the integer output length, onnx.reference (and
                                          the op that follows it) in*scale
    float32-output-length                 output lengths differ: floor(in*scale) in float32 vs float64
    sizes-out-over-in                     a candidate fed sizes (or a size tensor) resizes by out/in,
                                          the scales reference by the scale: in*scale not whole

Requires: nothing. Ensures: pure. Does NOT prove a cause: it names the known class the
counterexample falls in; an unexplained counterexample has cause None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from graphsurgeon_tools.certify.semantics import SiteSemantics

__all__ = ["CAUSES", "Cause", "explain"]


@dataclass(frozen=True)
class Cause:
    id: str
    source: str
    text: str
    lint_rule: Optional[str] = None  # the `onnxtool lint` rule naming the class, where one does

    def to_dict(self) -> dict[str, Optional[str]]:
        return {"id": self.id, "source": self.source, "text": self.text, "lint_rule": self.lint_rule}


CAUSES = {
    c.id: c
    for c in (
        Cause(
            "ort-nearest-fractional-ratio",
            "microsoft/onnxruntime#28085",
            "ONNX Runtime maps nearest outputs with the float scale and picks another input pixel where out/in is "
            "not whole",
            lint_rule="ort-nearest-fractional-ratio",
        ),
        Cause(
            "torch-pytorch-half-pixel-length-one",
            "pytorch/pytorch#79361",
            "pytorch_half_pixel samples index 0 at an output length of 1; PyTorch samples the half_pixel centre",
            lint_rule="torch-pytorch-half-pixel-length-one",
        ),
        Cause(
            "ort-cubic-pytorch-half-pixel-length-one",
            "microsoft/onnxruntime#11496",
            "cubic + pytorch_half_pixel at an output length of 1: ONNX Runtime departs from the reference",
            lint_rule="ort-cubic-pytorch-half-pixel-length-one",
        ),
        Cause(
            "trt-scale-arithmetic",
            "NVIDIA/TensorRT#823; onnx/onnx-tensorrt importerUtils.cpp (resizeShapeTensor)",
            "TensorRT sizes the output floor(in*scale) and resizes by out/in, not by the scale",
            lint_rule="trt-scale-arithmetic",
        ),
        Cause(
            "align-corners-fractional-length",
            "onnx/onnx Resize spec (length_resized); onnx.reference op_resize",
            "align_corners where in*scale is not whole: ONNX Runtime divides by the integer output length - 1, "
            "onnx.reference (and onnxtool's op) by in*scale - 1",
        ),
        Cause(
            "float32-output-length",
            "onnx/onnx Resize spec (output_dimension = floor(input_dimension * scale))",
            "the output length floor(in*scale) differs between float32 and float64 arithmetic",
        ),
        Cause(
            "sizes-out-over-in",
            "onnx/onnx Resize spec (sizes given: scale = output / input)",
            "the candidate is fed output sizes and resizes by out/in, the reference by the scale",
            lint_rule="trt-scale-arithmetic",
        ),
    )
}

_ORT = ("onnxruntime", "candidate")  # ORT Resize runs (the candidate when it is an ORT Resize)
_TORCH = ("torch-routed", "torch-interpolate")


def _whole(value: float) -> bool:
    return abs(value - round(value)) < 1e-9


def explain(
    a: str,
    b: str,
    semantics: SiteSemantics,
    length: int,
    factor: float,
    out_a: int,
    out_b: int,
    candidate_is_ort: bool = True,
    candidate_form: str = "scales",
) -> Optional[Cause]:
    """The known cause of a difference between implementations ``a`` and ``b`` at (length, factor)."""
    names = {a, b}
    ort_side = "onnxruntime" in names or ("candidate" in names and candidate_is_ort)
    s32 = float(np.float32(factor))
    product = length * s32
    if out_a != out_b:
        if "tensorrt-model" in names:
            return CAUSES["trt-scale-arithmetic"]
        return CAUSES["float32-output-length"]
    out = out_a
    if "tensorrt-model" in names and not _whole(product):
        return CAUSES["trt-scale-arithmetic"]
    if "candidate" in names and candidate_form != "scales" and not _whole(product) and "tensorrt-model" not in names:
        return CAUSES["sizes-out-over-in"]
    ctm = semantics.coordinate_transformation_mode
    if ctm == "align_corners" and not _whole(product):
        return CAUSES["align-corners-fractional-length"]
    if out == 1 and ctm == "pytorch_half_pixel" and semantics.mode in ("linear", "cubic"):
        if names & set(_TORCH):
            return CAUSES["torch-pytorch-half-pixel-length-one"]
        if semantics.mode == "cubic" and ort_side:
            return CAUSES["ort-cubic-pytorch-half-pixel-length-one"]
    if semantics.mode == "nearest" and ort_side and out:
        ratio = out / length
        if not (math.isclose(ratio, round(ratio)) or math.isclose(1 / ratio, round(1 / ratio))):
            return CAUSES["ort-nearest-fractional-ratio"]
    return None
