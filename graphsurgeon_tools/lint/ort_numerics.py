"""ONNX Runtime: Resize configurations where its numbers depart from the ONNX reference or PyTorch.

    nearest, output/input ratio not whole        ORT picks another source pixel   (onnxruntime#28085)
    cubic + pytorch_half_pixel, output length 1  ORT != ONNX reference != PyTorch (onnxruntime#11496)
    pytorch_half_pixel (linear/cubic), length 1  ORT == reference != PyTorch      (pytorch#79361)
    cubic, cubic_coeff_a != -0.75, antialias=0   ORT == reference != PyTorch      (onnxruntime#28292)

Sources and what was measured here (onnxruntime 1.32, onnx 1.23 ReferenceEvaluator,
torch 2.13, float32, seeded):
* microsoft/onnxruntime#28085 (and #28310): nearest 26 -> 64 (scale 64/26): with
  half_pixel/round_prefer_ceil 12 of 64 pixels differ from F.interpolate(mode="nearest");
  with asymmetric/floor 1 of 64 differs from PyTorch and, given as sizes, from the
  ONNX reference too. Integer factors select identically.
* microsoft/onnxruntime#11496: bicubic 4x4 -> 1x1 with pytorch_half_pixel: ORT differs
  from the reference by 3.4e-3 and from PyTorch by 2.2e-2; with half_pixel ORT equals
  PyTorch exactly.
* pytorch/pytorch#79361: PyTorch's interpolate behaves as half_pixel; pytorch_half_pixel
  (what the TorchScript exporter writes) differs where an output length is 1
  (bilinear 4 -> 1: 1.6e-2 in ORT and in the reference).
* microsoft/onnxruntime#28292: cubic_coeff_a=-0.5 with antialias=0 equals the reference
  but not F.interpolate(mode="bicubic"), which uses -0.75 (-0.5 only with antialias).

Severity: "error" where the model fixes the configuration (constant scales/sizes and
shapes), "warning" where a run-time factor can reach it; #28292 is a "warning"
always (the model may mean Keys' -0.5 on purpose).
Does NOT: run anything (tests/lint reproduces the figures above).
"""

from __future__ import annotations

from typing import Optional

from graphsurgeon_tools.lint import _geometry as geo
from graphsurgeon_tools.lint.base import LintContext, Reason, Rule
from graphsurgeon_tools.resize import ResizeSite

_HALF_PIXEL = (
    "; coordinate_transformation_mode='half_pixel' is equal wherever the output length is above 1 "
    "and matches PyTorch at 1 (no rewrite of this tool sets it)"
)


def _length_one(ctx: LintContext, site: "ResizeSite") -> Optional[str]:
    """ "certain" / "possible" that a resized axis has output length 1; None when it cannot."""
    if ctx.whole_factor_sizes(site):  # out = in * f with a whole f: never 1 unless nothing is resized
        return None
    axes = geo.resized_axes(site)
    lengths = geo.output_lengths(site)
    if axes is not None and lengths is not None:
        known = [lengths[a] for a in axes if a < len(lengths)]
        if 1 in known:
            return "certain"
        if None not in known:
            return None
    scales = geo.full_scales(site)
    if scales is not None:
        return "possible" if any(s < 1 for s in scales) else None
    sizes = geo.full_sizes(site)
    if sizes is not None:
        # input dims unknown: a length-1 size past the batch/channel axes may be a resize to 1
        return "possible" if any(v == 1 for v in sizes[2:]) else None
    return "possible"  # run-time scales or sizes


def check_nearest_fraction(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.mode != "nearest" or ctx.whole_factor_sizes(site):
        return None
    ratios = geo.ratios(site)
    if ratios is None:
        return Reason(
            "nearest with run-time factors: at a factor whose output/input ratio is not whole, ONNX "
            "Runtime can select a different source pixel than PyTorch and the ONNX reference",
            severity="warning",
        )
    fractional = [r for r in ratios if r != 1.0 and not geo.is_whole(r) and not geo.is_whole(1.0 / r)]
    if not fractional:
        return None
    return Reason(
        f"nearest at ratio {fractional[0]:g} (not whole): ONNX Runtime maps output pixels with the "
        "float scale and selects a different source pixel than PyTorch/the ONNX reference at some "
        "outputs"
    )


def check_cubic_length_one(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.mode != "cubic" or site.coordinate_transformation_mode != "pytorch_half_pixel":
        return None
    how = _length_one(ctx, site)
    if how is None:
        return None
    return Reason(
        f"cubic + pytorch_half_pixel where an output length is {'' if how == 'certain' else 'possibly '}"
        "1: ONNX Runtime departs from the ONNX reference and from PyTorch there" + _HALF_PIXEL,
        severity="error" if how == "certain" else "warning",
    )


def check_pytorch_half_pixel(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.mode not in ("linear", "cubic") or site.coordinate_transformation_mode != "pytorch_half_pixel":
        return None
    how = _length_one(ctx, site)
    if how is None:
        return None
    return Reason(
        f"pytorch_half_pixel where an output length is {'' if how == 'certain' else 'possibly '}1: "
        "it samples index 0 there, PyTorch's interpolate samples the half_pixel centre" + _HALF_PIXEL,
        severity="error" if how == "certain" else "warning",
    )


def check_cubic_coefficient(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.mode != "cubic" or site.antialias or abs(site.cubic_coeff_a - (-0.75)) < 1e-9:
        return None
    return Reason(
        f"cubic_coeff_a={site.cubic_coeff_a:g} with antialias=0: equals the ONNX reference, not "
        "F.interpolate(mode='bicubic') (a=-0.75; -0.5 only with antialias=True)",
        severity="warning",
    )


RULES = (
    Rule(
        "ort-nearest-fractional-ratio",
        "onnxruntime",
        "resize",
        "microsoft/onnxruntime#28085",
        "nearest only at whole output/input ratios",
        check_nearest_fraction,
    ),
    Rule(
        "ort-cubic-pytorch-half-pixel-length-one",
        "onnxruntime",
        "resize",
        "microsoft/onnxruntime#11496",
        "no cubic pytorch_half_pixel resize to length 1",
        check_cubic_length_one,
    ),
    Rule(
        "torch-pytorch-half-pixel-length-one",
        "onnxruntime",
        "resize",
        "pytorch/pytorch#79361",
        "no pytorch_half_pixel resize to length 1",
        check_pytorch_half_pixel,
    ),
    Rule(
        "torch-cubic-coefficient",
        "onnxruntime",
        "resize",
        "microsoft/onnxruntime#28292",
        "cubic_coeff_a is PyTorch's -0.75 unless antialiasing",
        check_cubic_coefficient,
    ),
)
