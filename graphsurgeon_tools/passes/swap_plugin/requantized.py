"""swap-plugin's check on quantized models: compare like with like around ``DQ -> Resize -> Q``.

``judge(checked, original, rewritten, feeds, quantized, dims, session) -> None`` (changes ``checked``)

The forward check of a model with quantized Resize sites (:mod:`graphsurgeon_tools.resize.qdq`)
ran at ``ORT_ENABLE_BASIC``, where no QDQ transformer runs in either model. What is left:

- ``figures["qdq"]``: which sites are quantized and which ORT fusions change the original's
  arithmetic from ``ORT_ENABLE_EXTENDED`` on (the fused difference is ``optimized``'s figure when
  the check was asked for it, ``optimized_figure=True``; the text says whether it was measured).
- A float site output within the bound can still sit on a rounding boundary of the
  QuantizeLinear after it, so that Q rounds one element to the neighbouring step in one model
  and not in the other; from there on the two models see different inputs, and every tensor
  downstream (later sites, their Q outputs, the graph outputs) differs by whatever the network
  makes of one step. The quantized tensors after the sites are compared in steps; the rule
  passes the check when (1) the first ones to move (no moved one upstream) are at most one step
  apart, (2) every difference lies downstream of one of them, and (3) every swapped site, run
  alone on the tensor its Resize reads in the original (:mod:`graphsurgeon_tools.check.sites_alone`),
  matches that Resize within the bound - so each site is still proven, only the whole-model difference
  becomes ``figures["requantized"]``.

Requires: ``checked`` from :func:`graphsurgeon_tools.check.equivalence.compare_models` at
``qdq.UNFUSED_LEVEL`` on the same inputs. Ensures: ``checked.passed`` is only ever turned from
False to True by the rule above; the Q output comparisons are added to ``checked.sites``.
Sessions: within the check's ``reuse_sessions`` scope, none beyond the check's own two (one per
model, exposing :func:`kept_tensors`); each site run alone is a small model of its own.
Does NOT write files or change either model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import numpy as np
from onnx import ModelProto

from graphsurgeon_tools import check
from graphsurgeon_tools.core.graph import downstream_tensors
from graphsurgeon_tools.resize.qdq import FUSED_LEVEL, UNFUSED_LEVEL, QdqSite

if TYPE_CHECKING:  # annotations only: the check's modules load when a check runs (check.__init__)
    from graphsurgeon_tools.check.equivalence import CheckResult
    from graphsurgeon_tools.check.tolerance import UlpTolerance

__all__ = ["judge", "kept_tensors"]


def kept_tensors(quantized: Mapping[str, QdqSite], rewritten: ModelProto, op_type: str) -> list[str]:
    """What the check's sessions expose for :func:`judge`: the quantized tensors after the sites and
    each plugin node's input (the tensor its Resize reads in the original)."""
    names = [name for site in quantized.values() for name in site.quantized_outputs]
    names += [n.input[0] for n in rewritten.graph.node if n.op_type == op_type and n.input]
    return list(dict.fromkeys(names))


def _describe(quantized: Mapping[str, QdqSite], optimized: Mapping[str, Any]) -> str:
    kinds = sorted({site.describe() for site in quantized.values()})
    if optimized.get("max_abs_diff") is not None:
        fused = f"the fused difference is the {optimized['level']} figure, {optimized['max_abs_diff']:g}"
    else:
        fused = "the fused difference is not measured " + (
            f"({optimized['note']})"
            if optimized.get("note")
            else "(ask with optimized_figure=True: one more session per model)"
        )
    return (
        f"{len(quantized)} quantized Resize site(s): {'; '.join(kinds)}. ONNX Runtime's QDQ transformers "
        f"(from {FUSED_LEVEL}) run a nearest Resize between an equal DQ/Q pair on the integer tensor and fuse "
        "DequantizeLinear -> Conv -> QuantizeLinear into QLinearConv in the original, and cannot look through a "
        f"plugin node: compared at {UNFUSED_LEVEL}, where both models compute the same float function; {fused}"
    )


def judge(
    checked: CheckResult,
    original: ModelProto,
    rewritten: ModelProto,
    feeds: Mapping[str, np.ndarray],
    quantized: Mapping[str, QdqSite],
    dims: Optional[Mapping[str, int]],
    session: Callable[[bytes, Any], Any],
    tolerance: Optional[UlpTolerance],
    op_type: str = "DynamicTRTResize",
    *,
    reference: object = None,
) -> None:
    """Add the QDQ figures to ``checked``; pass it where only requantization rounding differs.
    ``tolerance``: the float bound the check used (None: exact, where no rounding can move).
    ``reference``: the object the check ran the original as (bytes or ``original``): inside the
    check's :func:`~graphsurgeon_tools.check.reuse.reuse_sessions` the quantized tensors and each
    site's input come from the sessions the check kept (:func:`kept_tensors` names them)."""
    checked.figures["qdq"] = {
        "text": _describe(quantized, checked.optimized),
        "sites": [s.to_dict() for s in quantized.values()],
    }
    if checked.passed is not False or checked.skipped or tolerance is None:
        return
    produced = {name for node in rewritten.graph.node for name in node.output if name}
    names = [name for site in quantized.values() for name in site.quantized_outputs if name in produced]
    if not names:
        return
    steps = check.equivalence.compare_models(
        original if reference is None else reference,
        rewritten,
        feeds,
        outputs=names,
        dims=dims,
        session_factory=session,
        level=UNFUSED_LEVEL,
        tolerance=check.tolerance.UlpTolerance(dict(tolerance.ulps), integer_steps=1, why="quantized tensors in steps"),
    )
    if steps.skipped or not steps.outputs:
        return
    moved = [o for o in steps.outputs if (o.max_abs_error or 0.0) > 0]
    if not moved:  # identical quantized tensors: the difference has another cause
        return
    below = {o.name: downstream_tensors(rewritten.graph, [o.name]) - {o.name} for o in moved}
    after = set().union(*below.values())
    roots = [o for o in moved if o.name not in after]  # the first roundings to move, in data-flow order
    if any(not o.passed for o in roots):  # a first rounding more than one step apart: not a rounding flip
        return
    failures = [c for c in (*checked.outputs, *checked.sites, *steps.outputs) if not c.passed]
    if any(c.name not in after for c in failures):  # a difference no flip upstream explains
        return

    shapes = check.feeds.concrete_input_shapes(original, dims)
    data = check.feeds.random_feeds(original, shapes, 0)  # compare_models' own inputs
    alone = check.sites_alone.sites_alone(
        original, rewritten, {**data, **feeds}, session, tolerance, op_type, key=reference
    )
    if alone is None or not all(c.passed for c in alone):  # each site on the original's own input must agree
        return
    figure = (
        f"first moved by the QuantizeLinear after a site: {', '.join(o.name for o in roots)} one step apart "
        "where the float site output (within the bound) sits on a rounding boundary; downstream of it the "
        "models see different inputs, so what differs there is a figure, not a failure"
    )
    for comparison in failures:
        comparison.passed = True
        comparison.note = "; ".join(filter(None, ("downstream of a requantization flip: a figure", comparison.note)))
    for comparison in steps.outputs:
        comparison.kind = "site"
        checked.sites.append(comparison)
    checked.figures["requantized"] = {
        "text": (
            f"{figure}; every swapped site fed the original's input to it matches the original's Resize "
            f"within the bound ({len(alone)} site(s), max |diff| "
            f"{max((c.max_abs_diff for c in alone), default=0.0):g}); downstream graph outputs differ by up to "
            f"{max((c.max_abs_diff for c in failures if c.kind == 'output'), default=0.0):g}"
        ),
        "roots": [o.name for o in roots],
        "per_site": {c.name: c.max_abs_diff for c in alone},
        "outputs": {c.name: c.max_abs_diff for c in failures if c.kind == "output"},
    }
    checked.passed = True
