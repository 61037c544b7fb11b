"""TensorRT: which axes a Resize may resize, and how ``axes`` may be given.

    Resize(X, scales=<tensor>, axes=[2, 3]) on rank 4   refused (tensor scales need iota axes)
    Resize(X, sizes=<tensor>,  axes=[2, 3])             accepted (sizes are interlaced)
    Resize(mode=cubic)  with a scale != 1 outside the last 2 axes   refused
    Resize(mode=linear) with a scale != 1 outside the last 3 axes   refused

Source: onnx/onnx-tensorrt onnxOpImporters.cpp, ``DEFINE_BUILTIN_OP_IMPORTER(Resize)``:
tensor scales with a non-trivial ``axes`` assert "axes attribute is supported with
scales tensor only when it's trivial i.e. it's an iota vector of same length as input
rank" (interlacing needs a float ShapeTensor, which the parser lacks); constant scales
pass through ``canUseNDResize(size, scales, 3)`` for linear and ``(…, 2)`` for cubic
(importerUtils.cpp), which refuses any scale != 1 before the last n axes. The
Upsample importer applies the linear check too. docs/operators.md states the same
("When scales is a tensor input, axes must be an iota vector of length rank(input)").

Does NOT: judge run-time scales (the parser checks only constants; with tensor scales
the resize layer decides at build time, which cannot be emulated here).
"""

from __future__ import annotations

from typing import Optional

from graphsurgeon_tools.lint import _geometry as geo
from graphsurgeon_tools.lint.base import LAYOUT_FACTOR, LAYOUT_SIZES, LintContext, Reason, Rule
from graphsurgeon_tools.resize import ResizeSite, ValueSource

_IMPORTER = "onnx/onnx-tensorrt onnxOpImporters.cpp (Resize importer)"


def check_iota_axes(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
    if site.axes is None or not geo.scales_are_tensor(site) or geo.is_iota(site):
        return None
    if site.input_rank is None:
        return Reason(
            f"axes={list(site.axes)} with tensor scales, and the rank of X is unknown: TensorRT accepts "
            "tensor scales only with axes 0..rank-1",
            severity="warning",
            fix=LAYOUT_SIZES,
            alternatives=(LAYOUT_FACTOR,),
        )
    folded = site.scales_source in (ValueSource.IDENTITY, ValueSource.FOLDED)
    hint = (
        (
            " (the scales are constant behind an Identity/constant subgraph: folding them into an "
            "initializer also passes)"
        )
        if folded
        else ""
    )
    return Reason(
        f"axes={list(site.axes)} with tensor scales on a rank-{site.input_rank} input: TensorRT's parser "
        f"accepts tensor scales only with axes absent or exactly {list(range(site.input_rank))}{hint}",
        fix=LAYOUT_SIZES,
        alternatives=(LAYOUT_FACTOR,),
    )


def _axes_rule(mode: str, innermost: int):
    def check(ctx: LintContext, site: "ResizeSite") -> Optional[Reason]:
        if site.mode != mode:
            return None
        axes = geo.resized_axes(site)
        rank = site.input_rank
        if axes is None or rank is None:
            return None
        outer = sorted(a for a in axes if a < rank - innermost)
        if not outer:
            return None
        return Reason(
            f"{mode} resize of axes {sorted(axes)} on a rank-{rank} input: TensorRT resizes {mode} only on "
            f"the last {innermost} axes (axis {outer[0]} changes)",
        )

    return check


RULES = (
    Rule(
        id="trt-tensor-scales-iota-axes",
        target="tensorrt",
        subject="resize",
        source=_IMPORTER + "; docs/operators.md (Resize row)",
        summary="tensor scales come with axes absent or 0..rank-1",
        check=check_iota_axes,
    ),
    Rule(
        id="trt-cubic-axes",
        target="tensorrt",
        subject="resize",
        source=_IMPORTER + "; importerUtils.cpp (canUseNDResize, n=2)",
        summary="cubic resizes at most the last two axes",
        check=_axes_rule("cubic", 2),
    ),
    Rule(
        id="trt-linear-axes",
        target="tensorrt",
        subject="resize",
        source=_IMPORTER + ", Upsample importer; importerUtils.cpp (canUseNDResize, n=3)",
        summary="linear resizes at most the last three axes",
        check=_axes_rule("linear", 3),
    ),
)
