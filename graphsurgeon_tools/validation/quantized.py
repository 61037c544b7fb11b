"""validate on quantized models: compare like with like around ``DequantizeLinear -> Resize -> QuantizeLinear``.

``QuantizedPlan.of(runner, reference, notes) -> QuantizedPlan | None``, then per sweep point
``plan.bounds(...)`` for the quantized tensors and ``plan.judge(result)``.

When the candidate or an ONNX reference has quantized Resize sites (:mod:`graphsurgeon_tools.resize.qdq`):

- Both ONNX sides run at ``ORT_ENABLE_BASIC``: from ``ORT_ENABLE_EXTENDED`` on, ORT's QDQ
  transformers change the arithmetic of a model with a Resize between DQ and Q (nearest runs on
  the integer tensor, DQ -> Conv -> Q becomes QLinearConv) but cannot see through a plugin node, so
  a plugin model and its original would compute different functions. :meth:`QuantizedPlan.fused_figure`
  measures the difference at ORT's default level once, as a note (a figure, not a verdict).
- The QuantizeLinear outputs after the sites are compared too, in steps (at most one): a float
  site output within tolerance that sits on a rounding boundary is rounded to the neighbouring
  step by one model and not the other. Where that is the only difference (every float site
  output within tolerance, every quantized one within a step and at least one a step apart),
  the graph outputs downstream are kept as figures with a note, not failures.

Requires: runners of :mod:`.runner` not yet run (the level is set before the first session).
Ensures: notes say what was changed. Does NOT judge a PyTorch reference (a float module against a
quantized model is a different function; compared as given).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from graphsurgeon_tools.check.sites_alone import plugin_or_cpu_session, sites_alone
from graphsurgeon_tools.core.graph import downstream_tensors
from graphsurgeon_tools.resize.qdq import FUSED_LEVEL, UNFUSED_LEVEL, qdq_sites
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed

__all__ = ["QuantizedPlan"]


@dataclass
class QuantizedPlan:
    """The quantized tensors validate compares in steps, and the sides it runs unfused."""

    quantized: list[str] = field(default_factory=list)  # QuantizeLinear outputs after the sites
    runners: list[Any] = field(default_factory=list)  # the OnnxRunners set to UNFUSED_LEVEL (candidate first)

    @classmethod
    def of(cls, runner: Any, reference: Any, notes: list[str]) -> Optional["QuantizedPlan"]:
        other = getattr(reference, "runner", None)  # an ONNX model reference runs in ORT too
        models = [runner.model] + ([other.model] if other is not None else [])
        found = [qdq_sites(model) for model in models]
        if not any(found):
            return None
        plan = cls()
        for side, sites in zip([runner] + ([other] if other is not None else []), found):
            side.level = UNFUSED_LEVEL
            plan.runners.append(side)
            plan.quantized += [
                name for site in sites.values() for name in site.quantized_outputs if name not in plan.quantized
            ]
        kinds = sorted({site.describe() for sites in found for site in sites.values()})
        notes.append(
            f"quantized Resize sites ({'; '.join(kinds)}): ONNX Runtime's QDQ transformers (from "
            f"{FUSED_LEVEL}) change such a model's arithmetic and cannot look through a plugin node, so "
            f"the ONNX side(s) run at {UNFUSED_LEVEL}, where every node computes its float function; the "
            "QuantizeLinear outputs after the sites are compared in steps (at most one)"
        )
        return plan

    def bounds(self, name: str, value: np.ndarray) -> Optional[dict[str, float]]:
        """One step for a quantized site tensor; None for anything else (the sweep's tolerance)."""
        if name in self.quantized and np.issubdtype(np.asarray(value).dtype, np.integer):
            return {"atol": 1.0, "rtol": 0.0}
        return None

    def judge(
        self, outputs: list[Any], feeds: Optional[dict[str, np.ndarray]] = None, tolerance: Any = None
    ) -> Optional[str]:
        """Turn differences caused only by a requantization flip into figures; the note, or None.

        The first quantized tensors to move (no other moved one upstream) must be at most one step
        apart, every difference must lie downstream of one, and, against an ONNX reference, every
        plugin site run alone on the reference's own input to it must agree within ``tolerance``
        (check.sites_alone)."""
        failures = [o for o in outputs if not o.passed]
        steps = [o for o in outputs if o.name in self.quantized]
        moved = [o for o in steps if (o.max_abs_error or 0.0) > 0]
        if not failures or not moved:
            return None
        graph = self.runners[0].model.graph
        after = set().union(*(downstream_tensors(graph, [o.name]) - {o.name} for o in moved))
        roots = [o for o in moved if o.name not in after]
        if any(o.max_abs_error is None or o.max_abs_error > 1 for o in roots):
            return None
        if any(o.name not in after and o not in roots for o in failures) or any(not o.passed for o in roots):
            return None
        alone = ""
        if len(self.runners) > 1 and feeds is not None and tolerance is not None:
            checked = sites_alone(self.runners[1].model, self.runners[0].model, feeds, plugin_or_cpu_session, tolerance)
            if checked is not None:
                if not all(c.passed for c in checked):
                    return None
                alone = (
                    f"; every plugin site fed the reference's input to it agrees within tolerance "
                    f"({len(checked)} site(s), max |diff| {max(c.max_abs_diff for c in checked):.3g})"
                )
        worst = max(o.max_abs_diff for o in failures)
        text = (
            f"a figure, not a failure: the QuantizeLinear after a site rounds a within-tolerance float output "
            f"to the neighbouring step ({', '.join(o.name for o in roots)} one step apart) and everything "
            f"downstream differs from there (max |diff| {worst:.3g}){alone}"
        )
        for comparison in failures:
            comparison.passed = True
            comparison.note = "; ".join(
                filter(None, ("downstream of a requantization flip: a figure", comparison.note))
            )
        return text

    def fused_figure(self, feeds: dict[str, np.ndarray]) -> str:
        """Both ONNX sides once more at ORT's default level (QDQ fusions on), each fed the inputs of
        ``feeds`` it has: the largest difference of the graph outputs they share, as a note."""
        if len(self.runners) < 2:
            return ""
        values = []
        for side in self.runners:
            fused = OnnxRunner(side.model, side.where)
            try:
                wanted = {i.name for i in fused.session.get_inputs()}
                values.append(dict(fused.run({k: v for k, v in feeds.items() if k in wanted})))
            except RunFailed as exc:
                return f"at ORT's default level (QDQ fusions on) not measured: {exc}"
        shared = [n for n in values[0] if n in values[1] and np.shape(values[0][n]) == np.shape(values[1][n])]
        if not shared:
            return ""
        worst = max(
            float(np.max(np.abs(np.asarray(values[0][n], np.float64) - np.asarray(values[1][n], np.float64))))
            for n in shared
        )
        return f"at ORT's default level (QDQ fusions on) the outputs differ by up to {worst:.3g} (a figure)"
