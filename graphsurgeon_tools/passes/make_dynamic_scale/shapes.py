"""make-dynamic-scale, step 3: shapes that depended on a rewritten factor become symbolic.

::

    value_info downstream of a rewritten site   ->  dropped, re-inferred (only names that had one)
    graph-output dim that depended on a factor  ->  inferred | old symbolic name | <output>_dim<axis>

    site in an If/Loop/Scan body                ->  in that body and each enclosing one: value_info
                                                    downstream dropped, body-output dims unknown;
                                                    in the main graph: as above, from the outputs
                                                    of the node holding the body

Requires: the rewritten model (sites read their scales from graph inputs). Ensures: no
value_info or output dim that depended on a rewritten factor keeps a stale static value.
Does NOT touch graph inputs, and never fails: inference that fails leaves dims unknown.
"""

from __future__ import annotations

from typing import Any, Optional

import onnx
from onnx import ModelProto, TensorProto, helper

from graphsurgeon_tools.core import checker, output_types
from graphsurgeon_tools.core import graph as core_graph
from graphsurgeon_tools.passes.make_dynamic_scale.plan import Plan

__all__ = ["body_levels", "factor_hints", "forget_body_shapes", "refresh_shapes"]

_INFERENCE_FAILURES = (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError)


def _is_generated(dim_param: str) -> bool:
    """Names ONNX shape inference invents for unknown dims (``unk__12``): not stable, not meaningful."""
    return dim_param.startswith("unk__")


def _dim_names(values: Any) -> set[str]:
    """The symbolic dim names of ``values`` (a graph's inputs or outputs)."""
    return {dim.dim_param for value in values for dim in value.type.tensor_type.shape.dim if dim.HasField("dim_param")}


def body_levels(model: ModelProto, sites: list[Any]) -> tuple[list[tuple[Any, list[str]]], list[str]]:
    """For sites in bodies: (per enclosing body graph, the tensors whose shapes depend on the
    site there) and the main-graph tensors that do (outputs of the node holding the body).
    Names are taken BEFORE the rewrite (node indices move when it inserts nodes)."""
    if not sites:  # the usual case: no walk over every graph of the model
        return [], []
    scopes = {scope.name: scope for scope in core_graph.scopes(model, functions=False)}
    levels: list[tuple[Any, list[str]]] = []
    main: list[str] = []
    for site in sites:
        scope, starts = scopes[site.scope], [site.output_name]
        while scope.parent is not None:
            levels.append((scope.graph, starts))
            parent = scopes[scope.parent]
            starts = [o for o in parent.graph.node[scope.holder].output if o]
            scope = parent
        main.extend(starts)
    return levels, main


def forget_body_shapes(graph: Any, starts: list[str]) -> None:
    """In a body: drop value_info downstream of ``starts``; body outputs there keep their
    rank and element type, their dims become unknown."""
    down = core_graph.downstream_tensors(graph, starts)
    kept = [v for v in graph.value_info if v.name not in down]
    if len(kept) != len(graph.value_info):
        del graph.value_info[:]
        graph.value_info.extend(kept)
    for output in graph.output:
        if output.name in down and output.type.tensor_type.HasField("shape"):
            for dim in output.type.tensor_type.shape.dim:
                dim.Clear()


def factor_hints(plans: list[Plan], factor: bool) -> dict[str, list[Any]]:
    """Factor mode: output dims whose scale is a constant 1 equal the input's dims."""
    hints: dict[str, list[Any]] = {}
    if not factor:
        return hints
    for plan in plans:
        shape = plan.site.input_shape
        if shape is None or plan.site.axes is not None or len(shape) != len(plan.value):
            continue
        dims: list[Any] = []
        for axis, dim in enumerate(shape):
            fixed = axis < len(plan.prefix) and plan.prefix[axis] == 1.0
            known = isinstance(dim, int) or (isinstance(dim, str) and not _is_generated(dim))
            dims.append(dim if fixed and known else None)
        if any(d is not None for d in dims):
            hints[plan.site.output_name] = dims
    return hints


def refresh_shapes(
    model: ModelProto, site_outputs: list[str], hints: dict[str, list[Any]], *, full_check: bool = False
) -> tuple[list[str], Optional[output_types.StrictInference]]:
    """Make every shape that depended on a rewritten factor symbolic; return touched outputs, and
    the full check's inference of the model as left here where the one inference run here was it.

    value_info downstream of a rewritten site is dropped and re-inferred (only for names
    that had one). Each affected graph-output dim becomes, in order of preference: what
    inference derives from the inputs; the old symbolic name (unless it is an input's dim
    name, which would claim "same as the input"); a fresh ``<output>_dim<axis>`` symbol.
    ``hints`` are known output dims of rewritten sites (factor mode: the dims whose scale
    stays a constant 1), given to inference so batch/channel names survive.

    ``full_check`` (the model is fully checked next, as left here): the one whole-graph inference
    here is :func:`output_types.checked_output_types` (the output shapes cleared: inference derives
    them, then they are written) where nothing else is inferred: no ``hints`` (they are not in
    the written model) and no value_info to refresh (a second inference, with the new output
    shapes). It gives the lenient inference's types, and where it can, also stands for the full
    check's inference of the model written (:class:`output_types.StrictInference`: the contract checks
    that the model is still that one). Otherwise the lenient inference alone, and None.
    """
    graph = model.graph
    down = core_graph.downstream_tensors(graph, site_outputs)
    had_info = [v.name for v in graph.value_info if v.name in down]
    if had_info:
        kept = [v for v in graph.value_info if v.name not in down]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    affected = [o for o in graph.output if o.name in down]
    if not affected and not had_info:
        return [], None
    # one walk over the inputs (a rewrite has just added one per site): the inputs' names, then every declared one
    input_dims = _dim_names(graph.input)
    taken = input_dims | _dim_names(graph.output)
    graph.value_info.extend(
        helper.make_tensor_value_info(name, TensorProto.UNDEFINED, dims) for name, dims in hints.items()
    )
    refreshed = []
    strict = None
    try:
        try:
            if hints or had_info or not full_check:
                inferred = output_types.inferred_output_types(model)
            else:
                inferred, strict = output_types.checked_output_types(model)
        except _INFERENCE_FAILURES:  # must not keep a stale shape: fall back to "all unknown"
            inferred = {}
        for output in affected:
            if not output.type.tensor_type.HasField("shape"):
                continue
            old_dims = list(output.type.tensor_type.shape.dim)
            new_type = inferred.get(output.name)
            new_dims = list(new_type.tensor_type.shape.dim) if new_type is not None else []
            output.type.tensor_type.ClearField("shape")
            shape = output.type.tensor_type.shape
            for axis, old in enumerate(old_dims):
                dim = shape.dim.add()
                new = new_dims[axis] if axis < len(new_dims) else None
                if new is not None and new.HasField("dim_value"):
                    dim.dim_value = new.dim_value
                elif new is not None and new.HasField("dim_param") and not _is_generated(new.dim_param):
                    dim.dim_param = new.dim_param
                elif old.HasField("dim_param") and old.dim_param not in input_dims:
                    dim.dim_param = old.dim_param
                else:
                    dim.dim_param = core_graph.unique_name(taken, f"{output.name}_dim{axis}")
        if had_info:
            try:
                result = checker.shape_inference(model)
                wanted = set(had_info)
                refreshed = [v for v in result.graph.value_info if v.name in wanted]
            except _INFERENCE_FAILURES:
                pass  # no value_info is better than a stale one
    finally:
        hinted = set(hints)
        kept = [v for v in graph.value_info if v.name not in hinted]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    graph.value_info.extend(refreshed)
    return [o.name for o in affected], strict
