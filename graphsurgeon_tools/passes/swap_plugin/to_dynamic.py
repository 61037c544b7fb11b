"""swap-plugin forward, its first step: constant scales/sizes -> graph inputs, by make-dynamic-scale's own rewrite.

:func:`make_dynamic` runs :func:`~graphsurgeon_tools.passes.make_dynamic_scale.dynamize_sites` on the sites
:mod:`.forward` chose (no second discovery, no checker: the contract checks the end result) and gives the
sites as they read their factors now; make-dynamic-scale's refusals come back as this pass's skips, with
their codes. :func:`runtime_sizes_sites`: the sites whose run-time sizes are ``round(dim * constant)``,
which make-dynamic-scale's layouts rewrite too.

Requires: the pass's working copy (changed in place). Ensures: the result records every new input, its
declaration for validate, the check's sizes feeds and the removed nodes. Does NOT swap any node.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from onnx import ModelProto

from graphsurgeon_tools.core import opsets, records
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.passes.make_dynamic_scale import dynamize_sites, layouts
from graphsurgeon_tools.passes.swap_plugin.result import SwapPluginResult
from graphsurgeon_tools.refusal import Refusal
from graphsurgeon_tools.resize.runtime_sizes import recognise
from graphsurgeon_tools.resize.shape_source import shape_flow_for_sources
from graphsurgeon_tools.resize.sites import ResizeSite, ValueSource

__all__ = ["make_dynamic", "runtime_sizes_sites"]


def runtime_sizes_sites(model: ModelProto, sites: list[ResizeSite]) -> list[ResizeSite]:
    """The sites whose run-time sizes are round(dim * constant): make-dynamic-scale's layouts rewrite them."""
    candidates = [s for s in sites if s.sizes_source == ValueSource.RUNTIME and s.scales_source == ValueSource.ABSENT]
    if not candidates:
        return []
    flow = shape_flow_for_sources(model)
    return [s for s in candidates if recognise(model, s, flow)[0] is not None]


def _new_input_dicts(new_inputs: list[Any]) -> list[dict[str, Any]]:
    """``dataclasses.asdict`` of flat NewInputs (their lists copied), without asdict's deep walk."""
    fields: dict[type, list[str]] = {}  # per class, once
    out = []
    for new_input in new_inputs:
        names = fields.get(type(new_input))
        if names is None:
            names = fields[type(new_input)] = [f.name for f in dataclasses.fields(new_input)]
        out.append({name: _copied(getattr(new_input, name)) for name in names})
    return out


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def make_dynamic(
    model: ModelProto,
    sites: list[ResizeSite],
    result: SwapPluginResult,
    layout: str = "scales",
    timings: Optional[dict[str, float]] = None,
    handed: Optional[bytes] = None,
) -> dict[str, ResizeSite]:
    """Constant scales -> graph inputs with make-dynamic-scale's rewrite; the sites as they are now.

    Its ORT self-check is not run here: swap-plugin's own check (:mod:`.check`) compares the
    end result. Sizes-driven sites are converted only when exact (from_sizes=True). ``handed``: the
    model's weightless bytes as it is now, when the caller has them.
    """
    # its per-site report (the layout texts) is not swap-plugin's: not built
    dyn, plans = dynamize_sites(
        model, sites, from_sizes=True, layout=layout, timings=timings, report=False, handed=handed
    )
    result.new_inputs.extend(_new_input_dicts(dyn.new_inputs))
    result.declared_inputs.extend(dyn.declared_inputs)  # the contract records them for validate
    result.pending_sizes.extend(layouts.pending_sizes(plans, dyn.new_inputs))  # the check's sizes feeds
    result.removed_nodes.extend(dyn.removed_nodes)
    for skip in dyn.skipped:
        refusal = skip.refusal  # make-dynamic-scale's own code: the same refusal, said in this pass
        result.skipped.append(
            Skip(skip.node, skip.op_type, Refusal(refusal.code, f"make-dynamic-scale: {refusal.text}", refusal.fix))
        )
    now: dict[str, ResizeSite] = {}
    opset = opsets.default_opset(model)
    sizes = layout == "sizes"  # the site now reads Concat(Shape(X)[:-2], <input>) as its sizes
    for plan in plans:
        site = plan.site
        now[site.output_name] = records.replace(  # dataclasses.replace, once per site
            site,
            scales=None,
            scales_source=ValueSource.ABSENT if sizes else ValueSource.GRAPH_INPUT,
            scales_tensor="" if sizes else plan.input_name,
            scales_nodes=(),
            sizes=None,
            sizes_source=ValueSource.GRAPH_INPUT if sizes else ValueSource.ABSENT,
            sizes_tensor=plan.input_name if sizes else "",
            sizes_nodes=(),
            op_version=9 if plan.bumped else site.op_version,
            opset=opset,
            notes=tuple(n for n in site.notes if not n.startswith(("scales:", "sizes:"))),
        )
    return now
