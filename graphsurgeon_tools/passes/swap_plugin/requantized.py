"""swap-plugin's check on quantized models: compare like with like around ``DQ -> Resize -> Q``.

``judge(checked, original, rewritten, feeds, quantized, dims, session) -> None`` (changes ``checked``)

The forward check of a model with quantized Resize sites (:mod:`graphsurgeon_tools.resize.qdq`)
ran at ``ORT_ENABLE_BASIC``, where no QDQ transformer runs in either model. What is left:

- ``figures["qdq"]``: which sites are quantized and which ORT fusions change the original's
  arithmetic from ``ORT_ENABLE_EXTENDED`` on (the fused difference is ``optimized``'s figure).
- A float site output within the bound can still sit on a rounding boundary of the
  QuantizeLinear after it, so that Q rounds one element to the neighbouring step in one model
  and not in the other; every graph output downstream then differs by whatever the rest of the
  network makes of one step. When the graph outputs differ but every float site output is
  within the bound, the Q outputs after the sites are compared in steps: at most one step
  apart (and at least one element apart, else the outputs' difference has another cause), the
  check passes, and the graph outputs' difference is ``figures["requantized"]``, not a verdict.

Requires: ``checked`` from :func:`graphsurgeon_tools.check.equivalence.compare_models` at
``qdq.UNFUSED_LEVEL`` on the same inputs. Ensures: ``checked.passed`` is only ever turned from
False to True by the rule above; the Q output comparisons are added to ``checked.sites``.
Does NOT write files or change either model.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import numpy as np
import onnx
from onnx import ModelProto

from graphsurgeon_tools.check.equivalence import CheckResult
from graphsurgeon_tools.check.tolerance import UlpTolerance
from graphsurgeon_tools.resize.qdq import FUSED_LEVEL, UNFUSED_LEVEL, QdqSite

__all__ = ["judge"]


def _with_outputs(model: ModelProto, names: list[str]) -> ModelProto:
    """A copy of ``model`` whose graph outputs are ``names`` (the check compares graph outputs)."""
    copy = ModelProto()
    copy.CopyFrom(model)
    del copy.graph.output[:]
    copy.graph.output.extend(onnx.ValueInfoProto(name=name) for name in names)
    return copy


def _describe(quantized: Mapping[str, QdqSite]) -> str:
    kinds = sorted({site.describe() for site in quantized.values()})
    return (f"{len(quantized)} quantized Resize site(s): {'; '.join(kinds)}. ONNX Runtime's QDQ transformers "
            f"(from {FUSED_LEVEL}) run a nearest Resize between an equal DQ/Q pair on the integer tensor and fuse "
            "DequantizeLinear -> Conv -> QuantizeLinear into QLinearConv in the original, and cannot look through a "
            f"plugin node: compared at {UNFUSED_LEVEL}, where both models compute the same float function; the "
            "fused difference is the fully optimized figure")


def judge(checked: CheckResult, original: ModelProto, rewritten: ModelProto, feeds: Mapping[str, np.ndarray],
          quantized: Mapping[str, QdqSite], dims: Optional[Mapping[str, int]],
          session: Callable[[bytes, Any], Any], tolerance: Optional[UlpTolerance]) -> None:
    """Add the QDQ figures to ``checked``; pass it where only requantization rounding differs.
    ``tolerance``: the float bound the check used (None: exact, where no rounding can move)."""
    from graphsurgeon_tools.check.equivalence import compare_models

    checked.figures["qdq"] = {"text": _describe(quantized), "sites": [s.to_dict() for s in quantized.values()]}
    if checked.passed is not False or checked.skipped or not checked.sites or tolerance is None:
        return
    if any(not site.passed for site in checked.sites):  # the float Resize itself differs: a real failure
        return
    produced = {name for node in rewritten.graph.node for name in node.output if name}
    names = [name for site in quantized.values() for name in site.quantized_outputs if name in produced]
    if not names:
        return
    steps = compare_models(_with_outputs(original, names), _with_outputs(rewritten, names), feeds, dims=dims,
                           session_factory=session, level=UNFUSED_LEVEL,
                           tolerance=UlpTolerance(dict(tolerance.ulps), integer_steps=1,
                                                  why="quantized tensors in steps"))
    if not steps.passed or not steps.outputs:
        return
    worst_step = max((o.max_abs_error or 0.0) for o in steps.outputs)
    if worst_step == 0:  # identical quantized tensors: the graph outputs differ for another reason
        return
    failed = [o for o in checked.outputs if not o.passed]
    worst = max((o.max_abs_diff for o in failed), default=0.0)
    for comparison in steps.outputs:
        comparison.kind = "site"
        checked.sites.append(comparison)
    checked.figures["requantized"] = {
        "text": (f"the QuantizeLinear after a site rounds to the neighbouring step where the float site output "
                 f"(within the bound) sits on a rounding boundary: quantized outputs {names} differ by at most "
                 f"{worst_step:g} step; the graph outputs downstream ({', '.join(o.name for o in failed)}) differ "
                 f"by up to {worst:g} (a figure, not a failure)"),
        "max_steps": worst_step,
        "outputs": {o.name: o.max_abs_diff for o in failed},
    }
    checked.passed = True
