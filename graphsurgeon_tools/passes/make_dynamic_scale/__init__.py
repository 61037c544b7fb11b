"""make-dynamic-scale: constant Resize/Upsample scales become graph inputs.

::

    Resize(X, roi, Constant|initializer|Identity(..)|foldable(..))  ->  Resize(X, roi, scales)
    Resize(X, roi, "", sizes)          from_sizes=True, exact only  ->  Resize(X, roi, scales)
    Resize-10(X, const) / Upsample-9(X, const)                      ->  same op, (X, scales)
    Upsample-7(X){scales=[..]} at opset 7/8                         ->  Upsample-9(X, scales), opset 9
    factor=True:  ... scales  ->  Concat(Constant(non-spatial part), factor[h, w])
    layout="factor": Resize(X, roi, "", Concat(Shape(X)[:-2], Shape(X)[-2:] * factor:int64[2]))
    layout="sizes":  Resize(X, roi, "", Concat(Shape(X)[:-2], sizes:int64[2]))   (:mod:`.layouts`)

where ``scales`` (``scales_0``, ``scales_1``... for several sites) is a new float32 graph
input. Resize-10 and Upsample keep their op type: both already read scales from an input,
so their behaviour (asymmetric coordinates, floor for nearest) is untouched; only
Upsample-7, whose scales are an attribute, is turned into Upsample-9, which needs the
model's opset raised from 7/8 to 9. That bump is made only when every other op in the
model means the same at opset 9 (the opset-9 changes are type extensions, except Scan and
BatchNormalization's ``spatial``); otherwise those sites are skipped with the reason.

Modules: :mod:`.plan` (which sites, which values: the refusal rules, sizes -> scales),
:mod:`.rewrite` (new inputs, rewired nodes, one cleanup), :mod:`.shapes` (value_info and
output dims made symbolic), :mod:`.run` (the pass object), :mod:`.result` (report types).

Requires: a model whose default-domain opset is 7..latest and that passes the ONNX
checker. Ensures: the result passes ``onnx.checker.check_model(full_check=True)``, no
value_info or output dim that depended on a rewritten factor survives (they become
symbolic), running the pass again changes nothing, and (``check=True``) ``result.check``
says whether ONNX Runtime gives identical outputs for the original and the rewritten model
fed the original scales (``result.raise_if_failed()`` raises CheckFailedError if not).

Sites in If/Loop/Scan bodies are rewritten too (the body reads the new main-graph input
from the outer scope) and checked with the rest; sites in model-local functions are
rewritten after inlining (``inline_functions=True``, ``onnx.inliner``), otherwise each is
reported skipped with the reason. A site left baked is always in ``result.skipped``.

Does NOT round trip the weights (a 1 GiB model costs about one load + save), and never
writes files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, Union

from graphsurgeon_tools.passes.make_dynamic_scale.options import DynamicScaleOptions
from graphsurgeon_tools.passes.make_dynamic_scale.result import DynamicScaleResult, NewInput, RewrittenSite, SkippedSite
from graphsurgeon_tools.passes.make_dynamic_scale.run import MakeDynamicScale, dynamize_sites

__all__ = [
    "DynamicScaleOptions",
    "DynamicScaleResult",
    "MakeDynamicScale",
    "NewInput",
    "RewrittenSite",
    "SkippedSite",
    "dynamize_sites",
    "make_dynamic_scale",
]


def make_dynamic_scale(
    model: Any,
    *,
    nodes: Optional[Sequence[str]] = None,
    shared: bool = False,
    input_name: Optional[str] = None,
    factor: bool = False,
    keep_default: bool = False,
    from_sizes: bool = False,
    simplify: bool = False,
    check: bool = True,
    inplace: bool = False,
    check_dims: Optional[dict[str, int]] = None,
    inline_functions: bool = False,
    only_free: bool = False,
    freedom: bool = True,
    layout: str = "scales",
    custom_op_libs: Optional[Sequence[Union[str, Path]]] = None,
    atol: float = 0.0,
    rtol: float = 0.0,
    optimized_figure: bool = False,
) -> DynamicScaleResult:
    """Turn the constant scales of the selected Resize/Upsample sites into graph inputs.

    Args:
        model: a ModelProto, a path (external data stays on disk) or an
            ``onnx_graphsurgeon.Graph`` (``result.model`` is then a Graph too).
        nodes: names or glob patterns (node name or output name); a pattern matching
            nothing is a UsageError.
        shared: one input for all selected sites (refused when their values differ).
        input_name: the input's name (``NAME_0``, ``NAME_1``... for several inputs;
            default ``scales``).
        factor: the input holds only the spatial factors (``[h, w]``), expanded in-graph
            to the full vector.
        keep_default: the original values become the input's default (an initializer of
            the same name; TensorRT then treats it as constant).
        from_sizes: convert sizes-driven sites when a float32 scale reproduces the sizes
            exactly (static input dims).
        simplify: run onnxsim first (slow to import).
        check: compare original and rewritten in ONNX Runtime into ``result.check``; a
            difference is returned, ``result.raise_if_failed()`` raises CheckFailedError.
        inplace: change the caller's proto instead of a copy (saves memory on big models;
            with ``check`` the original is serialized first).
        check_dims: sizes for named input dims in the check.
        layout: what the new input holds: "scales" (float32 scales, today's form; ONNX
            Runtime), "factor" (int64 whole factors (h, w), expanded in-graph) or "sizes"
            (int64 output (h, w)); the integer layouts are what TensorRT can take (shape
            inputs must be integers). Sites a layout cannot express exactly are skipped with
            the reason; each rewritten site says where it equals the original in ONNX Runtime
            and in TensorRT (:func:`.layouts.arithmetic`).
        inline_functions: inline model-local functions first (``onnx.inliner``) so their
            sites are rewritten; without it they are skipped with the reason.
        only_free: rewrite only the sites whose factor can change alone (resize.freedom); the
            others are skipped with the node that pins them. Every rewritten site reports
            ``free`` and ``pinned_by`` either way.
        freedom: decide each site's factor freedom for the report (bounded static shape
            flow, no ORT run). ``freedom=False`` skips that analysis: the rewrite is the same,
            the sites report ``free: null``; it cannot combine with ``only_free=True``.
        custom_op_libs: the user's own ONNX Runtime op libraries (e.g. MMDeploy's), registered
            on the built-in check's sessions, for models with custom ops ORT lacks.
        atol, rtol: the check's bound, ``|a - b| <= atol + rtol * |b|`` (default exact). It
            applies to the end-to-end difference between the written model and the model
            given; with ``simplify=True`` onnxsim's constant folding may move numbers by a
            few float32 ulps, which fails an exact check (the report gives onnxsim's share).
        optimized_figure: also run both models of the check at ``ORT_ENABLE_ALL`` and report
            their difference there as a figure (``result.check.optimized``), never a verdict; it
            costs a second ONNX Runtime session per model, so it is off by default (one session
            per model, at the level the verdict is taken at).

    Raises InvalidScalesError (NaN, zero, negative, wrong length), UsageError (bad
    selection, ``shared`` with differing values, a name clash), PreconditionError (the input
    fails the checker). Nothing to rewrite is not an error: the result has no ``rewritten``
    sites and the model is returned unchanged.
    """
    options = DynamicScaleOptions(**{key: value for key, value in locals().items() if key != "model"})
    return MakeDynamicScale(options)(model)
