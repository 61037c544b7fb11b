"""make-dynamic-scale, the pass object: find -> plan -> rewrite -> shapes -> check.

Two entries share one rewrite: :class:`MakeDynamicScale` (the whole pass: discovery,
requires/ensures, the ORT self-check) and :func:`dynamize_sites` (plan + rewrite +
shapes on sites a caller already found, in place, no checks: swap-plugin's step).

Requires: a model whose default-domain opset is 7..latest and that passes the ONNX
checker. Ensures: the full ONNX checker passes on the result (run once per pass), and
with ``check=True`` ``result.check`` says whether ORT gives the original outputs (a
difference is returned, not raised: ``result.raise_if_failed()``). Does NOT write files.
"""

from __future__ import annotations

from typing import Any, Optional

from onnx import ModelProto

from graphsurgeon_tools import check
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.core import opsets
from graphsurgeon_tools.errors import (
    PreconditionError,
    RefusedRequestError,
    UnsupportedModelError,
)
from graphsurgeon_tools.passes.base import Pass, Skip, Timer, select
from graphsurgeon_tools.passes.make_dynamic_scale import branches, free, layouts, relayout
from graphsurgeon_tools.passes.make_dynamic_scale import plan as planning
from graphsurgeon_tools.passes.make_dynamic_scale.options import DynamicScaleOptions
from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan
from graphsurgeon_tools.passes.make_dynamic_scale.result import (
    DynamicScaleResult,
    RewrittenSite,
    declare_new_inputs,
)
from graphsurgeon_tools.passes.make_dynamic_scale.rewrite import (
    check_input_name,
    rewrite,
)
from graphsurgeon_tools.passes.make_dynamic_scale.shapes import (
    body_levels,
    factor_hints,
    forget_body_shapes,
    refresh_shapes,
)
from graphsurgeon_tools.resize import sites as resize_sites
from graphsurgeon_tools.resize.original_values import record_original_values
from graphsurgeon_tools.resize.sanity import raise_if_nonsense
from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["MakeDynamicScale", "dynamize_sites", "nonsense_gate", "raise_layout_refused"]


def nonsense_gate(sites: list[ResizeSite], label: Optional[str] = None) -> None:
    """Any site, selected or not: a model with nonsense scales is invalid input as a whole."""
    for site in sites:
        raise_if_nonsense(site, label)


def raise_layout_refused(layout: str, refused: list) -> None:
    """A requested layout that can express none of the sites the pass would rewrite fails the request
    (RefusedRequestError, exit 3) with every site's reason, instead of "nothing to rewrite"."""
    detail = "; ".join(f"{skip.node}: {skip.reason} [{skip.code}]" for skip in refused[:6])
    more = f" (and {len(refused) - 6} more)" if len(refused) > 6 else ""
    raise RefusedRequestError(
        f"layout={layout!r} can express none of the {len(refused)} site(s) with constant scales: {detail}{more}",
        tuple(refused),
    )


def site_names(site: ResizeSite) -> tuple[str, str]:
    return site.node_name, site.output_name


def _rewritten(plans: list[Plan], layout: str = "scales") -> list[RewrittenSite]:
    # What the layout texts read of a site (layouts.arithmetic / alternatives: its scales, where it
    # lives, its op, axes, mode, input rank and shape): sites alike in all of it share one analysis,
    # so a graph of many like sites words each kind once. Sizes computed at run time are not shared.
    analyses: dict[tuple, tuple[dict[str, Any], dict[str, dict[str, Any]]]] = {}
    out = []
    for plan in plans:
        site = plan.site
        key = (
            None
            if plan.runtime is not None
            else (
                plan.value,
                site.scope,
                site.op_type,
                site.op_version,
                site.opset,
                site.axes,
                site.coordinate_transformation_mode,
                site.input_rank,
                site.input_shape,
            )
        )
        analysis = analyses.get(key) if key is not None else None
        if analysis is None:
            facts = layouts.arithmetic(plan, layout)
            analysis = ({k: facts[k] for k in ("layout", "onnxruntime", "tensorrt")}, layouts.alternatives(plan))
            if key is not None:
                analyses[key] = analysis
        here, every = analysis
        out.append(
            RewrittenSite(
                **here,
                layouts={name: dict(entry) for name, entry in every.items()},
                node=plan.label,
                op_type=site.op_type,
                op_version=9 if plan.bumped else site.op_version,
                mode=site.mode,
                coordinate_transformation_mode=site.coordinate_transformation_mode,
                source=plan.source,
                original_scales=[float(v) for v in plan.value],
                new_input=plan.input_name,
                fed_value=[float(v) for v in plan.fed],
            )
        )
    return out


def dynamize_sites(
    model: ModelProto,
    sites: list[ResizeSite],
    *,
    from_sizes: bool = False,
    shared: bool = False,
    input_name: Optional[str] = None,
    factor: bool = False,
    keep_default: bool = False,
    timings: Optional[dict[str, float]] = None,
    layout: str = "scales",
    full_check: bool = False,
    report: bool = True,
    planned: Optional[tuple[list[Plan], list[Skip]]] = None,
    handed: Optional[bytes] = None,
) -> tuple[DynamicScaleResult, list[Plan]]:
    """Plan, rewrite and refresh shapes for ``sites`` (found on ``model``), changing ``model``.

    No discovery, no checker, no ORT check: the caller has done or will do those. Returns the
    result (``model`` is the same proto) and the plans (``plan.site.output_name`` ->
    ``plan.input_name`` tells which sites now read which input). ``full_check``: the model is
    written as left here and fully checked next (the pass's own contract), so the shape refresh
    may run the full check's inference (``result.strict_inference``); a caller that goes on
    changing the model leaves it False (that inference would stand for nothing and cost more).
    ``report``: fill ``result.rewritten`` (each site's layout texts); a caller that reports the
    sites its own way (swap-plugin) leaves it False and gets an empty list. ``planned``: what
    ``planning.plan_sites`` and ``layouts.gate`` gave for these very sites and options (the kept
    plans, then every skip: the planner's, then the gate's), when the caller planned first.
    ``handed``: ``model``'s weightless bytes as it is now (``Pass.handed_bytes``), when the caller has them.
    """
    timer = Timer({} if timings is None else timings)
    opset = opsets.default_opset(model)
    result = DynamicScaleResult(model=model, opset_before=opset, opset_after=opset, timings=timer.timings)
    if planned is None:
        plans, result.skipped = planning.plan_sites(
            model, sites, opset=opset, from_sizes=from_sizes, factor=factor, shared=shared
        )
        plans, refused = layouts.gate(plans, layout, opset)
        result.skipped.extend(refused)
    else:
        plans, result.skipped = planned[0], list(planned[1])
    if not plans:
        return result, plans
    check_input_name(model, plans, shared, input_name)
    levels, held = body_levels(model, [p.site for p in plans if not p.site.in_main_graph])
    if layout in layouts.INTEGER_LAYOUTS:
        result.new_inputs, result.removed_nodes, result.notes = layouts.rewrite_integer(
            model, plans, layout=layout, shared=shared, input_name=input_name
        )
    else:
        result.new_inputs, result.removed_nodes, result.notes = rewrite(
            model,
            plans,
            opset=opset,
            shared=shared,
            input_name=input_name,
            factor=factor,
            keep_default=keep_default,
            handed=handed,
        )
    record_original_values(model, result.new_inputs)  # validate's "original" sweep point reads them
    result.declared_inputs = declare_new_inputs(result.new_inputs, plans, layout)  # recorded by the contract
    timer.lap("rewrite")
    for body, starts in levels:
        forget_body_shapes(body, starts)
    outputs = [p.site.output_name for p in plans if p.site.in_main_graph] + held
    touched, result.strict_inference = refresh_shapes(  # the contract's full check may reuse it
        model,
        outputs,
        factor_hints([p for p in plans if p.site.in_main_graph], factor or layout in layouts.INTEGER_LAYOUTS),
        full_check=full_check,
    )
    if touched:
        result.notes.append(f"output shapes made symbolic where they depended on the factor: {', '.join(touched)}")
    timer.lap("shapes")
    if report:
        result.rewritten = _rewritten(plans, layout)
    result.opset_after = opsets.default_opset(model)
    return result, plans


class MakeDynamicScale(Pass):
    """The whole pass; see :func:`graphsurgeon_tools.passes.make_dynamic_scale.make_dynamic_scale`."""

    name = "make-dynamic-scale"
    Options = DynamicScaleOptions

    def __init__(self, options: Optional[DynamicScaleOptions] = None) -> None:
        super().__init__(options)
        self._pending: list[layouts.PendingSizes] = []
        self._scopes: set[str] = set()
        self.reference_feeds: dict[str, Any] = {}

    @property
    def in_place(self) -> bool:
        return self.options.inplace

    def requires(self, model: ModelProto) -> None:
        opset = opsets.default_opset(model)
        if opset < 7:
            raise UnsupportedModelError(f"default-domain opset {opset} is older than 7 (Upsample-7), not supported")

    def call(self, model: ModelProto) -> DynamicScaleResult:
        options = self.options
        timings: dict[str, float] = {}
        timer = Timer(timings)
        inplace = self.in_place or self.owned
        if options.simplify:
            import onnxsim  # deferred: onnxsim (slow to import), only with simplify=True

            simplified, ok = onnxsim.simplify(model)
            if not ok:
                raise PreconditionError("onnxsim could not validate its simplified model (simplify=True)")
            before, after = len(model.graph.node), len(simplified.graph.node)
            self._step(
                "onnxsim",
                simplified,
                nodes_before=before,
                nodes_after=after,
                nodes_folded=before - after,
                initializers_before=len(model.graph.initializer),
                initializers_after=len(simplified.graph.initializer),
            )
            model, inplace = simplified, True
            timer.lap("simplify")

        if options.inline_functions and len(model.functions):
            functions = len(model.functions)
            model, inplace = core_graph.inline_local_functions(model), True
            self._step("inline-functions", model, functions_inlined=functions)
            timer.lap("inline")
        # Every site, bodies and functions included: one the pass cannot rewrite is a skip
        # with its reason, never silence.
        # the structural check's bytes of the model as handed in, where it is still that one (no onnxsim,
        # no inlining: nothing above changes a proto in place)
        weightless = self.handed_bytes(model)
        sites = resize_sites.find_resize_sites(model, nested=True, weightless=weightless)
        nonsense_gate(sites)
        selected = select(sites, options.nodes, site_names, what="Resize/Upsample")
        relaid: list[str] = []
        given = model
        if options.layout in layouts.INTEGER_LAYOUTS and relayout.recorded_float_inputs(model):
            # this tool's own float layout, asked for again in an integer one: put the recorded
            # value back first, then rewrite as from the original (on a copy unless in place)
            work = model if inplace else ModelProto()
            if not inplace:
                work.CopyFrom(model)
            recorded = relayout.recorded_feeds(given)  # before rebake: in place, ``given`` IS ``work``
            relaid = relayout.rebake(work, sites, selected)
            weightless = None  # in place, the model may no longer be what the bytes say
            if relaid:
                # the check compares with the model as given: its float inputs get their recorded value
                self.reference_feeds = recorded
                self._step("relayout", work, inputs_rebaked=sorted(self.reference_feeds))
                model, inplace = work, True
                sites = resize_sites.find_resize_sites(model, nested=True)
                selected = select(sites, options.nodes, site_names, what="Resize/Upsample")
        timer.lap("find")
        # On the model as given; reported per rewritten site. The one analysis here that is not
        # linear in the graph (each site's downstream is walked), hence freedom=False.
        decided = free.decide(model, selected) if options.freedom else {}
        held: list = []
        if options.only_free:
            selected, held = free.hold_pinned(selected, decided)
        timer.lap("freedom")
        opset = opsets.default_opset(model)
        # Plan first, so that nonsense requests get their own message rather than the checker's.
        plans, skipped = planning.plan_sites(
            model, selected, opset=opset, from_sizes=options.from_sizes, factor=options.factor, shared=options.shared
        )
        expressible, refused = layouts.gate(plans, options.layout, opset)
        if plans and not expressible:
            raise_layout_refused(options.layout, refused)
        plans = expressible
        timer.lap("plan")
        if not plans:
            result, _ = dynamize_sites(
                model,
                selected,
                from_sizes=options.from_sizes,
                factor=options.factor,
                timings=timings,
                layout=options.layout,
            )
            result.skipped[:0] = held
            if relaid:  # no site takes the layout: the model goes back as it came, its inputs kept
                result.model = given
                result.notes.append(
                    f"layout={options.layout!r} fits no selected site, so the float input(s) stay as they are"
                )
            return result
        check_input_name(model, plans, options.shared, options.input_name)
        self._scopes = {p.site.scope for p in plans}  # sites in If branches: see _check_other_branches
        timer.lap("precheck")
        if not inplace:
            copy = ModelProto()
            copy.CopyFrom(model)
            model = copy
        timer.lap("copy")
        result, done = dynamize_sites(
            model,
            selected,
            from_sizes=options.from_sizes,
            shared=options.shared,
            input_name=options.input_name,
            factor=options.factor,
            keep_default=options.keep_default,
            timings=timings,
            layout=options.layout,
            full_check=True,  # the contract checks the model as dynamize_sites leaves it
            planned=(plans, skipped + refused),  # planned above (the copy reads as the model did)
            handed=weightless,  # nothing since find changed the model (the copy serializes as it does)
        )
        self._pending = layouts.pending_sizes(done, result.new_inputs)
        result.skipped[:0] = held
        result.rewritten = free.annotate(result.rewritten, done, decided)
        result.notes[:0] = relaid
        return result

    def _step(self, step: str, model: ModelProto, **changes: Any) -> None:
        """An intermediate for the check (a snapshot: the pass goes on changing ``model`` in place)."""
        if self.options.check:
            snapshot = ModelProto()
            snapshot.CopyFrom(model)
            self.record_step(step, snapshot, **changes)

    def self_check(self, reference: Any, result: DynamicScaleResult) -> Any:  # type: ignore[override]
        """The rewritten model against ``reference`` (the user's model) in ONNX Runtime, fed the
        original values; sites in If branches also with seeds that take the other branch, in the
        same two sessions (one per model)."""
        check_dims = self.options.check_dims
        feeds = result.feeds()
        original = reference if isinstance(reference, ModelProto) else ModelProto.FromString(reference)
        if self._pending:  # sizes layout, symbolic dims: the original size at the check's input shapes
            shapes = check.feeds.concrete_input_shapes(original, check_dims)
            feeds.update(
                layouts.sizes_feeds(
                    original, self._pending, {k: list(v) for k, v in shapes.items()}, self.reference_feeds
                )
            )
        seeds = branches.branch_seeds(original, self._scopes, check_dims)
        with check.reuse.reuse_sessions(bool(seeds)):
            result.check = check.equivalence.compare_models(
                reference,
                result.model,
                feeds,
                reference_feeds=self.reference_feeds,
                dims=check_dims,
                atol=self.options.atol,
                rtol=self.options.rtol,
                optimized_figure=self.options.optimized_figure,
            )
            self._check_other_branches(reference, result, feeds, seeds)
        return result.check

    def _check_other_branches(self, reference: Any, result: DynamicScaleResult, feeds: dict, seeds: list[int]) -> None:
        """Sites rewritten inside If branches: rerun the check with seeds that flip the scalar bool
        inputs, so the branch seed 0 did not take runs too (:mod:`.branches`)."""
        if result.check is None or result.check.passed is not True:
            return
        check_dims = self.options.check_dims
        for seed in seeds:
            other = check.equivalence.compare_models(
                reference,
                result.model,
                feeds,
                reference_feeds=self.reference_feeds,
                dims=check_dims,
                seed=seed,
                atol=self.options.atol,
                rtol=self.options.rtol,
            )
            if other.passed is False:
                result.check = other
                break
        if seeds:
            result.notes.append(
                f"sites in If branches: the check also ran with seed(s) "
                f"{', '.join(map(str, seeds))}, which flip the bool inputs, so every branch ran"
            )
