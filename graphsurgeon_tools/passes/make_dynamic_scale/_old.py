"""make-dynamic-scale: constant Resize/Upsample scales become graph inputs.

::

    Resize(X, roi, Constant|initializer|Identity(..)|foldable(..))  ->  Resize(X, roi, scales)
    Resize(X, roi, "", sizes)          --from_sizes, exact only     ->  Resize(X, roi, scales)
    Resize-10(X, const) / Upsample-9(X, const)                      ->  same op, (X, scales)
    Upsample-7(X){scales=[..]} at opset 7/8                         ->  Upsample-9(X, scales), opset 9
    factor=True:  ... scales  ->  Concat(Constant(non-spatial part), factor[h, w])

where ``scales`` (``scales_0``, ``scales_1``... for several sites) is a new float32 graph
input. Resize-10 and Upsample keep their op type: both already read scales from an input,
so their behaviour (asymmetric coordinates, floor for nearest) is untouched; only
Upsample-7, whose scales are an attribute, is turned into Upsample-9, which needs the
model's opset raised from 7/8 to 9. That bump is made only when every other op in the
model means the same at opset 9 (the opset-9 changes are type extensions, except Scan and
BatchNormalization's ``spatial``); otherwise those sites are skipped with the reason.
Raising the opset further (to Resize-11) would change more of the model than needed.

Requires: a model whose default-domain opset is 7..latest and that passes the ONNX
checker. Ensures: the result passes ``onnx.checker.check_model(full_check=True)``, no
value_info or output dim that depended on a rewritten factor survives (they become
symbolic), running the pass again changes nothing, and (``check=True``) ONNX Runtime gives
identical outputs for the original and the rewritten model fed the original scales.

Does NOT touch Resize nodes inside subgraphs (If/Loop bodies) or functions, does NOT round
trip the weights (a 1 GiB model costs about one load + save), and never writes files.
"""

from __future__ import annotations

import fnmatch
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import ModelProto, TensorProto, helper

from graphsurgeon_tools.errors import (
    CheckFailedError,
    InvalidModelError,
    InvalidScalesError,
    OnnxToolError,
    PostconditionError,
    PreconditionError,
    UnsupportedModelError,
    UsageError,
)
from graphsurgeon_tools.io import load_model
from graphsurgeon_tools.passes import _graph
from graphsurgeon_tools.resize import ResizeSite, ValueSource, find_resize_sites

__all__ = ["DynamicScaleResult", "NewInput", "RewrittenSite", "SkippedSite", "make_dynamic_scale"]

_CONSTANT_SOURCES = (
    ValueSource.INITIALIZER,
    ValueSource.CONSTANT,
    ValueSource.IDENTITY,
    ValueSource.FOLDED,
    ValueSource.ATTRIBUTE,
)
# Ops whose schema changes between opset 7/8 and 9 only by accepting more types or
# optional extras: raising the opset to 9 leaves their meaning alone.
_SAFE_AT_OPSET_9 = frozenset(
    {"Cast", "Constant", "Flatten", "Gemm", "Greater", "Less", "MatMul", "PRelu",
     "Max", "Mean", "Min", "Sum", "MaxPool", "Upsample", "BatchNormalization"}
)


@dataclass
class RewrittenSite:
    """A site whose scales now come from a graph input."""

    node: str
    op_type: str
    op_version: int
    mode: str
    coordinate_transformation_mode: str
    source: str  # where the constant came from (initializer, constant, identity, folded, attribute, sizes)
    original_scales: list[float]
    new_input: str
    fed_value: list[float]  # what to feed the new input to get the original behaviour


@dataclass
class SkippedSite:
    node: str
    op_type: str
    reason: str


@dataclass
class NewInput:
    name: str
    dtype: str
    shape: list[int]
    default: Optional[list[float]] = None  # set with keep_default
    value: list[float] = field(default_factory=list)  # the original value (what the check fed)


@dataclass
class DynamicScaleResult:
    """What :func:`make_dynamic_scale` did. ``model`` is the rewritten model (or the input,
    unchanged, when nothing was rewritten)."""

    model: ModelProto
    rewritten: list[RewrittenSite]
    new_inputs: list[NewInput]
    skipped: list[SkippedSite]
    check: Optional[Any] = None  # graphsurgeon_tools.checks.CheckResult
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    opset_before: int = 0
    opset_after: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.rewritten)

    def feeds(self) -> dict[str, np.ndarray]:
        """Inputs that make the rewritten model behave like the original."""
        return {inp.name: np.asarray(inp.value, dtype=np.float32) for inp in self.new_inputs}

    def to_dict(self) -> dict[str, Any]:
        return {
            "rewritten": [asdict(site) for site in self.rewritten],
            "new_inputs": [asdict(inp) for inp in self.new_inputs],
            "skipped": [asdict(site) for site in self.skipped],
            "check": self.check.to_dict() if self.check is not None else None,
            "timings": {key: round(value, 4) for key, value in self.timings.items()},
            "notes": list(self.notes),
            "opset_before": self.opset_before,
            "opset_after": self.opset_after,
        }


@dataclass
class _Plan:
    site: ResizeSite
    label: str
    value: tuple[float, ...]  # full scales vector the site must keep computing
    source: str
    fed: tuple[float, ...] = ()  # value of the graph input (full, or spatial part with factor)
    prefix: tuple[float, ...] = ()  # factor mode: constant non-spatial part
    input_name: str = ""


def _label(site: ResizeSite) -> str:
    return site.node_name or f"#{site.node_index} ({site.output_name})"


def _select(sites: list[ResizeSite], nodes: Optional[Sequence[str]]) -> list[ResizeSite]:
    if not nodes:
        return sites
    chosen: list[ResizeSite] = []
    for pattern in nodes:
        matched = [
            s for s in sites
            if fnmatch.fnmatchcase(s.node_name, pattern) or fnmatch.fnmatchcase(s.output_name, pattern)
        ]
        if not matched:
            known = ", ".join(_label(s) for s in sites) or "none"
            raise UsageError(f"--nodes {pattern!r} matches no Resize/Upsample node (the model has: {known})")
        chosen.extend(s for s in matched if s not in chosen)
    return sorted(chosen, key=lambda s: s.node_index)


def _spatial_suffix(site: ResizeSite, length: int) -> Optional[int]:
    """Index where the spatial (axis >= 2) entries of the scales vector start, if they form a suffix."""
    rank = site.input_rank
    axes = list(site.axes) if site.axes is not None else list(range(length))
    normalised = [a + rank if (a < 0 and rank is not None) else a for a in axes]
    spatial = [i for i, a in enumerate(normalised) if a >= 2 or a < 0]
    if not spatial or spatial != list(range(spatial[0], length)):
        return None
    return spatial[0]


def _sizes_to_scales(site: ResizeSite) -> tuple[Optional[tuple[float, ...]], str]:
    """Exact scales for a sizes-driven site, or (None, reason)."""
    if site.sizes is None or site.sizes_source not in _CONSTANT_SOURCES:
        return None, f"sizes are {site.sizes_source.value}, not constant"
    if site.keep_aspect_ratio_policy != "stretch":
        return None, f"keep_aspect_ratio_policy={site.keep_aspect_ratio_policy} makes sizes a bound, not a target"
    if site.coordinate_transformation_mode == "tf_crop_and_resize":
        return None, "tf_crop_and_resize scales depend on roi"
    if site.input_shape is None:
        return None, "the input shape is unknown"
    rank = len(site.input_shape)
    axes = [a % rank for a in site.axes] if site.axes is not None else list(range(rank))
    if len(axes) != len(site.sizes):
        return None, f"sizes {list(site.sizes)} do not match the resized axes {axes}"
    scales = []
    for axis, size in zip(axes, site.sizes):
        dim = site.input_shape[axis]
        if not isinstance(dim, int) or dim <= 0:
            return None, f"input dim {axis} is {dim!r}, not static, so no scale reproduces sizes {list(site.sizes)}"
        # ORT turns sizes into float32 size/dim for the coordinate mapping, and gets the
        # output size back as floor(dim * scale): both must give the same numbers.
        scale = np.float32(size) / np.float32(dim)
        if math.floor(float(np.float32(dim) * scale)) != size or math.floor(float(dim) * float(scale)) != size:
            return None, f"sizes {list(site.sizes)} are not reproduced exactly by a float32 scale on dim {axis}"
        scales.append(float(scale))
    return tuple(scales), ""


def _opset9_blockers(model: ModelProto, old: int) -> list[str]:
    blockers = []
    for node in model.graph.node:
        if node.domain not in _graph.DEFAULT_DOMAINS:
            continue
        try:
            before = onnx.defs.get_schema(node.op_type, old, "").since_version
            after = onnx.defs.get_schema(node.op_type, 9, "").since_version
        except Exception:
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
    return sorted(set(blockers))


def _fresh_dim_names(model: ModelProto) -> set[str]:
    names: set[str] = set()
    for value in list(model.graph.input) + list(model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                names.add(dim.dim_param)
    return names


def _is_generated(dim_param: str) -> bool:
    """Names ONNX shape inference invents for unknown dims (``unk__12``): not stable, not meaningful."""
    return dim_param.startswith("unk__")


def _refresh_shapes(model: ModelProto, site_outputs: list[str], hints: dict[str, list[Any]]) -> list[str]:
    """Make every shape that depended on a rewritten factor symbolic; return touched outputs.

    value_info downstream of a rewritten site is dropped and re-inferred (only for names
    that had one). Each affected graph-output dim becomes, in order of preference: what
    inference derives from the inputs; the old symbolic name (unless it is an input's dim
    name, which would claim "same as the input"); a fresh ``<output>_dim<axis>`` symbol.
    ``hints`` are known output dims of rewritten sites (factor mode: the dims whose scale
    stays a constant 1), given to inference so batch/channel names survive.
    """
    graph = model.graph
    down = _graph.downstream_tensors(graph, site_outputs)
    had_info = [v.name for v in graph.value_info if v.name in down]
    if had_info:
        kept = [v for v in graph.value_info if v.name not in down]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    affected = [o for o in graph.output if o.name in down]
    if not affected and not had_info:
        return []
    input_dims = {
        d.dim_param for v in graph.input for d in v.type.tensor_type.shape.dim if d.HasField("dim_param")
    }
    taken = _fresh_dim_names(model)
    hint_infos = []
    for name, dims in hints.items():
        elem = TensorProto.UNDEFINED
        hint_infos.append(helper.make_tensor_value_info(name, elem, dims))
    graph.value_info.extend(hint_infos)
    try:
        try:
            inferred = _graph.inferred_output_types(model)
        except Exception:  # inference failing must not keep a stale shape: fall back to "all unknown"
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
                    dim.dim_param = _graph.unique_name(taken, f"{output.name}_dim{axis}")
        refreshed = []
        if had_info:
            skeleton = _graph.weightless_copy(model)
            try:
                result = onnx.shape_inference.infer_shapes(skeleton, strict_mode=False, data_prop=True)
                wanted = set(had_info)
                refreshed = [v for v in result.graph.value_info if v.name in wanted]
            except Exception:
                pass  # no value_info is better than a stale one
    finally:
        hinted = set(hints)
        kept = [v for v in graph.value_info if v.name not in hinted]
        del graph.value_info[:]
        graph.value_info.extend(kept)
    graph.value_info.extend(refreshed)
    return [o.name for o in affected]


def _hints(plans: list["_Plan"], factor: bool) -> dict[str, list[Any]]:
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


def make_dynamic_scale(
    model: Union[ModelProto, str, Any],
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
) -> DynamicScaleResult:
    """Turn the constant scales of the selected Resize/Upsample sites into graph inputs.

    ``model``: a ModelProto or a path (external data stays on disk). ``nodes``: names or
    glob patterns (node name or output name); a pattern matching nothing is a UsageError.
    ``shared``: one input for all selected sites (refused when their values differ).
    ``input_name``: the input's name (``NAME_0``, ``NAME_1``... for several inputs;
    default ``scales``). ``factor``: the input holds only the spatial factors (``[h, w]``),
    expanded in-graph to the full vector. ``keep_default``: the original values become the
    input's default (an initializer of the same name; TensorRT then treats it as constant).
    ``from_sizes``: convert sizes-driven sites when a float32 scale reproduces the sizes
    exactly (static input dims). ``simplify``: run onnxsim first (slow to import).
    ``check``: compare original and rewritten in ONNX Runtime; a difference raises
    :class:`CheckFailedError`. ``inplace``: change the caller's proto instead of a copy
    (saves memory on big models; with ``check`` the original is serialized first).
    ``check_dims``: sizes for named input dims in the check.

    Raises InvalidScalesError (NaN, zero, negative, wrong length), UsageError (bad
    selection, ``shared`` with differing values, a name clash), PreconditionError (the input
    fails the checker), CheckFailedError. Nothing to rewrite is not an error: the result has
    no ``rewritten`` sites and the model is returned unchanged.
    """
    label = None if isinstance(model, ModelProto) else str(model)
    try:
        return _make_dynamic_scale(
            model, nodes=nodes, shared=shared, input_name=input_name, factor=factor,
            keep_default=keep_default, from_sizes=from_sizes, simplify=simplify, check=check,
            inplace=inplace, check_dims=check_dims,
        )
    except OnnxToolError as exc:
        # Errors name the file when there is one (io's own messages already do).
        if label is None or label in str(exc):
            raise
        raise type(exc)(f"{label}: {exc}") from None


def _make_dynamic_scale(
    model: Union[ModelProto, str, Any],
    *,
    nodes: Optional[Sequence[str]],
    shared: bool,
    input_name: Optional[str],
    factor: bool,
    keep_default: bool,
    from_sizes: bool,
    simplify: bool,
    check: bool,
    inplace: bool,
    check_dims: Optional[dict[str, int]],
) -> DynamicScaleResult:
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = timings.get(name, 0.0) + now - clock
        clock = now

    if not isinstance(model, ModelProto):
        model = load_model(model)
        inplace = True  # we loaded it; nobody else holds it
        lap("load")
    if input_name is not None and not input_name.strip():
        raise UsageError("--input-name must not be empty")
    opset = _graph.default_opset(model)
    if opset < 7:
        raise UnsupportedModelError(f"default-domain opset {opset} is older than 7 (Upsample-7), not supported")
    if opset > onnx.defs.onnx_opset_version():
        raise UnsupportedModelError(
            f"default-domain opset {opset} is newer than this onnx ({onnx.defs.onnx_opset_version()}) knows"
        )
    if simplify:
        import onnxsim

        simplified, ok = onnxsim.simplify(model)
        if not ok:
            raise PreconditionError("onnxsim could not validate its simplified model (--simplify)")
        model, inplace = simplified, True
        lap("simplify")

    sites = find_resize_sites(model)
    # Any site, selected or not: a model with nonsense scales is invalid input as a whole.
    for site in sites:
        if site.problems:
            raise InvalidScalesError(f"node {_label(site)!r}: {site.problems[0]}")
    selected = _select(sites, nodes)
    lap("find")

    skipped: list[SkippedSite] = []
    plans: list[_Plan] = []
    for site in selected:
        label = _label(site)

        def skip(reason: str, site: ResizeSite = site, label: str = label) -> None:
            skipped.append(SkippedSite(label, site.op_type, reason))

        if site.scales_source == ValueSource.GRAPH_INPUT:
            skip(f"scales already come from graph input {site.scales_tensor!r}")
            continue
        if site.scales_source == ValueSource.RUNTIME:
            reason = next((n[len("scales:"):].strip() for n in site.notes if n.startswith("scales:")), "")
            skip(f"scales are computed at run time ({reason or 'not constant'})")
            continue
        if site.scales_source in _CONSTANT_SOURCES and site.scales is not None:
            plans.append(_Plan(site, label, site.scales, site.scales_source.value))
            continue
        if site.sizes_tensor:
            if not from_sizes:
                skip("driven by sizes, not scales (--from-sizes converts it when a scale reproduces the sizes exactly)")
                continue
            scales, reason = _sizes_to_scales(site)
            if scales is None:
                skip(f"driven by sizes; not converted: {reason}")
                continue
            plans.append(_Plan(site, label, scales, "sizes"))
            continue
        skip("no scales and no sizes")

    # Upsample-7 needs opset 9 for a scales input.
    needs_bump = [p for p in plans if p.site.scales_source == ValueSource.ATTRIBUTE]
    notes: list[str] = []
    if needs_bump:
        blockers = _opset9_blockers(model, opset)
        if blockers:
            for plan in needs_bump:
                skipped.append(SkippedSite(plan.label, plan.site.op_type,
                    f"Upsample-7 keeps scales in an attribute; opset {opset} -> 9 would change {', '.join(blockers)}"))
            plans = [p for p in plans if p not in needs_bump]
            needs_bump = []

    for plan in plans:
        if factor:
            start = _spatial_suffix(plan.site, len(plan.value))
            if start is None:
                raise UsageError(
                    f"--factor: node {plan.label!r} resizes axes {plan.site.axes or list(range(len(plan.value)))} "
                    "whose spatial (axis >= 2) entries are not a suffix; use full scales"
                )
            plan.prefix, plan.fed = plan.value[:start], plan.value[start:]
        else:
            plan.fed = plan.value

    if shared and plans:
        values = {p.fed for p in plans}
        if len(values) > 1:
            detail = "; ".join(f"{p.label}: {list(p.fed)}" for p in plans)
            raise UsageError(f"--shared needs equal scales at every selected site, got {detail}")

    lap("plan")
    # After planning, so that nonsense scales get their own message rather than the checker's.
    try:
        _graph.check_model_full(model)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise PreconditionError(f"the input model fails the ONNX checker: {' '.join(str(exc).split())[:300]}") from None
    except InvalidModelError as exc:
        raise PreconditionError(f"the input model fails the ONNX checker: {exc}") from None
    lap("precheck")

    if not plans:
        return DynamicScaleResult(
            model=model, rewritten=[], new_inputs=[], skipped=skipped, timings=timings,
            notes=notes, opset_before=opset, opset_after=opset,
        )

    if input_name is not None:
        # Refuse a clash before anything changes (inplace=True must not leave a half-done model).
        count = 1 if shared else len(plans)
        freed = {p.site.scales_tensor for p in plans}
        existing = _graph.all_tensor_names(model.graph) - freed
        for wanted in ([input_name] if count == 1 else [f"{input_name}_{i}" for i in range(count)]):
            if wanted in existing:
                raise UsageError(f"--input-name: {wanted!r} is already a tensor name in the model")

    original_blob: Optional[bytes] = None
    original: Optional[ModelProto] = None
    if check and inplace:
        original_blob = model.SerializeToString()
    elif check:
        original = model
    if not inplace:
        copy = ModelProto()
        copy.CopyFrom(model)
        model = copy
    lap("copy")

    graph = model.graph
    taken = _graph.all_tensor_names(graph)
    old_scales_tensors = [p.site.scales_tensor for p in plans if p.site.scales_tensor]
    old_sizes_tensors = [p.site.sizes_tensor for p in plans if p.source == "sizes"]

    # Rewire to placeholder names first: the final names (usually "scales") are often held
    # by the very constants this rewrite removes, and are free only after that.
    count = 1 if shared else len(plans)
    placeholders = [_graph.unique_name(taken, f"__onnxtool_scales_{index}") for index in range(count)]
    for index, plan in enumerate(plans):
        plan.input_name = placeholders[0 if shared else index]
    base = input_name or "scales"
    pretty = {ph: (base if count == 1 else f"{base}_{i}") for i, ph in enumerate(placeholders)}

    # Opset 7/8 -> 9: every Upsample-7 becomes Upsample-9 (those not selected read a Constant).
    if needs_bump:
        for node in graph.node:
            if node.op_type != "Upsample" or node.domain not in _graph.DEFAULT_DOMAINS:
                continue
            scales_attr = [a for a in node.attribute if a.name == "scales"]
            if not scales_attr:
                continue
            values = list(scales_attr[0].floats)
            kept = [a for a in node.attribute if a.name != "scales"]
            del node.attribute[:]
            node.attribute.extend(kept)
            const_name = _graph.unique_name(taken, f"{node.name or node.output[0]}_scales")
            const = helper.make_node(
                "Constant", [], [const_name], name=const_name,
                value=helper.make_tensor(const_name, TensorProto.FLOAT, [len(values)], values),
            )
            position = list(graph.node).index(node)
            node.input.append(const_name)
            graph.node.insert(position, const)
        _graph.set_default_opset(model, 9)
        notes.append(f"opset raised from {opset} to 9: Upsample-7 keeps scales in an attribute, Upsample-9 reads an input")
        # indices moved: re-find the sites by output name
        by_output = {n.output[0]: i for i, n in enumerate(graph.node) if n.output}
        for plan in plans:
            plan.site = _reindexed(plan.site, by_output[plan.site.output_name])
        old_scales_tensors = [n.input[1] for n in graph.node
                              if n.op_type == "Upsample" and n.output[0] in {p.site.output_name for p in needs_bump}]

    # The spatial-factor expansion: one Concat per (input, prefix).
    expansions: dict[tuple[str, tuple[float, ...]], str] = {}
    new_nodes: list[tuple[int, onnx.NodeProto]] = []
    for plan in plans:
        node = graph.node[plan.site.node_index]
        source = plan.input_name
        if factor and plan.prefix:
            key = (plan.input_name, plan.prefix)
            if key not in expansions:
                prefix_name = _graph.unique_name(taken, f"{pretty[plan.input_name]}_fixed")
                full_name = _graph.unique_name(taken, f"{pretty[plan.input_name]}_full")
                prefix = helper.make_node(
                    "Constant", [], [prefix_name], name=prefix_name,
                    value=helper.make_tensor(prefix_name, TensorProto.FLOAT, [len(plan.prefix)], list(plan.prefix)),
                )
                concat = helper.make_node("Concat", [prefix_name, plan.input_name], [full_name],
                                          name=full_name, axis=0)
                new_nodes.append((plan.site.node_index, prefix))
                new_nodes.append((plan.site.node_index, concat))
                expansions[key] = full_name
            source = expansions[key]
        inputs = list(node.input)
        legacy = plan.site.op_type == "Upsample" or plan.site.op_version == 10
        slot = 1 if legacy else 2
        while len(inputs) <= slot:
            inputs.append("")
        inputs[slot] = source
        if plan.source == "sizes":
            if len(inputs) > 3:
                inputs[3] = ""
            if plan.site.op_version in (11, 12) and not inputs[1]:
                roi = _graph.unique_name(taken, f"{plan.label}_roi".replace(" ", "_"))
                new_nodes.append((plan.site.node_index, helper.make_node(
                    "Constant", [], [roi], name=roi, value=helper.make_tensor(roi, TensorProto.FLOAT, [0], []))))
                inputs[1] = roi
        while inputs and inputs[-1] == "":
            inputs.pop()
        del node.input[:]
        node.input.extend(inputs)
    # Insert the new nodes before their first consumer, keeping their relative order.
    for position in sorted({pos for pos, _ in new_nodes}, reverse=True):
        batch = [n for pos, n in new_nodes if pos == position]
        for offset, new_node in enumerate(batch):
            graph.node.insert(position + offset, new_node)

    _graph.remove_unused(graph, old_scales_tensors + old_sizes_tensors)

    taken = _graph.all_tensor_names(graph)
    names: list[str] = []
    for index, placeholder in enumerate(placeholders):
        wanted = base if count == 1 else f"{base}_{index}"
        if wanted in taken:
            if input_name is not None:
                raise UsageError(f"--input-name: {wanted!r} is already a tensor name in the model")
            wanted = _graph.unique_name(taken, wanted)
        taken.add(wanted)
        names.append(wanted)
    renames = dict(zip(placeholders, names))
    for node in graph.node:
        if any(name in renames for name in node.input):
            replaced = [renames.get(name, name) for name in node.input]
            del node.input[:]
            node.input.extend(replaced)
        for index, out in enumerate(node.output):
            if out in renames:  # not expected: placeholders are only read
                node.output[index] = renames[out]
    for plan in plans:
        plan.input_name = renames[plan.input_name]

    new_inputs: list[NewInput] = []
    for index, name in enumerate(names):
        owner = next(p for p in plans if p.input_name == name)
        value = [float(v) for v in owner.fed]
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [len(value)]))
        default = None
        if keep_default:
            graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
            default = value
        new_inputs.append(NewInput(name, "float32", [len(value)], default, value))
    lap("rewrite")

    touched_outputs = _refresh_shapes(model, [p.site.output_name for p in plans], _hints(plans, factor))
    if touched_outputs:
        notes.append(f"output shapes made symbolic where they depended on the factor: {', '.join(touched_outputs)}")
    lap("shapes")

    try:
        _graph.check_model_full(model, check_data=False)  # weights untouched: checked before
    except Exception as exc:
        raise PostconditionError(f"make_dynamic_scale produced a model the ONNX checker rejects: {exc}") from exc
    lap("checker")

    rewritten = [
        RewrittenSite(
            node=plan.label,
            op_type=plan.site.op_type,
            op_version=9 if plan in needs_bump else plan.site.op_version,
            mode=plan.site.mode,
            coordinate_transformation_mode=plan.site.coordinate_transformation_mode,
            source=plan.source,
            original_scales=[float(v) for v in plan.value],
            new_input=plan.input_name,
            fed_value=[float(v) for v in plan.fed],
        )
        for plan in plans
    ]
    result = DynamicScaleResult(
        model=model, rewritten=rewritten, new_inputs=new_inputs, skipped=skipped, timings=timings,
        notes=notes, opset_before=opset, opset_after=_graph.default_opset(model),
    )
    if check:
        from graphsurgeon_tools.checks import compare_models

        reference = original_blob if original_blob is not None else original
        assert reference is not None
        result.check = compare_models(reference, model, result.feeds(), dims=check_dims)
        lap("check")
        result.timings = timings
        if result.check.passed is False:
            bad = [o for o in result.check.outputs if not o.passed]
            worst = max(bad, key=lambda o: o.max_abs_diff)
            raise CheckFailedError(
                f"the rewritten model differs from the original in ONNX Runtime: output {worst.name!r} "
                f"max |diff| {worst.max_abs_diff:g} ({worst.mismatched} elements; {len(bad)} output(s) differ)"
            )
    return result


def _reindexed(site: ResizeSite, index: int) -> ResizeSite:
    from dataclasses import replace

    return replace(site, node_index=index)
