"""make-dynamic-scale, step 1: which sites can be rewritten, and to what value.

::

    ResizeSite -(check)-> reason (skip)  |  Plan(value = full scales, fed = what the input holds)

One rule per site (pattern: a selected Resize/Upsample; check: the reason it refuses),
the sizes -> scales conversion (exact float32 scales only), the Upsample-7 opset-9 gate,
and the factor split (constant non-spatial prefix + spatial ``[h, w]``).

Sites outside the main graph (``find_resize_sites(model, nested=True)``): a site in an
If/Loop/Scan body is planned like any other (its new input is a main-graph input the body
reads from the outer scope); a site in a model-local function is refused with the reason
(``inline_functions=True`` inlines first); an Upsample-7 in a body is refused (its opset-9
form needs the whole model bumped) and blocks the bump of main-graph Upsample-7 sites.

Requires: sites from ``find_resize_sites`` on the same model. Ensures: every selected site
ends up either in a plan or in the skip list with its reason. Does NOT change the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import onnx
from onnx import ModelProto

from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.core.graph import scopes
from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.passes.base import Skip
from graphsurgeon_tools.refusal import Fix, Refusal
from graphsurgeon_tools.resize.runtime_sizes import RuntimeSizes, recognise
from graphsurgeon_tools.resize.sanity import KNOWN_SOURCES
from graphsurgeon_tools.resize.scales import sizes_to_scales
from graphsurgeon_tools.resize.shape_source import shape_flow_for_sources, site_shape_sources
from graphsurgeon_tools.resize.sites import ResizeSite, ValueSource, in_function

#: Sources whose value is known before running the model (the one list: resize.sanity).
CONSTANT_SOURCES = KNOWN_SOURCES
# Ops whose schema changes between opset 7/8 and 9 only by accepting more types or
# optional extras: raising the opset to 9 leaves their meaning alone.
_SAFE_AT_OPSET_9 = frozenset(
    {
        "Cast",
        "Constant",
        "Flatten",
        "Gemm",
        "Greater",
        "Less",
        "MatMul",
        "PRelu",
        "Max",
        "Mean",
        "Min",
        "Sum",
        "MaxPool",
        "Upsample",
        "BatchNormalization",
    }
)


@dataclass
class Plan:
    site: ResizeSite
    label: str
    value: tuple[float, ...]  # full scales vector the site must keep computing
    source: str
    fed: tuple[float, ...] = ()  # value of the graph input (full, or spatial part with factor)
    prefix: tuple[float, ...] = ()  # factor mode: constant non-spatial part
    input_name: str = ""
    bumped: bool = False  # Upsample-7 turned into Upsample-9
    runtime: Optional[RuntimeSizes] = None  # sizes computed as round(dim * constant): the constants become the input

    @property
    def needs_bump(self) -> bool:
        return self.site.scales_source == ValueSource.ATTRIBUTE


def label(site: ResizeSite) -> str:
    return site.node_name or f"#{site.node_index} ({site.output_name})"


#: The fixes a make-dynamic-scale refusal can name (the CLI spells them as flags).
INLINE_FUNCTIONS = Fix("make_dynamic_scale", (("inline_functions", True),))
FROM_SIZES = Fix("make_dynamic_scale", (("from_sizes", True),))
SIMPLIFY = Fix("make_dynamic_scale", (("simplify", True),))


def check_site(site: ResizeSite, from_sizes: bool) -> tuple[Optional[Plan], Optional[Refusal]]:
    """The rule's check: (a plan for the site, None) or (None, the refusal)."""
    if in_function(site):
        return None, Refusal(
            "in-function",
            f"inside {site.scope}: a model-local function is shared by its calls; "
            "inline_functions=True inlines it first, then its sites are rewritten",
            INLINE_FUNCTIONS,
        )
    if not site.in_main_graph and site.scales_source == ValueSource.ATTRIBUTE:
        return None, Refusal(
            "upsample7-in-body", f"Upsample-7 inside {site.scope} keeps its scales in an attribute; not rewritten there"
        )
    if site.scales_source == ValueSource.GRAPH_INPUT:
        return None, Refusal("already-dynamic", f"scales already come from graph input {site.scales_tensor!r}")
    if site.scales_source == ValueSource.RUNTIME:
        reason = next((n[len("scales:") :].strip() for n in site.notes if n.startswith("scales:")), "")
        return None, Refusal("runtime-scales", f"scales are computed at run time ({reason or 'not constant'})")
    if site.scales_source in CONSTANT_SOURCES and site.scales is not None:
        return Plan(site, label(site), site.scales, site.scales_source.value), None
    if site.sizes_tensor:
        if site.sizes is None or site.sizes_source not in CONSTANT_SOURCES:  # no flag converts these
            return None, Refusal(
                "runtime-sizes",
                f"driven by sizes, not scales; not converted: sizes are {site.sizes_source.value}, not constant",
            )
        if not from_sizes:
            return None, Refusal(
                "sizes-driven",
                "driven by sizes, not scales (from_sizes=True converts it when a scale reproduces the sizes exactly)",
                FROM_SIZES,
            )
        scales, reason = sizes_to_scales(site)
        if scales is None:
            return None, Refusal("sizes-not-exact", f"driven by sizes; not converted: {reason}")
        return Plan(site, label(site), scales, "sizes"), None
    return None, Refusal("no-scales-or-sizes", "no scales and no sizes")


def spatial_suffix(site: ResizeSite, length: int) -> Optional[int]:
    """Index where the spatial (axis >= 2) entries of the scales vector start, if they form a suffix."""
    rank = site.input_rank
    axes = list(site.axes) if site.axes is not None else list(range(length))
    normalised = [a + rank if (a < 0 and rank is not None) else a for a in axes]
    spatial = [i for i, a in enumerate(normalised) if a >= 2 or a < 0]
    if not spatial or spatial != list(range(spatial[0], length)):
        return None
    return spatial[0]


def opset9_blockers(model: ModelProto, old: int) -> list[str]:
    """Op types whose meaning changes when the default opset goes from ``old`` (7/8) to 9, in
    every graph of the model (bodies included: the opset is the model's)."""
    blockers = []
    for scope in scopes(model, functions=False):
        blockers.extend(_opset9_blockers(scope.graph.node, old, scope.name if scope.parent else None))
    return sorted(set(blockers))


def _opset9_blockers(nodes, old: int, body: Optional[str]) -> list[str]:
    blockers = []
    for node in nodes:
        if node.domain not in opsets.DEFAULT_DOMAINS:
            continue
        if body and node.op_type == "Upsample" and any(a.name == "scales" for a in node.attribute):
            blockers.append(f"Upsample-7 inside {body}")
            continue
        try:
            before = onnx.defs.get_schema(node.op_type, old, "").since_version
            after = onnx.defs.get_schema(node.op_type, 9, "").since_version
        except onnx.defs.SchemaError:
            blockers.append(node.op_type)
            continue
        if before == after:
            continue
        if node.op_type not in _SAFE_AT_OPSET_9:
            blockers.append(node.op_type)
        elif node.op_type == "BatchNormalization":
            spatial = [a.i for a in node.attribute if a.name == "spatial"]
            if spatial and spatial[0] != 1:
                blockers.append("BatchNormalization(spatial=0)")
    return blockers


def _with_shape_source(model: ModelProto, site: ResizeSite, refusal: Refusal, flow: list[Any]) -> Refusal:
    """``refusal`` plus where run-time scales/sizes come from when they read data SHAPES (static
    ones fold: the refusal then is "static-shape-source" with simplify=True as its fix), see
    resize.shape_source."""
    if not site.in_main_graph or ValueSource.RUNTIME not in (site.scales_source, site.sizes_source):
        return refusal
    if not flow:
        flow.append(shape_flow_for_sources(model))
    for kind, found in site_shape_sources(model, site, flow[0]).items():
        text = f"{refusal.text}; its {kind} are {found.describe()}"
        if found.foldable:
            return Refusal("static-shape-source", text, SIMPLIFY)
        return Refusal(refusal.code, text, refusal.fix)
    return refusal


def _runtime_plan(
    model: ModelProto, site: ResizeSite, refusal: Refusal, flow: list[Any]
) -> tuple[Optional[Plan], Optional[Refusal]]:
    """A plan for run-time sizes that are round(dim * constant) (resize.runtime_sizes), else the refusal
    with the reason the pattern was not recognised."""
    if not flow:
        flow.append(shape_flow_for_sources(model))
    found, why = recognise(model, site, flow[0])
    if found is None:
        return None, Refusal(refusal.code, f"{refusal.text} (not round(dim * constant): {why})", refusal.fix)
    value = (1.0,) * found.start + found.factors
    return Plan(site, label(site), value, "runtime-sizes", runtime=found), None


def plan_sites(
    model: ModelProto,
    sites: list[ResizeSite],
    *,
    opset: int,
    from_sizes: bool,
    factor: bool,
    shared: bool,
) -> tuple[list[Plan], list[Skip]]:
    """Plans for the rewritable ``sites`` and skips (with reasons) for the others.

    Raises UsageError for ``factor=True`` on a site whose spatial entries are not a suffix
    and for ``shared=True`` with differing values.
    """
    skipped: list[Skip] = []
    plans: list[Plan] = []
    flow: list[Any] = []  # the shape flow shape_source needs, built at the first run-time site
    for site in sites:
        plan, refusal = check_site(site, from_sizes)
        if plan is None and refusal is not None and refusal.code == "runtime-sizes" and site.in_main_graph:
            plan, refusal = _runtime_plan(model, site, refusal, flow)
        if plan is None:
            skipped.append(Skip(label(site), site.op_type, _with_shape_source(model, site, refusal, flow)))
        else:
            plans.append(plan)

    # Upsample-7 needs opset 9 for a scales input.
    bumps = [p for p in plans if p.needs_bump]
    if bumps:
        blockers = opset9_blockers(model, opset)
        if blockers:
            for plan in bumps:
                skipped.append(
                    Skip(
                        plan.label,
                        plan.site.op_type,
                        Refusal(
                            "opset-bump-blocked",
                            f"Upsample-7 keeps scales in an attribute; opset {opset} -> 9 would change {', '.join(blockers)}",
                        ),
                    )
                )
            plans = [p for p in plans if not p.needs_bump]

    for plan in plans:
        if plan.runtime is not None:  # the input holds the constants: one per resized (spatial) axis
            plan.prefix, plan.fed = plan.value[: plan.runtime.start], plan.runtime.factors
        elif factor:
            start = spatial_suffix(plan.site, len(plan.value))
            if start is None:
                raise UsageError(
                    f"factor=True: node {plan.label!r} resizes axes {plan.site.axes or list(range(len(plan.value)))} "
                    "whose spatial (axis >= 2) entries are not a suffix; use full scales"
                )
            plan.prefix, plan.fed = plan.value[:start], plan.value[start:]
        else:
            plan.fed = plan.value

    if shared and plans:
        values = {p.fed for p in plans}
        if len(values) > 1:
            detail = "; ".join(f"{p.label}: {list(p.fed)}" for p in plans)
            raise UsageError(f"shared=True needs equal scales at every selected site, got {detail}")
    return plans, skipped
