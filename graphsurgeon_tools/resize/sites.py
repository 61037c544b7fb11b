"""Find Resize/Upsample sites and where their scales come from.

``find_resize_sites(model) -> list[ResizeSite]`` walks the main graph in node order and
describes every Resize (op versions 10, 11, 13, 18, 19) and Upsample (7, 9);
``find_resize_sites(model, nested=True)`` adds every site of If/Loop/Scan bodies (any
depth) and of model-local functions, each with ``scope`` saying where it lives. Per site: its
semantics (defaults filled per op version, see :mod:`.semantics`), where its scales and
sizes come from (:class:`~graphsurgeon_tools.core.constants.ConstantTracer`), and what
makes them nonsense (:mod:`.sanity`).

CONTRACT (shared by every pass, the CLI and the reports; do not rename fields): see
:class:`ResizeSite` and :class:`ValueSource`.

Requires: a ModelProto or a path. Ensures: reads the model, never changes it; one
tracer (memoised) per scope, a body's tracer asking its enclosing scope's for names it
reads from outside; shape inference at most once; graphs walked iteratively
(:func:`graphsurgeon_tools.core.graph.scopes`). ``node_index`` indexes the node in its own
scope's graph. ``problems`` holds what makes the scales/sizes nonsense
(:mod:`.sanity`) and what makes the attributes invalid
(:func:`.semantics.attribute_problems`). Does NOT refuse anything: the passes decide what to do with ``problems``
and with sites outside the main graph. Without ``nested=True`` (the default, kept for
callers that index ``model.graph.node`` by ``node_index``) bodies and functions are not
looked at: every caller that claims "every site" passes ``nested=True``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from graphsurgeon_tools.core import dtypes, records
from graphsurgeon_tools.core.attributes import attributes
from graphsurgeon_tools.core.constants import MAX_FOLD_NODES, ConstantTracer, ValueSource, ValueTrace, trace_value
from graphsurgeon_tools.core.graph import MAIN_GRAPH
from graphsurgeon_tools.core.graphs import as_model
from graphsurgeon_tools.errors import InvalidModelError, naming
from graphsurgeon_tools.resize import semantics
from graphsurgeon_tools.resize.sanity import scales_problems
from graphsurgeon_tools.resize.site_inputs import ValueInfoIndex, declared_infos, input_shape, with_inferred_infos
from graphsurgeon_tools.resize.site_nodes import walk

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from onnx import ModelProto

__all__ = [
    "MAIN_GRAPH",
    "MAX_FOLD_NODES",
    "ResizeSite",
    "ValueSource",
    "ValueTrace",
    "find_resize_sites",
    "in_function",
    "trace_value",
]


@dataclass(frozen=True)
class ResizeSite:
    """One Resize or Upsample node and everything a pass or a report needs to know about it."""

    node_name: str
    node_index: int  # position in graph.node
    op_type: str  # "Resize" or "Upsample"
    opset: int  # the default-domain opset the model imports
    input_name: str  # the X tensor
    output_name: str
    mode: str  # nearest | linear | cubic (Upsample's "bilinear" reported as "linear")
    coordinate_transformation_mode: str
    cubic_coeff_a: float
    nearest_mode: str
    exclude_outside: int
    antialias: int
    extrapolation_value: float
    keep_aspect_ratio_policy: str
    axes: Optional[tuple[int, ...]]
    scales: Optional[tuple[float, ...]]  # the constant value, when known
    scales_source: ValueSource
    scales_tensor: str  # tensor name feeding the scales slot ("" if none / attribute)
    sizes: Optional[tuple[int, ...]]
    sizes_source: ValueSource
    sizes_tensor: str
    roi_tensor: str
    input_rank: Optional[int]  # rank of X when known from shapes
    input_shape: Optional[tuple[Any, ...]] = None  # ints for static dims, strings for symbolic, None unknown
    notes: tuple[str, ...] = field(default=())
    op_version: int = 0  # the op's schema version at this opset (Resize 10/11/13/18/19, Upsample 7/9)
    scales_nodes: tuple[str, ...] = field(default=())  # nodes computing the scales (Constant, Identity, folded)
    sizes_nodes: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())  # why the constant scales/sizes make no sense (empty: fine)
    scope: str = MAIN_GRAPH  # where the node lives: "main graph", "If 'n' then_branch", "function 'd.f'"...

    @property
    def has_constant_scales(self) -> bool:
        return self.scales is not None and self.scales_source not in (
            ValueSource.GRAPH_INPUT,
            ValueSource.RUNTIME,
        )

    @property
    def in_main_graph(self) -> bool:
        return self.scope == MAIN_GRAPH

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scales_source"] = self.scales_source.value
        data["sizes_source"] = self.sizes_source.value
        return data


def in_function(site: ResizeSite) -> bool:
    """True for a site inside a model-local function (rewritable only after inlining)."""
    return site.scope.startswith("function ")


def find_resize_sites(
    model: Union["ModelProto", Any],
    *,
    max_fold_bytes: Optional[int] = None,
    nested: bool = False,
    inferred: Optional["ModelProto"] = None,
    weightless: Optional[bytes] = None,
    inferred_infos: Optional[ValueInfoIndex] = None,
) -> list[ResizeSite]:
    """Describe every Resize/Upsample node of the main graph, in graph order (``nested``: then
    those of every If/Loop/Scan body and model-local function, see :func:`~graphsurgeon_tools.
    core.graph.scopes` for the order and the ``scope`` names).

    Args:
        model: a ModelProto, a path (loaded with :func:`graphsurgeon_tools.io.load_model`,
            weights left on disk) or an ``onnx_graphsurgeon.Graph``.
        max_fold_bytes: byte bound of constant folding (None: the tracer's default; 0: none).
        nested: also report sites outside the main graph (``site.scope`` says where).
        inferred: :func:`graphsurgeon_tools.core.checker.inferred_copy` of this very model, when
            the caller has it (one shape inference instead of two on a big graph).
        weightless: :func:`~graphsurgeon_tools.core.checker.weightless_bytes` of this very model as the
            structural checker accepted them (``Pass.handed_bytes``), when the caller has them: what shape
            inference reads, if it runs (no second serialization), and searched where they prove a walk
            over the nodes needless (no body, no Resize/Upsample left to find: see :mod:`.site_nodes`).
        inferred_infos: a :class:`~graphsurgeon_tools.resize.site_inputs.ValueInfoIndex` of ``inferred``'s
            main graph, when another reader of the same inference shares it.

    Constant scales/sizes are resolved through Constant nodes, Identity chains and small
    constant subgraphs (folded with ONNX's reference evaluator, at most
    :data:`MAX_FOLD_NODES` nodes). Reads the model; never changes it.

    Resize-10 and Upsample have no coordinate_transformation_mode/nearest_mode attributes;
    they are reported with the behaviour the spec gives them (asymmetric, floor).
    """
    with naming(model if isinstance(model, (str, os.PathLike)) else None):  # errors name the file
        proto, _ = as_model(model)
        return _find_resize_sites(proto, max_fold_bytes, nested, inferred, weightless, inferred_infos)


def _text(value: Any, default: str) -> str:
    return default if value is None else str(value)


def _find_resize_sites(
    model: "ModelProto",
    max_fold_bytes: Optional[int] = None,
    nested: bool = False,
    inferred: Optional["ModelProto"] = None,
    weightless: Optional[bytes] = None,
    inferred_infos: Optional[ValueInfoIndex] = None,
) -> list[ResizeSite]:
    main = ConstantTracer(model, max_bytes=max_fold_bytes)
    walked = walk(model, nested, weightless)
    for _, resize_nodes in walked:
        for _, node, names in resize_nodes:
            if not names or not names[0]:  # the checker says so too, but not every caller runs it
                label = node.name or (node.output[0] if node.output else "?")
                raise InvalidModelError(f"node {label!r}: {node.op_type} has no input X")
    graphs = [s.graph for s, _ in walked if not s.function]  # main graph, then its bodies
    wanted = {name for _, nodes in walked for _, _, names in nodes for name in names}
    infos = declared_infos(graphs, wanted)
    declared = set(infos)
    forms: dict[Any, Any] = {}
    if any(input_shape(infos.get(names[0]), True, forms) is None for _, nodes in walked for _, _, names in nodes):
        infos = with_inferred_infos(model, infos, len(graphs) > 1, wanted, inferred, weightless, inferred_infos)

    tracers: dict[str, ConstantTracer] = {}
    sites: list[ResizeSite] = []
    for scope, resize_nodes in walked:
        if scope.parent is None and not scope.function:
            tracer = main
        else:
            tracer = ConstantTracer(
                model,
                max_bytes=main.max_bytes or 0,
                graph=scope.graph,
                outer=tracers.get(scope.parent) if scope.parent else None,
            )
        tracers[scope.name] = tracer
        if not resize_nodes:
            continue
        versions = {op: semantics.op_version(op, tracer.opset) for op in semantics.RESIZE_OPS}
        for index, node, names in resize_nodes:
            sites.append(
                _describe(node, names, index, scope.name, tracer, versions[node.op_type], infos, declared, forms)
            )
    return sites


def _dtype_name(array: "np.ndarray") -> str:
    """``array.dtype.name``, looked up once per dtype (numpy computes the name on every read)."""
    dtype = array.dtype
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


_DTYPE_NAMES: dict[Any, str] = {}


def _dtype_of(tensor: str, trace: ValueTrace, infos: dict[str, Any]) -> str:
    """The numpy name of ``tensor``'s element type: its constant value's, else the declared/inferred
    one; "" when neither says (an empty placeholder is typeless: exporters write it as float)."""
    if not tensor:
        return ""
    if trace.value is not None:
        return _dtype_name(trace.value) if trace.value.size else ""
    info = infos.get(tensor)
    elem = info.type.tensor_type.elem_type if info is not None and info.type.HasField("tensor_type") else 0
    return dtypes.dtype_name(elem) if elem and dtypes.is_known(elem) else ""


def _floats(flat: "np.ndarray") -> tuple[float, ...]:
    """``tuple(float(s) for s in flat)``: ``tolist`` gives the same Python floats for float32/64 at once."""
    if flat.dtype.char in "fd":
        return tuple(flat.tolist())
    return tuple(float(s) for s in flat)


def _ints(flat: "np.ndarray") -> tuple[int, ...]:
    """``tuple(int(s) for s in flat)``: ``tolist`` gives the same Python ints for integer arrays at once."""
    if flat.dtype.kind in "iu":
        return tuple(flat.tolist())
    return tuple(int(s) for s in flat)


@dataclass(frozen=True)
class _Form:
    """What a site's op type, op version and attributes decide, read once for every site that has the
    same (a graph's Resize nodes mostly share their attributes)."""

    attrs: dict[str, Any]
    mode: str
    coordinate_transformation_mode: str
    nearest_mode: str
    axes: Optional[tuple[int, ...]]
    notes: tuple[str, ...]
    slots: Optional[semantics.InputSlots]  # None: Upsample with a scales attribute


@dataclass(frozen=True)
class _Tail:
    """The attribute values read after the scales and sizes (a bad value raises there, as it always has)
    and the attributes' problems."""

    cubic_coeff_a: float
    exclude_outside: int
    antialias: int
    extrapolation_value: float
    keep_aspect_ratio_policy: str
    problems: tuple[str, ...]


def _form(node: Any, op_version: int) -> _Form:
    attrs = attributes(node)
    given = semantics.defaults(node.op_type, op_version)
    notes: list[str] = []
    mode = _text(attrs.get("mode"), given["mode"])
    if mode == "bilinear":
        mode = "linear"
        notes.append("Upsample mode 'bilinear' reported as 'linear'")
    if semantics.is_legacy(node.op_type, op_version):
        ctm, nearest_mode = given["coordinate_transformation_mode"], given["nearest_mode"]
        notes.append(f"{node.op_type}-{op_version or '?'} has asymmetric coordinates and floor rounding by definition")
    else:
        ctm = _text(attrs.get("coordinate_transformation_mode"), given["coordinate_transformation_mode"])
        nearest_mode = _text(attrs.get("nearest_mode"), given["nearest_mode"])
    axes = tuple(int(a) for a in attrs["axes"]) if "axes" in attrs else None
    upsample_attribute = node.op_type == "Upsample" and "scales" in attrs
    slots = None if upsample_attribute else semantics.input_slots(node.op_type, op_version)
    return _Form(attrs, mode, ctm, nearest_mode, axes, tuple(notes), slots)


def _tail(node: Any, op_version: int, attrs: dict[str, Any]) -> _Tail:
    given = semantics.defaults(node.op_type, op_version)
    # Attributes out of range (mode="bogus"...) pass the checker but no runtime loads them:
    # the same gate refuses them, so no command writes (or describes as fine) such a node.
    problems = tuple(semantics.attribute_problems(node, op_version))
    return _Tail(
        float(attrs.get("cubic_coeff_a", given["cubic_coeff_a"])),
        int(attrs.get("exclude_outside", given["exclude_outside"])),
        int(attrs.get("antialias", given["antialias"])),
        float(attrs.get("extrapolation_value", given["extrapolation_value"])),
        _text(attrs.get("keep_aspect_ratio_policy"), given["keep_aspect_ratio_policy"]),
        problems,
    )


def _describe(
    node: Any,
    names: list[str],
    index: int,
    scope: str,
    tracer: ConstantTracer,
    op_version: int,
    infos: dict[str, Any],
    declared: set[str],
    forms: dict[Any, Any],
) -> ResizeSite:
    """One site: semantics, where its scales and sizes come from, what is wrong with them.
    ``names``: its input names. ``forms``: what :func:`_form`, :func:`_tail` and :func:`.site_inputs.input_shape`
    made of earlier sites, by op type, version and serialized attributes (identical attributes
    decide identically) or by serialized type."""
    graph = tracer.graph

    def node_names(trace: ValueTrace) -> tuple[str, ...]:
        return tuple(graph.node[i].name or graph.node[i].output[0] for i in trace.nodes)

    op_type = node.op_type  # each read of a proto field costs a lookup: read once
    held = node.attribute
    key = (op_type, op_version, tuple(a.SerializeToString() for a in held) if len(held) else ())
    form = forms.get(key)
    if form is None:
        form = forms[key] = _form(node, op_version)
    notes = list(form.notes)
    inputs = names + [""] * 4
    x_name = inputs[0]
    scales_tensor = sizes_tensor = roi_tensor = ""
    scales: Optional[tuple[float, ...]] = None
    sizes: Optional[tuple[int, ...]] = None
    scales_source = sizes_source = ValueSource.ABSENT
    scales_nodes: tuple[str, ...] = ()
    sizes_nodes: tuple[str, ...] = ()
    problems: list[str] = []
    slots = form.slots
    if slots is None:
        scales = tuple(float(s) for s in form.attrs["scales"])
        scales_source = ValueSource.ATTRIBUTE
    else:
        scales_tensor = inputs[slots.scales] if slots.scales is not None else ""
        roi_tensor = inputs[slots.roi] if slots.roi is not None else ""
        sizes_tensor = inputs[slots.sizes] if slots.sizes is not None else ""
        trace = tracer.trace(scales_tensor)
        scales_source = trace.source
        scales_nodes = node_names(trace) if trace.nodes else ()
        problems.extend(
            semantics.input_type_problems(op_type, op_version, "scales", _dtype_of(scales_tensor, trace, infos))
        )
        if trace.value is not None:
            if trace.value.ndim != 1 and trace.value.size:
                problems.append(f"scales must be a 1-D tensor, got shape {list(trace.value.shape)}")
            flat = trace.value.reshape(-1)
            scales = _floats(flat) if flat.size else None
            if not flat.size and scales_source != ValueSource.GRAPH_INPUT:
                scales_source = ValueSource.ABSENT  # the empty-tensor placeholder exporters write
        if trace.reason:
            notes.append(f"scales: {trace.reason}")
        if sizes_tensor:
            size_trace = tracer.trace(sizes_tensor)
            sizes_source = size_trace.source
            sizes_nodes = node_names(size_trace) if size_trace.nodes else ()
            problems.extend(
                semantics.input_type_problems(op_type, op_version, "sizes", _dtype_of(sizes_tensor, size_trace, infos))
            )
            if size_trace.value is not None and size_trace.value.ndim != 1 and size_trace.value.size:
                problems.append(f"sizes must be a 1-D tensor, got shape {list(size_trace.value.shape)}")
            if size_trace.value is not None and size_trace.value.size:
                sizes = _ints(size_trace.value.reshape(-1))
            if size_trace.reason:
                notes.append(f"sizes: {size_trace.reason}")
    x_shape = input_shape(infos.get(x_name), x_name in declared, forms)
    if x_shape is None and x_name in tracer.initializers:
        x_shape = tuple(int(d) for d in tracer.initializers[x_name].dims)
    axes = form.axes
    rank = len(x_shape) if x_shape is not None else None
    if rank is None and scales is not None and axes is None:
        rank = len(scales)
    elif rank is None and sizes is not None and axes is None:
        rank = len(sizes)
    problems.extend(scales_problems(scales, scales_source, sizes, sizes_source, sizes_tensor, rank, axes))
    tail = forms.get((key, "tail"))
    if tail is None:
        tail = forms[(key, "tail")] = _tail(node, op_version, form.attrs)
    problems.extend(tail.problems)
    values = {  # a literal: half the cost of dict(**keywords) for 30 entries, once per site
        "node_name": node.name,
        "node_index": index,
        "op_type": op_type,
        "opset": tracer.opset,
        "input_name": x_name,
        "output_name": node.output[0],
        "mode": form.mode,
        "coordinate_transformation_mode": form.coordinate_transformation_mode,
        "cubic_coeff_a": tail.cubic_coeff_a,
        "nearest_mode": form.nearest_mode,
        "exclude_outside": tail.exclude_outside,
        "antialias": tail.antialias,
        "extrapolation_value": tail.extrapolation_value,
        "keep_aspect_ratio_policy": tail.keep_aspect_ratio_policy,
        "axes": axes,
        "scales": scales,
        "scales_source": scales_source,
        "scales_tensor": scales_tensor,
        "sizes": sizes,
        "sizes_source": sizes_source,
        "sizes_tensor": sizes_tensor,
        "roi_tensor": roi_tensor,
        "input_rank": rank,
        "input_shape": x_shape,
        "notes": tuple(notes),
        "op_version": op_version,
        "scales_nodes": scales_nodes,
        "sizes_nodes": sizes_nodes,
        "problems": tuple(problems),
        "scope": scope,
    }
    return records.build(ResizeSite, values)  # one __dict__ update, not __init__'s setattr per field
